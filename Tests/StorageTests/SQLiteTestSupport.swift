import Foundation
import Models
import Storage

/// A new directory under the system's temporary directory, removed when `body` returns.
func withTemporaryDirectory<T>(_ body: (URL) throws -> T) throws -> T {
    let directory = FileManager.default.temporaryDirectory
        .appendingPathComponent("EngagementStoreTests-\(UUID().uuidString)", isDirectory: true)
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    return try body(directory)
}

/// Everything a store holds for one user, read through the protocol.
struct UserSnapshot: Equatable, CustomStringConvertible {
    var userID: UserID
    var profile: UserProfile?
    var events: [ActivityEvent]
    var lastActiveAt: Instant?
    var ledger: [LedgerEntry]
    var state: EngagementState?

    init(_ userID: UserID, in store: any EngagementStore) throws {
        let past = Instant(secondsSinceEpoch: -(1 << 40))
        let far = Instant(secondsSinceEpoch: 1 << 40)
        self.userID = userID
        profile = try store.profile(id: userID)
        events = try store.activityEvents(userID: userID, since: past)
        lastActiveAt = try store.lastActiveAt(userID: userID)
        ledger = try store.ledger(userID: userID, from: past, to: far)
        state = try store.engagementState(userID: userID)
    }

    var description: String {
        "\(userID): profile \(profile?.displayName ?? "none"), \(events.count) events, last active "
            + "\(lastActiveAt?.description ?? "never"), \(ledger.count) ledger rows, checkpoint "
            + "\(state?.checkpoint ?? "none")"
    }
}

/// What a store holds for the crash workload's users, plus `usersInactive` at a few cutoffs.
struct CrashWorkloadSnapshot: Equatable {
    var users: [UserSnapshot]
    var inactive: [[UserID]]

    init(of store: any EngagementStore) throws {
        users = try (0..<StoreCrashWorkload.userCount).map { user in
            try UserSnapshot(StoreCrashWorkload.userID(forBatch: user), in: store)
        }
        inactive = try [0, 20, 200, 2_000].map { batch in
            try store.usersInactive(since: StoreCrashWorkload.start + Int64(batch) * 600)
        }
    }
}
