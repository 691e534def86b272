import Engagement
import Models
import Storage

/// Writes the run's history through a store: the activity, the notification ledger and the
/// users' lapse states, grouped into one transaction every few hundred engine steps. Write-only,
/// so it cannot change what happens, and the digest is the same with any store.
struct StoreWriter {
    let store: any EngagementStore
    /// Writes waiting for the next transaction: whole engine steps.
    private var pending = StoreBatch()
    private var pendingSteps = 0
    /// Engine steps per transaction.
    static let stepsPerBatch = 256

    init(store: any EngagementStore) { self.store = store }

    /// The users' profiles, written with the first batch.
    mutating func recordProfiles(_ profiles: [UserProfile]) { pending.profiles = profiles }

    /// Adds one engine step's writes (the input if it is an activity, the ledger transitions of
    /// its decisions, the user's lapse state after background runs); flushes every
    /// `stepsPerBatch` steps.
    mutating func recordStep(_ input: EngineInput, effects: [Effect], engine: UserEngine, at now: Instant) throws {
        let userID = engine.profile.id
        if case .activity(let activity) = input {
            pending.activityEvents.append(ActivityEvent(userID: userID, at: now, kind: activity))
        }
        if case .backgroundTaskLaunched = input {
            pending.engagementStates.append(
                EngagementState(
                    userID: userID, lapseStage: engine.lapseStage(at: now).rawValue,
                    reEngagementAttempts: engine.reEngagementAttemptsSent,
                    checkpoint: "\(now.secondsSinceEpoch)"))
        }
        for effect in effects {
            guard case .trace(let entry) = effect else { continue }
            let state: LedgerState
            switch entry.decision {
            case .scheduled, .deferred: state = .pending
            case .cancelled, .dropped, .suppressed: state = .cancelled
            case .folded: state = .planned
            }
            recordLedger(userID: userID, entry.requestID, entry.kind, state, at: now, reason: entry.reason)
        }
        pendingSteps += 1
        if pendingSteps >= Self.stepsPerBatch { try flush() }
    }

    mutating func recordLedger(
        userID: String, _ requestID: String, _ kind: NotificationKind, _ state: LedgerState, at: Instant,
        reason: ReasonCode? = nil
    ) {
        // One row per request and state at a time: a daily series or a re-planned request
        // writes each transition once, and a replay of the same batch is a no-op.
        pending.ledgerEntries.append(
            LedgerEntry(
                userID: userID, requestID: requestID, kind: kind, state: state, at: at, reason: reason,
                idempotencyKey: LedgerEntry.transitionKey(requestID: requestID, state: state)
                    + "@\(at.secondsSinceEpoch)"))
    }

    /// Applies the pending writes in one transaction; throws `SimulationError.store` when the
    /// store refuses them.
    mutating func flush() throws {
        guard !pending.isEmpty else { return }
        do {
            try store.apply(pending)
        } catch {
            throw SimulationError.store(error)
        }
        pending = StoreBatch()
        pendingSteps = 0
    }
}
