import Foundation
import Logging
import PostgresNIO
import PostgresStore
import Storage
import TestSupport
import Testing

/// The pool's deadlines and its recovery: no wait on PostgreSQL lasts past its deadline, a
/// lost connection fails its statement and is replaced, and the first statement after the
/// server is back succeeds.
/// The suite runs its tests one at a time: each starts a server of its own.
@Suite(
    "PostgresPool: deadlines and lost connections", .serialized,
    .enabled(if: TestServer.isConfigured, TestServer.disabledReason))
struct PostgresPoolTests {
    static let deadlines = PostgresDeadlines(connectSeconds: 2, statementSeconds: 2, borrowSeconds: 2)

    /// Runs `SELECT 1` on `pool`; throws what the pool threw, with the seconds it took.
    static func selectOne(_ pool: PostgresPool) -> (error: StoreError?, seconds: Double) {
        let started = ContinuousClock.now
        var failure: StoreError?
        do {
            let rows = try pool.withConnection { try pool.query("SELECT 1", on: $0) }
            if rows.count != 1 { failure = .unavailable("\(rows.count) rows") }
        } catch {
            failure = error
        }
        let elapsed = ContinuousClock.now - started
        return (failure, Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
    }

    @Test("A statement past its deadline fails within it, names it, and the next statement succeeds")
    func statementDeadline() throws {
        let pool = PostgresPool(
            url: try PostgresURL(TestServer.urlText), size: 1, deadlines: Self.deadlines,
            logger: TestServer.logger)
        defer { pool.close() }
        let started = ContinuousClock.now
        let error = #expect(throws: StoreError.self) {
            try pool.withConnection { try pool.query("SELECT pg_sleep(30)", on: $0) }
        }
        #expect(error.map { "\($0)".contains("did not answer a statement within 2.0 s") } == true)
        #expect(ContinuousClock.now - started < .seconds(4))
        // The one connection was closed past its deadline; a new one answers.
        let next = Self.selectOne(pool)
        #expect(next.error == nil)
    }

    @Test("A stopped server fails each statement within the connect deadline; after a start the next succeeds")
    func stoppedServer() throws {
        let cluster = try LocalCluster()
        let pool = PostgresPool(
            url: try PostgresURL(cluster.url), size: 2, deadlines: Self.deadlines, logger: TestServer.logger)
        defer { pool.close() }
        #expect(Self.selectOne(pool).error == nil)
        try cluster.stop()
        for _ in 1...3 {
            let attempt = Self.selectOne(pool)
            #expect(attempt.error != nil)
            #expect(attempt.seconds < Self.deadlines.connectSeconds + 2)
        }
        try cluster.start()
        #expect(Self.selectOne(pool).error == nil)
    }

    @Test(
        "After a restart, at most one statement fails (within its deadline) and the next succeeds",
        arguments: ["fast", "immediate"])
    func restartedServer(mode: String) throws {
        let cluster = try LocalCluster()
        let pool = PostgresPool(
            url: try PostgresURL(cluster.url), size: 2, deadlines: Self.deadlines, logger: TestServer.logger)
        defer { pool.close() }
        #expect(Self.selectOne(pool).error == nil)
        try cluster.restart(mode: mode)
        let first = Self.selectOne(pool)
        #expect(first.seconds < Self.deadlines.statementSeconds + 1)
        if first.error != nil { #expect(Self.selectOne(pool).error == nil) }
    }

    @Test(
        "A statement sent on a connection that has already closed fails at once, not at its deadline",
        arguments: [false, true])
    func statementOnClosedConnection(inTransaction: Bool) throws {
        let pool = PostgresPool(
            url: try PostgresURL(TestServer.urlText), size: 1,
            deadlines: .init(connectSeconds: 2, statementSeconds: 10, borrowSeconds: 2), logger: TestServer.logger)
        defer { pool.close() }
        // The server closing the connection between its borrowing (or the transaction's last
        // answer) and the next statement, as a restart does, is the same as closing it here.
        let started = ContinuousClock.now
        let error = #expect(throws: StoreError.self) {
            if inTransaction {
                try pool.transaction { connection in
                    try connection.close().wait()
                    try pool.query("SELECT 1", on: connection)
                }
            } else {
                try pool.withConnection { connection in
                    try connection.close().wait()
                    try pool.query("SELECT 1", on: connection)
                }
            }
        }
        #expect(ContinuousClock.now - started < .seconds(2))
        #expect(error.map { "\($0)".contains("closed the connection") } == true, "\(String(describing: error))")
        // The closed connection was not given back: a new one answers.
        #expect(Self.selectOne(pool).error == nil)
    }

    @Test(
        "Transactions through restarts: every call ends within the connect deadline, none at the statement's",
        arguments: ["fast", "immediate"])
    func restartsBetweenStatements(mode: String) throws {
        let cluster = try LocalCluster()
        let deadlines = PostgresDeadlines(connectSeconds: 2, statementSeconds: 10, borrowSeconds: 10)
        let pool = PostgresPool(
            url: try PostgresURL(cluster.url), size: 1, deadlines: deadlines, logger: TestServer.logger)
        defer { pool.close() }
        let restarted = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            for _ in 1...3 {
                usleep(300_000)
                try? cluster.restart(mode: mode)
            }
            restarted.signal()
        }
        // A pause between statements, as a worker's claim has, is where a restart closes the
        // connection between one answer and the next statement.
        var calls = 0
        var failures = 0
        var slowestSeconds = 0.0
        while restarted.wait(timeout: .now()) == .timedOut {
            let started = ContinuousClock.now
            do {
                try pool.transaction { connection in
                    try pool.query("SELECT 1", on: connection)
                    usleep(2_000)
                    try pool.query("SELECT 2", on: connection)
                }
            } catch {
                failures += 1
            }
            calls += 1
            let elapsed = ContinuousClock.now - started
            slowestSeconds = max(
                slowestSeconds, Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
        }
        #expect(failures > 0, "\(calls) calls: the restarts should have failed some")
        #expect(slowestSeconds < deadlines.connectSeconds + 1.5, "slowest of \(calls) calls: \(slowestSeconds) s")
        #expect(Self.selectOne(pool).error == nil)
    }

    @Test("A frozen server (SIGSTOP) fails the statement within its deadline; once it resumes, the next succeeds")
    func frozenServer() throws {
        let cluster = try LocalCluster()
        let pool = PostgresPool(
            url: try PostgresURL(cluster.url), size: 1, deadlines: Self.deadlines, logger: TestServer.logger)
        defer { pool.close() }
        #expect(Self.selectOne(pool).error == nil)
        try cluster.signal(SIGSTOP)
        let frozen = Self.selectOne(pool)
        try cluster.signal(SIGCONT)
        #expect(frozen.error != nil)
        #expect(frozen.seconds < Self.deadlines.statementSeconds + 1)
        #expect(Self.selectOne(pool).error == nil)
    }

    @Test("A pool whose connections are all borrowed refuses a caller after the borrow deadline")
    func borrowDeadline() throws {
        let pool = PostgresPool(
            url: try PostgresURL(TestServer.urlText), size: 1,
            deadlines: .init(connectSeconds: 2, statementSeconds: 5, borrowSeconds: 0.5), logger: TestServer.logger)
        defer { pool.close() }
        let outcome = try pool.withConnection { _ in Self.selectOne(pool) }
        #expect(outcome.error.map { "\($0)".contains("stayed busy for 0.5 s") } == true)
        #expect(outcome.seconds < 2)
    }
}

/// Code on `DatabaseThreads` (the executor the server and workers run on with PostgreSQL) stays
/// off Swift's cooperative pool, in actors too.
@Suite("DatabaseThreads")
struct DatabaseThreadsTests {
    actor Probe {
        func onDatabaseThread() -> Bool { DatabaseThreads.isCurrentThread }
    }

    @Test("Tasks, child tasks and default actors run on its threads under the preference, not without")
    func preference() async {
        let threads = DatabaseThreads(count: 2, name: "test-db")
        let probe = Probe()
        let inside = await withTaskExecutorPreference(threads) {
            let child = await withTaskGroup(of: Bool.self) { group in
                group.addTask { DatabaseThreads.isCurrentThread }
                return await group.next() ?? false
            }
            return (DatabaseThreads.isCurrentThread, child, await probe.onDatabaseThread())
        }
        #expect(inside.0, "the task itself")
        #expect(inside.1, "a child task")
        #expect(inside.2, "a default actor")
        #expect(await probe.onDatabaseThread() == false)
    }
}
