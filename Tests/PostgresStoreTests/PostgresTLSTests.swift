import Foundation
import PostgresNIO
import PostgresStore
import Storage
import TestSupport
import Testing

/// `sslmode` and `sslrootcert` in the database URL: what is read, what is refused, and each mode
/// against a server with a self-signed certificate.
@Suite("PostgresURL: TLS")
struct PostgresURLTLSTests {
    @Test(
        "Without sslmode, loopback is disable and any other host require",
        arguments: [
            ("127.0.0.1", PostgresURL.SSLMode.disable), ("localhost", .disable), ("127.1.2.3", .disable),
            ("[::1]", .disable), ("db.internal", .require), ("10.0.0.5", .require),
        ])
    func defaults(host: String, mode: PostgresURL.SSLMode) throws {
        #expect(try PostgresURL("postgres://a@\(host)/d").sslMode == mode)
    }

    @Test("sslmode is read; verify-full takes its CA file")
    func modes() throws {
        #expect(try PostgresURL("postgres://a@db.internal/d?sslmode=disable").sslMode == .disable)
        #expect(try PostgresURL("postgres://a@127.0.0.1/d?sslmode=require").sslMode == .require)
        let url = try PostgresURL("postgres://a@db/d?sslmode=verify-full&sslrootcert=/etc/hostname")
        #expect(url.sslMode == .verifyFull)
        #expect(url.sslRootCertificatePath == "/etc/hostname")
    }

    @Test(
        "A bad TLS setting is refused naming it",
        arguments: [
            ("?sslmode=prefer", "sslmode must be one of disable, require, verify-full"),
            ("?sslmode=verify-full", "needs sslrootcert"),
            ("?sslmode=require&sslrootcert=/etc/hostname", "only read with sslmode=verify-full"),
            ("?sslmode=verify-full&sslrootcert=/no/such/ca.pem", "cannot read /no/such/ca.pem"),
            ("?application_name=x", "unknown parameter \"application_name\""),
        ])
    func refused(query: String, problem: String) {
        #expect {
            _ = try PostgresURL("postgres://a@db/d" + query)
        } throws: { error in
            "\(error)".hasPrefix("--database: ") && "\(error)".contains(problem)
        }
    }
}

/// Each mode against a local server with a self-signed certificate (openssl makes it).
@Suite(
    "PostgreSQL over TLS", .serialized,
    .enabled(if: TestServer.isConfigured, TestServer.disabledReason))
struct PostgresTLSTests {
    /// A self-signed certificate for `localhost` and 127.0.0.1 in `folder`: (certificate, key).
    static func selfSigned(in folder: URL, name: String) throws -> (String, String) {
        let certificate = folder.appendingPathComponent("\(name).crt").path
        let key = folder.appendingPathComponent("\(name).key").path
        try LocalCluster.run(
            "/usr/bin/env",
            [
                "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", certificate,
                "-days", "2", "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
            ])
        return (certificate, key)
    }

    /// Whether the pool's connection runs over TLS, as the server sees it.
    static func usesTLS(_ url: PostgresURL) throws -> Bool {
        let pool = PostgresPool(url: url, size: 1, logger: TestServer.logger)
        defer { pool.close() }
        let rows = try pool.withConnection {
            try pool.query("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()", on: $0)
        }
        return try rows.first?.decode(Bool.self) ?? false
    }

    @Test("disable, require and verify-full against a server with a self-signed certificate")
    func modes() throws {
        let cluster = try LocalCluster()
        let (certificate, key) = try Self.selfSigned(in: cluster.folder, name: "server")
        if getuid() == 0 {
            // The server runs as postgres when the tests run as root; its key must be its own.
            try LocalCluster.run("/bin/chown", ["postgres", key, certificate])
        }
        try LocalCluster.run("/bin/chmod", ["600", key])
        let plain = try PostgresURL(cluster.url)
        let admin = PostgresPool(url: plain, size: 1, logger: TestServer.logger)
        defer { admin.close() }
        try admin.withConnection { connection in
            try admin.run("ALTER SYSTEM SET ssl_cert_file = '\(certificate)'", on: connection)
            try admin.run("ALTER SYSTEM SET ssl_key_file = '\(key)'", on: connection)
            try admin.run("ALTER SYSTEM SET ssl = 'on'", on: connection)
            try admin.run("SELECT pg_reload_conf()", on: connection)
        }
        Thread.sleep(forTimeInterval: 0.5)
        let port = plain.port
        #expect(try Self.usesTLS(plain) == false)
        #expect(try Self.usesTLS(PostgresURL("postgres://engaged@127.0.0.1:\(port)/postgres?sslmode=require")))
        #expect(
            try Self.usesTLS(
                PostgresURL(
                    "postgres://engaged@localhost:\(port)/postgres?sslmode=verify-full&sslrootcert=\(certificate)")
            ))
        // Another CA: the server's certificate is refused.
        let (otherCA, _) = try Self.selfSigned(in: cluster.folder, name: "other")
        #expect(throws: StoreError.self) {
            try Self.usesTLS(
                PostgresURL("postgres://engaged@localhost:\(port)/postgres?sslmode=verify-full&sslrootcert=\(otherCA)"))
        }
    }
}
