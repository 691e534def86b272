import Models
import Scheduling

/// A candidate of the last planning pass, as far as its place in the planner's order, the done
/// check and the span a push's rules read (`heldLaterChangesLeaveThePlan`) need it
/// (`PlanState.lastOrder`): no reference-counted field, so the list is one buffer, reused from
/// pass to pass.
struct OrderedCandidate: Hashable, Sendable {
    var id: OccurrenceID
    var kind: NotificationKind
    var plannedAt: Instant
    var relevance: Double
    /// How long after `plannedAt` the rules may still place it (`KindPolicy.stalenessSeconds`).
    var stalenessSeconds: Int64
}

/// Inputs that change the plan's key without changing the plan. Logging a meal or a check-in
/// marks occurrences done, and under an attention budget every response moves the counts the
/// candidates are ordered by; most such changes touch no candidate of the last pass, or leave
/// the order as it was. Asked only when every other input matches (`lastKeyMatches`), so the
/// candidates are the last pass's; tests and `simulate --check-plans` hold the skips against
/// full passes.
extension UserEngine {
    /// Keeps the candidates a pass hands to the planner, in its order (the buffer is reused).
    mutating func keepOrder(of candidates: [Candidate]) {
        var order = state.plan.lastOrder ?? []
        state.plan.lastOrder = nil
        order.removeAll(keepingCapacity: true)
        for candidate in candidates {
            order.append(
                OrderedCandidate(
                    id: candidate.id, kind: candidate.kind, plannedAt: candidate.plannedAt,
                    relevance: candidate.policy.relevance, stalenessSeconds: candidate.policy.stalenessSeconds))
        }
        state.plan.lastOrder = order
    }

    /// Whether what is done now, against what the last pass knew, changes whether any of its
    /// candidates not yet fired is done (`PlanningContext.isDone`): if none, the planner sees the
    /// same candidates the same way. A fired one is skipped before the question is asked.
    func doneChangesLeaveThePlan() -> Bool {
        guard let order = state.plan.lastOrder, let known = state.plan.lastKey?.done else { return false }
        let done = state.activity.done
        let fired = state.plan.fired
        return order.allSatisfy { candidate in
            fired.contains(candidate.id)
                || PlanningContext.isDone(candidate.id, in: done) == PlanningContext.isDone(candidate.id, in: known)
        }
    }

    /// Whether a pass with `held` as the phone's other copies (`UserEngine.heldLater`), the last
    /// pass's `known` being the only other input that differs, places what the last one placed.
    /// Those copies reach only the pushes' rules: `Planner.allocate` counts them in the ledger a
    /// push on the remote channel is measured against, and nothing else. A push's rules try times
    /// from its planned time to its deadline (`DeliveryRules.evaluate`: its staleness, or just
    /// after `now`), and read that ledger on each time's local day and within an hour of it
    /// (`pushReadSpan`). When no copy that differs (held in one and not the other, or at another
    /// instant) lies in that span for any push among the last pass's candidates that a pass now
    /// would evaluate, every push meets the same counts, and the plan is the same.
    func heldLaterChangesLeaveThePlan(
        from known: OccurrenceMap<Instant>, to held: OccurrenceMap<Instant>, at now: Instant
    )
        -> Bool
    {
        guard let order = state.plan.lastOrder else { return false }
        var changed: [Instant] = []
        for entry in known.entries where held[entry.id] != entry.value { changed.append(entry.value) }
        for entry in held.entries where known[entry.id] != entry.value { changed.append(entry.value) }
        for candidate in order where ChannelPolicy.channel(for: candidate.kind) == .remote {
            // What a pass now skips reads nothing: fired, or past its time and never planned. A
            // fired group is gone from the state (a restored engine's candidates lack it).
            if state.plan.fired.contains(candidate.id) { continue }
            if candidate.plannedAt <= now, !state.plan.planned.contains(where: { $0.id == candidate.id }) { continue }
            let span = pushReadSpan(
                plannedAt: candidate.plannedAt, deadline: max(candidate.plannedAt + candidate.stalenessSeconds, now + 1)
            )
            if changed.contains(where: span.contains) { return false }
        }
        return true
    }

    /// The instants whose presence in the ledger a push planned at `plannedAt` may read, trying
    /// times up to `deadline`: the local days from the first to the last (the daily cap and the
    /// attention budget count a time's day), and the hour each side (the hourly cap).
    func pushReadSpan(plannedAt: Instant, deadline: Instant) -> ClosedRange<Instant> {
        let firstDay = zone.localDateTime(at: plannedAt).daysSinceEpoch
        let lastDay = zone.localDateTime(at: deadline).daysSinceEpoch
        let from = min(
            zone.instant(for: LocalDateTime(localSeconds: firstDay * .secondsPerDay)), plannedAt - .secondsPerHour)
        let to = max(
            zone.instant(for: LocalDateTime(localSeconds: (lastDay + 1) * .secondsPerDay)), deadline + .secondsPerHour)
        return from...to
    }

    /// Whether, under an attention budget, the response counts now leave the candidates due at
    /// or after `now` in the order the last pass gave them (`Planner.OrderKey`). Those past their
    /// time the planner skips unless they were planned, and a planned one held past its time
    /// makes the clock ask for a pass anyway (`planMovesWithClock`); the others are worth
    /// `AttentionValue.notYetDue` (no freshness lost yet), which the counts alone move.
    func responsesKeepTheOrder(at now: Instant) -> Bool {
        guard let order = state.plan.lastOrder, let responses = budgetResponses,
            state.plan.lastKey?.budgetResponses != nil
        else { return false }
        var previous: Planner.OrderKey?
        for candidate in order where candidate.plannedAt >= now {
            let value = AttentionValue.notYetDue(
                kind: candidate.kind, at: candidate.plannedAt, relevance: candidate.relevance, responses: responses,
                zone: zone)
            let key = Planner.OrderKey(value: value, at: candidate.plannedAt, id: candidate.id)
            if let previous, !Planner.OrderKey.precedes(previous, key) { return false }
            previous = key
        }
        return true
    }
}
