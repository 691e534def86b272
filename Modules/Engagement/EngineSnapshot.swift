public import Content
public import Models
import Scheduling

/// A user's engine state as compact bytes, for a runtime to save after each input and restore
/// after a restart: restoring and continuing gives exactly the effects of an engine that never
/// stopped.
///
/// Format, version 6 (`CompactWriter`: LEB128 varints, zigzag for signed values):
/// - the magic bytes `E` `S`, then the version;
/// - `base`: the last activity, in seconds since 1970; every other instant is written as its
///   signed distance from `base` (most are within days of it, so two or three bytes);
/// - then, in order, the state's groups as `EngineState` declares them: activity, user,
///   plan, lapse, reminders, social, coaching, copy, Live Activities, then whether the device
///   refuses notifications and the local plan's revision. Instants are minutes from `base` when whole
///   minutes (flag bit 0), else seconds (flag bit 1). Occurrence identities in lists are
///   (day from base's day, kind ordinal, slot, snooze); the keys of maps are their packed form
///   (`OccurrenceID.packed`), each as its distance from the one before. Lists have their count first.
///
/// Not stored, because they are derived: the profile and the zone (the runtime stores the
/// profile and passes both in), the recipient, the holdout membership, the hydration series'
/// times, the timing rules (from the response counts), the nudge-time cache, and what the last
/// pass is remembered by, the plan's key, the earliest nudge it planned and its candidates in
/// order (recomputed for the instant of the last pass, `rememberLastPass`).
///
/// What is kept per occurrence, and until when (the snapshot's size is bounded by these rules,
/// not by a cap): the last traced decision and the coach's copy leave when the occurrence fires
/// (`retireFired`), or when they belong to a lapse campaign before the current one and are not
/// a snoozed copy (`forgetEarlierCampaigns`; the cancellations of the campaign just moved on are
/// traced and kept until the next move); the rest leave about a day after their time. A rule that drops
/// more changes no format: older bytes restore with the entries, which leave at the next move.
///
/// Migration rule: a new version adds a `case` to the reader and keeps reading every older
/// version it ever wrote; the writer writes only the newest. Bytes of an unknown version, or
/// bytes that do not parse, are an error (`SnapshotError`), never a silent fresh state.
///
/// Versions:
/// - 6: the local plan's revision (`UserEngine.localPlanRevision`), a varint at the end. Read
///   from an older snapshot: 0, the first revision of every plan; a phone holding a plan read
///   under an older build's version pulls it once more.
/// - 5: the items a social group only counts (beyond `EngineConfiguration.waitingSocialItemLimit`):
///   their number after the group's items, then, when not zero, the oldest and the newest one's
///   fold times. Read
///   from an older snapshot: none.
/// - 4: whether the device refuses notifications (`EngineInput.notificationPermission`), one
///   byte at the end. Read from an older snapshot: allowed (a refused `schedule` tells it again).
///   And the fold time of each item of a social group (a list after the group's send time);
///   read from an older snapshot: a day before the group's send time.
/// - 3: the Live Activities running (`LiveActivityTracker`) at the end, as JSON in a string,
///   empty when none ever ran (one byte). Read from a version 2 or 1 snapshot: none.
/// - 2: response learning per slot (`LearningSlot`): its cells are keyed by kind, slot and
///   hour, each key written as its distance from the one before.
/// - 1: response cells keyed by kind and hour (`kind.ordinal * 24 + hour`, absolute). Read by
///   moving each cell into the slot of its kind whose nominal hour it is (breakfast for 08:00,
///   the 13:00 hydration time for 13:00), else the slot whose window holds the hour's middle;
///   a cell no slot claims (a shift learned across slots) is forgotten.
public enum EngineSnapshot {
    public static let version: UInt64 = 6
    /// Every version the reader reads.
    public static let readableVersions: ClosedRange<UInt64> = 1...6
    static let magic: [UInt8] = [0x45, 0x53]
}

/// Bytes that are not an engine snapshot this version can read.
public struct SnapshotError: Error, Hashable, Sendable, CustomStringConvertible {
    public var problem: String
    public var description: String { "engine snapshot: \(problem)" }
}

extension EngineSnapshot {
    /// The local plan's revision (`UserEngine.localPlanRevision`) of snapshot `bytes`, read
    /// without restoring the engine: in version 6 it is the last varint, and the byte before it
    /// (whether the device refuses notifications, 0 or 1) never has the continuation bit, so the
    /// number is the bytes after the last one without it, before the end. An older snapshot
    /// holds none: 0, as restoring it gives.
    public static func localPlanRevision(of bytes: [UInt8]) throws(SnapshotError) -> Int {
        guard bytes.count >= 3, bytes[0] == magic[0], bytes[1] == magic[1] else {
            throw SnapshotError(problem: "not an engine snapshot (bad magic bytes)")
        }
        // Versions up to 127 are one byte.
        let version = UInt64(bytes[2])
        guard readableVersions.contains(version) else {
            throw SnapshotError(problem: "version \(version) is not one this engine reads")
        }
        guard version >= 6 else { return 0 }
        guard let last = bytes.last, last & 0x80 == 0 else { throw SnapshotError(problem: "truncated revision") }
        var start = bytes.count - 1
        while start > 3, bytes[start - 1] & 0x80 != 0 { start -= 1 }
        guard bytes.count - start <= 9 else { throw SnapshotError(problem: "revision too long") }
        var value = 0
        for byte in bytes[start...].reversed() { value = value << 7 | Int(byte & 0x7F) }
        return value
    }
}

extension UserEngine {
    /// The state as snapshot bytes (see `EngineSnapshot`).
    public func snapshot() -> [UInt8] { snapshot(version: EngineSnapshot.version) }

    /// The state in the format of `version` (one of `EngineSnapshot.readableVersions`), as an
    /// older app version wrote it: for the migration's tests and the simulator's upgrade fault.
    /// What that version cannot hold is left out; a runtime writes the newest (`snapshot()`).
    public func snapshot(version: UInt64) -> [UInt8] {
        precondition(EngineSnapshot.readableVersions.contains(version), "no snapshot version \(version)")
        var writer = CompactWriter()
        for byte in EngineSnapshot.magic { writer.byte(byte) }
        writer.unsigned(version)
        var codec = SnapshotCodec(base: state.activity.lastActiveAt, version: version)
        writer.signed(codec.base.secondsSinceEpoch)
        codec.write(state, to: &writer)
        return writer.bytes
    }

    /// An engine restored from `snapshot()` bytes, for `profile` in `zone`, with the same
    /// configuration and copy writer as the engine that wrote them.
    public init(
        restoring bytes: [UInt8], profile: UserProfile, zone: ZoneRules, configuration: EngineConfiguration = .init(),
        content: ContentGenerator
    ) throws(SnapshotError) {
        var reader = CompactReader(bytes)
        do {
            guard try reader.byte() == EngineSnapshot.magic[0], try reader.byte() == EngineSnapshot.magic[1] else {
                throw SnapshotError(problem: "not an engine snapshot (bad magic bytes)")
            }
            let version = try reader.unsigned()
            guard EngineSnapshot.readableVersions.contains(version) else {
                let readable = EngineSnapshot.readableVersions
                throw SnapshotError(
                    problem:
                        "version \(version) is not one this engine reads (it reads \(readable.lowerBound)...\(readable.upperBound))"
                )
            }
            let codec = SnapshotCodec(
                base: Instant(secondsSinceEpoch: try reader.signed(limit: SnapshotCodec.secondsLimit)), version: version
            )
            self.init(profile: profile, zone: zone, now: codec.base, configuration: configuration, content: content)
            let legacyResponses = try codec.read(into: &state, from: &reader)
            if !legacyResponses.isEmpty {
                let engine = self
                state.coaching.responses.adopt(legacy: legacyResponses) { engine.learningSlot(of: $0, hour: $1) }
            }
            guard reader.isAtEnd else { throw SnapshotError(problem: "\(bytes.count - reader.offset) bytes left over") }
        } catch let error as CompactBytesError {
            throw SnapshotError(problem: error.description)
        } catch let error as SnapshotError {
            throw error
        } catch {
            throw SnapshotError(problem: "\(error)")
        }
        state.coaching.timing = state.coaching.responses.timingRules(for: UserEngine.adjustableKinds)
        if let at = state.plan.lastPassAt { rememberLastPass(at: at) }
    }
}

/// Writes and reads the state's parts in the order the format documents.
struct SnapshotCodec {
    /// Instants and distances are read within ±10^11 seconds (3,000 years): arithmetic on them
    /// cannot overflow, whatever the bytes say.
    static let secondsLimit: Int64 = 100_000_000_000
    static let daysLimit: Int64 = 100_000_000
    /// Lists are read up to this many elements: far beyond what an engine holds (pruning keeps
    /// its lists to days of history), so every snapshot the writer makes reads back.
    static let listLimit = 1 << 20
    let base: Instant
    /// The format version written or read.
    var version: UInt64 = EngineSnapshot.version
    var baseDay: Int64 { base.secondsSinceEpoch / .secondsPerDay }

    // MARK: - Writing

    func write(_ state: EngineState, to w: inout CompactWriter) {
        let activity = state.activity
        w.optional(activity.activeUntil) { time($1, &$0) }
        w.optional(activity.sessionHold) { time($1, &$0) }
        w.list(activity.recentOpenMinutes) { $0.count($1) }
        writeMap(activity.done, &w) { time($1, &$0) }
        w.optional(state.user.zoneChangedAt) { time($1, &$0) }

        let plan = state.plan
        w.list(plan.planned) { w, item in
            id(item.id, &w)
            time(item.plannedAt, &w)
            w.signed(item.fireAt - item.plannedAt)
            w.byte((item.followsWallClock ? 1 : 0) | (item.repeatsDaily ? 2 : 0))
            w.count(item.revision)
        }
        w.list(plan.ledger.instants) { time(Instant(secondsSinceEpoch: $1), &$0) }
        writeMap(plan.fired, &w) { time($1, &$0) }
        writeMap(plan.lastTraced, &w) { w, traced in
            w.count(TraceDecision.allCases.firstIndex(of: traced.decision)!)
            w.count(ReasonCode.allCases.firstIndex(of: traced.reason)!)
            time(traced.plannedAt, &w)
            w.optional(traced.fireAt) { $0.signed($1 - traced.plannedAt) }
        }
        // An older version cannot hold all the plan's inputs (a device's refusal, before 4): its
        // reader plans afresh at its first input rather than trust a key it cannot rebuild.
        w.optional(plan.lastKey == nil || version < EngineSnapshot.version ? nil : plan.lastPassAt) { time($1, &$0) }

        w.count(state.lapse.lastAttemptSent)
        for list in [state.reminders.snoozed, state.reminders.followUps] {
            w.list(list) { w, candidate in
                id(candidate.id, &w)
                time(candidate.plannedAt, &w)
                w.count(InterruptionLevel.allCases.firstIndex(of: candidate.level)!)
            }
        }

        w.count(state.social.groupSequence)
        w.list(state.social.groups) { w, group in
            id(group.id, &w)
            w.count(NotificationGroup.Mode.allCases.firstIndex(of: group.mode)!)
            w.string(group.key)
            time(group.sendAt, &w)
            if version >= 4 { w.list(group.foldedAt) { w, at in time(at, &w) } }
            w.list(group.items) { w, item in
                w.string(item.id)
                w.count(item.kind.ordinal)
                w.string(item.actorName)
                w.string(item.topic)
                w.bool(item.isMutualFriend)
            }
            if version >= 5 {
                w.count(group.countedItems)
                if let since = group.countedSince, let latest = group.countedLatest {
                    time(since, &w)
                    time(latest, &w)
                }
            }
        }

        let coaching = state.coaching
        coaching.habits.write(to: &w)
        coaching.streak.write(to: &w)
        w.list(coaching.recentWorkouts) { w, start in w.signed(start.localSeconds - base.secondsSinceEpoch) }
        if version >= 2 {
            coaching.responses.write(to: &w)
        } else {
            coaching.responses.writeVersion1(to: &w)
        }
        w.list(coaching.unanswered) { w, entry in
            id(entry.id, &w)
            time(entry.firedAt, &w)
        }

        state.copy.templateMemory.write(to: &w)
        w.fixed64(state.copy.random.state)
        writeMap(state.copy.coachCopy, &w) { w, coach in
            time(coach.askedAt, &w)
            w.optional(coach.copy) { w, copy in
                w.string(copy.title)
                w.string(copy.body)
            }
        }
        if version >= 3 { writeLiveActivities(state.liveActivities, &w) }
        if version >= 4 { w.bool(state.plan.deviceRefuses) }
        if version >= 6 { w.count(state.plan.localRevision) }
    }

    /// An instant as its distance from `base`: in minutes when it is a whole number of minutes
    /// (most are wall-clock times), flagged in the lowest bit.
    private func time(_ instant: Instant, _ w: inout CompactWriter) {
        let distance = instant - base
        w.signed(distance % 60 == 0 ? (distance / 60) << 1 : distance << 1 | 1)
    }

    private func id(_ id: OccurrenceID, _ w: inout CompactWriter) {
        w.signed(id.isDailySeries ? Int64.max : Int64(id.day) - baseDay)
        w.count(id.kind.ordinal)
        w.count(Int(id.packedSlot))
        w.count(Int(id.snooze))
    }

    private func writeMap<Value>(
        _ map: OccurrenceMap<Value>, _ w: inout CompactWriter, _ value: (inout CompactWriter, Value) -> Void
    ) {
        // Keys ascend: each is written as its distance from the one before (two or three bytes).
        let entries = map.entries
        w.count(entries.count)
        var previous: UInt64 = 0
        for entry in entries {
            w.unsigned(entry.id.packed - previous)
            previous = entry.id.packed
            value(&w, entry.value)
        }
    }

    // MARK: - Reading

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
