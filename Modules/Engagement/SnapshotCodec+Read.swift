import Content
import Models
import Scheduling

/// Reading a snapshot, in the order `EngineSnapshot` documents.
extension SnapshotCodec {
    /// Reads the state; returns the response counts of a version 1 snapshot (per kind and hour),
    /// which the engine moves into slots with its profile.
    func read(
        into state: inout EngineState, from r: inout CompactReader
    ) throws -> [(kind: NotificationKind, hour: Int, counts: ResponseStats.Counts)] {
        var legacyResponses: [(kind: NotificationKind, hour: Int, counts: ResponseStats.Counts)] = []
        state.activity.lastActiveAt = base
        state.activity.activeUntil = try r.optional { r in try time(&r) }
        state.activity.sessionHold = try r.optional { r in try time(&r) }
        state.activity.recentOpenMinutes = try r.list(limit: 64) { r in
            try r.count(limit: 1_439)
        }
        state.activity.done = try readMap(&r) { r in try time(&r) }
        state.user.zoneChangedAt = try r.optional { r in try time(&r) }

        state.plan.planned = try r.list(limit: Self.listLimit) { r in
            let occurrence = try id(&r)
            let plannedAt = try time(&r)
            let fireAt = plannedAt + (try r.signed(limit: Self.secondsLimit))
            let flags = try r.byte()
            let revision = try r.count(limit: 1 << 20)
            var item = PlannedNotification(
                candidate: Candidate(
                    id: occurrence, kind: occurrence.kind, plannedAt: plannedAt, level: .active,
                    policy: .standard(for: occurrence.kind), revision: revision),
                dueAt: plannedAt, fireAt: fireAt, zone: .utc, repeatsDaily: flags & 2 != 0)
            item.followsWallClock = flags & 1 != 0
            return item
        }
        state.plan.ledger = CapLedger(try r.list(limit: Self.listLimit) { r in try time(&r) })
        state.plan.fired = try readMap(&r) { r in try time(&r) }
        state.plan.lastTraced = try readMap(&r) { r in
            let decision = TraceDecision.allCases[try r.count(limit: TraceDecision.allCases.count - 1)]
            let reason = ReasonCode.allCases[try r.count(limit: ReasonCode.allCases.count - 1)]
            let plannedAt = try time(&r)
            let fireAt = try r.optional { r in plannedAt + (try r.signed(limit: Self.secondsLimit)) }
            return TracedDecision(decision: decision, reason: reason, fireAt: fireAt, plannedAt: plannedAt)
        }
        state.plan.lastPassAt = try r.optional { r in try time(&r) }

        state.lapse.lastAttemptSent = try r.count(limit: 1_000)
        var lists: [[Candidate]] = []
        for _ in 0..<2 {
            lists.append(
                try r.list(limit: Self.listLimit) { r in
                    let occurrence = try id(&r)
                    let plannedAt = try time(&r)
                    let level = InterruptionLevel.allCases[try r.count(limit: InterruptionLevel.allCases.count - 1)]
                    return Candidate(
                        id: occurrence, kind: occurrence.kind, plannedAt: plannedAt, level: level,
                        policy: .standard(for: occurrence.kind))
                })
        }
        state.reminders.snoozed = lists[0]
        state.reminders.followUps = lists[1]

        state.social.groupSequence = try r.count(limit: 0x7FFF)
        state.social.groups = try r.list(limit: Self.listLimit) { r in
            let occurrence = try id(&r)
            let mode = NotificationGroup.Mode.allCases[try r.count(limit: NotificationGroup.Mode.allCases.count - 1)]
            let key = try r.string()
            let sendAt = try time(&r)
            // Before 4: unknown; a day before the group's send time, as a digest holds a day's items.
            let foldedAt = version >= 4 ? try r.list(limit: Self.listLimit) { r in try time(&r) } : nil
            let items = try r.list(limit: Self.listLimit) { r in
                let itemID = try r.string()
                guard let kind = NotificationKind(ordinal: try r.count(limit: 255)) else {
                    throw CompactBytesError(offset: r.offset, problem: "unknown kind")
                }
                return SocialEvent(
                    id: itemID, kind: kind, actorName: try r.string(), topic: try r.string(),
                    isMutualFriend: try r.bool())
            }
            let times = foldedAt ?? items.map { _ in sendAt - .secondsPerDay }
            guard times.count == items.count else {
                throw CompactBytesError(offset: r.offset, problem: "a fold time for each item of a group")
            }
            let counted = version >= 5 ? try r.count(limit: Int(Int32.max)) : 0
            let countedSince = counted > 0 ? try time(&r) : nil
            let countedLatest = counted > 0 ? try time(&r) : nil
            return NotificationGroup(
                id: occurrence, mode: mode, kind: occurrence.kind, key: key, items: items, sendAt: sendAt,
                foldedAt: times, countedItems: counted, countedSince: countedSince, countedLatest: countedLatest)
        }

        state.coaching.habits = try WorkoutHabits(reading: &r)
        state.coaching.streak = try WorkoutStreak(reading: &r)
        state.coaching.recentWorkouts = try r.list(limit: 64) { r in
            LocalDateTime(localSeconds: base.secondsSinceEpoch + (try r.signed(limit: Self.secondsLimit)))
        }
        if version >= 2 {
            state.coaching.responses = try ResponseStats(reading: &r)
        } else {
            legacyResponses = try ResponseStats.readVersion1(&r)
        }
        state.coaching.unanswered = try r.list(limit: Self.listLimit) { r in
            (id: try id(&r), firedAt: try time(&r))
        }

        state.copy.templateMemory = try TemplateMemory(reading: &r)
        state.copy.random = SeededGenerator(seed: try r.fixed64())
        state.copy.coachCopy = try readMap(&r) { r in
            let askedAt = try time(&r)
            let copy = try r.optional { r in
                Copy(title: try r.string(), body: try r.string())
            }
            return CoachCopy(copy: copy, askedAt: askedAt)
        }
        if version >= 3 { state.liveActivities = try readLiveActivities(&r) }
        if version >= 7 {
            state.plan.phoneHolds = try readMap(&r) { r in try time(&r) }
            state.plan.lastPassPhone =
                switch try r.count(limit: 2) {
                case 0: .atOnce
                case 1: .whenItPulls
                default: .by(try time(&r))
                }
        }
        if version >= 8 { state.plan.phoneHearsBy = try r.optional { r in try time(&r) } }
        if version >= 9 { state.plan.holdsAtLastPass = try r.optional { r in try readMap(&r) { r in try time(&r) } } }
        if version >= 4 { state.plan.deviceRefuses = try r.bool() }
        if version >= 6 { state.plan.localRevision = try r.count(limit: Int.max) }
        return legacyResponses
    }

    private func time(_ r: inout CompactReader) throws -> Instant {
        let value = try r.signed(limit: 2 * Self.secondsLimit)
        return base + (value & 1 == 0 ? (value >> 1) * 60 : value >> 1)
    }

    private func id(_ r: inout CompactReader) throws -> OccurrenceID {
        let day = try r.signed()
        guard day == Int64.max || (-Self.daysLimit...Self.daysLimit).contains(day) else {
            throw CompactBytesError(offset: r.offset, problem: "day \(day) out of range")
        }
        let ordinal = try r.count(limit: 255)
        let rawSlot = try r.count(limit: 0xFFFF)
        let snooze = try r.count(limit: 255)
        guard let kind = NotificationKind(ordinal: ordinal) else {
            throw CompactBytesError(offset: r.offset, problem: "unknown kind ordinal \(ordinal)")
        }
        guard
            let id = OccurrenceID(
                kind: kind, day: day == Int64.max ? OccurrenceID.seriesDay : Int32(clamping: baseDay + day),
                packedSlot: Int32(rawSlot), snooze: Int32(snooze))
        else { throw CompactBytesError(offset: r.offset, problem: "slot \(rawSlot) does not fit \(kind.rawValue)") }
        return id
    }

    private func readMap<Value>(
        _ r: inout CompactReader, _ value: (inout CompactReader) throws -> Value
    ) throws -> OccurrenceMap<Value> {
        var previous: UInt64 = 0
        let entries = try r.list(limit: Self.listLimit) { r in
            let (key, overflow) = previous.addingReportingOverflow(try r.unsigned())
            guard !overflow, key > previous || previous == 0, let id = OccurrenceID(packed: key) else {
                throw CompactBytesError(offset: r.offset, problem: "occurrence key out of order or invalid")
            }
            previous = key
            return (id, try value(&r))
        }
        return OccurrenceMap(entries)
    }
}

extension UserEngine {
    /// The slot a version 1 response cell (per kind and local hour) belongs to: the slot of `kind`
    /// whose nominal time falls in `hour`, else the one whose window holds the hour's middle; nil
    /// when none does (see `EngineSnapshot`).
    func learningSlot(of kind: NotificationKind, hour: Int) -> LearningSlot? {
        let preferences = profile.preferences
        let slots: [(slot: LearningSlot, minute: Int)]
        switch kind {
        case .morningGreeting: slots = [(LearningSlot(kind), preferences.morningTime.minutesSinceMidnight)]
        case .mealReminder:
            slots = MealType.allCases.map {
                (LearningSlot(OccurrenceID(kind, daysSinceEpoch: 0, .meal($0))), $0.defaultTime.minutesSinceMidnight)
            }
        case .hydration:
            slots = preferences.hydrationTimes.map {
                (LearningSlot(kind, packedSlot: Int32($0.minutesSinceMidnight)), $0.minutesSinceMidnight)
            }
        default: return nil
        }
        if let nominal = slots.first(where: { $0.minute / 60 == hour }) { return nominal.slot }
        guard let window = SlotWindow.of(kind) else { return nil }
        return slots.first { window.contains(offsetMinutes: hour * 60 + 30 - $0.minute) }?.slot
    }
}
