import Content
import Delivery
import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import Models
import Runtime
import Storage
import Synchronization
import TestSupport
import Testing

@testable import engaged

/// A transport that records what it performed.
final class RecordingTransport: ChannelTransport {
    let performed = Mutex<[OutboxRow]>([])

    func perform(_ row: OutboxRow) async throws -> SendReport {
        performed.withLock { $0.append(row) }
        return .accepted
    }
}

/// A push transport that accepts every request and keeps it, with the clock's time.
final class KeptPushes: PushTransport {
    let clock: ManualClock
    let requests = Mutex<[(request: PushRequest, at: Instant)]>([])

    init(clock: ManualClock) { self.clock = clock }

    func send(_ request: PushRequest) async -> PushOutcome {
        let now = clock.now()
        requests.withLock { $0.append((request, now)) }
        return .delivered
    }
}

/// One server over a fresh SQLite store in a temporary folder, on a manual clock.
struct TestServer {
    static let apiKey = "test-api-key-0123456789abcdef0123456789"
    /// The keys of user tokens: `k2` signs, `k1` (the key before a rotation) still verifies.
    static let userTokenKeys = UserTokenKeys(keys: [
        .init(id: "k2", secret: Array("test-user-token-key-two-0123456789".utf8)),
        .init(id: "k1", secret: Array("test-user-token-key-one-0123456789".utf8)),
    ])
    static let start = Instant(iso8601: "2027-03-01T06:00:00Z")!

    let store: SQLiteEngagementStore
    let clock = ManualClock(TestServer.start)
    let transport = RecordingTransport()
    var environment: ServerEnvironment
    let directory: URL
    /// Whether `run` removes the store when it ends (not when the test passed its own directory).
    let ownsDirectory: Bool

    /// `manualClock: false` is `engaged serve` without `--manual-clock` (the runtime still runs on
    /// the test's manual clock, so nothing depends on the wall clock). `directory`: a data dir to
    /// open again (a restart); the caller removes it.
    init(manualClock: Bool = true, directory: URL? = nil) async throws {
        ownsDirectory = directory == nil
        self.directory =
            directory
            ?? FileManager.default.temporaryDirectory.appendingPathComponent("engaged-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: self.directory, withIntermediateDirectories: true)
        store = try SQLiteEngagementStore(path: self.directory.appendingPathComponent("engaged.sqlite").path)
        var logger = Logger(label: "engaged-tests")
        logger.logLevel = .critical
        environment = ServerEnvironment(
            runtime: EngineRuntime(store: store, clock: clock, content: bundledContent), apiKey: Self.apiKey,
            userTokens: await UserTokenAuthority(keys: Self.userTokenKeys), manualClock: manualClock ? clock : nil,
            transport: transport, logger: logger)
    }

    /// Runs `test` against the server (`.router`: in process, `.live`: over 127.0.0.1 on a free
    /// port), then removes the store.
    func run(_ setup: TestingSetup = .router, _ test: @escaping @Sendable (any TestClientProtocol) async throws -> Void)
        async throws
    {
        defer { if ownsDirectory { try? FileManager.default.removeItem(at: directory) } }
        let app = try EngagedServer.application(environment, clock: clock, host: "127.0.0.1", port: 0)
        try await app.test(setup) { client in try await test(client) }
    }
}

/// A user token for `userID`, minted on the test server's keys at `at` (its clock by default).
func userToken(_ userID: UserID, at instant: Instant = TestServer.start, ttlSeconds: Int64 = 2_592_000) async throws
    -> String
{
    try await UserTokenAuthority(keys: TestServer.userTokenKeys).mint(for: userID, now: instant, ttlSeconds: ttlSeconds)
        .token
}

/// Headers with the API key (or `key`), and an Idempotency-Key when given.
func headers(key: String? = TestServer.apiKey, idempotencyKey: String? = nil) -> HTTPFields {
    var fields: HTTPFields = [.contentType: "application/json"]
    if let key { fields[.authorization] = "Bearer \(key)" }
    if let idempotencyKey { fields.append(HTTPFields.Element(name: .init("Idempotency-Key")!, value: idempotencyKey)) }
    return fields
}

extension TestClientProtocol {
    func send(
        _ method: HTTPRequest.Method, _ uri: String, _ body: String? = nil, headers fields: HTTPFields = headers()
    ) async throws -> TestResponse {
        try await execute(uri: uri, method: method, headers: fields, body: body.map { ByteBuffer(string: $0) })
    }
}

extension TestResponse {
    var text: String { String(buffer: body) }

    /// The body as a JSON object (an empty one when it is not).
    var json: [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] ?? [:]
    }

    var contentType: String? { headers[.contentType] }

    /// Checks that this is an RFC 9457 problem with `status`, `slug` and (when given) `field`.
    func expectProblem(
        _ status: Int, _ slug: String, field: String? = nil, detailContains: String? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(self.status.code == status, "\(text)", sourceLocation: sourceLocation)
        #expect(contentType == "application/problem+json", sourceLocation: sourceLocation)
        let body = json
        #expect(body["type"] as? String == "urn:engaged:problem:\(slug)", "\(text)", sourceLocation: sourceLocation)
        #expect(body["status"] as? Int == status, sourceLocation: sourceLocation)
        #expect((body["title"] as? String)?.isEmpty == false, sourceLocation: sourceLocation)
        #expect((body["detail"] as? String)?.isEmpty == false, sourceLocation: sourceLocation)
        #expect(body["field"] as? String == field, "\(text)", sourceLocation: sourceLocation)
        if let detailContains {
            #expect(
                (body["detail"] as? String)?.contains(detailContains) == true, "\(text)", sourceLocation: sourceLocation
            )
        }
    }
}
