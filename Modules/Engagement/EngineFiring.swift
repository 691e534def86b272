import Content
public import Models
import Scheduling

/// What fired since the last input: the plan's own firings, and the copies the phone held.
extension UserEngine {
    /// Moves planned notifications whose time has come into the history of sent ones.
    mutating func retireFired(through now: Instant, into effects: inout [Effect]) {
        // The phone's copies first: one it showed at another time than the plan's is gone.
        let shownElsewhen = retireHeldCopies(through: now)
        if !shownElsewhen.isEmpty {
            effects.append(.cancel(requestIDs: shownElsewhen.map { $0.requestID }.sorted()))
        }
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
}
