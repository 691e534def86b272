public import Engagement
public import Models
public import Storage

/// The outbox rows one step commits, as every shell commits them (`EngineRuntime`, the
/// simulator's server): the rows of its effects (`OutboxPlan`); the badge sync the plan's
/// signal asks for (`PlanSignal`), when the step moved the local plan's revision; and after a
/// change of zone, the user's pending rows moved to the engine's new fire times
/// (`OutboxSteps.moved`).
public enum StepOutbox {
    /// The rows of a step of `engine` (the engine after it) at `now`. `signals` says whether the
    /// step's source asks for the signal (`PlanSignal.asksForSync`), read only when the revision
    /// moved from `revisionBefore`; `pending` reads the user's pending rows, only after a change
    /// of zone.
    public static func rows<Failure: Error>(
        for effects: [Effect], engine: UserEngine, revisionBefore: Int?, signals: () throws(Failure) -> Bool,
        zoneChanged: Bool, pending: () throws(Failure) -> [OutboxRow], silentPushes: SilentPushPlan,
        at now: Instant
    ) throws(Failure) -> (cancelled: [RequestID], rows: [OutboxRow]) {
        var outbox = OutboxPlan.rows(for: effects, userID: engine.profile.id, at: now)
        if let revisionBefore, revisionBefore != engine.localPlanRevision, try signals() {
            outbox.rows.append(silentPushes.row(for: engine.profile.id, changedAt: now))
        }
        if zoneChanged {
            outbox.rows += OutboxSteps.moved(
                try pending(), plannedIDs: engine.plannedRequestIDs,
                fireTimes: engine.plannedFireTimes,
                touched: Set(outbox.cancelled).union(outbox.rows.map(\.requestID)), at: now)
        }
        return outbox
    }
}
