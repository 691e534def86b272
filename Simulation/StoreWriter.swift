import Engagement
import Models
import Runtime
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
    /// The share of transactions that fail (`storeWriteFailure`), and the draws that decide which.
    private let failureRate: Double
    private var draws: SeededGenerator
    /// Transactions that failed and were written again.
    private(set) var retried = 0

    init(store: any EngagementStore, failureRate: Double = 0, seed: UInt64 = 0) {
        self.store = store
        self.failureRate = failureRate
        self.draws = SeededGenerator(seed: seed)
    }

    /// The users' profiles, written with the first batch.
    mutating func recordProfiles(_ profiles: [UserProfile]) { pending.profiles = profiles }

    /// Adds one engine step's writes (`StepRecords`, the mapping the runtime uses too); flushes
    /// every `stepsPerBatch` steps.
    mutating func recordStep(_ input: EngineInput, effects: [Effect], engine: UserEngine, at now: Instant) throws {
        let step = StepRecords.batch(for: input, effects: effects, engine: engine, at: now)
        pending.activityEvents += step.activityEvents
        pending.engagementStates += step.engagementStates
        pending.ledgerEntries += step.ledgerEntries
        pendingSteps += 1
        if pendingSteps >= Self.stepsPerBatch { try flush() }
    }

    /// Adds a ledger transition the platform observed (delivered, responded).
    mutating func recordLedger(
        userID: UserID, _ requestID: RequestID, _ kind: NotificationKind, _ state: LedgerState, at: Instant
    ) {
        pending.ledgerEntries.append(StepRecords.ledgerEntry(userID: userID, requestID, kind, state, at: at))
    }

    /// Applies the pending writes in one transaction; throws `SimulationError.store` when the
    /// store refuses them.
    mutating func flush() throws {
        guard !pending.isEmpty else { return }
        do {
            // A failed transaction is retried with the same batch: refused before it was written
            // (nothing applied), or after it was written and its answer lost (applied once already,
            // so the retry must change nothing: the store's idempotency keys).
            while failureRate > 0 && draws.chance(failureRate) {
                retried += 1
                if draws.chance(0.5) { try store.apply(pending) }
            }
            try store.apply(pending)
        } catch {
            throw SimulationError.store(error)
        }
        pending = StoreBatch()
        pendingSteps = 0
    }
}
