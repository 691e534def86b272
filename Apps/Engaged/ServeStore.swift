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

    /// What `openStore` does with a PostgreSQL database it cannot reach.
    enum Unreachable {
        /// Exit 74 at once: a one-shot command (`migrate`) whose failure must be seen.
        case fail
        /// Try again with a back-off until it can be reached (`DatabaseRetry`), or until SIGTERM
        /// or SIGINT (then nil): a server or a worker that may start before PostgreSQL does.
        case retry
    }

    /// The store of `--data-dir` or `--database` (validated: exactly one), created or migrated to
    /// this build's schema, and its name for logs; exit 74 when it cannot be opened. A
    /// PostgreSQL database that cannot be reached is handled as `unreachable` says; nil only
    /// when it said to retry and a signal came first.
    static func openStore(
        dataDirectory: String?, database: String?, unreachable: Unreachable, logger: Logger
    ) async throws -> (store: any RuntimeStore, name: String)? {
        if let database {
            let url = try PostgresURL(database)  // validated
            let pool = PostgresPool(url: url, size: databasePoolSize, logger: logger)
            let open = { @Sendable () throws(StoreError) in try PostgresRuntimeStore(pool: pool) }
            do {
                switch unreachable {
                case .fail: return (try open(), "\(url)")
                case .retry:
                    let store = try await DatabaseRetry.untilOpened(
                        "the store at \(url)", logger: logger, attempt: open)
                    return store.map { ($0, "\(url)") }
                }
            } catch {
                throw fail("the database \(url) cannot be opened: \(error)", status: 74)
            }
        }
        let directory = dataDirectory ?? ""
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            return (try SQLiteEngagementStore(path: directory + "/engaged.sqlite"), directory)
        } catch {
            throw fail("the store in \(directory) cannot be opened: \(error)", status: 74)
        }
    }
}
