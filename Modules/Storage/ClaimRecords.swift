public import Models

/// How many alerts a user was sent in the current local hour and local day: what the claim-time
/// caps count against (`ClaimTimePolicy` in the runtime). Kept by the store beside each user's
/// pending rows.
public struct AlertTally: Hashable, Sendable {
    /// The local day (days since local 1970-01-01) and hour (hours since local 1970-01-01 00:00)
    /// the counts belong to.
    public var localDay: Int64
    public var localHour: Int64
    public var sentToday: Int
    public var sentThisHour: Int

    public init(localDay: Int64, localHour: Int64, sentToday: Int, sentThisHour: Int) {
        self.localDay = localDay
        self.localHour = localHour
        self.sentToday = sentToday
        self.sentThisHour = sentThisHour
    }

    /// No alert yet.
    public static let none = AlertTally(localDay: .min, localHour: .min, sentToday: 0, sentThisHour: 0)

    /// The tally after one more alert sent at `local`.
    public func adding(oneAt local: LocalDateTime) -> AlertTally {
        let day = local.daysSinceEpoch
        let hour = local.localSeconds.floorDivided(by: 3_600)
        return AlertTally(
            localDay: day, localHour: hour, sentToday: (day == localDay ? sentToday : 0) + 1,
            sentThisHour: (hour == localHour ? sentThisHour : 0) + 1)
    }
}

/// An alert row moved to a later instant at claim, untouched otherwise: its key, the instant it
/// is due again, and why (`quietHours`, `maxPerHour`, `maxPerDay`, `unknownTimeZone`,
/// `unreadableProfile`).
public struct OutboxDeferral: Hashable, Sendable {
    public var key: OutboxKey
    public var until: Instant
    public var reason: String
    /// The instant the row was first due (before this deferral or any earlier one).
    public var firstDueAt: Instant

    public init(key: OutboxKey, until: Instant, reason: String, firstDueAt: Instant) {
        self.key = key
        self.until = until
        self.reason = reason
        self.firstDueAt = firstDueAt
    }
}

/// The alert row that replaces several due alerts at claim, with the keys it replaces.
public struct OutboxMerge: Hashable, Sendable {
    public var row: OutboxRow
    public var replacedKeys: [OutboxKey]

    public init(row: OutboxRow, replacedKeys: [OutboxKey]) {
        self.row = row
        self.replacedKeys = replacedKeys
    }
}

/// What the claim-time rules read of a user's past claims.
public struct ClaimState: Hashable, Sendable {
    public var tallies: [UserID: AlertTally] = [:]
    /// Pending rows performed by an earlier claim (its send failed, or its process stopped
    /// before completing them): they may have gone out, so they are never merged.
    public var attemptedKeys: Set<OutboxKey> = []
    /// Deferred rows, with the instant each was first due: rows deferred to one instant keep
    /// the order they were planned in.
    public var plannedAt: [OutboxKey: Instant] = [:]

    public init(
        tallies: [UserID: AlertTally] = [:], attemptedKeys: Set<OutboxKey> = [], plannedAt: [OutboxKey: Instant] = [:]
    ) {
        self.tallies = tallies
        self.attemptedKeys = attemptedKeys
        self.plannedAt = plannedAt
    }

    /// The state after `record`, for a store that keeps it in memory.
    public mutating func apply(_ record: ClaimRecord) {
        for (user, tally) in record.tallies { tallies[user] = tally }
        for deferral in record.deferrals { plannedAt[deferral.key] = plannedAt[deferral.key] ?? deferral.firstDueAt }
        attemptedKeys.formUnion(record.performedKeys)
        for merge in record.merges { forget(merge.replacedKeys) }
        forget(record.expiredKeys)
    }

    /// Drops what is kept of rows no longer pending.
    public mutating func forget(_ keys: some Sequence<OutboxKey>) {
        for key in keys {
            attemptedKeys.remove(key)
            plannedAt[key] = nil
        }
    }
}

/// What one claim changes, written by the store in one transaction.
public struct ClaimRecord: Hashable, Sendable {
    public var deferrals: [OutboxDeferral] = []
    public var merges: [OutboxMerge] = []
    /// Each alerted user's tally after the claim's alerts.
    public var tallies: [UserID: AlertTally] = [:]
    /// Every row the claim hands to be performed: marked as attempted before anything is sent.
    public var performedKeys: [OutboxKey] = []
    /// Late alerts past their staleness deadline, counted from the instant each was first due:
    /// completed unsent (the inbox keeps their items).
    public var expiredKeys: [OutboxKey] = []

    public init(
        deferrals: [OutboxDeferral] = [], merges: [OutboxMerge] = [], tallies: [UserID: AlertTally] = [:],
        performedKeys: [OutboxKey] = [], expiredKeys: [OutboxKey] = []
    ) {
        self.deferrals = deferrals
        self.merges = merges
        self.tallies = tallies
        self.performedKeys = performedKeys
        self.expiredKeys = expiredKeys
    }
}

/// A store's side of the claim-time rules, for a runtime that applies them itself to the rows
/// `dueOutbox` lists (`RuntimeStore.claimsWithRules` is false).
///
/// Contract:
/// - `claimState` answers the tallies of `userIDs`, and which of their pending rows were
///   attempted or deferred (with the instant each was first due).
/// - `recordClaim` writes all of a record or nothing: a deferred row keeps its key and payload
///   and is due at its new instant, and the first instant it was due is kept (the deferral's
///   `firstDueAt` when it was never deferred before); a merge completes the
///   replaced keys (a replayed commit never makes them pending again) and makes the merged row
///   pending; expired keys are completed as a send completes them; tallies replace the users'
///   tallies; performed keys are marked attempted. A deferral or mark for a key no longer
///   pending changes nothing.
/// - A commit that replaces a row (a new key for its request and channel) starts it afresh.
public protocol ClaimRecordStore: Sendable {
    func claimState(userIDs: [UserID]) throws(StoreError) -> ClaimState
    func recordClaim(_ record: ClaimRecord, at instant: Instant) throws(StoreError)
}
