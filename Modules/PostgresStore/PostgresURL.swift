import Foundation
public import PostgresNIO

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

    /// The connection's settings for postgres-nio.
    func configuration() throws -> PostgresConnection.Configuration {
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
