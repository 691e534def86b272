import Foundation
public import Models

/// An `EngagementStore` in memory: the reference implementation of the contract, used by tests
/// and the simulator. Nothing survives the process.
///
/// `apply(_:)` validates the whole batch first and then writes it under the lock; writing to
/// memory cannot fail half-way, so a batch is all-or-nothing and readers, which take the same
/// lock, never see part of one.
public final class InMemoryEngagementStore: RuntimeStore, @unchecked Sendable {
    // @unchecked Sendable is safe: the only mutable state is `storage`, and every access to it,
    // read or write, happens while holding `lock`. No reference to it escapes the lock.
    private let lock = NSLock()
    private var storage = Storage()  // also read and written by the inbox (InMemoryInbox.swift)

    struct Storage {
        var profiles: [UserID: UserProfile] = [:]
        /// Per user, sorted by `at`; equal times keep the order in which they were stored.
        var events: [UserID: [ActivityEvent]] = [:]
        var knownEvents: Set<ActivityEvent> = []
        var ledger = InMemoryLedger()
        var states: [UserID: EngagementState] = [:]
        var snapshots: [UserID: [UInt8]] = [:]
        /// Every user's pending outbox rows, completed keys and claim records, kept by the
        /// outbox identity's rules (`PendingOutbox`).
        var outbox = PendingOutbox()
        /// Each user's notification center.
        var inboxes: [UserID: InMemoryInbox] = [:]
        /// Per user, in (at, id) order; `lastTraceID` is the last id given.
        var trace: [UserID: [TraceRecord]] = [:]
        var lastTraceID: Int64 = 0
        var userRecords = InMemoryUserRecords()
    }

    public init() {}

    func locked<T>(_ body: (inout Storage) -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body(&storage)
    }

    /// The user records under the same lock (`InMemoryUserRecords`).
    func lockedUserRecords<T>(_ body: (inout InMemoryUserRecords) -> T) -> T { locked { body(&$0.userRecords) } }

    public func apply(_ batch: StoreBatch) throws(StoreError) {
        if let error = batch.validationError { throw error }
        locked { storage in Self.write(batch, &storage) }
    }

    private static func write(_ batch: StoreBatch, _ storage: inout Storage) {
        for profile in batch.profiles { storage.profiles[profile.id] = profile }
        for event in batch.activityEvents where storage.knownEvents.insert(event).inserted {
            let index = Self.firstIndex(in: storage.events[event.userID] ?? [], after: event.at)
            storage.events[event.userID, default: []].insert(event, at: index)
        }
        storage.ledger.apply(batch.ledgerEntries)
        for state in batch.engagementStates { storage.states[state.userID] = state }
    }

    // MARK: - Runtime

    public func commitGroup(_ commits: [RuntimeCommit]) throws(StoreError) {
        for commit in commits { if let error = commit.validationError { throw error } }
        locked { storage in
            for commit in commits { Self.write(commit, &storage) }
        }
    }

    private static func write(_ commit: RuntimeCommit, _ storage: inout Storage) {
        write(commit.batch, &storage)
        writeTrace(commit.trace, userID: commit.userID, &storage)
        storage.snapshots[commit.userID] = commit.snapshot
        storage.userRecords.write(commit)
        storage.outbox.commit(userID: commit.userID, cancelled: commit.cancelledRequestIDs, rows: commit.outbox)
    }

    public func snapshot(userID: UserID) throws(StoreError) -> [UInt8]? { locked { $0.snapshots[userID] } }

    public func dueOutbox(through instant: Instant, limit: Int) throws(StoreError) -> [OutboxRow] {
        locked { Array($0.outbox.due(through: instant).prefix(max(0, limit))) }
    }

    public func completeOutbox(keys: [OutboxKey], at instant: Instant) throws(StoreError) {
        locked { storage in
            for key in keys { storage.outbox.complete(key, at: instant) }
        }
    }

    public func outboxDepth() throws(StoreError) -> Int { locked { $0.outbox.rows.count } }

    public func completedOutboxKeys(among keys: [OutboxKey]) throws(StoreError) -> Set<OutboxKey> {
        locked { storage in Set(keys.filter { storage.outbox.wasCompleted($0) }) }
    }

    /// Due rows are listed as they stand: the runtime claims them.
    public var claimsWithRules: Bool { false }

    public func claimState(userIDs: [UserID]) throws(StoreError) -> ClaimState {
        locked { $0.outbox.claimState(of: Set(userIDs)) }
    }

    public func recordClaim(_ record: ClaimRecord, at instant: Instant) throws(StoreError) {
        locked { $0.outbox.apply(record, at: instant) }
    }

    public func userIDs() throws(StoreError) -> [UserID] { locked { $0.profiles.keys.sorted() } }

    public func pendingOutbox(userID: UserID) throws(StoreError) -> [OutboxRow] {
        locked { storage in storage.outbox.rows.filter { $0.userID == userID } }
    }

    public func profile(id: UserID) throws(StoreError) -> UserProfile? {
        locked { $0.profiles[id] }
    }

    public func activityEvents(userID: UserID, since: Instant) throws(StoreError) -> [ActivityEvent] {
        locked { storage in
            guard let list = storage.events[userID] else { return [] }
            return Array(list[Self.firstIndex(in: list, atOrAfter: since)...])
        }
    }

    public func lastActiveAt(userID: UserID) throws(StoreError) -> Instant? {
        locked { $0.events[userID]?.last?.at }
    }

    public func usersInactive(since: Instant) throws(StoreError) -> [UserID] {
        locked { storage in
            storage.events.compactMap { userID, list in
                guard let last = list.last, last.at < since else { return nil }
                return userID
            }.sorted()
        }
    }

    public func ledger(userID: UserID, from: Instant, to: Instant) throws(StoreError) -> [LedgerEntry] {
        locked { $0.ledger.rows(userID: userID, from: from, to: to) }
    }

    public func engagementState(userID: UserID) throws(StoreError) -> EngagementState? {
        locked { $0.states[userID] }
    }

    /// The index of the first event later than `instant` (where a new event at `instant` goes).
    private static func firstIndex(in list: [ActivityEvent], after instant: Instant) -> Int {
        var low = 0
        var high = list.count
        while low < high {
            let mid = (low + high) / 2
            if list[mid].at <= instant { low = mid + 1 } else { high = mid }
        }
        return low
    }

    /// The index of the first event at or after `instant`.
    private static func firstIndex(in list: [ActivityEvent], atOrAfter instant: Instant) -> Int {
        var low = 0
        var high = list.count
        while low < high {
            let mid = (low + high) / 2
            if list[mid].at < instant { low = mid + 1 } else { high = mid }
        }
        return low
    }
}
