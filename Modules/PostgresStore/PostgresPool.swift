import Foundation
public import Logging
public import NIOCore
import NIOPosix
public import PostgresNIO
public import Storage

/// A fixed set of connections to one database, for callers that are synchronous (the
/// `RuntimeStore` protocol is). Each call borrows a connection, runs its statements on it and
/// gives it back; a caller waits while all are borrowed.
///
/// Contract:
/// - **Every wait has a deadline** (`PostgresDeadlines`): opening a connection, waiting for a
///   free one, and each statement. A statement past its deadline fails with
///   `StoreError.unavailable` naming the deadline, and its connection is closed (PostgreSQL
///   rolls back whatever it had open).
/// - **A lost connection is replaced.** A connection that failed (closed by the server, reset,
///   past a deadline) is closed and not given back; an idle one found closed is dropped at its
///   next borrowing. The next call opens a new one, so the first statement after PostgreSQL
///   accepts connections again succeeds.
/// - **A closed connection fails its statement at once** (`ConnectionClosed`, within about
///   `closedCheckSeconds` twice), not at the statement's deadline, even when it closed before
///   the statement was sent (see `wait`).
/// - The pool never runs statements on an event loop thread (it waits for their answers, which
///   would deadlock there). Its waits block the calling thread: callers in Swift concurrency run
///   on `DatabaseThreads` (a task executor of dedicated threads), never on the cooperative pool.
/// - `transaction` commits all of its statements or none.
///
/// Why a pool of its own rather than postgres-nio's `PostgresClient`: the store's protocol is
/// synchronous (SQLite and the simulator share it), so any pool needs a blocking bridge, and the
/// deadline belongs on that bridge; `PostgresClient` is asynchronous, has no statement deadline
/// and would add a service to drive in every process. This pool is that bridge and nothing more:
/// postgres-nio still speaks the protocol, and TLS, connecting and its timeout are its.
public final class PostgresPool: @unchecked Sendable {
    public let url: PostgresURL
    public let deadlines: PostgresDeadlines
    let logger: Logger
    private let group: any EventLoopGroup
    private let size: Int
    /// Guarded by `condition`.
    private var idle: [PostgresConnection] = []
    private var open = 0
    private var closed = false
    private let condition = NSCondition()
    private var nextID = 0

    /// A pool of at most `size` connections to `url`, opened as they are needed.
    public init(
        url: PostgresURL, size: Int = 4, deadlines: PostgresDeadlines = .init(), logger: Logger,
        group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) {
        self.url = url
        self.size = max(1, size)
        self.deadlines = deadlines
        self.logger = logger
        self.group = group
    }

    deinit { close() }

    /// Closes every idle connection; borrowed ones are closed when they come back.
    public func close() {
        condition.lock()
        closed = true
        let connections = idle
        idle = []
        open -= connections.count
        condition.broadcast()
        condition.unlock()
        for connection in connections { Self.discard(connection) }
    }

    /// Runs `body` with a connection of its own; the connection goes back afterwards, or is
    /// closed when `body` failed with the connection itself (lost, or past a deadline).
    public func withConnection<T>(_ body: (PostgresConnection) throws -> T) throws(StoreError) -> T {
        let connection = try borrow()
        do {
            let result = try body(connection)
            giveBack(connection, broken: connection.isClosed)
            return result
        } catch {
            giveBack(connection, broken: connection.isClosed || Self.isConnectionFailure(error))
            throw storeError(error)
        }
    }

    /// Runs `body` inside `BEGIN ... COMMIT` on one connection; any error rolls it all back.
    public func transaction<T>(_ body: (PostgresConnection) throws -> T) throws(StoreError) -> T {
        try withConnection { connection in
            try run("BEGIN", on: connection)
            do {
                let result = try body(connection)
                try run("COMMIT", on: connection)
                return result
            } catch {
                if !connection.isClosed, !Self.isConnectionFailure(error) { _ = try? run("ROLLBACK", on: connection) }
                throw error
            }
        }
    }

    /// Makes the commit of the transaction open on `connection` durable before it is answered,
    /// on a server that answers commits early (`synchronous_commit = off`, a common tuning):
    /// such a server forgets the last commits it acknowledged when it crashes or is stopped
    /// with `-m immediate`. A transaction whose commit is followed by an act outside the
    /// database (a claim, after which pushes are sent) must not be forgotten: a claim forgotten
    /// after its send would let the next claim merge an alert that already went out. A server
    /// set to a stronger level keeps it.
    public func requireDurableCommit(on connection: PostgresConnection) throws {
        try query(
            "SELECT set_config('synchronous_commit', 'on', true) WHERE current_setting('synchronous_commit') = 'off'",
            on: connection)
    }

    /// Runs one statement and waits for all of its rows, at most `deadlines.statementSeconds`.
    @discardableResult
    public func query(_ query: PostgresQuery, on connection: PostgresConnection) throws -> [PostgresRow] {
        try Self.wait(
            for: connection.query(query, logger: logger).map { $0.rows }, seconds: deadlines.statementSeconds,
            what: "a statement", closing: connection)
    }

    /// Runs one statement without binds (`BEGIN`, DDL), at most `deadlines.statementSeconds`.
    public func run(_ sql: String, on connection: PostgresConnection) throws {
        try Self.run(sql, on: connection, logger: logger, timeoutSeconds: deadlines.statementSeconds)
    }

    /// Runs one statement without binds (DDL, `VACUUM`, `CREATE DATABASE`), waiting at most
    /// `timeoutSeconds` (past it, the connection is closed and `DeadlinePassed` thrown).
    public static func run(
        _ sql: String, on connection: PostgresConnection, logger: Logger, timeoutSeconds: Double = 60
    ) throws {
        _ = try wait(
            for: connection.simpleQuery(sql), seconds: timeoutSeconds, what: "a statement", closing: connection)
    }

    /// `error` as the store's error: a refused statement names PostgreSQL's own message and
    /// code; a deadline names itself; anything else is the database being unreachable.
    public func storeError(_ error: any Error) -> StoreError {
        if let error = error as? DeadlinePassed {
            return .unavailable("PostgreSQL at \(url) did not answer \(error.what) within \(error.seconds) s")
        }
        if let error = error as? ConnectionClosed {
            return .unavailable("PostgreSQL at \(url) closed the connection before answering \(error.what)")
        }
        return Self.storeError(error)
    }

    /// `error` as the store's error (see the instance method), without the database's name.
    public static func storeError(_ error: any Error) -> StoreError {
        if let error = error as? StoreError { return error }
        if let error = error as? DeadlinePassed {
            return .unavailable("PostgreSQL did not answer \(error.what) within \(error.seconds) s")
        }
        if let error = error as? ConnectionClosed { return .unavailable(error.description) }
        if let error = error as? PSQLError {
            if let message = error.serverInfo?[.message] {
                let code = error.serverInfo?[.sqlState] ?? "?"
                if code == "53100" { return .diskFull("PostgreSQL: \(message)") }
                if code == "25006" { return .readOnly("PostgreSQL: \(message)") }
                return .unavailable("PostgreSQL refused a statement (\(code)): \(message)")
            }
            return .unavailable("PostgreSQL: \(String(reflecting: error.code))")
        }
        return .unavailable("PostgreSQL: \(error)")
    }

    /// Whether `error` means the connection itself can no longer be trusted: past a deadline
    /// (an answer may still arrive), or lost (no message from the server). A refusal the
    /// server sent leaves the connection usable.
    static func isConnectionFailure(_ error: any Error) -> Bool {
        if error is DeadlinePassed || error is ConnectionClosed { return true }
        if let error = error as? PSQLError {
            // The server is shutting down (57P01-57P03): this connection is going away.
            if let code = error.serverInfo?[.sqlState] { return code.hasPrefix("57P") || code.hasPrefix("08") }
            return true
        }
        return false
    }

    /// A wait for PostgreSQL that ran out of time.
    public struct DeadlinePassed: Error, CustomStringConvertible {
        public let what: String
        public let seconds: Double
        public var description: String { "PostgreSQL did not answer \(what) within \(seconds) s" }
    }

    /// A statement whose connection closed before it was answered: the server shut down or
    /// ended the session, or the connection was reset.
    public struct ConnectionClosed: Error, CustomStringConvertible {
        public let what: String
        public var description: String { "PostgreSQL closed the connection before answering \(what)" }
    }

    /// How often a wait on a statement looks whether its connection has closed.
    static let closedCheckSeconds = 0.1

    /// Blocks the calling thread until `future` completes or `seconds` pass; past them, closes
    /// `connection` (when given: it may still answer later, so it cannot be reused) and throws
    /// `DeadlinePassed`. Never call it on an event loop: the future completes there.
    ///
    /// When `connection` is given and is found closed at two looks in a row (`closedCheckSeconds`
    /// apart) with the statement unanswered, throws `ConnectionClosed` instead of waiting out the
    /// deadline. postgres-nio fails a statement in flight when its connection closes (with the
    /// server's reason, which the second look leaves time for), but a statement written after
    /// the connection's channel has closed is dropped and never answered. A server shutting
    /// down closes connections between a borrowing's check and its first statement, or
    /// between two statements of a transaction, so that is not rare during a restart.
    static func wait<T>(
        for future: EventLoopFuture<T>, seconds: Double, what: String, closing connection: PostgresConnection?
    ) throws -> T {
        assert(!future.eventLoop.inEventLoop, "a pool's wait on its own event loop would never end")
        DatabaseThreads.noteWait(what)
        let outcome = Outcome<T>()
        future.whenComplete { result in
            outcome.result = result
            outcome.done.signal()
        }
        let giveUp = DispatchTime.now() + .nanoseconds(Int(seconds * 1e9))
        let look = DispatchTimeInterval.nanoseconds(Int(closedCheckSeconds * 1e9))
        var closedAtLastLook = false
        while true {
            let wake = connection == nil ? giveUp : min(giveUp, .now() + look)
            if outcome.done.wait(timeout: wake) == .success { break }
            if DispatchTime.now() >= giveUp {
                if let connection { discard(connection) }
                throw DeadlinePassed(what: what, seconds: seconds)
            }
            guard let connection, connection.isClosed else { continue }
            if closedAtLastLook { throw ConnectionClosed(what: what) }
            closedAtLastLook = true
        }
        // The semaphore orders the write of `result` before this read.
        return try outcome.result!.get()
    }

    /// Closes `connection` without waiting, keeping it alive until its channel has closed.
    static func discard(_ connection: PostgresConnection) {
        connection.close().whenComplete { _ in withExtendedLifetime(connection) {} }
    }

    /// One future's result, handed from the event loop to the waiting thread.
    private final class Outcome<T>: @unchecked Sendable {
        let done = DispatchSemaphore(value: 0)
        var result: Result<T, any Error>?
    }

    private func borrow() throws(StoreError) -> PostgresConnection {
        let giveUp = Date(timeIntervalSinceNow: deadlines.borrowSeconds)
        condition.lock()
        while true {
            if closed {
                condition.unlock()
                throw .unavailable("the connection pool to \(url) is closed")
            }
            while let connection = idle.popLast() {
                if !connection.isClosed {
                    condition.unlock()
                    return connection
                }
                // Lost while idle (the server restarted): dropped, a new one replaces it.
                open -= 1
            }
            if open < size {
                open += 1
                nextID += 1
                let id = nextID
                condition.unlock()
                do {
                    return try connect(id: id)
                } catch {
                    condition.lock()
                    open -= 1
                    condition.signal()
                    condition.unlock()
                    throw .unavailable("cannot connect to \(url): \(storeError(error))")
                }
            }
            DatabaseThreads.noteWait("a free connection")
            guard condition.wait(until: giveUp) else {
                condition.unlock()
                throw .unavailable(
                    "all \(size) connections to \(url) stayed busy for \(deadlines.borrowSeconds) s")
            }
        }
    }

    private func connect(id: Int) throws -> PostgresConnection {
        var configuration = try url.configuration()
        configuration.options.connectTimeout = .nanoseconds(Int64(deadlines.connectSeconds * 1e9))
        // postgres-nio's own connect timeout covers the TCP connect; the handshake (TLS, startup,
        // authentication) is covered here, with a second of slack so its error comes first.
        let opening = PostgresConnection.connect(
            on: group.next(), configuration: configuration, id: id, logger: logger)
        do {
            return try Self.wait(
                for: opening, seconds: deadlines.connectSeconds + 1, what: "a new connection", closing: nil)
        } catch let error as DeadlinePassed {
            // Opened too late to be used: closed as soon as it exists.
            opening.whenSuccess { Self.discard($0) }
            throw error
        }
    }

    private func giveBack(_ connection: PostgresConnection, broken: Bool) {
        condition.lock()
        if broken || closed {
            open -= 1
            condition.signal()
            condition.unlock()
            Self.discard(connection)
            return
        }
        idle.append(connection)
        condition.signal()
        condition.unlock()
    }
}

/// How long a `PostgresPool` waits for PostgreSQL: past any of these, the wait fails with
/// `StoreError.unavailable` and the caller decides whether to try again.
public struct PostgresDeadlines: Hashable, Sendable {
    /// Opening a connection: TCP, TLS, start-up and authentication.
    public var connectSeconds: Double
    /// One statement, from sending it to its last row.
    public var statementSeconds: Double
    /// Waiting for a free connection while all are borrowed.
    public var borrowSeconds: Double

    public init(connectSeconds: Double = 5, statementSeconds: Double = 15, borrowSeconds: Double = 15) {
        self.connectSeconds = connectSeconds
        self.statementSeconds = statementSeconds
        self.borrowSeconds = borrowSeconds
    }
}
