import Foundation
import GRDB

extension SQLiteEngagementStore {
    /// Writes a consistent copy of the store file at `source` to `destination` while a server
    /// may be writing it (SQLite's online backup, from one read transaction: every batch
    /// committed before it began, none after). The source is opened read-only and never
    /// migrated, so a backup never changes the store it copies, whatever the build; a file that
    /// is not a store is refused. The copy is written beside `destination`, checked with SQLite's
    /// `integrity_check` and renamed into place when whole, so a crash never leaves half a backup
    /// under the name; `destination` must not exist (`BackupError.destinationExists`).
    public static func backup(storeAt source: String, to destination: String) throws(BackupError) {
        guard !FileManager.default.fileExists(atPath: destination) else { throw .destinationExists(destination) }
        guard FileManager.default.fileExists(atPath: source) else {
            throw .store(.notFound("\(source) does not exist"))
        }
        let partial = destination + ".partial"
        try? FileManager.default.removeItem(atPath: partial)
        do {
            var configuration = Configuration()
            configuration.readonly = true
            configuration.busyMode = .timeout(5)
            let reader = try DatabasePool(path: source, configuration: configuration)
            let applicationID = try reader.read { db in try Int32.fetchOne(db, sql: "PRAGMA application_id") ?? 0 }
            guard applicationID == SQLiteSchema.applicationID else {
                throw StoreError.corrupt("\(source) is not an EngagementEngine store; nothing was copied")
            }
            let copy = try DatabaseQueue(path: partial)
            try reader.backup(to: copy)
            try reader.close()
            let problems = try copy.read { db in try String.fetchAll(db, sql: "PRAGMA integrity_check") }
            try copy.close()
            guard problems == ["ok"] else {
                throw StoreError.corrupt("\(partial): the copy fails integrity_check: \(problems.prefix(3))")
            }
            // A file that appeared meanwhile is not replaced: `link` fails where `rename` would not.
            guard link(partial, destination) == 0 else {
                let exists = errno == EEXIST
                try? FileManager.default.removeItem(atPath: partial)
                if exists { throw BackupError.destinationExists(destination) }
                throw StoreError.unavailable("\(destination) cannot be written (errno \(errno))")
            }
            try? FileManager.default.removeItem(atPath: partial)
        } catch let error as BackupError {
            throw error
        } catch let error as StoreError {
            try? FileManager.default.removeItem(atPath: partial)
            throw .store(error)
        } catch {
            try? FileManager.default.removeItem(atPath: partial)
            throw .store(storeError(error, path: source))
        }
    }
}

/// Why a backup was not written.
public enum BackupError: Error, Equatable, CustomStringConvertible {
    /// A backup never replaces a file.
    case destinationExists(String)
    /// The source could not be read or the copy written.
    case store(StoreError)

    public var description: String {
        switch self {
        case .destinationExists(let path): "\(path) exists; a backup never replaces a file"
        case .store(let error): "\(error)"
        }
    }
}
