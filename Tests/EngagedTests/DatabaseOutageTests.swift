import Foundation
import TestSupport
import Testing

/// `engaged serve --database` and `engaged worker` while PostgreSQL is down: they log it, try
/// again with a back-off, say not ready on `/readyz`, come back by themselves, and still stop on
/// SIGTERM. Each test runs a PostgreSQL server of its own (`LocalCluster`).
@Suite(
    "The server and workers through a database outage", .serialized,
    .enabled(
        if: ProcessInfo.processInfo.environment["ENGAGED_TEST_DATABASE_URL"] != nil,
        "ENGAGED_TEST_DATABASE_URL is not set (make test starts PostgreSQL)"))
struct DatabaseOutageTests {
    /// `GET /readyz`'s status line's code, or nil when nothing answered within 20 s.
    static func readyStatus(port: Int) async -> Int? {
        await offThePool {
            guard let connection = try? RawConnection(port: port, timeoutSeconds: 20) else { return nil }
            defer { connection.closeConnection() }
            connection.send("GET /readyz HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
            let text = connection.readUntilClosed(quietSeconds: 20).text
            return Int(text.split(separator: " ").dropFirst().first ?? "")
        }
    }

    /// Polls `condition` every 100 ms for at most `seconds`; whether it held.
    static func eventually(withinSeconds seconds: Double, _ condition: () async -> Bool) async throws -> Bool {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while ContinuousClock.now < deadline {
            if await condition() { return true }
            try await Task.sleep(for: .milliseconds(100))
        }
        return await condition()
    }

    @Test("A server started before PostgreSQL waits for it, logging, and exits 0 on SIGTERM")
    func serverStartsBeforeTheDatabase() async throws {
        let cluster = try LocalCluster()
        try cluster.stop()
        let server = try EngagedProcess(["serve", "--port", "0", "--metrics-port", "0", "--database", cluster.url])
        #expect(try await Self.eventually(withinSeconds: 20) { server.log.contains("database unreachable") })
        #expect(server.process.isRunning)
        server.process.terminate()
        #expect(try await server.exitStatus(withinSeconds: 15) == 0, "\(server.log.suffix(2_000))")
    }

    @Test("A serving server says not ready while PostgreSQL is down, ready once it is back, and stops on SIGTERM")
    func serverThroughAnOutage() async throws {
        let cluster = try LocalCluster()
        let server = try EngagedProcess(["serve", "--port", "0", "--metrics-port", "0", "--database", cluster.url])
        let port = try #require(try await server.port(), "\(server.log.suffix(2_000))")
        #expect(await Self.readyStatus(port: port) == 200)
        try cluster.stop()
        // /readyz caches its answer for a second.
        #expect(try await Self.eventually(withinSeconds: 10) { await Self.readyStatus(port: port) == 503 })
        try cluster.start()
        #expect(try await Self.eventually(withinSeconds: 10) { await Self.readyStatus(port: port) == 200 })
        server.process.terminate()
        #expect(try await server.exitStatus(withinSeconds: 15) == 0, "\(server.log.suffix(2_000))")
    }

    @Test("A worker frozen out by a stopped PostgreSQL logs, retries, resumes after the restart and stops on SIGTERM")
    func workerThroughAnOutage() async throws {
        let cluster = try LocalCluster()
        try cluster.stop()
        let worker = try EngagedProcess(["worker", "--database", cluster.url, "--idle-milliseconds", "50"])
        #expect(try await Self.eventually(withinSeconds: 20) { worker.log.contains("database unreachable") })
        try cluster.start()
        #expect(try await Self.eventually(withinSeconds: 20) { worker.log.contains("worker starting") })
        // Frozen (every process of the server stopped): each claim fails by its deadline.
        try cluster.signal(SIGSTOP)
        let frozen = try await Self.eventually(withinSeconds: 40) {
            worker.log.contains("claiming or performing due work failed")
        }
        try cluster.signal(SIGCONT)
        #expect(frozen, "\(worker.log.suffix(2_000))")
        #expect(try await Self.eventually(withinSeconds: 20) { worker.log.contains("claiming works again") })
        try cluster.restart(mode: "immediate")
        worker.process.terminate()
        #expect(try await worker.exitStatus(withinSeconds: 25) == 0, "\(worker.log.suffix(2_000))")
    }
}
