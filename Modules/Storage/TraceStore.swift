public import Models

/// One traced decision of an engine step, as the runtime keeps it for `explain`: the engine's
/// `TraceEntry` (decision, reason code, fire time, detail) with the input that caused it. The
/// ledger keeps only a request's latest state; the trace keeps every decision.
public struct TraceRecord: Codable, Hashable, Sendable {
    /// Given by the store when the record is committed; every id it gives is larger than all it
    /// gave before. 0 in a record not yet committed.
    public var id: Int64
    public var userID: UserID
    /// When the decision was made (the step's time).
    public var at: Instant
    public var requestID: RequestID
    public var kind: NotificationKind
    public var decision: TraceDecision
    public var reason: ReasonCode
    /// When it fires, for scheduled and deferred decisions.
    public var fireAt: Instant?
    /// The values that decided, for a person; empty when the reason says it all.
    public var detail: String
    /// For a folded item: the grouped notification (batch or digest) it joined.
    public var groupID: String?
    /// The input of the step (`StepRecords.inputName`): `workoutCompleted`, `notificationResponse`,
    /// `backgroundTask:com.airfit.lapseDetection`, `userUpdated`, ...
    public var input: String

    public init(
        id: Int64 = 0, userID: UserID, at: Instant, requestID: RequestID, kind: NotificationKind,
        decision: TraceDecision, reason: ReasonCode, fireAt: Instant? = nil, detail: String = "",
        groupID: String? = nil, input: String
    ) {
        self.id = id
        self.userID = userID
        self.at = at
        self.requestID = requestID
        self.kind = kind
        self.decision = decision
        self.reason = reason
        self.fireAt = fireAt
        self.detail = detail
        self.groupID = groupID
        self.input = input
    }

    /// Where this record sits in its user's trace.
    public var position: TracePosition { TracePosition(at: at, id: id) }
}

/// A place in a user's trace, which is ordered by time, then id. Reading "after" a position
/// returns the records later than it, so `TracePosition(at: since, id: 0)` starts at `since`
/// (inclusive) and the position of the last record read continues a page.
public struct TracePosition: Hashable, Sendable, Comparable {
    public var at: Instant
    public var id: Int64

    public init(at: Instant, id: Int64) {
        self.at = at
        self.id = id
    }

    public static func < (lhs: TracePosition, rhs: TracePosition) -> Bool { (lhs.at, lhs.id) < (rhs.at, rhs.id) }
}

/// How much trace a store keeps: the last 35 days per user. Pruning runs inside the commits that
/// add trace records and removes at most `prunedPerCommit` records each time, so no commit pays
/// for a large backlog, and a user whose steps keep coming converges to the window (a step adds
/// a handful of records; the runtime's background jobs give every user a step each day).
public enum TraceRetention {
    public static let seconds: Int64 = 35 * 86_400
    public static let prunedPerCommit = 64
}

/// The decision trace of each user (`GET /v1/users/{id}/explain`).
///
/// Contract (checked by the trace store conformance suite, `TraceStoreConformance`):
/// - **Same transaction.** The records of `RuntimeCommit.trace` are written with the rest of the
///   commit, or not at all. The store gives each its id, increasing in the order committed.
/// - **Order.** `traceRecords` lists the user's records after `position`, by time then id, at
///   most `limit` of them. A record committed later has a larger id, so one whose time is not
///   earlier than a position already read comes after it (the runtime's clock never goes back).
/// - **Retention.** A commit with trace records also removes, in the same transaction, at most
///   `TraceRetention.prunedPerCommit` of the user's oldest records older than
///   `TraceRetention.seconds` before the newest record it adds. Other users are not touched.
public protocol TraceStore {
    func traceRecords(userID: UserID, after position: TracePosition, limit: Int) throws(StoreError) -> [TraceRecord]
}
