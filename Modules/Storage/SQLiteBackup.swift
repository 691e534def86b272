import Foundation
import GRDB

extension SQLiteEngagementStore {
    /// Writes a consistent copy of the store to `path` while it stays open and in use (SQLite's
    /// online backup, from one read transaction: every batch committed before it began, none
    /// after). The copy is written beside `path` and renamed into place when whole, so a crash
    /// never leaves half a backup under the name; `path` must not exist yet. The copy is a store
    /// file like any other (a data directory's `engaged.sqlite`), checked with SQLite's
    /// `integrity_check` before it is renamed.
    public func backup(to path: String) throws(StoreError) {
        guard !FileManager.default.fileExists(atPath: path) else {
            throw .invalidBatch(field: "path", problem: "\(path) exists; a backup never replaces a file")
        }
        let partial = path + ".partial"
        try? FileManager.default.removeItem(atPath: partial)
        do {
            let destination = try DatabaseQueue(path: partial)
            // One read transaction of the pool: the copy is of one committed state.
            try pool.backup(to: destination)
            let problems = try destination.read { db in try String.fetchAll(db, sql: "PRAGMA integrity_check") }
            try destination.close()
            guard problems == ["ok"] else {
                throw StoreError.corrupt("\(partial): the copy fails integrity_check: \(problems.prefix(3))")
            }
            try FileManager.default.moveItem(atPath: partial, toPath: path)
        } catch let error as StoreError {
            try? FileManager.default.removeItem(atPath: partial)
            throw error
        } catch {
            try? FileManager.default.removeItem(atPath: partial)
            throw Self.storeError(error, path: path)
        }
    }
}
