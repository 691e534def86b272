import Foundation
import Logging
import PostgresNIO
import PostgresStore
import Storage
import Testing

/// The PostgreSQL server the tests run against, from `ENGAGED_TEST_DATABASE_URL`
/// (postgres://user@host:port/database). `make test` starts a throwaway server
/// (`scripts/pg-local.sh`) and sets it; without it the PostgreSQL suites are disabled.
enum TestServer {
    static let urlText = ProcessInfo.processInfo.environment["ENGAGED_TEST_DATABASE_URL"] ?? ""
    static var isConfigured: Bool { !urlText.isEmpty }
    static let disabledReason: Comment = "ENGAGED_TEST_DATABASE_URL is not set (make test starts a server)"
    static let logger = Logger(label: "PostgresStoreTests")
}

/// A database of one test's own on the test server: created empty, dropped with whatever
/// connections are left when the test ends, so tests running in parallel never see each other.
struct ScratchDatabase {
    let url: PostgresURL

    /// Runs `body` with a new database, then drops it.
    static func with<T>(_ body: (ScratchDatabase) throws -> T) throws -> T {
        let database = try create()
        defer { database.drop() }
        return try body(database)
    }

    /// `with`, for a body that awaits.
    static func withAsync<T>(_ body: (ScratchDatabase) async throws -> T) async throws -> T {
        let database = try create()
        defer { database.drop() }
        return try await body(database)
    }

    /// A new, empty database on the test server.
    static func create() throws -> ScratchDatabase {
        var url = try PostgresURL(TestServer.urlText)
        let name = "engaged_test_" + String(UInt64.random(in: 0...UInt64.max), radix: 16)
        let admin = PostgresPool(url: url, size: 1, logger: TestServer.logger)
        defer { admin.close() }
        try admin.withConnection { connection in
            try PostgresPool.run("CREATE DATABASE \(name)", on: connection, logger: TestServer.logger)
        }
        url.database = name
        return ScratchDatabase(url: url)
    }

    /// Drops this database with whatever connections are left.
    func drop() {
        guard let server = try? PostgresURL(TestServer.urlText) else { return }
        let admin = PostgresPool(url: server, size: 1, logger: TestServer.logger)
        defer { admin.close() }
        _ = try? admin.withConnection { connection in
            try PostgresPool.run(
                "DROP DATABASE IF EXISTS \(url.database) WITH (FORCE)", on: connection, logger: TestServer.logger)
        }
    }

    /// Runs `body` with a store on a new database (pool of 2), then closes it and drops the database.
    static func withStore<T>(_ body: (PostgresRuntimeStore) throws -> T) throws -> T {
        try with { database in try database.withStore(body) }
    }

    /// A pool of `size` connections to this database; the caller closes it.
    func makePool(size: Int = 2) -> PostgresPool {
        PostgresPool(url: url, size: size, logger: TestServer.logger)
    }

    /// Runs `body` with a store of its own (its own pool of 2) on this database, then closes the pool.
    func withStore<T>(_ body: (PostgresRuntimeStore) throws -> T) throws -> T {
        let pool = makePool()
        defer { pool.close() }
        return try body(try PostgresRuntimeStore(pool: pool))
    }

    /// Runs one statement on this database and returns its rows (for checks the store has no
    /// read for, and for damaging rows on purpose).
    @discardableResult
    func query(_ query: PostgresQuery) throws -> [PostgresRow] {
        let pool = makePool(size: 1)
        defer { pool.close() }
        return try pool.withConnection { connection in try pool.query(query, on: connection) }
    }
}
