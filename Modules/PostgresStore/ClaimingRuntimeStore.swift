public import Models
public import Runtime
public import Storage
import Synchronization

/// A worker's view of the shared store: everything as `base` has it, except that due outbox
/// rows are *claimed* (`OutboxQueue`) rather than listed, so several worker processes running
/// `EngineRuntime.dispatchDue` over one database never perform the same user's rows at once.
///
/// Contract: `dueOutbox` returns only rows of users this worker leased in that call, after the
/// claim-time rules (`ClaimTimePolicy`) deferred or merged what they should; `completeOutbox`
/// completes the rows and gives back the lease of every user whose claimed rows are all done
/// (their next due instant is recomputed). A user whose rows were not all completed (a transport
/// failed) keeps the lease until it expires: the retry waits that long, on any worker.
///
/// While a claim is performed, the profile, devices and inbox counts of its users come from one
/// read made right after the claim (`ClaimPrefetch`); a write of this worker's to one of them
/// drops that user's copy.
public final class ClaimingRuntimeStore: RuntimeStore {
    public let base: PostgresRuntimeStore
    public let queue: OutboxQueue
    private let prefetch = Mutex(ClaimPrefetch())

    public init(base: PostgresRuntimeStore, queue: OutboxQueue) {
        self.base = base
        self.queue = queue
    }

    public func dueOutbox(through instant: Instant, limit: Int) throws(StoreError) -> [OutboxRow] {
        prefetch.withLock { $0 = ClaimPrefetch() }
        let claim = try queue.claimWithRules(through: instant, users: limit)
        let users = Set(claim.rows.filter { $0.channel != .job }.map(\.userID))
        // The claim is committed: a failed prefetch only means reads row by row.
        let read =
            (try? ClaimPrefetch.read(users.sorted(), knownToHaveProfile: Set(claim.rules.keys), pool: queue.pool))
            ?? ClaimPrefetch()
        prefetch.withLock { $0 = read }
        return claim.rows
    }

    private func forget(_ users: some Sequence<UserID>) {
        prefetch.withLock { prefetch in
            for user in users { prefetch.forget(user) }
        }
    }

    public func completeOutbox(keys: [OutboxKey], at instant: Instant) throws(StoreError) {
        try base.completeOutbox(keys: keys, at: instant)
        try queue.settle(completed: keys)
    }

    /// The claim (`OutboxQueue`) applies the claim-time rules itself.
    public var claimsWithRules: Bool { true }

    // MARK: - Everything else is the base store's

    public func claimState(userIDs: [UserID]) throws(StoreError) -> ClaimState {
        try base.claimState(userIDs: userIDs)
    }
    public func recordClaim(_ record: ClaimRecord, at instant: Instant) throws(StoreError) {
        try base.recordClaim(record, at: instant)
    }

    /// Commits through the base store, then settles claimed rows the commits replaced or
    /// withdrew (a background job's commit replaces its own row with the next run).
    public func commitGroup(_ commits: [RuntimeCommit]) throws(StoreError) {
        forget(commits.map(\.userID))
        try base.commitGroup(commits)
        try queue.reconcile(userIDs: commits.map(\.userID))
    }
    public func snapshot(userID: UserID) throws(StoreError) -> [UInt8]? { try base.snapshot(userID: userID) }
    public func outboxDepth() throws(StoreError) -> Int { try base.outboxDepth() }
    public func pendingOutbox(userID: UserID) throws(StoreError) -> [OutboxRow] {
        try base.pendingOutbox(userID: userID)
    }
    public func completedOutboxKeys(among keys: [OutboxKey]) throws(StoreError) -> Set<OutboxKey> {
        try base.completedOutboxKeys(among: keys)
    }
    public func userIDs() throws(StoreError) -> [UserID] { try base.userIDs() }
    public func apply(_ batch: StoreBatch) throws(StoreError) { try base.apply(batch) }
    public func profile(id: UserID) throws(StoreError) -> UserProfile? { try base.profile(id: id) }
    public func hasProfile(id: UserID) throws(StoreError) -> Bool {
        let known = prefetch.withLock { $0.read.contains(id) ? $0.withProfile.contains(id) : nil }
        if let known { return known }
        return try base.hasProfile(id: id)
    }
    public func activityEvents(userID: UserID, since: Instant) throws(StoreError) -> [ActivityEvent] {
        try base.activityEvents(userID: userID, since: since)
    }
    public func lastActiveAt(userID: UserID) throws(StoreError) -> Instant? { try base.lastActiveAt(userID: userID) }
    public func usersInactive(since: Instant) throws(StoreError) -> [UserID] { try base.usersInactive(since: since) }
    public func ledger(userID: UserID, from: Instant, to: Instant) throws(StoreError) -> [LedgerEntry] {
        try base.ledger(userID: userID, from: from, to: to)
    }
    public func engagementState(userID: UserID) throws(StoreError) -> EngagementState? {
        try base.engagementState(userID: userID)
    }
    @discardableResult
    public func deliverToInbox(_ delivery: InboxDelivery, next: [OutboxRow], at instant: Instant) throws(StoreError)
        -> Bool
    {
        forget([delivery.row.userID])
        let delivered = try base.deliverToInbox(delivery, next: next, at: instant)
        try queue.settle(completed: [delivery.row.key])
        return delivered
    }
    public func inboxPage(userID: UserID, before sequence: Int64?, limit: Int) throws(StoreError) -> InboxPage {
        try base.inboxPage(userID: userID, before: sequence, limit: limit)
    }
    public func setInboxState(userID: UserID, itemID: String, to state: InboxState) throws(StoreError) -> InboxItem? {
        forget([userID])
        return try base.setInboxState(userID: userID, itemID: itemID, to: state)
    }
    public func inboxCounts(userID: UserID) throws(StoreError) -> InboxCounts {
        if let known = prefetch.withLock({ $0.counts[userID] }) { return known }
        return try base.inboxCounts(userID: userID)
    }
    @discardableResult
    public func readAllInbox(userID: UserID) throws(StoreError) -> InboxCounts {
        forget([userID])
        return try base.readAllInbox(userID: userID)
    }
    public func userVersions(userID: UserID) throws(StoreError) -> UserVersions? {
        try base.userVersions(userID: userID)
    }
    public func idempotencyRecord(userID: UserID, key: String) throws(StoreError) -> IdempotencyRecord? {
        try base.idempotencyRecord(userID: userID, key: key)
    }
    public func idempotencyRecordCount() throws(StoreError) -> Int { try base.idempotencyRecordCount() }
    @discardableResult
    public func registerDevice(_ device: DeviceRegistration, takingFromOthers: Bool) throws(StoreError)
        -> DeviceRegistration?
    {
        forget([device.userID])
        let previous = try base.registerDevice(device, takingFromOthers: takingFromOthers)
        if let previous { forget([previous.userID]) }
        return previous
    }
    @discardableResult
    public func removeDevice(userID: UserID, token: String) throws(StoreError) -> Bool {
        forget([userID])
        return try base.removeDevice(userID: userID, token: token)
    }
    @discardableResult
    public func removeDevice(token: String) throws(StoreError) -> DeviceRegistration? {
        let removed = try base.removeDevice(token: token)
        if let removed { forget([removed.userID]) }
        return removed
    }
    public func devices(userID: UserID) throws(StoreError) -> [DeviceRegistration] {
        if let known = prefetch.withLock({ $0.devices[userID] }) { return known }
        return try base.devices(userID: userID)
    }
    public func revokeTokens(userID: UserID, issuedBefore instant: Instant) throws(StoreError) -> Instant {
        try base.revokeTokens(userID: userID, issuedBefore: instant)
    }
    public func checkReady() throws(StoreError) { try base.checkReady() }
    public func tokensRevokedBefore(userID: UserID) throws(StoreError) -> Instant? {
        try base.tokensRevokedBefore(userID: userID)
    }
    public func traceRecords(userID: UserID, after position: TracePosition, limit: Int) throws(StoreError)
        -> [TraceRecord]
    {
        try base.traceRecords(userID: userID, after: position, limit: limit)
    }
}
