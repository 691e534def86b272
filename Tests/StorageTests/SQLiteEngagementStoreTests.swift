import Foundation
import GRDB
import Models
import StoreConformance
import Testing

@testable import Storage

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

private let t0 = Instant(iso8601: "2027-03-01T07:00:00Z")!

/// Reads a file's bytes, or nil when it does not exist.
private func contents(_ path: String) -> Data? { FileManager.default.contents(atPath: path) }

@Suite("SQLiteEngagementStore")
struct SQLiteEngagementStoreTests {
    @Test("The SQLite store passes the conformance suite", arguments: StoreConformanceCheck.allCases)
    func conformance(_ check: StoreConformanceCheck) throws {
        try withTemporaryDirectory { directory in
            try checkEngagementStoreConformance(
                { try! SQLiteEngagementStore(path: directory.appendingPathComponent("store.sqlite").path) },
                only: [check])
        }
    }

    @Test("The SQLite store keeps the runtime's contract", arguments: RuntimeStoreCheck.allCases)
    func runtimeConformance(_ check: RuntimeStoreCheck) throws {
        try withTemporaryDirectory { directory in
            try checkRuntimeStoreConformance(
                { try SQLiteEngagementStore(path: directory.appendingPathComponent("\(check).sqlite").path) },
                only: [check])
        }
    }

    @Test("What was applied is still there after the store is closed and reopened")
    func dataSurvivesAReopen() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("store.sqlite").path
            let model = InMemoryEngagementStore()
            do {
                let store = try SQLiteEngagementStore(path: path)
                for index in 0..<40 {
                    try store.apply(StoreCrashWorkload.batch(index))
                    try model.apply(StoreCrashWorkload.batch(index))
                }
            }
            let reopened = try SQLiteEngagementStore(path: path)
            #expect(try CrashWorkloadSnapshot(of: reopened) == CrashWorkloadSnapshot(of: model))
            try reopened.checkIntegrity()
        }
    }

    @Test("A new store is in WAL mode and carries the application id and the schema version")
    func newStoreLayout() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("store.sqlite").path
            _ = try SQLiteEngagementStore(path: path)
            let queue = try DatabaseQueue(path: path)
            defer { try? queue.close() }
            let (journalMode, userVersion, applicationID, migrations) = try queue.read { db in
                (
                    try String.fetchOne(db, sql: "PRAGMA journal_mode"),
                    try Int.fetchOne(db, sql: "PRAGMA user_version"),
                    try Int32.fetchOne(db, sql: "PRAGMA application_id"),
                    try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations")
                )
            }
            #expect(journalMode == "wal")
            #expect(userVersion == SQLiteEngagementStore.schemaVersion)
            #expect(applicationID == SQLiteSchema.applicationID)
            #expect(
                migrations == [
                    "v1", "v2", "v3-inbox", "v4-users", "v5-trace", "v6-token-revocations", "v7-claims",
                    "v8-social-ids",
                ])
        }
    }

    /// Every statement of the store's tables: the base schema's, the trace's and the user records'.
    static let statements =
        SQLiteStatements.all + SQLiteTraceStatements.all + SQLiteUserStatements.all + SQLiteClaimStatements.all
        + SQLiteSocialStatements.all
    /// Statements that scan an index by design: COUNT over the (small) createdAt index of the
    /// idempotency records, and over the expiry index of the social ids.
    static let indexScans: Set = ["countIdempotency", "countSocialEvents"]

    @Test(
        "Every statement the store runs is an index search, never a table scan",
        arguments: statements.map(\.name))
    func statementsUseIndices(name: String) throws {
        let sql = try #require(Self.statements.first { $0.name == name }).sql
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("store.sqlite").path
            _ = try SQLiteEngagementStore(path: path)
            let queue = try DatabaseQueue(path: path)
            defer { try? queue.close() }
            let placeholders = StatementArguments(
                Array(repeating: DatabaseValue.null, count: sql.filter { $0 == "?" }.count))
            let plan = try queue.read { db in
                try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + sql, arguments: placeholders).map {
                    try $0.decode(String.self, forColumn: "detail")
                }
            }
            if !Self.indexScans.contains(name) { #expect(!plan.contains { $0.hasPrefix("SCAN") }, "\(plan)") }
            if sql.hasPrefix("SELECT") {
                #expect(plan.contains { $0.hasPrefix("SEARCH") || $0.contains("USING") }, "\(plan)")
            }
        }
    }

    @Test("A file that is not a SQLite database is refused as corrupt and left untouched")
    func garbageFileIsRefused() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("store.sqlite").path
            var random = SeededGenerator(seed: 6)
            let garbage = Data((0..<65_536).map { _ in UInt8.random(in: 0...255, using: &random) })
            _ = FileManager.default.createFile(atPath: path, contents: garbage)
            let error = #expect(throws: StoreError.self) { try SQLiteEngagementStore(path: path) }
            guard case .corrupt(let detail) = error else {
                Issue.record("expected corrupt, got \(String(describing: error))")
                return
            }
            #expect(detail.contains("not a SQLite database"))
            #expect(contents(path) == garbage)
            #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
        }
    }

    @Test("Another application's SQLite database is refused and left untouched")
    func foreignDatabaseIsRefused() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("notes.sqlite").path
            do {
                let queue = try DatabaseQueue(path: path)
                try queue.write { db in
                    try db.execute(sql: "CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT)")
                    try db.execute(sql: "INSERT INTO notes (text) VALUES ('keep me')")
                }
                try queue.close()
            }
            let before = contents(path)
            let error = #expect(throws: StoreError.self) { try SQLiteEngagementStore(path: path) }
            guard case .corrupt(let detail) = error else {
                Issue.record("expected corrupt, got \(String(describing: error))")
                return
            }
            #expect(detail.contains("not an EngagementEngine store"))
            #expect(detail.contains("notes"))
            #expect(contents(path) == before)
            #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
        }
    }

    @Test("An empty file becomes a new store")
    func emptyFileBecomesAStore() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("store.sqlite").path
            _ = FileManager.default.createFile(atPath: path, contents: Data())
            let store = try SQLiteEngagementStore(path: path)
            try store.apply(StoreCrashWorkload.batch(0))
            #expect(try store.engagementState(userID: StoreCrashWorkload.userID(forBatch: 0)) != nil)
        }
    }

    @Test("A store written by a newer schema is refused with both versions and keeps its data")
    func newerSchemaIsRefused() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("store.sqlite").path
            do { try SQLiteEngagementStore(path: path).apply(StoreCrashWorkload.batch(0)) }
            let newer = SQLiteEngagementStore.schemaVersion + 1
            try setUserVersion(newer, path: path)
            let before = contents(path)
            let error = #expect(throws: StoreError.self) { try SQLiteEngagementStore(path: path) }
            #expect(error == .newerSchema(found: newer, supported: SQLiteEngagementStore.schemaVersion))
            #expect(contents(path) == before)
            // Nothing was reset: back at the supported version, the data reads again.
            try setUserVersion(SQLiteEngagementStore.schemaVersion, path: path)
            let store = try SQLiteEngagementStore(path: path)
            #expect(try store.engagementState(userID: StoreCrashWorkload.userID(forBatch: 0))?.checkpoint == "batch-0")
        }
    }

    @Test("A running store is ready until another build moves its schema, either way")
    func readinessFollowsTheSchemaVersion() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("store.sqlite").path
            let store = try SQLiteEngagementStore(path: path)
            try store.checkReady()
            let supported = SQLiteEngagementStore.schemaVersion
            try setUserVersion(supported + 1, path: path)
            #expect(throws: StoreError.newerSchema(found: supported + 1, supported: supported)) {
                try store.checkReady()
            }
            try setUserVersion(supported - 1, path: path)
            #expect(throws: StoreError.olderSchema(found: supported - 1, expected: supported)) {
                try store.checkReady()
            }
            try setUserVersion(supported, path: path)
            try store.checkReady()
        }
    }

    @Test("A store with a migration this build does not know is refused as newer")
    func unknownMigrationIsRefused() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("store.sqlite").path
            _ = try SQLiteEngagementStore(path: path)
            let queue = try DatabaseQueue(path: path)
            try queue.write { db in try db.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES ('v3')") }
            try queue.close()
            let error = #expect(throws: StoreError.self) { try SQLiteEngagementStore(path: path) }
            guard case .newerSchema(_, let supported) = error else {
                Issue.record("expected newerSchema, got \(String(describing: error))")
                return
            }
            #expect(supported == SQLiteEngagementStore.schemaVersion)
        }
    }

    @Test("An outbox row of a channel this build does not know reads back as unknown, beside the others")
    func unknownOutboxChannelReadsBackAsUnknown() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("store.sqlite").path
            let store = try SQLiteEngagementStore(path: path)
            let sync = OutboxRow(
                key: "k1", userID: "u1", requestID: "r1", dueAt: .init(secondsSinceEpoch: 60),
                payload: .sync)
            let other = OutboxRow(
                key: "k2", userID: "u1", requestID: "r2", dueAt: .init(secondsSinceEpoch: 61),
                payload: .sync)
            try store.commit(RuntimeCommit(userID: "u1", snapshot: [1], outbox: [sync, other]))
            let queue = try DatabaseQueue(path: path)
            try queue.write { db in try db.execute(sql: "UPDATE outbox SET channel = 'fax' WHERE key = 'k1'") }
            try queue.close()
            // A newer version's row is read as it is; the rows beside it are not held up.
            let due = try store.dueOutbox(through: .init(secondsSinceEpoch: 61), limit: 10)
            #expect(due.map(\.channel) == [.unknown("fax"), .silent])
            #expect(due.first?.payload == .unreadable("{}", channel: .unknown("fax")))
            #expect(OutboxChannel(name: "fax").name == "fax")
            #expect(OutboxChannel.known.allSatisfy { OutboxChannel(name: $0.name) == $0 })
        }
    }

    @Test("Damage inside a store is reported as corrupt and the file is kept")
    func damagedStoreIsReported() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("store.sqlite").path
            do {
                let store = try SQLiteEngagementStore(path: path)
                for index in 0..<60 { try store.apply(StoreCrashWorkload.batch(index)) }
            }  // closing checkpoints the WAL into the file
            var bytes = try #require(contents(path))
            var random = SeededGenerator(seed: 8)
            let pageSize = 4_096
            for offset in stride(from: bytes.count / 2, to: bytes.count, by: 1) {
                bytes[offset] = UInt8.random(in: 0...255, using: &random)
            }
            #expect(bytes.count > 2 * pageSize)
            try bytes.write(to: URL(fileURLWithPath: path))
            var reported: StoreError?
            do {
                let store = try SQLiteEngagementStore(path: path)
                for index in 0..<StoreCrashWorkload.userCount {
                    _ = try UserSnapshot(StoreCrashWorkload.userID(forBatch: index), in: store)
                }
                try store.checkIntegrity()
            } catch let error as StoreError {
                reported = error
            }
            guard case .corrupt = reported else {
                Issue.record("expected corrupt, got \(String(describing: reported))")
                return
            }
            #expect(contents(path)?.count ?? 0 >= bytes.count)
        }
    }

    @Test("A full disk fails the batch with diskFull, applies none of it, and loses nothing before it")
    func fullDiskFailsTheBatchCleanly() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("store.sqlite").path
            let model = InMemoryEngagementStore()
            var failed: (index: Int, error: StoreError)?
            do {
                var options = SQLiteEngagementStore.Options(durability: .fsyncAtCheckpoint)
                options.maximumPageCount = 64
                let store = try SQLiteEngagementStore(path: path, options: options)
                for index in 0..<5_000 {
                    do {
                        try store.apply(StoreCrashWorkload.batch(index))
                        try model.apply(StoreCrashWorkload.batch(index))
                    } catch let error as StoreError {
                        failed = (index, error)
                        break
                    }
                }
                let (index, error) = try #require(failed)
                guard case .diskFull(let detail) = error else {
                    Issue.record("expected diskFull, got \(error)")
                    return
                }
                #expect(detail.contains(path))
                #expect(try CrashWorkloadSnapshot(of: store) == CrashWorkloadSnapshot(of: model))
                #expect(throws: StoreError.self) { try store.apply(StoreCrashWorkload.batch(index)) }
            }
            // With room again, the refused batch applies and everything before it is intact.
            let store = try SQLiteEngagementStore(path: path)
            #expect(try CrashWorkloadSnapshot(of: store) == CrashWorkloadSnapshot(of: model))
            let index = try #require(failed).index
            try store.apply(StoreCrashWorkload.batch(index))
            try model.apply(StoreCrashWorkload.batch(index))
            #expect(try CrashWorkloadSnapshot(of: store) == CrashWorkloadSnapshot(of: model))
            try store.checkIntegrity()
        }
    }

    @Test("A location the process cannot write is refused with readOnly")
    func readOnlyLocationIsRefused() throws {
        try withTemporaryDirectory { directory in
            let path: String
            if geteuid() == 0 {
                // Permission bits do not stop root; sysfs refuses new files even to root.
                path = "/sys/engagement-store-test.sqlite"
            } else {
                let locked = directory.appendingPathComponent("locked")
                try FileManager.default.createDirectory(at: locked, withIntermediateDirectories: true)
                try FileManager.default.setAttributes([.posixPermissions: 0o555], ofItemAtPath: locked.path)
                path = locked.appendingPathComponent("store.sqlite").path
            }
            let error = #expect(throws: StoreError.self) { try SQLiteEngagementStore(path: path) }
            guard case .readOnly(let detail) = error else {
                Issue.record("expected readOnly, got \(String(describing: error))")
                return
            }
            #expect(detail.contains(path))
            #expect(!FileManager.default.fileExists(atPath: path))
        }
    }

    @Test("A read-only store file is refused with readOnly and left untouched", .enabled(if: geteuid() != 0))
    func readOnlyFileIsRefused() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("store.sqlite").path
            do { try SQLiteEngagementStore(path: path).apply(StoreCrashWorkload.batch(0)) }
            try FileManager.default.setAttributes([.posixPermissions: 0o444], ofItemAtPath: path)
            let before = contents(path)
            let error = #expect(throws: StoreError.self) { try SQLiteEngagementStore(path: path) }
            guard case .readOnly = error else {
                Issue.record("expected readOnly, got \(String(describing: error))")
                return
            }
            #expect(contents(path) == before)
        }
    }

    @Test("A store in a directory that does not exist is notFound")
    func missingDirectoryIsNotFound() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("missing/store.sqlite").path
            let error = #expect(throws: StoreError.self) { try SQLiteEngagementStore(path: path) }
            guard case .notFound = error else {
                Issue.record("expected notFound, got \(String(describing: error))")
                return
            }
        }
    }

    @Test("A profile that would not read back is refused as an invalid batch and nothing is written")
    func unreadableProfileIsRefused() throws {
        try withTemporaryDirectory { directory in
            let store = try SQLiteEngagementStore(path: directory.appendingPathComponent("store.sqlite").path)
            let batch = StoreBatch(
                profiles: [
                    UserProfile(id: "u1", displayName: "Ana", timeZone: "Europe/Lisbon"),
                    UserProfile(id: "u2", displayName: "Bo", timeZone: "Mars/Olympus_Mons"),
                ],
                activityEvents: [ActivityEvent(userID: "u1", at: t0, kind: .moodLogged)])
            let error = #expect(throws: StoreError.self) { try store.apply(batch) }
            guard case .invalidBatch(let field, _) = error else {
                Issue.record("expected invalidBatch, got \(String(describing: error))")
                return
            }
            #expect(field == "profiles[1]")
            #expect(try store.profile(id: "u1") == nil)
            #expect(try store.lastActiveAt(userID: "u1") == nil)
        }
    }

    @Test("Concurrent writers lose nothing and readers never see half a batch")
    func concurrentBatchesAreAtomic() throws {
        try withTemporaryDirectory { directory in
            let store = try SQLiteEngagementStore(
                path: directory.appendingPathComponent("store.sqlite").path,
                options: .init(durability: .fsyncAtCheckpoint))
            let past = Instant(secondsSinceEpoch: 0)
            let far = Instant(secondsSinceEpoch: 1 << 40)
            let writers = 4
            let batchesPerWriter = 50
            let torn = Counter()
            DispatchQueue.concurrentPerform(iterations: writers + 2) { worker in
                if worker >= writers {
                    for _ in 0..<batchesPerWriter {
                        for user in 0..<writers {
                            let events = (try? store.activityEvents(userID: "u\(user)", since: past).count) ?? -1
                            let rows = (try? store.ledger(userID: "u\(user)", from: past, to: far).count) ?? -2
                            if rows < events { torn.increment() }
                        }
                    }
                    return
                }
                for index in 0..<batchesPerWriter {
                    let at = t0 + Int64(index)
                    try? store.apply(
                        StoreBatch(
                            activityEvents: [ActivityEvent(userID: "u\(worker)", at: at, kind: .moodLogged)],
                            ledgerEntries: [
                                LedgerEntry(
                                    userID: "u\(worker)", requestID: "r\(index)", kind: .hydration, state: .delivered,
                                    at: at, idempotencyKey: "k\(index)")
                            ]))
                }
            }
            #expect(torn.value == 0)
            for user in 0..<writers {
                #expect(try store.activityEvents(userID: "u\(user)", since: past).count == batchesPerWriter)
                #expect(try store.ledger(userID: "u\(user)", from: past, to: far).count == batchesPerWriter)
            }
        }
    }

    @Test(
        "SQLite failures map to the store's errors",
        arguments: [
            (ResultCode.SQLITE_FULL, "diskFull"), (.SQLITE_READONLY, "readOnly"), (.SQLITE_PERM, "readOnly"),
            (.SQLITE_CORRUPT, "corrupt"), (.SQLITE_NOTADB, "corrupt"), (.SQLITE_IOERR, "unavailable"),
            (.SQLITE_BUSY, "unavailable"), (.SQLITE_NOMEM, "unavailable"),
        ])
    func errorMapping(code: ResultCode, expected: String) {
        let error = SQLiteEngagementStore.storeError(DatabaseError(resultCode: code), path: "/data/store.sqlite")
        let name: String =
            switch error {
            case .diskFull: "diskFull"
            case .readOnly: "readOnly"
            case .corrupt: "corrupt"
            case .unavailable: "unavailable"
            default: "\(error)"
            }
        #expect(name == expected)
        #expect(error.description.contains("/data/store.sqlite"))
    }

    @Test("The unavailable error reads as one actionable line")
    func unavailableDescription() {
        #expect(
            StoreError.unavailable("/data/store.sqlite: database is locked").description
                == "store unavailable: /data/store.sqlite: database is locked")
    }
}

private func setUserVersion(_ version: Int, path: String) throws {
    let queue = try DatabaseQueue(path: path)
    try queue.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA user_version = \(version)") }
    try queue.close()
}

/// A thread-safe tally for the concurrency test.
private final class Counter: @unchecked Sendable {
    // Safe: `count` is only touched while holding `lock`.
    private let lock = NSLock()
    private var count = 0

    func increment() {
        lock.lock()
        count += 1
        lock.unlock()
    }

    var value: Int {
        lock.lock()
        defer { lock.unlock() }
        return count
    }
}
