import Foundation
import GRDB
import Models
import Storage
import Synchronization
import Testing

@Suite("SQLite online backup")
struct SQLiteBackupTests {
    /// The newest checkpoint of each workload user: what a store holds after some batches.
    static func checkpoints(_ store: SQLiteEngagementStore) throws -> [String?] {
        try (0..<StoreCrashWorkload.userCount).map { user in
            try store.engagementState(userID: StoreCrashWorkload.userID(forBatch: user))?.checkpoint
        }
    }

    @Test("A backup holds what was committed and opens as a store")
    func aBackupHoldsTheCommittedState() throws {
        try withTemporaryDirectory { directory in
            let store = try SQLiteEngagementStore(path: directory.appendingPathComponent("engaged.sqlite").path)
            for index in 0..<30 { try store.apply(StoreCrashWorkload.batch(index)) }
            let copy = directory.appendingPathComponent("backup.sqlite").path
            try SQLiteEngagementStore.backup(storeAt: store.path, to: copy)
            #expect(!FileManager.default.fileExists(atPath: copy + ".partial"))
            let restored = try SQLiteEngagementStore(path: copy)
            #expect(try Self.checkpoints(restored) == Self.checkpoints(store))
            try restored.checkReady()
        }
    }

    @Test("A backup never replaces a file, and leaves it as it was")
    func aBackupNeverReplacesAFile() throws {
        try withTemporaryDirectory { directory in
            let store = try SQLiteEngagementStore(path: directory.appendingPathComponent("engaged.sqlite").path)
            let existing = directory.appendingPathComponent("taken").path
            FileManager.default.createFile(atPath: existing, contents: Data("keep".utf8))
            #expect(throws: BackupError.destinationExists(existing)) {
                try SQLiteEngagementStore.backup(storeAt: store.path, to: existing)
            }
            #expect(FileManager.default.contents(atPath: existing) == Data("keep".utf8))
            let nowhere = directory.appendingPathComponent("missing/backup.sqlite").path
            #expect(throws: BackupError.self) { try SQLiteEngagementStore.backup(storeAt: store.path, to: nowhere) }
            // Not a store: refused, and nothing written.
            let other = directory.appendingPathComponent("other.sqlite").path
            let queue = try DatabaseQueue(path: other)
            try queue.write { db in try db.execute(sql: "CREATE TABLE t (x INTEGER)") }
            try queue.close()
            let copy = directory.appendingPathComponent("copy.sqlite").path
            #expect(throws: BackupError.self) { try SQLiteEngagementStore.backup(storeAt: other, to: copy) }
            #expect(!FileManager.default.fileExists(atPath: copy))
        }
    }

    @Test("A backup taken while batches are written is one committed state: whole batches, in order")
    func aBackupDuringWritesIsConsistent() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("engaged.sqlite").path
            let store = try SQLiteEngagementStore(path: path)
            let written = Mutex(0)
            let failed = Mutex(false)
            let writer = Thread {
                for index in 0..<400 {
                    do { try store.apply(StoreCrashWorkload.batch(index)) } catch {
                        failed.withLock { $0 = true }
                        return
                    }
                    written.withLock { $0 = index + 1 }
                }
            }
            writer.start()
            // Waits for the writer, or stops when it failed (an expectation then fails, no hang).
            func wait(for count: Int) {
                while written.withLock({ $0 }) < count, !failed.withLock({ $0 }) {
                    Thread.sleep(forTimeInterval: 0.001)
                }
            }
            wait(for: 20)
            let copy = directory.appendingPathComponent("backup.sqlite").path
            try SQLiteEngagementStore.backup(storeAt: path, to: copy)
            wait(for: 400)
            #expect(!failed.withLock { $0 })
            // The copy is the store after some batch n: each user's checkpoint is the newest of
            // that user's batches up to n, for one n.
            let found = try Self.checkpoints(SQLiteEngagementStore(path: copy))
            let matches = (19..<400).filter { last in
                found
                    == (0..<StoreCrashWorkload.userCount).map { user in
                        let newest = stride(from: last, through: 0, by: -1).first {
                            $0 % StoreCrashWorkload.userCount == user
                        }
                        return newest.map(StoreCrashWorkload.checkpoint(forBatch:))
                    }
            }
            #expect(matches.count == 1, "\(found)")
        }
    }
}
