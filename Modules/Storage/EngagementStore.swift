public import Models

/// Where the engine keeps what must survive a restart: profiles, activity, the notification
/// ledger and each user's engagement state.
///
/// Contract (every conformer must pass the conformance suite in `Tests/StorageTests`):
/// - **Atomic batches.** `apply(_:)` writes all of an engine step's records or none of them.
///   When it throws, nothing of the batch is visible, ever; when it returns, everything is.
///   The whole batch is validated before anything is written (`StoreError.invalidBatch` names
///   the first offending field).
/// - **Idempotent replay.** After a crash the shell replays the last step's batch, which may
///   already have been committed. Replaying must never duplicate:
///   - a ledger entry whose idempotency key was already applied for its user is a no-op, even
///     if later entries changed the same request since (an old replay never rolls state back);
///   - an activity event equal to one already stored (same user, instant and kind) is a no-op:
///     events are facts, and the same fact recorded twice is one fact;
///   - profiles and engagement states are upserts by user ID: the last write wins.
/// - **Ledger identity.** The ledger holds one row per (user, request ID): the request's
///   latest state. An entry with a new idempotency key for a known request replaces the row
///   (planned, then pending, then delivered, ...); entries in one batch apply in order.
/// - **Ledger retention.** A batch with ledger entries also removes, in the same transaction, at
///   most `LedgerRetention.prunedPerBatch` of each of its users' oldest rows, and as many of their
///   oldest idempotency keys, applied more than `LedgerRetention.seconds` before the newest entry
///   it adds for that user. Other users are not touched. A replay is of a recent batch, whose
///   keys are kept.
/// - **Committed reads.** Reads see only committed batches, never part of one, and reflect
///   every batch whose `apply` has returned (read-your-writes).
/// - **Ordering.** Lists come back in a defined order: activity events by time (then the order
///   they were first stored), ledger rows by time then request ID, user IDs ascending.
/// - **Errors.** Conformers throw `StoreError` only; reads of unknown users return `nil` or an
///   empty list, not `notFound`.
///
/// Not guaranteed: durability of an in-memory conformer across process restarts, and any
/// ordering between batches applied concurrently from different threads (each is atomic).
public protocol EngagementStore: Sendable {
    /// Applies one engine step's writes atomically and idempotently (see the protocol's contract).
    func apply(_ batch: StoreBatch) throws(StoreError)

    /// The stored profile of user `id`, or nil when there is none.
    func profile(id: UserID) throws(StoreError) -> UserProfile?

    /// Whether user `id` has a stored profile (by default: `profile(id:)` is not nil; a store
    /// may answer without reading the profile).
    func hasProfile(id: UserID) throws(StoreError) -> Bool

    /// The user's activity events at or after `since`, oldest first.
    func activityEvents(userID: UserID, since: Instant) throws(StoreError) -> [ActivityEvent]

    /// The instant of the user's newest activity event (by event time, not by arrival), or nil
    /// when the user has none.
    func lastActiveAt(userID: UserID) throws(StoreError) -> Instant?

    /// Users whose newest activity event is before `since`, ascending. Users without any
    /// activity event are not listed: there is nothing to measure their absence from.
    func usersInactive(since: Instant) throws(StoreError) -> [UserID]

    /// The user's ledger rows with `from <= at < to`, ordered by `at`, then `requestID`.
    func ledger(userID: UserID, from: Instant, to: Instant) throws(StoreError) -> [LedgerEntry]

    /// The user's engagement state, or nil when none was stored.
    func engagementState(userID: UserID) throws(StoreError) -> EngagementState?
}

extension EngagementStore {
    public func hasProfile(id: UserID) throws(StoreError) -> Bool { try profile(id: id) != nil }
}

/// Why a store refused a call. Every case carries what a person needs to act on it.
public enum StoreError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The batch breaks a rule; nothing of it was applied. `field` is a path such as
    /// `ledgerEntries[2].idempotencyKey`.
    case invalidBatch(field: String, problem: String)
    /// The stored data cannot be read back as written (checksum, malformed row, bad JSON).
    case corrupt(String)
    /// The database was written by a newer version of the package; upgrading is the only fix.
    case newerSchema(found: Int, supported: Int)
    /// The store was opened read-only, or its file or directory is not writable.
    case readOnly(String)
    /// The device has no room for the write; nothing of the batch was applied.
    case diskFull(String)
    /// A file or record the store needs does not exist.
    case notFound(String)
    /// The store could not do its work for a reason outside the data itself: an I/O error, a
    /// database held locked by another process for too long, no memory. Nothing of the batch was
    /// applied; retrying later may succeed.
    case unavailable(String)

    public var description: String {
        switch self {
        case .invalidBatch(let field, let problem): "invalid batch: \(field): \(problem)"
        case .corrupt(let detail): "store is corrupt: \(detail)"
        case .newerSchema(let found, let supported):
            "store schema version \(found) is newer than the supported version \(supported); upgrade the package"
        case .readOnly(let detail): "store is read-only: \(detail)"
        case .diskFull(let detail): "disk full: \(detail)"
        case .notFound(let detail): "not found: \(detail)"
        case .unavailable(let detail): "store unavailable: \(detail)"
        }
    }
}
