import ArgumentParser
import Foundation
import Logging
import PostgresStore
import Runtime
import Storage

/// Which store `serve` runs on: `--data-dir` (SQLite) or `--database` (PostgreSQL), opened or
/// waited for.
extension Serve {
    /// Exactly one of `--data-dir` (not empty) and `--database` (a PostgreSQL URL).
    static func validateStoreChoice(dataDirectory: String?, database: String?) throws(ValidationError) {
        switch (dataDirectory, database) {
        case (nil, nil): throw ValidationError("give --data-dir (SQLite) or --database (PostgreSQL)")
        case (.some, .some): throw ValidationError("give --data-dir or --database, not both")
        case (.some(let directory), nil) where directory.isEmpty: throw ValidationError("--data-dir must not be empty")
        case (nil, .some(let url)):
            do { _ = try PostgresURL(url) } catch { throw ValidationError(error.description) }
        default: break
        }
    }

    /// The store the flags name, and its name for logs; exit 74 when it cannot be opened. A
    /// PostgreSQL database that cannot be reached is tried again with a back-off until it can
    /// (`DatabaseRetry`); nil when SIGTERM or SIGINT came first.
    func openStore(logger: Logger) async throws -> (store: any RuntimeStore, name: String)? {
        guard let database else {
            return try Self.openStore(dataDirectory: dataDirectory, database: nil, logger: logger)
        }
        let url = try PostgresURL(database)  // validated
        let pool = PostgresPool(url: url, size: Self.databasePoolSize, logger: logger)
        do {
            let store = try await DatabaseRetry.untilOpened("the store at \(url)", logger: logger) {
                () throws(StoreError) in try PostgresRuntimeStore(pool: pool)
            }
            return store.map { ($0, "\(url)") }
        } catch {
            throw Self.fail("the database \(url) cannot be opened: \(error)", status: 74)
        }
    }

    /// The store of `--data-dir` or `--database` (validated: exactly one), created or migrated to
    /// this build's schema, and its name for logs; exit 74 when it cannot be opened.
    static func openStore(dataDirectory: String?, database: String?, logger: Logger) throws -> (
        store: any RuntimeStore, name: String
    ) {
        if let database {
            let url = try PostgresURL(database)  // validated
            do {
                return (try PostgresRuntimeStore(pool: PostgresPool(url: url, size: 8, logger: logger)), "\(url)")
            } catch {
                throw Self.fail("the database \(url) cannot be opened: \(error)", status: 74)
            }
        }
        let directory = dataDirectory ?? ""
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            return (try SQLiteEngagementStore(path: directory + "/engaged.sqlite"), directory)
        } catch {
            throw Self.fail("the store in \(directory) cannot be opened: \(error)", status: 74)
        }
    }
}
