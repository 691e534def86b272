public import Models

/// A social event's id that a user's runtime took in, kept until `expiresAt` so that the same id
/// arriving again (a webhook retried after the notification went out, a queue message replayed)
/// is not taken in twice. Social ids live here, per user, in a namespace of their own: they never
/// key a request's records (the ledger, the outbox), whatever their text.
public struct SocialEventRecord: Hashable, Sendable {
    public var userID: UserID
    /// The id as the backend sent it (`SocialEvent.id`).
    public var eventID: String
    /// The runtime clock's time of the commit that took the event in.
    public var seenAt: Instant
    /// Until when a repeat of the id is a duplicate: `seenAt` plus the runtime's retention window
    /// (`defaultRetentionSeconds` unless configured). Kept in the record, so a store prunes
    /// without knowing the window.
    public var expiresAt: Instant

    /// How long a runtime keeps social ids unless told otherwise: a week covers a backend's
    /// retries and a message queue's redelivery.
    public static let defaultRetentionSeconds: Int64 = 7 * .secondsPerDay
    /// At most this many expired records are pruned by one commit: bounded work per input.
    public static let prunedPerCommit = 64

    public init(userID: UserID, eventID: String, seenAt: Instant, expiresAt: Instant) {
        self.userID = userID
        self.eventID = eventID
        self.seenAt = seenAt
        self.expiresAt = expiresAt
    }

    /// Whether a repeat of the id at `now` is still a duplicate (before `expiresAt`).
    public func isLive(at now: Instant) -> Bool { now < expiresAt }

    /// The first rule the record breaks for a commit of `userID`, or nil.
    func validationError(forCommitOf userID: UserID) -> StoreError? {
        if self.userID != userID { return .invalidBatch(field: "socialEvent.userID", problem: "not the commit's user") }
        if eventID.isEmpty { return .invalidBatch(field: "socialEvent.eventID", problem: "empty") }
        if expiresAt < seenAt { return .invalidBatch(field: "socialEvent.expiresAt", problem: "before seenAt") }
        return nil
    }
}

/// Where a runtime store keeps the social ids its users took in. They are written by
/// `RuntimeStore.commit(_:)` (`RuntimeCommit.socialEvent`), in the transaction of the input that
/// took the event in: a record exists if and only if its event was applied.
///
/// Contract:
/// - A commit with a record stores it unless the user holds a live record of the same id (one
///   whose `expiresAt` is after the new record's `seenAt`): the first arrival's window stands, and
///   an expired record is replaced.
/// - The same commit deletes at most `SocialEventRecord.prunedPerCommit` records, of any user,
///   whose `expiresAt` is at or before the new record's `seenAt`, soonest expiry first. Social
///   traffic therefore prunes as it goes, as idempotency records do, and the table holds about
///   one retention window of ids.
/// - `socialEventRecord` returns the stored record, expired or not (the caller checks `isLive`).
public protocol SocialEventStore: Sendable {
    func socialEventRecord(userID: UserID, eventID: String) throws(StoreError) -> SocialEventRecord?
    /// How many records are stored, all users (for tests and metrics).
    func socialEventRecordCount() throws(StoreError) -> Int
}
