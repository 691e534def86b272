import Foundation
import Hummingbird
import HummingbirdTesting
import Testing

@testable import engaged

/// A client that sends half a header, or stalls in its body, holds a connection only until the
/// idle timeout (`--idle-timeout-seconds`); the server keeps answering others meanwhile.
@Suite("engaged: idle connections")
struct IdleTimeoutTests {
    @Test(arguments: [
        "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n",  // half a header
        // A stalled body, past the API key: the route waits for the rest.
        "PUT /v1/users/ana HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(TestServer.apiKey)\r\n"
            + "Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"timeZone\"",
    ])
    func aStalledRequestIsClosedAfterTheIdleTimeout(request: String) async throws {
        var server = try await TestServer()
        server.environment.idleTimeoutSeconds = 2
        try await server.run(.live) { client in
            let port = try #require(client.port)
            let stalled = try RawConnection(port: port)
            defer { stalled.closeConnection() }
            stalled.send(request)
            // Another client is answered meanwhile.
            let other = try RawConnection(port: port)
            defer { other.closeConnection() }
            other.send("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            let answer = await offThePool { other.readUntilClosed(quietSeconds: RawConnection.answerQuietSeconds) }
            #expect(answer.text.hasPrefix("HTTP/1.1 200"), "\(answer.text)")
            // The stalled one is closed (whatever the server answered it first).
            let stalledEnd = await offThePool {
                stalled.readUntilClosed(quietSeconds: RawConnection.answerQuietSeconds)
            }
            #expect(stalledEnd.closed, "\(stalledEnd.text)")
        }
    }

    /// HummingbirdTesting's live server drops the connection limit (`ApplicationConfiguration.with`
    /// keeps only the address, name, backlog and reuse flag), so CI checks the limit on the real
    /// binary (`.ci/run`: a second connection waits until the first closes); here, that the
    /// application carries it.
    @Test func theApplicationCarriesTheConnectionLimit() async throws {
        var server = try await TestServer()
        server.environment.maxConnections = 1
        let app = try EngagedServer.application(server.environment, clock: server.clock, host: "127.0.0.1", port: 0)
        #expect(app.configuration.availableConnectionsDelegate != nil)
        try? FileManager.default.removeItem(at: server.directory)
    }
}
