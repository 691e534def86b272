import Foundation
public import Models

/// An `EngagementStore` in memory: the reference implementation of the contract, used by tests
/// and the simulator. Nothing survives the process.
///
/// `apply(_:)` validates the whole batch first and then writes it under the lock; writing to
/// memory cannot fail half-way, so a batch is all-or-nothing and readers, which take the same
/// lock, never see part of one.
public final class InMemoryEngagementStore: EngagementStore, @unchecked Sendable {
    // @unchecked Sendable is safe: the only mutable state is `storage`, and every access to it,
    // read or write, happens while holding `lock`. No reference to it escapes the lock.
    private let lock = NSLock()
    private var storage = Storage()

    private struct AppliedKey: Hashable {
        var userID: String
        var key: String
    }

    private struct Storage {
        var profiles: [String: UserProfile] = [:]
        /// Per user, sorted by `at`; equal times keep the order in which they were stored.
        var events: [String: [ActivityEvent]] = [:]
        var knownEvents: Set<ActivityEvent> = []
        /// Per user, keyed by request ID.
        var ledger: [String: [String: LedgerEntry]] = [:]
        var appliedKeys: Set<AppliedKey> = []
        var states: [String: EngagementState] = [:]
    }

    public init() {}

    private func locked<T>(_ body: (inout Storage) -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body(&storage)
    }

    public func apply(_ batch: StoreBatch) throws(StoreError) {
        if let error = batch.validationError { throw error }
        locked { storage in
            for profile in batch.profiles { storage.profiles[profile.id] = profile }
            for event in batch.activityEvents where storage.knownEvents.insert(event).inserted {
                let index = Self.firstIndex(in: storage.events[event.userID] ?? [], after: event.at)
                storage.events[event.userID, default: []].insert(event, at: index)
            }
            for entry in batch.ledgerEntries
            where storage.appliedKeys.insert(AppliedKey(userID: entry.userID, key: entry.idempotencyKey)).inserted {
                storage.ledger[entry.userID, default: [:]][entry.requestID] = entry
            }
            for state in batch.engagementStates { storage.states[state.userID] = state }
        }
    }

    public func profile(id: String) throws(StoreError) -> UserProfile? {
        locked { $0.profiles[id] }
    }

    public func activityEvents(userID: String, since: Instant) throws(StoreError) -> [ActivityEvent] {
        locked { storage in
            guard let list = storage.events[userID] else { return [] }
            return Array(list[Self.firstIndex(in: list, atOrAfter: since)...])
        }
    }

    public func lastActiveAt(userID: String) throws(StoreError) -> Instant? {
        locked { $0.events[userID]?.last?.at }
    }

    public func usersInactive(since: Instant) throws(StoreError) -> [String] {
        locked { storage in
            storage.events.compactMap { userID, list in
                guard let last = list.last, last.at < since else { return nil }
                return userID
            }.sorted()
        }
    }

    public func ledger(userID: String, from: Instant, to: Instant) throws(StoreError) -> [LedgerEntry] {
        locked { storage in
            guard let rows = storage.ledger[userID] else { return [] }
            return rows.values.filter { from <= $0.at && $0.at < to }
                .sorted { ($0.at, $0.requestID) < ($1.at, $1.requestID) }
        }
    }

    public func engagementState(userID: String) throws(StoreError) -> EngagementState? {
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
