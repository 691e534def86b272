public import Engagement
public import Models
public import Storage

/// The outbox rows one step commits, as every shell commits them (`EngineRuntime`, the
/// simulator's server): the rows of its effects (`OutboxPlan`); the badge sync the plan's
/// signal asks for (`PlanSignal`), when the step moved the local plan's revision, sent early
/// when the step withdrew what the phone would fire before the slot's sync reached it
/// (`UserEngine.withdrewHeldCopy`, `SilentPushPlan.earlyRows`); and after a change of zone, the
/// user's pending rows moved to the engine's new fire times (`OutboxSteps.moved`).
public enum StepOutbox {
    /// The rows of a step of `engine` (the engine after it) at `now`. `signals` says whether the
    /// step's source asks for the signal (`PlanSignal.asksForSync`), read only when the revision
    /// moved from `revisionBefore`; `phone` is how the phone hears of the step (`PhoneHearing`,
    /// as the engine was given it); `syncHistory` reads the user's syncs for the given keys
    /// (`SilentPushPlan.historyKeys`), only for an early sync; `pending` reads the user's pending
    /// rows, only after a change of zone.
    public static func rows<Failure: Error>(
        for effects: [Effect], engine: UserEngine, revisionBefore: Int?, signals: () throws(Failure) -> Bool,
        phone: PhoneHearing, syncHistory: ([OutboxKey]) throws(Failure) -> SilentPushPlan.SyncHistory,
        zoneChanged: Bool, pending: () throws(Failure) -> [OutboxRow], silentPushes: SilentPushPlan, at now: Instant
    ) throws(Failure) -> (cancelled: [RequestID], rows: [OutboxRow]) {
        var outbox = OutboxPlan.rows(for: effects, userID: engine.profile.id, at: now)
        if let revisionBefore, revisionBefore != engine.localPlanRevision, try signals() {
            let userID = engine.profile.id
            var early: [OutboxRow]?
            if engine.withdrewHeldCopy(in: effects, phone: phone, at: now) {
                let history = try syncHistory(silentPushes.historyKeys(for: userID, changedAt: now))
                early = silentPushes.earlyRows(for: userID, changedAt: now, history: history)
            }
            outbox.rows += early ?? [silentPushes.row(for: userID, changedAt: now)]
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
