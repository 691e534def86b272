import Foundation
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
            try store.backup(to: copy)
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
            #expect(throws: StoreError.self) { try store.backup(to: existing) }
            #expect(FileManager.default.contents(atPath: existing) == Data("keep".utf8))
            let nowhere = directory.appendingPathComponent("missing/backup.sqlite").path
            #expect(throws: StoreError.self) { try store.backup(to: nowhere) }
        }
    }

    @Test("A backup taken while batches are written is one committed state: whole batches, in order")
    func aBackupDuringWritesIsConsistent() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("engaged.sqlite").path
            let store = try SQLiteEngagementStore(path: path)
            let written = Mutex(0)
            let writer = Thread {
                for index in 0..<400 {
                    do { try store.apply(StoreCrashWorkload.batch(index)) } catch { return }
                    written.withLock { $0 = index + 1 }
                }
            }
            writer.start()
            while written.withLock({ $0 }) < 20 { Thread.sleep(forTimeInterval: 0.001) }
            let copy = directory.appendingPathComponent("backup.sqlite").path
            try store.backup(to: copy)
            while written.withLock({ $0 }) < 400 { Thread.sleep(forTimeInterval: 0.01) }
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
