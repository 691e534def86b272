import Content
public import Models
import Scheduling

/// The planning pass: gather the candidate sources, run the planner's stages (`Planner.order`,
/// `allocate`, `diff`), then turn its changes into effects and trace entries. Regrouping is a
/// stage of its own: a social group the rules block moves into the digest, and the pass runs
/// again over the new groups, up to `maximumPassesPerInput` passes in all (a digest the copies
/// a phone holds block moves a day a pass across the plan's horizon).
extension UserEngine {
    mutating func plan(at now: Instant, phone: PhoneHearing = .atOnce, into effects: inout [Effect]) {
        // What the clock alone moved since the last pass asks for one pass; after a pass at
        // `now`, only a change of its inputs (regrouping) asks for another.
        var movedWithClock = planMovesWithClock(at: now)
        for _ in 0..<UserEngine.maximumPassesPerInput {
            // Same inputs, same plan: skip the pass. What fired since is already in the plan's
            // accounting (where it may not be, the firing forgets the key: `retireFired`), the
            // horizon ends at a local midnight and the key holds the day a streak is at risk.
            let horizonEnd = routineHorizonEnd(at: now)
            if !movedWithClock && lastKeyMatches(at: now, horizonEnd: horizonEnd, phone: phone) { return }
            movedWithClock = false
            state.plan.lastKey = planKey(at: now, horizonEnd: horizonEnd, phone: phone)
            state.plan.lastPassAt = now
            state.plan.lastPassPhone = phone
            state.plan.holdsAtLastPass = nil
            let changes = planPass(at: now, horizonEnd: horizonEnd, phone: phone)
            apply(changes, at: now, into: &effects)
        }
        // Still regrouping after the last pass allowed: the next input plans again.
        state.plan.lastKey = nil
    }

    /// Passes one input may run: a first one, and more while regrouping changes the groups.
    static let maximumPassesPerInput = 6

    /// When the last planning pass ran: an input that skipped the pass leaves it as it was.
    public var lastPlanPassAt: Instant? { state.plan.lastPassAt }

    /// Whether the last input left the plan settled: false when regrouping still changed the
    /// social groups after the passes one input may run (`maximumPassesPerInput`), so the next
    /// input plans again whatever it is.
    public var planIsSettled: Bool { state.plan.lastKey != nil }

    /// The schedules and cancellations a full planning pass at `now` would add to what the last
    /// input left, worked out on a copy (the engine is untouched). `handle` skips the pass when
    /// the clock moved nothing (`planMovesWithClock`) and the inputs match (`lastKeyMatches`):
    /// that is right when this is empty, which tests hold after every input that left the plan
    /// settled (`planIsSettled`; an unsettled one has a further regrouping stage to run). Call it
    /// right after `handle(_:at:)`, with the same `now`.
    ///
    /// Trace entries are left out: a pass re-traces a drop or a suppression whose due time moved
    /// with the clock, so a full pass at a later instant traces more than the skipped one would
    /// have, while planning the same.
    public func fullReplanChanges(at now: Instant, phone: PhoneHearing = .atOnce) -> [Effect] {
        var fresh = self
        fresh.state.plan.lastKey = nil
        var effects: [Effect] = []
        fresh.plan(at: now, phone: effectiveHearing(phone, at: now), into: &effects)
        return effects.filter(\.changesThePlan)
    }

    mutating func planKey(at now: Instant, horizonEnd: Instant, phone: PhoneHearing = .atOnce) -> PlanKey {
        PlanKey(
            profileRevision: state.user.profileRevision, lapseStage: lapseStage(at: now), horizonEnd: horizonEnd,
            streakAtRiskDay: streakAtRiskDay(at: now), zone: zone.identifier,
            sessionHold: state.activity.sessionHold, reEngagementTimes: currentReEngagementTimes(),
            lastWorkout: state.coaching.recentWorkouts.last, timing: state.coaching.timing,
            snoozed: state.reminders.snoozed, followUps: state.reminders.followUps, groups: state.social.groups,
            done: state.activity.done, deviceRefuses: state.plan.deviceRefuses, budgetResponses: budgetResponses,
            committed: committed(at: now, phone: phone), heldLater: heldLater(at: now, phone: phone))
    }

    /// The response counts the attention budget orders by; nil without a budget (`PlanKey`).
    var budgetResponses: ResponseStats? { attentionBudget == nil ? nil : state.coaching.responses }

    /// Recomputes what the last pass, at `lastPassAt`, is remembered by and the snapshot does not
    /// store: its key, the earliest nudge it planned and its candidates in order, as the pass
    /// itself set them. The candidates come from the state now, which the key shows unchanged
    /// since but for what fired (which a pass skips) and what is done and the response counts
    /// (which the last input found to move nothing, or it would have run a pass).
    /// What the phone held then is `PlanState.holdsAtLastPass` when a pull changed it since.
    mutating func rememberLastPass(at lastPassAt: Instant) {
        let horizonEnd = routineHorizonEnd(at: lastPassAt)
        let holdsNow = state.plan.phoneHolds
        if let held = state.plan.holdsAtLastPass { state.plan.phoneHolds = held }
        let key = planKey(at: lastPassAt, horizonEnd: horizonEnd, phone: state.plan.lastPassPhone)
        state.plan.phoneHolds = holdsNow
        state.plan.lastKey = key
        _ = gatherCandidates(at: lastPassAt, horizonEnd: horizonEnd)
    }

    /// Whether the clock alone, every input unchanged, may move what a pass plans now:
    /// - a planned notification held past its due time (a session or a rule deferred it): where
    ///   it goes next depends on `now` (its staleness, its window, the candidates' look-back of a
    ///   few hours, its value's freshness under an attention budget), and with it what the caps
    ///   leave for the others;
    /// - a lapse nudge whose time has come (`PlanState.nextNudgeAt`): sent, it moves the campaign
    ///   on; dropped by a cap, it moves to the same time the next day;
    /// - a pass within a day and an hour of a change of zone: the hydration series waits for its
    ///   times to fit what already fired (`activeSeriesTimes`), a test of the clock.
    func planMovesWithClock(at now: Instant) -> Bool {
        if let nudgeAt = state.plan.nextNudgeAt, nudgeAt <= now { return true }
        if state.plan.seriesTimes != nil, let moved = state.user.zoneChangedAt,
            (state.plan.lastPassAt ?? now) - moved < .secondsPerDay + .secondsPerHour
        {
            return true
        }
        return state.plan.planned.contains { $0.plannedAt < now && !$0.repeatsDaily }
    }

    /// Whether a pass now would plan what the last one did, asked field by field against the
    /// key kept (the stored fields first, the nudge times, which are worked out, after), without
    /// building a key: most inputs change none of it, and building one copies a dozen
    /// reference-counted fields, twice per input and again to keep it. A test holds the answer
    /// with `exactly` equal to comparing a built key; a field added to `PlanKey` goes in both.
    ///
    /// Three fields may differ where the last pass's candidates show the difference moves nothing
    /// (`doneChangesLeaveThePlan`, `responsesKeepTheOrder`, `heldLaterChangesLeaveThePlan`); the
    /// kept key then takes the new values of the first two. `exactly` leaves that out.
    mutating func lastKeyMatches(
        at now: Instant, horizonEnd: Instant, phone: PhoneHearing = .atOnce, exactly: Bool = false
    ) -> Bool {
        let stage = lapseStage(at: now)
        // Read in place (optional chaining borrows the kept key; a binding would copy it).
        let streakDay = streakAtRiskDay(at: now)
        guard
            state.plan.lastKey?.holdsStoredInputs(
                of: self, lapseStage: stage, horizonEnd: horizonEnd, streakAtRiskDay: streakDay)
                == true
        else { return false }
        let times = currentReEngagementTimes()
        guard state.plan.lastKey?.reEngagementTimes == times else { return false }
        guard state.plan.lastKey?.committed == committed(at: now, phone: phone) else { return false }
        // Kept as the pass saw it: a restored engine rebuilds the key for the pass's instant.
        let held = heldLater(at: now, phone: phone)
        if let known = state.plan.lastKey?.heldLater, known != held {
            guard !exactly, heldLaterChangesLeaveThePlan(from: known, to: held, at: now) else { return false }
        }
        if state.plan.lastKey?.done != state.activity.done {
            guard !exactly, doneChangesLeaveThePlan() else { return false }
            state.plan.lastKey?.done = state.activity.done
        }
        let responses = budgetResponses
        if state.plan.lastKey?.budgetResponses != responses {
            guard !exactly, responsesKeepTheOrder(at: now) else { return false }
            state.plan.lastKey?.budgetResponses = responses
        }
        return true
    }

    /// One pass of the planner over every candidate source; returns what changes. What the
    /// phone holds and fires before it hears of the pass is committed (`committed(at:phone:)`).
    private mutating func planPass(at now: Instant, horizonEnd: Instant, phone: PhoneHearing) -> [PlanChange] {
        let (candidates, series, suppressed) = gatherCandidates(at: now, horizonEnd: horizonEnd)
        let budget = attentionBudget

        // A daily series holds one slot each and fires every day: its future firings go into
        // the cap ledger (as far as any candidate reaches) before anything is planned around it.
        let ledgerEnd = max(horizonEnd, (candidates.map(\.plannedAt).max() ?? horizonEnd) + .secondsPerDay)
        var seriesCandidates: [Candidate] = []
        var seriesFirings: [Instant] = []
        for time in series ?? [] {
            seriesFirings += seriesFireTimes(time, from: now + 1, to: ledgerEnd)
            seriesCandidates.append(
                candidate(
                    .dailySeries(.hydration, minute: time.minutesSinceMidnight), at: nextSeriesFire(time, after: now)))
        }
        var context = PlanningContext(
            now: now, zone: zone, preferences: profile.preferences, ledger: state.plan.ledger,
            activeUntil: state.activity.activeUntil,
            slotBudget: configuration.pendingLimit - configuration.reservedSlots,
            fired: state.plan.fired, done: state.activity.done,
            previous: OccurrenceMap(state.plan.planned.lazy.map { ($0.id, $0) }), attentionBudget: budget)
        context.committed = committed(at: now, phone: phone)
        context.heldLater = heldLater(at: now, phone: phone)
        var allocation = Planner.allocate(
            candidates, series: seriesCandidates, reservedFireTimes: seriesFirings, context: context)
        // The lapse campaign's silences (give_me_space, the holdout) are traced like suppressions.
        allocation.suppressed = suppressed.map { (candidate: $0.0, reason: $0.1) } + allocation.suppressed
        let changes = Planner.diff(
            previous: state.plan.planned, allocation: allocation, previousByID: context.previous)
        state.plan.planned = allocation.plan
        return changes
    }

    /// A pass's candidates at `now` in order (`orderedCandidates`), with the hydration series'
    /// times and what the sources silenced; remembers what the pass is known by besides its key
    /// (`PlanState.nextNudgeAt`, `PlanState.lastOrder`). A pass and a restore call it alike.
    private mutating func gatherCandidates(
        at now: Instant, horizonEnd: Instant
    ) -> (candidates: [Candidate], series: [LocalTimeOfDay]?, suppressed: [(Candidate, ReasonCode)]) {
        let series = state.plan.deviceRefuses ? nil : activeSeriesTimes(at: now)
        var suppressed: [(Candidate, ReasonCode)] = []
        let gathered = orderedCandidates(at: now, horizonEnd: horizonEnd, series: series, suppressed: &suppressed)
        state.plan.nextNudgeAt = gathered.nextNudgeAt
        keepOrder(of: gathered.candidates)
        return (gathered.candidates, series, suppressed)
    }

    /// The candidates of a pass at `now` from every source, less those it may not plan (a kind
    /// disabled since, the local channel while the device refuses it: those go to `suppressed`),
    /// in the planner's order; and the earliest lapse nudge among them (`PlanState.nextNudgeAt`).
    private func orderedCandidates(
        at now: Instant, horizonEnd: Instant, series: [LocalTimeOfDay]?, suppressed: inout [(Candidate, ReasonCode)]
    ) -> (candidates: [Candidate], nextNudgeAt: Instant?) {
        var candidates = routineCandidates(
            at: now, until: horizonEnd, skipHydration: series != nil, skipped: &suppressed)
        candidates += reminderCandidates(at: now, until: horizonEnd)
        // A snoozed copy fires when the user asked: the trace says so.
        candidates += state.reminders.snoozed.map { snoozed in
            var copy = snoozed
            copy.retiming = Retiming(.snoozed, nominalAt: nil)
            return copy
        }
        candidates += state.reminders.followUps
        candidates += state.social.groups.map { groupCandidate($0) }
        let nudgesStart = candidates.endIndex
        appendReEngagement(to: &candidates, suppressed: &suppressed, at: now)
        let nextNudgeAt = candidates[nudgesStart...].lazy.map(\.plannedAt).min()
        // A kind the user disabled since a copy or follow-up was made is never planned.
        let preferences = profile.preferences
        if !preferences.enabled || preferences.settings.values.contains(.disabled) {
            candidates.removeAll { !preferences.isEnabled($0.kind) }
        }
        // The device refuses local notifications: none is planned there, and what was pending is
        // cancelled (the device would not show it, and must not fire it late once allowed again).
        if state.plan.deviceRefuses {
            for candidate in candidates where ChannelPolicy.channel(for: candidate.kind) == .local {
                suppressed.append((candidate, .notificationsNotAllowed))
            }
            candidates.removeAll { ChannelPolicy.channel(for: $0.kind) == .local }
        }
        if attentionBudget != nil {
            let responses = state.coaching.responses
            Planner.order(&candidates) { AttentionValue.of($0, responses: responses, zone: zone, now: now) }
        } else {
            Planner.order(&candidates)
        }
        return (candidates, nextNudgeAt)
    }

    /// Turns the planner's changes into effects and trace entries, in order.
    private mutating func apply(_ changes: [PlanChange], at now: Instant, into effects: inout [Effect]) {
        if changes.contains(where: \.changesLocalPlan) { state.plan.countLocalChange(at: now) }
        let cancelledIDs = changes.compactMap { change -> RequestID? in
            if case .cancel(let old, _) = change { return old.id.requestID }
            return nil
        }
        if !cancelledIDs.isEmpty { effects.append(.cancel(requestIDs: cancelledIDs)) }
        for change in changes {
            switch change {
            case .cancel(let old, let reason):
                record(
                    old.id, .cancelled, reason ?? cancellationReason(for: old, at: now), plannedAt: old.plannedAt,
                    fireAt: nil, level: nil, windowEnd: slotWindowEnd(of: old.id), at: now, into: &effects)
            case .schedule(let candidate, let dueAt, let fireAt, let reason):
                // The identifier is written once, for the request and the coach.
                let request = makeRequest(for: candidate, fireAt: fireAt)
                effects.append(.schedule(request, fireAt: fireAt, channel: ChannelPolicy.channel(for: candidate.kind)))
                askCoach(for: candidate, requestID: request.identifier, fireAt: fireAt, into: &effects)
                // Planned before and overdue now: a change of zone moved it into the past (or its
                // time passed while a rule held it), and it goes out at once inside its window.
                let retiming =
                    candidate.retiming
                    ?? (dueAt > candidate.plannedAt
                        ? Retiming(
                            state.user.zoneChangedAt == now ? .timeZoneChanged : .replanned,
                            nominalAt: candidate.plannedAt) : nil)
                // On time for its planned time, but that time is not the nominal one: say why.
                let why = fireAt == dueAt && reason == .onTime ? retiming?.reason ?? reason : reason
                let nominal = retiming?.nominalAt ?? candidate.plannedAt
                record(
                    candidate.id, fireAt != dueAt ? .deferred : .scheduled, why, plannedAt: dueAt, fireAt: fireAt,
                    level: candidate.level, retiming: retiming, nominalAt: nominal != fireAt ? nominal : nil,
                    at: now, into: &effects)
            case .drop(let candidate, let dueAt, let reason):
                record(
                    candidate.id, .dropped, reason, plannedAt: dueAt, fireAt: nil, level: candidate.level,
                    retiming: candidate.retiming, windowEnd: candidate.windowEnd, at: now, into: &effects)
            case .regroup(let id, let reason):
                regroup(id, because: reason, at: now, into: &effects)
            case .suppress(let candidate, let reason):
                record(
                    candidate.id, .suppressed, reason, plannedAt: candidate.plannedAt, fireAt: nil, level: nil, at: now,
                    into: &effects)
            }
        }
    }

    private func cancellationReason(for old: PlannedNotification, at now: Instant) -> ReasonCode {
        if !profile.preferences.isEnabled(old.kind) { return .kindDisabled }
        if state.plan.deviceRefuses && ChannelPolicy.channel(for: old.kind) == .local {
            return .notificationsNotAllowed
        }
        if old.kind == .reEngagement && lapseStage(at: now) == .active && lastActiveAt > now - .secondsPerHour {
            return .userReturned
        }
        // A change of zone took it past its slot's window: it is not sent as something else.
        if let end = slotWindowEnd(of: old.id), end <= now + 1 { return .slotWindowPassed }
        return .replanned
    }

    /// The end of the slot window of `id` in the user's current zone; nil for a kind without
    /// one, a snoozed copy or a daily series.
    func slotWindowEnd(of id: OccurrenceID) -> Instant? {
        guard id.snooze == 0, !id.isDailySeries, let window = SlotWindow.of(id.kind) else { return nil }
        guard let minute = SlotWindow.nominalMinute(of: id, preferences: profile.preferences) else { return nil }
        let nominal = LocalDateTime(localSeconds: Int64(id.day) * .secondsPerDay + Int64(minute) * .secondsPerMinute)
        return window.end(nominal: zone.instant(for: nominal))
    }

    /// Where routine planning stops: the local midnight after `now + horizonSeconds`, or earlier
    /// when the user would be lapsed by then (routine reminders pause for a user who stays away).
    func routineHorizonEnd(at now: Instant) -> Instant {
        let day = zone.localDateTime(at: now + configuration.horizonSeconds).daysSinceEpoch
        let endOfDay = zone.instant(for: LocalDateTime(localSeconds: (day + 1) * .secondsPerDay))
        return min(endOfDay, lastActiveAt + configuration.lapseAfterSeconds)
    }
}

extension PlanChange {
    /// Whether the change schedules, replaces or cancels a request of the `local` channel.
    fileprivate var changesLocalPlan: Bool {
        switch self {
        case .cancel(let old, _): ChannelPolicy.channel(for: old.kind) == .local
        case .schedule(let candidate, _, _, _): ChannelPolicy.channel(for: candidate.kind) == .local
        case .drop, .regroup, .suppress: false
        }
    }
}
