import Foundation
public import Logging
public import NIOCore
import NIOPosix
public import PostgresNIO
public import Storage

/// Where a PostgreSQL database is: `postgres://user[:password]@host[:port]/database`
/// (`postgresql://` too). TLS is not negotiated: the URL names a database on a trusted network
/// (loopback in the tests and the scale test).
public struct PostgresURL: Hashable, Sendable, CustomStringConvertible {
    public var host: String
    public var port: Int
    public var username: String
    public var password: String?
    public var database: String

    /// Parses `text`, or throws a message naming the part that is wrong.
    public init(_ text: String) throws(PostgresURLError) {
        guard let components = URLComponents(string: text), let scheme = components.scheme else {
            throw .malformed("not a URL: \"\(text)\"")
        }
        guard scheme == "postgres" || scheme == "postgresql" else {
            throw .malformed("the scheme must be postgres:// or postgresql://, got \"\(scheme)://\"")
        }
        guard let host = components.host, !host.isEmpty else { throw .malformed("no host in \"\(text)\"") }
        guard let user = components.user, !user.isEmpty else { throw .malformed("no user in \"\(text)\"") }
        let path = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
        guard !path.isEmpty, !path.contains("/") else {
            throw .malformed("the path must name one database, as in postgres://user@host/engaged")
        }
        if let port = components.port, !(1...65535).contains(port) {
            throw .malformed("the port must be 1-65535, got \(port)")
        }
        self.host = host
        port = components.port ?? 5432
        username = user
        password = components.password
        database = path
    }

    /// The URL without its password, for logs and errors.
    public var description: String { "postgres://\(username)@\(host):\(port)/\(database)" }

    var configuration: PostgresConnection.Configuration {
        PostgresConnection.Configuration(
            host: host, port: port, username: username, password: password, database: database, tls: .disable)
    }
}

/// Why a database URL is refused (a usage error: exit 64).
public enum PostgresURLError: Error, Hashable, Sendable, CustomStringConvertible {
    case malformed(String)
    public var description: String {
        switch self {
        case .malformed(let problem): "--database: \(problem)"
        }
    }
}

/// A fixed set of connections to one database, for callers that are synchronous (the
/// `RuntimeStore` protocol is). Each call borrows a connection, runs its statements on it and
/// gives it back; a caller waits while all are borrowed.
///
/// Contract: the pool never runs statements on an event loop thread (it waits for their
/// answers, which would deadlock there); a connection that failed is closed and replaced at
/// its next borrowing; `transaction` commits all of its statements or none.
public final class PostgresPool: @unchecked Sendable {
    public let url: PostgresURL
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
        url: PostgresURL, size: Int = 4, logger: Logger,
        group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) {
        self.url = url
        self.size = max(1, size)
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
        for connection in connections { try? connection.close().wait() }
    }

    /// Runs `body` with a connection of its own; the connection goes back afterwards, or is
    /// closed when `body` failed with the connection itself (a network error).
    public func withConnection<T>(_ body: (PostgresConnection) throws -> T) throws(StoreError) -> T {
        let connection = try borrow()
        do {
            let result = try body(connection)
            giveBack(connection, broken: connection.isClosed)
            return result
        } catch {
            giveBack(connection, broken: connection.isClosed)
            throw Self.storeError(error)
        }
    }

    /// Runs `body` inside `BEGIN ... COMMIT` on one connection; any error rolls it all back.
    public func transaction<T>(_ body: (PostgresConnection) throws -> T) throws(StoreError) -> T {
        try withConnection { connection in
            try Self.run("BEGIN", on: connection, logger: logger)
            do {
                let result = try body(connection)
                try Self.run("COMMIT", on: connection, logger: logger)
                return result
            } catch {
                _ = try? Self.run("ROLLBACK", on: connection, logger: logger)
                throw error
            }
        }
    }

    /// Runs one statement and waits for all of its rows.
    @discardableResult
    public func query(_ query: PostgresQuery, on connection: PostgresConnection) throws -> [PostgresRow] {
        try connection.query(query, logger: logger).wait().rows
    }

    /// Runs one statement without binds (DDL, `VACUUM`, `CREATE DATABASE`).
    public static func run(_ sql: String, on connection: PostgresConnection, logger: Logger) throws {
        _ = try connection.simpleQuery(sql).wait()
    }

    /// `error` as the store's error: a refused statement names PostgreSQL's own message and
    /// code; anything else is the database being unreachable.
    public static func storeError(_ error: any Error) -> StoreError {
        if let error = error as? StoreError { return error }
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

    private func borrow() throws(StoreError) -> PostgresConnection {
        condition.lock()
        while true {
            if closed {
                condition.unlock()
                throw .unavailable("the connection pool to \(url) is closed")
            }
            if let connection = idle.popLast() {
                condition.unlock()
                return connection
            }
            if open < size {
                open += 1
                nextID += 1
                let id = nextID
                condition.unlock()
                do {
                    return try PostgresConnection.connect(
                        on: group.next(), configuration: url.configuration, id: id, logger: logger
                    ).wait()
                } catch {
                    condition.lock()
                    open -= 1
                    condition.signal()
                    condition.unlock()
                    throw .unavailable("cannot connect to \(url): \(Self.storeError(error))")
                }
            }
            condition.wait()
        }
    }

    private func giveBack(_ connection: PostgresConnection, broken: Bool) {
        condition.lock()
        if broken || closed {
            open -= 1
            condition.signal()
            condition.unlock()
            try? connection.close().wait()
            return
        }
        idle.append(connection)
        condition.signal()
        condition.unlock()
    }
}
