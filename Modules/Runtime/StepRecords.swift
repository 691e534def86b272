public import Engagement
public import Models
public import Storage

/// The history one engine step adds to the store: the input if it is an activity, a ledger
/// transition per traced decision about a request, the user's lapse state after a background
/// run. Both shells (the simulator's store writer and the runtime) record steps through this one
/// mapping. A step without an input of its own (the runtime applying a changed profile) records
/// its traces only.
public enum StepRecords {
    /// `occurredAt` is when the activity happened if the app reported it late (at most `now`).
    public static func batch(
        for input: EngineInput?, effects: [Effect], engine: UserEngine, at now: Instant, occurredAt: Instant? = nil
    ) -> StoreBatch {
        var batch = StoreBatch()
        let userID = engine.profile.id
        if case .activity(let activity, _) = input {
            batch.activityEvents.append(
                ActivityEvent(userID: userID, at: min(occurredAt ?? now, now), kind: activity))
        }
        if case .backgroundTaskLaunched = input {
            batch.engagementStates.append(
                EngagementState(
                    userID: userID, lapseStage: engine.lapseStage(at: now).rawValue,
                    reEngagementAttempts: engine.reEngagementAttemptsSent, checkpoint: "\(now.secondsSinceEpoch)"))
        }
        for effect in effects {
            // An entry for a group's counted items names no request of its own, and a social
            // event's id is no request's (its namespace is `SocialEventStore`): no ledger row.
            guard case .trace(let entry) = effect, entry.countedItems == nil, !entry.subject.isSocialEvent else {
                continue
            }
            batch.ledgerEntries.append(ledgerEntry(userID: userID, entry, at: now))
        }
        return batch
    }

    /// The ledger row of a traced decision.
    public static func ledgerEntry(userID: UserID, _ entry: TraceEntry, at now: Instant) -> LedgerEntry {
        let state: LedgerState =
            switch entry.decision {
            case .scheduled, .deferred, .copyChosen: .pending
            case .cancelled, .dropped, .suppressed: .cancelled
            case .folded: .planned
            }
        return ledgerEntry(
            userID: userID, RequestID(entry.requestID), entry.kind, state, at: now, reason: entry.reason)
    }

    /// A ledger transition. One row per request and state at a time: a daily series or a
    /// re-planned request writes each transition once, and a replay of the same batch is a no-op.
    public static func ledgerEntry(
        userID: UserID, _ requestID: RequestID, _ kind: NotificationKind, _ state: LedgerState, at: Instant,
        reason: ReasonCode? = nil
    ) -> LedgerEntry {
        LedgerEntry(
            userID: userID, requestID: requestID, kind: kind, state: state, at: at, reason: reason,
            idempotencyKey: LedgerEntry.transitionKey(requestID: requestID, state: state) + "@\(at.secondsSinceEpoch)")
    }
}
