import Foundation
import NIOSSL
public import PostgresNIO

/// Where a PostgreSQL database is, and how to reach it:
/// `postgres://user[:password]@host[:port]/database[?sslmode=MODE[&sslrootcert=FILE]]`
/// (`postgresql://` too).
///
/// TLS, as libpq's `sslmode` names it:
/// - `disable`: no TLS;
/// - `require`: TLS, or no connection, without checking the server's certificate (it protects
///   against listening, not against a server in the middle);
/// - `verify-full`: TLS with the server's certificate checked against the CA certificates in
///   `sslrootcert` (PEM), and its name against the host's (when the host is a name, not an
///   address).
///
/// Without `sslmode`, a loopback host (`localhost`, 127.0.0.0/8, `::1`) is `disable` and any
/// other host `require`: managed PostgreSQL services refuse connections without TLS, and a
/// password should not cross a network in the clear.
public struct PostgresURL: Hashable, Sendable, CustomStringConvertible {
    public var host: String
    public var port: Int
    public var username: String
    public var password: String?
    public var database: String
    public var sslMode: SSLMode
    /// The CA certificates (PEM) `verify-full` checks the server's certificate against.
    public var sslRootCertificatePath: String?

    /// How the connection negotiates TLS (libpq's `sslmode` values this build accepts).
    public enum SSLMode: String, Hashable, Sendable, CaseIterable {
        case disable
        case require
        case verifyFull = "verify-full"
    }

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
        sslMode = Self.isLoopback(host) ? .disable : .require
        for item in components.queryItems ?? [] {
            switch item.name {
            case "sslmode":
                guard let mode = item.value.flatMap(SSLMode.init(rawValue:)) else {
                    throw .malformed(
                        "sslmode must be one of \(SSLMode.allCases.map(\.rawValue).joined(separator: ", ")), "
                            + "got \"\(item.value ?? "")\"")
                }
                sslMode = mode
            case "sslrootcert":
                guard let path = item.value, !path.isEmpty else { throw .malformed("sslrootcert needs a file") }
                guard FileManager.default.isReadableFile(atPath: path) else {
                    throw .malformed("sslrootcert: cannot read \(path)")
                }
                sslRootCertificatePath = path
            default:
                throw .malformed("unknown parameter \"\(item.name)\" (this build reads sslmode and sslrootcert)")
            }
        }
        if sslMode == .verifyFull, sslRootCertificatePath == nil {
            throw .malformed("sslmode=verify-full needs sslrootcert=FILE, the CA certificates to check the server by")
        }
        if sslMode != .verifyFull, sslRootCertificatePath != nil {
            throw .malformed("sslrootcert is only read with sslmode=verify-full")
        }
    }

    /// Whether `host` names this machine: `localhost`, an address of 127.0.0.0/8, or `::1`.
    static func isLoopback(_ host: String) -> Bool {
        let bare = host.trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        return bare == "localhost" || bare == "::1" || bare.hasPrefix("127.")
    }

    /// The URL without its password, for logs and errors.
    public var description: String { "postgres://\(username)@\(host):\(port)/\(database)" }

    /// The connection's settings for postgres-nio (a CA file that does not load throws).
    func configuration() throws -> PostgresConnection.Configuration {
        var tls = TLSConfiguration.makeClientConfiguration()
        let mode: PostgresConnection.Configuration.TLS
        switch sslMode {
        case .disable: mode = .disable
        case .require:
            tls.certificateVerification = .none
            mode = .require(try NIOSSLContext(configuration: tls))
        case .verifyFull:
            tls.certificateVerification = .fullVerification
            tls.trustRoots = .file(sslRootCertificatePath ?? "")
            mode = .require(try NIOSSLContext(configuration: tls))
        }
        return PostgresConnection.Configuration(
            host: host, port: port, username: username, password: password, database: database, tls: mode)
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
