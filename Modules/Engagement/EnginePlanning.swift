import Content
public import Models
import Scheduling

/// The planning pass: gather the candidate sources, run the planner's stages (`Planner.order`,
/// `allocate`, `diff`), then turn its changes into effects and trace entries. Regrouping is a
/// stage of its own: a social group the rules block moves into the digest, and the pass runs
/// again over the new groups (at most three times).
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
            let changes = planPass(at: now, horizonEnd: horizonEnd, phone: phone)
            apply(changes, at: now, into: &effects)
        }
        // Still regrouping after the last pass allowed: the next input plans again.
        state.plan.lastKey = nil
    }

    /// Passes one input may run: a first one, and more while regrouping changes the groups.
    static let maximumPassesPerInput = 4

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
        return effects.filter { effect in
            switch effect {
            case .schedule, .cancel: true
            default: false
            }
        }
    }

    mutating func planKey(at now: Instant, horizonEnd: Instant, phone: PhoneHearing = .atOnce) -> PlanKey {
        PlanKey(
            profileRevision: state.user.profileRevision, lapseStage: lapseStage(at: now), horizonEnd: horizonEnd,
            streakAtRiskDay: streakAtRiskDay(at: now), zone: zone.identifier,
            sessionHold: state.activity.sessionHold, reEngagementTimes: currentReEngagementTimes(),
            lastWorkout: state.coaching.recentWorkouts.last, timing: state.coaching.timing,
            snoozed: state.reminders.snoozed, followUps: state.reminders.followUps, groups: state.social.groups,
            done: state.activity.done, deviceRefuses: state.plan.deviceRefuses, budgetResponses: budgetResponses,
            committed: committed(at: now, phone: phone))
    }

    /// The response counts the attention budget orders by; nil without a budget (`PlanKey`).
    var budgetResponses: ResponseStats? { attentionBudget == nil ? nil : state.coaching.responses }

    /// Recomputes what the last pass, at `lastPassAt`, is remembered by and the snapshot does not
    /// store: its key, the earliest nudge it planned and its candidates in order, as the pass
    /// itself set them. The candidates come from the state now, which the key shows unchanged
    /// since but for what fired (which a pass skips) and what is done and the response counts
    /// (which the last input found to move nothing, or it would have run a pass).
    mutating func rememberLastPass(at lastPassAt: Instant) {
        let horizonEnd = routineHorizonEnd(at: lastPassAt)
        state.plan.lastKey = planKey(at: lastPassAt, horizonEnd: horizonEnd, phone: state.plan.lastPassPhone)
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
    /// Two fields may differ where the last pass's candidates show the difference moves nothing
    /// (`doneChangesLeaveThePlan`, `responsesKeepTheOrder`); the kept key then takes their new
    /// values. `exactly` leaves that out.
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
        let cancelledIDs = changes.compactMap { change -> String? in
            if case .cancel(let old, _) = change { return old.id.description }
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

    /// Moves planned notifications whose time has come into the history of sent ones.
    mutating func retireFired(through now: Instant, into effects: inout [Effect]) {
        // The phone's copies first: one it showed at another time than the plan's is gone.
        let shownElsewhen = retireHeldCopies(through: now)
        if !shownElsewhen.isEmpty { effects.append(.cancel(requestIDs: shownElsewhen.map(\.description).sorted())) }
        // A daily series stays pending: it only moves on to its next day.
        if state.plan.planned.contains(where: { $0.repeatsDaily && $0.fireAt <= now }) {
            for index in state.plan.planned.indices
            where state.plan.planned[index].repeatsDaily && state.plan.planned[index].fireAt <= now {
                let firedAt = state.plan.planned[index].fireAt
                let local = zone.localDateTime(at: firedAt).timeOfDay
                // Every firing since the last input is history for the caps, like any delivery.
                state.plan.ledger.insert(firedAt)
                for at in seriesFireTimes(local, from: firedAt + 1, to: now + 1) { state.plan.ledger.insert(at) }
                state.plan.planned[index].fireAt = nextSeriesFire(local, after: now)
            }
            state.plan.planned.sort(by: PlannedNotification.firesBefore)
        }
        var firedCount = 0
        var forgetsKey = false
        for item in state.plan.planned {
            guard item.fireAt <= now else { break }
            firedCount += 1
            if neverReachedThePhone(item) {
                // Never planned again, and out of the caps' ledger: it never showed.
                state.plan.fired[item.id] = item.fireAt
                state.plan.lastTraced[item.id] = nil
                state.copy.coachCopy[item.id] = nil
                record(
                    item.id, .dropped, .stale, plannedAt: item.plannedAt, fireAt: nil, level: nil, at: now,
                    into: &effects)
                forgetsKey = true
                continue
            }
            if noteFired(item) { forgetsKey = true }
        }
        if state.plan.phoneHolds.containsValue(where: { $0 <= now }) { state.plan.phoneHolds.filter { $0 > now } }
        guard firedCount > 0 || !state.reminders.snoozed.isEmpty else { return }
        // The daily cap is checked on the local day of each time a candidate's search passes
        // through: one the hourly cap moved past midnight was not counted on the day it left,
        // and one placed after it may have taken that day's last place; fired, that one is in
        // the ledger the first is measured against again. With a daily cap, a firing plans again.
        if firedCount > 0, profile.preferences.maxPerDay != nil { forgetsKey = true }
        // A plan that filled the slot budget left candidates unplanned: a firing frees a slot a
        // pass would fill, which no key field shows.
        if forgetsKey
            || (firedCount > 0 && state.plan.planned.count >= configuration.pendingLimit - configuration.reservedSlots)
        {
            state.plan.lastKey = nil
        }
        state.plan.planned.removeFirst(firedCount)
        state.plan.ledger.prune(before: now - .secondsPerDay - .secondsPerHour)
        // Candidates reach back at most a staleness window (18 h); keep a day of memory. What
        // fired or was done is kept three days: flying west repeats up to a day of local dates.
        // Each map is filtered once it holds about a day's worth more than it needs (a filter over
        // a few dozen entries): dead entries are weight in every snapshot.
        let horizonStart = now - .secondsPerDay - 2 * .secondsPerHour
        let datesRepeatFrom = now - 3 * .secondsPerDay
        if state.plan.fired.count > 48 { state.plan.fired.filter { $0 >= datesRepeatFrom } }
        if state.activity.done.count > 32 { state.activity.done.filter { $0 >= datesRepeatFrom } }
        if state.plan.lastTraced.count > 48 { state.plan.lastTraced.filter { $0.plannedAt >= horizonStart } }
        if state.copy.coachCopy.count > 8 { state.copy.coachCopy.filter { $0.askedAt >= horizonStart } }
        pruneStaleReminders(at: now)
    }

    /// A local one-off whose time came while the phone had a change of its plan still to pull
    /// (`PlanState.phoneHearsBy`), and that its last pull did not give it, never showed: the
    /// phone could not hear of it in time (it was offline, or iOS did not wake it). Its time
    /// passed unsent, so it is dropped as stale rather than filed as sent.
    func neverReachedThePhone(_ item: PlannedNotification) -> Bool {
        state.plan.phoneHearsBy != nil && !item.repeatsDaily && ChannelPolicy.channel(for: item.kind) == .local
            && state.plan.phoneHolds[item.id] == nil
    }

    /// What the phone held from its last pull (`phoneApplied`) and whose time came by `now`
    /// fired on the phone: it held it until it pulled again. When the plan had dropped it (the
    /// engine took the phone to hear of the change by a sync that reached it late, or never), it
    /// is history for the caps all the same, so the day is not given one more than its cap. One
    /// the plan still holds, at the same time or another, fired then: the kit never places again
    /// what it showed, so it leaves the plan. Returns those, for the server's copy to drop.
    @discardableResult
    mutating func retireHeldCopies(through now: Instant) -> [OccurrenceID] {
        guard state.plan.phoneHolds.containsValue(where: { $0 <= now }) else { return [] }
        var counted = false
        var leftThePlan: [OccurrenceID] = []
        for (id, fireAt) in state.plan.phoneHolds.entries where fireAt <= now && state.plan.fired[id] == nil {
            if let index = state.plan.planned.firstIndex(where: { $0.id == id }) {
                // At the plan's own time: it fires with the plan (`retireFired`).
                guard state.plan.planned[index].fireAt != fireAt else { continue }
                counted = true
                var shown = state.plan.planned.remove(at: index)
                shown.fireAt = fireAt
                _ = noteFired(shown)
                leftThePlan.append(id)
            } else {
                counted = true
                state.plan.fired[id] = fireAt
                state.plan.ledger.insert(fireAt)
            }
        }
        if counted { state.plan.lastKey = nil }
        return leftThePlan
    }

    /// Records `item` as fired at its `fireAt`: in the history of sent ones and the caps' ledger,
    /// its reminder retired and its response awaited. Returns whether a kept plan key must be
    /// forgotten (`retireFired`).
    mutating func noteFired(_ item: PlannedNotification) -> Bool {
        state.plan.fired[item.id] = item.fireAt
        state.plan.ledger.insert(item.fireAt)
        // A fired occurrence is never planned, traced or written again: what was kept for
        // it (its last traced decision, the coach's copy) is dead weight in the snapshot.
        state.plan.lastTraced[item.id] = nil
        state.copy.coachCopy[item.id] = nil
        if item.kind == .reEngagement, case .attempt(let attempt) = item.id.slot {
            state.lapse.lastAttemptSent = max(state.lapse.lastAttemptSent, attempt)
        }
        retireReminder(item.id)
        awaitResponse(item.id, firedAt: item.fireAt)
        // Exempt from a limit it counts against (the caps for a transactional kind, the
        // attention budget for a digest too), it was placed without regard to what the pass
        // had placed before it; fired, it is in the ledger those are measured against now.
        let forgetsKey =
            item.kind.isTransactional || state.social.groups.contains(where: { $0.id == item.id && $0.isDigest })
        if item.kind.isSocial {
            state.social.groups.removeAll { $0.id == item.id }
            // Any other fired group a pass would skip like any fired occurrence (without a
            // daily cap, everything placed around it respected it): the kept key loses it
            // too, so its going asks for no pass.
            state.plan.lastKey?.groups.removeAll { $0.id == item.id }
        }
        return forgetsKey
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
