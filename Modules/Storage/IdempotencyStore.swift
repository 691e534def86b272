public import Models

/// The first answer to a request that carried an idempotency key, kept so that a retry, even
/// after a restart, gets the same answer instead of applying the input twice.
public struct IdempotencyRecord: Hashable, Sendable {
    public var userID: UserID
    public var key: String
    /// What identifies the request's content (the server keeps the SHA-256 of the body, in hex):
    /// the same key with another hash is a different request.
    public var requestHash: String
    /// The HTTP status of the first answer.
    public var status: Int
    /// The body of the first answer.
    public var response: [UInt8]
    /// The runtime clock's time of the commit that applied the request.
    public var createdAt: Instant

    /// Records live this long; an older one is treated as absent and pruned.
    public static let retentionSeconds: Int64 = .secondsPerDay
    /// At most this many expired records are pruned by one commit: bounded work per input.
    public static let prunedPerCommit = 64

    public init(
        userID: UserID, key: String, requestHash: String, status: Int, response: [UInt8], createdAt: Instant
    ) {
        self.userID = userID
        self.key = key
        self.requestHash = requestHash
        self.status = status
        self.response = response
        self.createdAt = createdAt
    }

    /// Whether the record still stands at `now` (younger than `retentionSeconds`).
    public func isLive(at now: Instant) -> Bool { now - createdAt < Self.retentionSeconds }

    /// The first rule the record breaks for a commit of `userID`, or nil.
    func validationError(forCommitOf userID: UserID) -> StoreError? {
        if self.userID != userID { return .invalidBatch(field: "idempotency.userID", problem: "not the commit's user") }
        if key.isEmpty { return .invalidBatch(field: "idempotency.key", problem: "empty") }
        if requestHash.isEmpty { return .invalidBatch(field: "idempotency.requestHash", problem: "empty") }
        return nil
    }
}

/// Where a runtime store keeps idempotency records. They are written by `RuntimeStore.commit(_:)`
/// (`RuntimeCommit.idempotency`), in the same transaction as the input they answer for: a record
/// exists if and only if its input was applied.
///
/// Contract:
/// - A commit with a record stores it, replacing any record of the same user and key (the runtime
///   only commits over one that has expired).
/// - The same commit deletes at most `IdempotencyRecord.prunedPerCommit` records, of any user,
///   created more than `IdempotencyRecord.retentionSeconds` before the new record, oldest first.
///   Keyed traffic therefore prunes as it goes, and the table holds about a day of keys.
/// - `idempotencyRecord` returns the stored record, expired or not (the caller checks `isLive`).
public protocol IdempotencyStore: Sendable {
    func idempotencyRecord(userID: UserID, key: String) throws(StoreError) -> IdempotencyRecord?
    /// How many records are stored, all users (for tests and metrics).
    func idempotencyRecordCount() throws(StoreError) -> Int
}
