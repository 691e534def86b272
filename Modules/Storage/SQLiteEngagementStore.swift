import Foundation
import GRDB

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// An `EngagementStore` in a SQLite file, through GRDB: the embedded default for anything that
/// must survive a restart.
///
/// - Each `apply(_:)` is one `IMMEDIATE` transaction on the single writer connection, so a batch
///   is all-or-nothing even if the process dies mid-write; replays are no-ops through the
///   idempotency-key table and the activity events' primary key.
/// - The file is in WAL mode: readers (a small pool of connections) never wait for the writer
///   and see only committed batches.
/// - Opening never deletes, truncates or migrates a file that is not a store of this package:
///   a non-SQLite or foreign file is `.corrupt`, a store from a newer build is `.newerSchema`,
///   an unwritable file or directory is `.readOnly`. The file is left as it was.
/// - Errors map from SQLite's: `SQLITE_FULL` is `.diskFull`, `SQLITE_READONLY` / `SQLITE_PERM` is
///   `.readOnly`, `SQLITE_CORRUPT` / `SQLITE_NOTADB` is `.corrupt`, anything else (I/O errors, a
///   lock held by another process beyond the busy timeout) is `.unavailable`.
public final class SQLiteEngagementStore: RuntimeStore {
    /// How the store trades write latency for durability, and how long it waits for a lock.
    public struct Options: Sendable, Hashable {
        public enum Durability: Sendable, Hashable {
            /// `PRAGMA synchronous = FULL`: every commit is fsynced before `apply` returns, so a
            /// returned batch survives a power loss or an OS crash. The default.
            case fsyncEveryCommit
            /// `PRAGMA synchronous = NORMAL`: a returned batch survives a crash of the process;
            /// a power loss may undo the last batches (never half of one, and never corrupting).
            /// Faster wherever fsync is slow.
            case fsyncAtCheckpoint
        }

        public var durability: Durability
        /// How long a call waits for a lock held by another process before `.unavailable`.
        public var busyTimeoutSeconds: Double
        /// The most memory each connection (one writer, up to four readers) may spend caching
        /// pages (`PRAGMA cache_size`). A ceiling, not an allocation: a small store uses little.
        public var pageCacheKiB: Int
        /// Caps the file at this many pages (`PRAGMA max_page_count`); tests use it to make
        /// SQLite report a full disk. Nil: no cap beyond SQLite's own.
        var maximumPageCount: Int?

        public init(
            durability: Durability = .fsyncEveryCommit, busyTimeoutSeconds: Double = 5, pageCacheKiB: Int = 16_384
        ) {
            self.durability = durability
            self.busyTimeoutSeconds = busyTimeoutSeconds
            self.pageCacheKiB = pageCacheKiB
            self.maximumPageCount = nil
        }
    }

    /// The schema version this build reads and writes (`PRAGMA user_version`).
    public static let schemaVersion = SQLiteSchema.version

    /// The database file.
    public let path: String
    let pool: DatabasePool

    /// Opens the store at `path`, creating it (and running migrations) when the file is missing
    /// or empty. The directory must exist and be writable (WAL keeps `-wal` and `-shm` files
    /// beside the database).
    public init(path: String, options: Options = Options()) throws(StoreError) {
        self.path = path
        try Self.checkLocation(path)
        try Self.checkFileIsAStore(path)
        do {
            var configuration = Configuration()
            configuration.label = "EngagementStore"
            configuration.busyMode = .timeout(options.busyTimeoutSeconds)
            configuration.maximumReaderCount = 4
            let cacheKiB = max(0, options.pageCacheKiB)
            let maximumPages = options.maximumPageCount
            configuration.prepareDatabase { db in
                try db.execute(sql: "PRAGMA cache_size = -\(cacheKiB)")
                if let maximumPages { try db.execute(sql: "PRAGMA max_page_count = \(maximumPages)") }
            }
            pool = try DatabasePool(path: path, configuration: configuration)
            // GRDB sets NORMAL when it turns WAL on; only the writer connection writes.
            let synchronous = options.durability == .fsyncEveryCommit ? "FULL" : "NORMAL"
            try pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = \(synchronous)") }
            let migrator = SQLiteSchema.migrator
            if try pool.read({ db in try migrator.hasBeenSuperseded(db) }) {
                let found = try pool.read { db in try Int.fetchOne(db, sql: "PRAGMA user_version") } ?? 0
                throw StoreError.newerSchema(
                    found: max(found, SQLiteSchema.version + 1), supported: SQLiteSchema.version)
            }
            try migrator.migrate(pool)
        } catch {
            throw Self.storeError(error, path: path)
        }
    }

    // MARK: - Maintenance

    /// Runs `PRAGMA integrity_check` over the whole file (it reads every page: seconds on a large
    /// store) and throws `.corrupt` listing the first problems it finds.
    public func checkIntegrity() throws(StoreError) {
        let report = try read { db in try String.fetchAll(db, sql: "PRAGMA integrity_check(20)") }
        if report != ["ok"] {
            throw .corrupt("\(path): integrity check failed: " + report.joined(separator: "; "))
        }
    }

    /// Copies the WAL into the database file and truncates it, so the file alone holds every
    /// committed batch (for a copy or a size measurement). The store stays open.
    public func checkpoint() throws(StoreError) {
        try write { db in try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
    }

    /// What the store holds: the bytes its pages in use take (free pages, which SQLite reuses
    /// before it grows the file, not counted) and the rows of each table. It reads every table
    /// (a count is a scan): for tests and measurements, not for a request's path.
    public func footprint() throws(StoreError) -> SQLiteFootprint {
        try read { db in
            let pageSize = try Int.fetchOne(db, sql: "PRAGMA page_size") ?? 0
            let pages = try Int.fetchOne(db, sql: "PRAGMA page_count") ?? 0
            let free = try Int.fetchOne(db, sql: "PRAGMA freelist_count") ?? 0
            var rows: [String: Int] = [:]
            for table in try String.fetchAll(db, sql: SQLiteStatements.selectTableNames) {
                rows[table] = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM \"\(table)\"") ?? 0
            }
            return SQLiteFootprint(bytesInUse: (pages - free) * pageSize, rows: rows)
        }
    }

    // MARK: - Plumbing

    func read<T>(_ body: (Database) throws -> T) throws(StoreError) -> T {
        do {
            return try pool.read(body)
        } catch {
            throw Self.storeError(error, path: path)
        }
    }

    func write<T>(_ body: (Database) throws -> T) throws(StoreError) -> T {
        do {
            return try pool.writeWithoutTransaction(body)
        } catch {
            throw Self.storeError(error, path: path)
        }
    }

    /// Refuses a location the store could not write, before SQLite touches anything. Creates the
    /// file (empty) when it is missing, as SQLite would.
    private static func checkLocation(_ path: String) throws(StoreError) {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue {
            throw .unavailable("\(path) is a directory, not a store file")
        }
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        if descriptor < 0 {
            let code = errno
            let reason = String(cString: strerror(code))
            switch code {
            case EACCES, EPERM, EROFS: throw .readOnly("cannot open \(path) for writing: \(reason)")
            case ENOENT, ENOTDIR: throw .notFound("the directory of \(path) does not exist: \(reason)")
            case ENOSPC: throw .diskFull("cannot create \(path): \(reason)")
            default: throw .unavailable("cannot open \(path): \(reason)")
            }
        }
        close(descriptor)
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
        if access(directory, W_OK) != 0 {
            throw .readOnly(
                "\(directory) is not writable: SQLite keeps \(path)-wal and \(path)-shm beside the database "
                    + "(\(String(cString: strerror(errno))))")
        }
    }

    /// Refuses a file that is not a SQLite database, another application's database, or a store
    /// of a newer schema, reading it without writing anything (no journal mode change, no
    /// migration): a refused file is left exactly as it was.
    private static func checkFileIsAStore(_ path: String) throws(StoreError) {
        do {
            var configuration = Configuration()
            configuration.label = "EngagementStore.inspection"
            let queue = try DatabaseQueue(path: path, configuration: configuration)
            defer { try? queue.close() }
            let (applicationID, userVersion, tables, migrations) = try queue.read { db in
                (
                    try Int32.fetchOne(db, sql: "PRAGMA application_id") ?? 0,
                    try Int.fetchOne(db, sql: "PRAGMA user_version") ?? 0,
                    try String.fetchAll(db, sql: SQLiteStatements.selectTableNames),
                    try db.tableExists("grdb_migrations")
                        ? Int.fetchOne(db, sql: "SELECT count(*) FROM grdb_migrations") ?? 0 : 0
                )
            }
            if applicationID == SQLiteSchema.applicationID {
                if userVersion > SQLiteSchema.version {
                    throw StoreError.newerSchema(found: userVersion, supported: SQLiteSchema.version)
                }
                if userVersion < 1 {
                    throw StoreError.corrupt("\(path) is marked as a store but has no schema version")
                }
                return
            }
            let fresh =
                applicationID == 0 && userVersion == 0 && migrations == 0
                && Set(tables).isSubset(of: SQLiteSchema.bookkeepingTables)
            if !fresh {
                let listed =
                    tables.isEmpty
                    ? "none" : tables.prefix(8).joined(separator: ", ") + (tables.count > 8 ? ", ..." : "")
                throw StoreError.corrupt(
                    "\(path) is not an EngagementEngine store but another SQLite database (application_id "
                        + "\(applicationID), user_version \(userVersion), tables: \(listed)); it was left untouched")
            }
        } catch let error as StoreError {
            throw error
        } catch {
            let mapped = storeError(error, path: path)
            if case .corrupt = mapped {
                throw .corrupt("\(path) is not a SQLite database or is damaged (\(error)); it was left untouched")
            }
            throw mapped
        }
    }

    /// The `StoreError` for an error GRDB or SQLite threw.
    static func storeError(_ error: any Error, path: String) -> StoreError {
        if let error = error as? StoreError { return error }
        // A value of the wrong type or a NULL where the STRICT schema forbids one: damage.
        if error is RowDecodingError { return .corrupt("\(path): \(error)") }
        guard let error = error as? DatabaseError else { return .unavailable("\(path): \(error)") }
        let detail = "\(path): \(error.message ?? "\(error.resultCode)") (\(error.extendedResultCode))"
        switch error.resultCode {
        case .SQLITE_FULL: return .diskFull(detail + "; nothing of the batch was written")
        case .SQLITE_READONLY, .SQLITE_PERM: return .readOnly(detail)
        case .SQLITE_CORRUPT, .SQLITE_NOTADB: return .corrupt(detail)
        case .SQLITE_CANTOPEN:
            let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
            return access(directory, W_OK) == 0 ? .unavailable(detail) : .readOnly(detail)
        default: return .unavailable(detail)
        }
    }
}

/// What a SQLite store holds (`SQLiteEngagementStore.footprint()`).
public struct SQLiteFootprint: Hashable, Sendable {
    /// The bytes of the pages in use, WAL aside (after `checkpoint()`, every committed batch).
    public var bytesInUse: Int
    /// Rows by table name.
    public var rows: [String: Int]
}
