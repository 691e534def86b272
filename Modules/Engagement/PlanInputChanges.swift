import Models
import Scheduling

/// A candidate of the last planning pass, as far as its place in the planner's order and the
/// done check read it (`PlanState.lastOrder`): no reference-counted field, so the list is one
/// buffer, reused from pass to pass.
struct OrderedCandidate: Hashable, Sendable {
    var id: OccurrenceID
    var kind: NotificationKind
    var plannedAt: Instant
    var relevance: Double
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
                    relevance: candidate.policy.relevance))
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
