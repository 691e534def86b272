import Delivery
import Foundation
import Models
import PostgresNIO
import PostgresStore
import Runtime
import Storage
import Testing

/// The workers' queue: claims that skip each other, leases that run out, merges and deferrals
/// written before anything is sent, pruning, and the shared provider token.
@Suite("OutboxQueue", .enabled(if: TestServer.isConfigured, TestServer.disabledReason))
struct OutboxQueueTests {
    static let now = Instant(iso8601: "2027-03-01T11:00:00Z")!  // 12:00 in Berlin

    /// A mention's alert: a claim still sends it hours late (stale only after a day).
    static func alert(_ user: UserID, _ name: String, at due: Instant) -> OutboxRow {
        let request = NotificationRequest(
            identifier: RequestID(name), content: NotificationContent(kind: .mention, title: name, body: "Body"),
            trigger: .date(due))
        return OutboxRow(
            key: OutboxKey.make(user, request.identifier, due, .push), userID: user, requestID: request.identifier,
            dueAt: due, payload: .alert(request))
    }

    /// A user in Berlin with quiet hours 22:00-07:00 and `rows` pending.
    static func addUser(_ user: UserID, rows: [OutboxRow], to store: PostgresRuntimeStore) throws {
        var preferences = NotificationPreferences()
        preferences.quietHours = try QuietHours(
            start: LocalTimeOfDay(minutesSinceMidnight: 22 * 60), end: LocalTimeOfDay(minutesSinceMidnight: 7 * 60))
        let profile = UserProfile(id: user, displayName: "Ana", timeZone: "Europe/Berlin", preferences: preferences)
        try store.commit(
            RuntimeCommit(userID: user, snapshot: [1], batch: StoreBatch(profiles: [profile]), outbox: rows))
    }

    static func count(_ database: ScratchDatabase, _ query: PostgresQuery) throws -> Int {
        try database.query(query).first?.decode(Int.self) ?? -1
    }

    @Test("Two workers claiming at once get disjoint users, and together all of them")
    func claimsSkipEachOther() throws {
        try ScratchDatabase.with { database in
            try database.withStore { store in
                for index in 0..<40 {
                    try Self.addUser("u\(index)", rows: [Self.alert("u\(index)", "a", at: Self.now - 60)], to: store)
                }
                let poolA = database.makePool()
                let poolB = database.makePool()
                defer {
                    poolA.close()
                    poolB.close()
                }
                let a = OutboxQueue(pool: poolA, workerID: "a")
                let b = OutboxQueue(pool: poolB, workerID: "b")
                let results = Results()
                DispatchQueue.concurrentPerform(iterations: 2) { index in
                    let queue = index == 0 ? a : b
                    var users: [UserID] = []
                    while let rows = try? queue.claim(through: Self.now, users: 3), !rows.isEmpty {
                        users += rows.map(\.userID)
                    }
                    results.set(index, users)
                }
                let (first, second) = results.both
                #expect(Set(first).isDisjoint(with: second))
                #expect(Set(first + second).count == 40)
                #expect(first.count + second.count == 40)
            }
        }
    }

    @Test("A dead worker's users are claimed again once its lease runs out, with the same keys")
    func expiredLeasesAreRescued() throws {
        try ScratchDatabase.with { database in
            try database.withStore { store in
                let row = Self.alert("u1", "a", at: Self.now - 60)
                try Self.addUser("u1", rows: [row], to: store)
                let dead = OutboxQueue(pool: store.pool, workerID: "dead", leaseSeconds: 1)
                let rescuer = OutboxQueue(pool: store.pool, workerID: "rescuer", leaseSeconds: 30)
                #expect(try dead.claim(through: Self.now, users: 10).map(\.key) == [row.key])
                #expect(try rescuer.claim(through: Self.now, users: 10).isEmpty)  // leased
                Thread.sleep(forTimeInterval: 1.3)
                #expect(try rescuer.claim(through: Self.now, users: 10).map(\.key) == [row.key])
                let attempts = try Self.count(database, "SELECT attempts FROM work_queue WHERE user_id = 'u1'")
                #expect(attempts == 2)
            }
        }
    }

    @Test("Completing a claim gives the lease back at the next due row, or removes the user")
    func completionSettlesTheUser() throws {
        try ScratchDatabase.with { database in
            try database.withStore { store in
                let now = Self.now
                try Self.addUser(
                    "u1", rows: [Self.alert("u1", "a", at: now - 60), Self.alert("u1", "b", at: now + 600)], to: store)
                try Self.addUser("u2", rows: [Self.alert("u2", "a", at: now - 60)], to: store)
                let queue = OutboxQueue(pool: store.pool, workerID: "w")
                let claiming = ClaimingRuntimeStore(base: store, queue: queue)
                let rows = try claiming.dueOutbox(through: now, limit: 10)
                #expect(rows.count == 2)
                try claiming.completeOutbox(keys: rows.map(\.key), at: now)
                #expect(try Self.count(database, "SELECT count(*) FROM work_queue WHERE user_id = 'u2'") == 0)
                #expect(
                    try Self.count(
                        database, "SELECT due_at FROM work_queue WHERE user_id = 'u1' AND claimed_by IS NULL")
                        == Int((now + 600).secondsSinceEpoch))
                #expect(queue.leasedUsers.isEmpty)
                #expect(try claiming.dueOutbox(through: now + 600, limit: 10).map(\.requestID) == ["b"])
            }
        }
    }

    @Test("A backlog is merged in the claim's transaction; a rescue re-sends the merged row, never its parts")
    func mergesAreWrittenBeforeSending() throws {
        try ScratchDatabase.with { database in
            try database.withStore { store in
                let rows = (0..<3).map { Self.alert("u1", "r\($0)", at: Self.now - Int64(3_600 - $0 * 600)) }
                try Self.addUser("u1", rows: rows, to: store)
                let first = OutboxQueue(pool: store.pool, workerID: "first", leaseSeconds: 1)
                let claimed = try first.claim(through: Self.now, users: 10)
                #expect(claimed.count == 1)
                let merged = try #require(claimed.first)
                #expect(merged.requestID.rawValue.hasPrefix("merged/"))
                #expect(try store.pendingOutbox(userID: "u1").map(\.key) == [merged.key])
                #expect(
                    try Self.count(
                        database, "SELECT count(*) FROM outbox_merged WHERE merged_into = \(merged.key.rawValue)")
                        == 3)
                #expect(
                    try Self.count(
                        database, "SELECT count(*) FROM outbox_done WHERE key = ANY(\(rows.map(\.key.rawValue)))")
                        == 3)
                // A replayed commit cannot bring a merged part back.
                try store.commit(RuntimeCommit(userID: "u1", snapshot: [1], outbox: [rows[0]]))
                #expect(try store.pendingOutbox(userID: "u1").map(\.key) == [merged.key])
                Thread.sleep(forTimeInterval: 1.3)
                let rescuer = OutboxQueue(pool: store.pool, workerID: "rescuer")
                #expect(try rescuer.claim(through: Self.now, users: 10).map(\.key) == [merged.key])
            }
        }
    }

    @Test("An alert a dead worker claimed is re-sent alone after its lease, never merged with newer ones")
    func rescuedAlertsAreNotMerged() throws {
        try ScratchDatabase.with { database in
            try database.withStore { store in
                let first = Self.alert("u1", "a", at: Self.now - 600)
                try Self.addUser("u1", rows: [first], to: store)
                let dead = OutboxQueue(pool: store.pool, workerID: "dead", leaseSeconds: 1)
                #expect(try dead.claim(through: Self.now, users: 10) == [first])
                let later = Self.alert("u1", "b", at: Self.now - 60)
                try store.commit(RuntimeCommit(userID: "u1", snapshot: [1], outbox: [later]))
                Thread.sleep(forTimeInterval: 1.3)
                let rescuer = OutboxQueue(pool: store.pool, workerID: "rescuer")
                let claiming = ClaimingRuntimeStore(base: store, queue: rescuer)
                #expect(try claiming.dueOutbox(through: Self.now, limit: 10) == [first])
                try claiming.completeOutbox(keys: [first.key], at: Self.now)
                #expect(try claiming.dueOutbox(through: Self.now, limit: 10) == [later])
            }
        }
    }

    @Test("In quiet hours the claim moves the alert to their end and gives the user back")
    func quietHoursDeferAtClaim() throws {
        try ScratchDatabase.with { database in
            try database.withStore { store in
                let night = Instant(iso8601: "2027-03-01T02:00:00Z")!  // 03:00 in Berlin
                let morning = Instant(iso8601: "2027-03-01T06:00:00Z")!  // 07:00
                try Self.addUser("u1", rows: [Self.alert("u1", "a", at: night - 60)], to: store)
                let queue = OutboxQueue(pool: store.pool, workerID: "w")
                #expect(try queue.claim(through: night, users: 10).isEmpty)
                #expect(try store.pendingOutbox(userID: "u1").map(\.dueAt) == [morning])
                #expect(
                    try Self.count(database, "SELECT due_at FROM work_queue WHERE claimed_by IS NULL")
                        == Int(morning.secondsSinceEpoch))
                #expect(try queue.claim(through: morning - 1, users: 10).isEmpty)
                #expect(try queue.claim(through: morning, users: 10).count == 1)
            }
        }
    }

    @Test("Alerts deferred to one instant by two claims come back in the order they were first due")
    func deferralsKeepTheirOrder() throws {
        try ScratchDatabase.with { database in
            try database.withStore { store in
                let night = Instant(iso8601: "2027-03-01T02:00:00Z")!  // 03:00 in Berlin
                let morning = Instant(iso8601: "2027-03-01T06:00:00Z")!
                // Keys chosen so that key order is the reverse of due order.
                var early = Self.alert("u1", "early", at: night - 600)
                early.key = "zzz-early"
                var later = Self.alert("u1", "later", at: night + 600)
                later.key = "aaa-later"
                try Self.addUser("u1", rows: [early, later], to: store)
                let queue = OutboxQueue(pool: store.pool, workerID: "w")
                #expect(try queue.claim(through: night, users: 10).isEmpty)  // early deferred to 07:00
                #expect(try queue.claim(through: night + 600, users: 10).isEmpty)  // later too
                let claiming = ClaimingRuntimeStore(base: store, queue: queue)
                let due = try claiming.dueOutbox(through: morning, limit: 10)
                #expect(due.count == 1)
                let merged = try #require(due.first)
                let parts = try database.query(
                    "SELECT key FROM outbox_merged WHERE merged_into = \(merged.key.rawValue) ORDER BY key")
                #expect(parts.count == 2)
                #expect(merged.requestID == "merged/zzz-early")  // the early one leads the merge
            }
        }
    }

    @Test("Done rows older than the retention are pruned")
    func pruning() throws {
        try ScratchDatabase.with { database in
            try database.withStore { store in
                try store.completeOutbox(keys: ["old"], at: Self.now - 86_400)
                try store.completeOutbox(keys: ["new"], at: Self.now)
                let queue = OutboxQueue(pool: store.pool, workerID: "w")
                #expect(try queue.pruneDone(before: Self.now - 3_600) == 1)
                #expect(try Self.count(database, "SELECT count(*) FROM outbox_done") == 1)
            }
        }
    }

    @Test("The first worker's provider token is everyone's until it is old enough to replace")
    func sharedProviderToken() throws {
        try ScratchDatabase.with { database in
            try database.withStore { store in
                let tokens = PostgresProviderTokens(pool: store.pool)
                let none = try tokens.newest(keyID: "K")
                #expect(none == nil)
                let first = SharedProviderToken(keyID: "K", jwt: "first", issuedAt: Self.now)
                let second = SharedProviderToken(keyID: "K", jwt: "second", issuedAt: Self.now + 1)
                let keptFirst = try tokens.keep(first, unlessIssuedAfter: Self.now - 3_000)
                #expect(keptFirst == first)
                let keptSecond = try tokens.keep(second, unlessIssuedAfter: Self.now + 1 - 3_000)
                #expect(keptSecond == first)  // the first is younger than the cutoff: it stays
                let newest = try tokens.newest(keyID: "K")
                #expect(newest == first)
                let later = SharedProviderToken(keyID: "K", jwt: "later", issuedAt: Self.now + 3_000)
                let keptLater = try tokens.keep(later, unlessIssuedAfter: Self.now)
                #expect(keptLater == later)
            }
        }
    }
}

/// What two concurrent claimers collected.
private final class Results: @unchecked Sendable {
    private let lock = NSLock()
    private var values: [Int: [UserID]] = [:]

    func set(_ index: Int, _ users: [UserID]) {
        lock.lock()
        values[index] = users
        lock.unlock()
    }

    var both: ([UserID], [UserID]) {
        lock.lock()
        defer { lock.unlock() }
        return (values[0] ?? [], values[1] ?? [])
    }
}
