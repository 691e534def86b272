import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import Models
import Testing

@testable import engaged

/// What an operator meets: secrets refused at start-up, the access log, the JSON log's time,
/// and `/metrics` on a listener of its own.
@Suite("engaged: operations")
struct OperationsTests {
    static let goodKey = String(repeating: "k", count: 40)

    @Test(arguments: [
        (["ENGAGED_API_KEY": String(repeating: " ", count: 40)], "ENGAGED_API_KEY: only whitespace"),
        (["ENGAGED_API_KEY": "\t" + String(repeating: " ", count: 38) + "\n"], "ENGAGED_API_KEY: only whitespace"),
        (
            ["ENGAGED_USER_TOKEN_KEYS": "k1:" + String(repeating: " ", count: 40)],
            "key 1 (k1): the secret is only whitespace"
        ),
        (
            [
                "ENGAGED_API_KEY": goodKey,
                "ENGAGED_USER_TOKEN_KEYS": "k1:0123456789abcdef0123456789abcdef,k2:\(goodKey)",
            ],
            "key 2 (k2) is the API key"
        ),
    ])
    func blankOrReusedSecretsAreRefusedWithExit78(environment: [String: String], message: String) async throws {
        var given = ["ENGAGED_API_KEY": Self.goodKey, "ENGAGED_USER_TOKEN_KEYS": EngagedProcess.userTokenKeys]
        given.merge(environment) { $1 }
        #expect(throws: ConfigurationError.self) { try ServerSecrets(given, legacyUserTokens: false) }
        let process = try EngagedProcess(
            ["serve", "--data-dir", NSTemporaryDirectory() + "engaged-secrets-\(UUID().uuidString)", "--port", "0"],
            environment: given)
        #expect(try await process.exitStatus() == 78, "\(process.log)")
        #expect(process.log.contains(message), "\(process.log)")
        #expect(!process.log.contains(Self.goodKey))  // a secret is never printed
    }

    @Test func theLegacySecretMayNotBeTheAPIKey() {
        let environment = [
            "ENGAGED_API_KEY": Self.goodKey, "ENGAGED_USER_TOKEN_KEYS": EngagedProcess.userTokenKeys,
            "ENGAGED_USER_TOKEN_SECRET": Self.goodKey,
        ]
        #expect(throws: ConfigurationError.self) { try ServerSecrets(environment, legacyUserTokens: true) }
    }

    /// RFC 7515: base64url without padding. A signature with `=` (which a lenient decoder skips)
    /// is refused, on the route too.
    @Test(arguments: [0, 1, 2])
    func aJWTPartWithPaddingIs401(part: Int) async throws {
        let server = try await TestServer()
        try await server.run(.router) { client in
            _ = try await client.send(.put, "/v1/users/ana", berlin)
            let minted = try await userToken("ana")
            var parts = minted.split(separator: ".").map(String.init)
            parts[part] += "="
            let padded = parts.joined(separator: ".")
            let authority = server.environment.userTokens
            if case .valid = await authority.verify(Substring(padded), now: TestServer.start) {
                Issue.record("a padded token was accepted")
            }
            let response = try await client.send(
                .get, "/v1/users/ana/inbox", headers: [.authorization: "Bearer \(padded)"])
            response.expectProblem(401, "unauthorized")
            // The same token unpadded is still good.
            let good = try await client.send(.get, "/v1/users/ana/inbox", headers: [.authorization: "Bearer \(minted)"])
            #expect(good.status == .ok)
        }
    }

    @Test(arguments: [
        ("abc-123_DEF.4:5", true), ("", false), (String(repeating: "a", count: 129), false),
        ("two words", false), ("x\r\ninjected: 1", false), ("\u{e9}", false),
    ])
    func aClientsRequestIDIsKeptOnlyWhenSane(id: String, kept: Bool) {
        #expect(RequestIDs.isSane(id) == kept)
        #expect((RequestIDs.resolve(id) == id) == kept)
    }

    /// One line per request: method, route (never the path: it names users), status, duration
    /// and request id, which the answer carries back; the client's own id when sane.
    @Test func eachRequestLogsOneLineWithItsIDWhichTheAnswerEchoes() async throws {
        var server = try await TestServer()
        let log = KeptLog()
        server.environment.logger = log.logger
        try await server.run(.router) { client in
            var sent = headers()
            sent[RequestIDs.header] = "client-id-42"
            let first = try await client.send(.put, "/v1/users/ana", berlin, headers: sent)
            #expect(first.headers[RequestIDs.header] == "client-id-42")
            sent[RequestIDs.header] = "not sane"
            let second = try await client.send(.get, "/v1/users/nobody", headers: sent)
            let made = try #require(second.headers[RequestIDs.header])
            #expect(made != "not sane" && RequestIDs.isSane(made))
        }
        let lines = log.messages(containing: "request").filter { $0.metadata["route"] != nil }
        #expect(lines.count == 2)
        #expect(lines.first?.metadata["method"] == "PUT")
        #expect(lines.first?.metadata["route"] == "/v1/users/{id}")
        #expect(lines.first?.metadata["status"]?.description == "201")
        #expect(lines.first?.metadata["request_id"] == "client-id-42")
        #expect(Double(lines.first?.metadata["duration_ms"]?.description ?? "") != nil)
        #expect(lines.last?.metadata["status"]?.description == "404")
        #expect(lines.allSatisfy { $0.metadata["route"]?.description.contains("ana") == false })
    }

    /// The access log's duration reads as `%.3f` would write it, to the microsecond (an exact
    /// half rounds up), and no duration can make it fail.
    @Test func durationsAreMillisecondsWithThreeDecimals() {
        let format = AccessLogMiddleware<BasicRequestContext>.milliseconds
        #expect(format(.zero) == "0.000")
        #expect(format(.microseconds(5)) == "0.005")
        #expect(format(.microseconds(1_616)) == "1.616")
        #expect(format(.nanoseconds(1_616_499)) == "1.616")
        #expect(format(.nanoseconds(1_616_500)) == "1.617")
        #expect(format(.microseconds(12_040)) == "12.040")
        #expect(format(.seconds(2)) == "2000.000")
        #expect(format(.seconds(-1)) == "0.000")
        #expect(format(.nanoseconds(62_500)) == "0.063")
        #expect(format(.seconds(Int64.max)) == "1000000000000.000")
        for micros in stride(from: 0, through: 3_000_000, by: 7_919) {
            let expected = String(format: "%.3f", Double(micros) / 1_000)
            #expect(format(.microseconds(micros)) == expected, "\(micros)")
        }
    }

    /// RFC 3339 with the offset (`Z` for UTC) and milliseconds.
    @Test func jsonLogTimesCarryTheirOffset() {
        let time = JSONLogHandler.timestamp(Date(timeIntervalSince1970: 1_803_794_400.1235))
        #expect(time.hasSuffix(".123Z"), "\(time)")
        #expect(
            time.range(
                of: #"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}(Z|[+-]\d{2}:\d{2})$"#, options: .regularExpression)
                != nil, "\(time)")
    }

    /// `/metrics` on its own listener: served there without a key, and not on the API's.
    @Test func metricsAreServedOnTheirOwnListenerOnly() async throws {
        var server = try await TestServer()
        let metricsPort = PortBox()
        server.environment.metricsAddress = ("127.0.0.1", 0)
        server.environment.metricsListening = { metricsPort.set($0) }
        try await server.run(.live) { client in
            let onAPI = try await client.send(.get, "/metrics", headers: [:])
            onAPI.expectProblem(404, "not-found")
            let port = try #require(await metricsPort.wait())
            let connection = try RawConnection(port: port, timeoutSeconds: 10)
            defer { connection.closeConnection() }
            connection.send("GET /metrics HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
            let answer = await offThePool { connection.readUntilClosed(quietSeconds: 30) }
            #expect(answer.text.hasPrefix("HTTP/1.1 200"), "\(answer.text.prefix(200))")
            #expect(answer.text.contains("text/plain; version=0.0.4"))
            #expect(answer.text.contains("engaged_http_requests_total"))
        }
    }
}

/// A port told from another task, waited for.
final class PortBox: @unchecked Sendable {
    private let lock = NSLock()
    private var port: Int?

    func set(_ value: Int) { lock.withLock { port = value } }

    func wait(seconds: Double = 30) async -> Int? {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while ContinuousClock.now < deadline {
            if let port = lock.withLock({ port }) { return port }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return nil
    }
}
