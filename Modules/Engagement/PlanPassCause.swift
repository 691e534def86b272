public import Models

/// Why an input ran a planning pass rather than keep the last pass's plan (`lastKeyMatches`):
/// an input of the pass that changed since the last one (a field of the plan's key), the clock
/// alone (`planMovesWithClock`), or a key the engine had forgotten, which no field shows (a
/// firing under a daily cap, a restored snapshot that stored no pass). `simulate --check-plans`
/// tallies them, so the inputs that make the engine plan again can be counted before planning is
/// made cheaper or rarer.
public enum PlanPassCause: String, CaseIterable, Codable, Sendable {
    /// The engine held no key before this input (restored from a snapshot that stored no pass, a
    /// pull that found held copies fired off the plan, `retireHeldCopies`, or the last input
    /// left regrouping unsettled): it planned afresh.
    case keyForgottenBefore
    /// This input forgot the key (`retireFired`, a withdrawal by an event heard late).
    case keyForgottenByInput
    /// The clock may move the plan (`planMovesWithClock`).
    case clock
    // The fields of the plan's key, by their names.
    case profileRevision
    case lapseStage
    case horizonEnd
    case streakAtRiskDay
    case zone
    case sessionHold
    case lastWorkout
    case timing
    case snoozed
    case followUps
    case groups
    case done
    case deviceRefuses
    case budgetResponses
    case reEngagementTimes
    case committed
    case heldLater
}

extension UserEngine {
    /// Why this engine, as it stands right after an input at `now`, ran a pass: what differs
    /// between the key `before` (the same engine before the input) kept and the key the last
    /// pass made. Empty when the input ran no pass (`lastPlanPassAt` unchanged), or when it left
    /// regrouping unsettled (no key to compare). A pass several causes asked for names each.
    public func planPassCauses(since before: UserEngine, at now: Instant) -> [PlanPassCause] {
        guard lastPlanPassAt != before.lastPlanPassAt, let new = state.plan.lastKey else { return [] }
        var causes: [PlanPassCause] = before.planMovesWithClock(at: now) ? [.clock] : []
        guard let old = before.state.plan.lastKey else { return causes + [.keyForgottenBefore] }
        let fields: [(PlanPassCause, Bool)] = [
            (.profileRevision, old.profileRevision != new.profileRevision),
            (.lapseStage, old.lapseStage != new.lapseStage),
            (.horizonEnd, old.horizonEnd != new.horizonEnd),
            (.streakAtRiskDay, old.streakAtRiskDay != new.streakAtRiskDay), (.zone, old.zone != new.zone),
            (.sessionHold, old.sessionHold != new.sessionHold), (.lastWorkout, old.lastWorkout != new.lastWorkout),
            (.timing, old.timing != new.timing), (.snoozed, old.snoozed != new.snoozed),
            (.followUps, old.followUps != new.followUps), (.groups, old.groups != new.groups),
            (.done, old.done != new.done), (.deviceRefuses, old.deviceRefuses != new.deviceRefuses),
            (.budgetResponses, old.budgetResponses != new.budgetResponses),
            (.reEngagementTimes, old.reEngagementTimes != new.reEngagementTimes),
            (.committed, old.committed != new.committed), (.heldLater, old.heldLater != new.heldLater),
        ]
        causes += fields.lazy.filter(\.1).map(\.0)
        return causes.isEmpty ? [.keyForgottenByInput] : causes
    }
}
