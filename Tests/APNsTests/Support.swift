import APNs
import Crypto
import Delivery
import FakeAPNs
import Foundation
import Logging
import Models
import NIOCore
import Synchronization

let teamID = "TEAM123456"
let keyID = "KEY1234567"
let topic = "com.example.fitness"
let deviceToken = String(repeating: "ab", count: 32)
let otherToken = String(repeating: "cd", count: 32)
/// A wall-clock start for the tests' clocks (2027-03-01T06:00:00Z).
let start = Instant(secondsSinceEpoch: 1_803_967_200)

/// A wall clock the test moves by hand, shared by the client and the fake.
final class TestClock: Sendable {
    private let seconds: Mutex<Int64>

    init(_ instant: Instant = start) { seconds = Mutex(instant.secondsSinceEpoch) }

    func now() -> Instant { Instant(secondsSinceEpoch: seconds.withLock { $0 }) }
    func advance(bySeconds delta: Int64) { seconds.withLock { $0 += delta } }
}

/// The waits the client asked for; none is waited.
final class Sleeps: Sendable {
    private let recorded = Mutex<[Duration]>([])
    var all: [Duration] { recorded.withLock { $0 } }
    func record(_ duration: Duration) { recorded.withLock { $0.append(duration) } }
}

/// A fake APNs and a real client pointed at it, on a test clock, with waits recorded, not waited.
struct Harness {
    let fake: FakeAPNs
    let client: APNsClient
    let clock: TestClock
    let sleeps: Sleeps
    let credentials: APNsCredentials

    /// Runs `body`, then shuts both down whatever happened.
    static func with(
        retry: RetryPolicy = RetryPolicy(maxAttempts: 4, baseDelay: .milliseconds(100), maxDelay: .seconds(2)),
        attemptTimeout: Duration = .seconds(10), unitRandom: Double = 0.5, recordsDetails: Bool = true,
        eventLoopGroup: (any EventLoopGroup)? = nil, ping: (afterSilence: Duration, timeout: Duration)? = nil,
        _ body: (Harness) async throws -> Void
    ) async throws {
        let key = P256.Signing.PrivateKey()
        let credentials = try APNsCredentials(privateKey: key, keyID: keyID, teamID: teamID)
        let clock = TestClock()
        let fake = try await FakeAPNs.start(
            FakeAPNs.Configuration(
                teamID: teamID, keys: [keyID: key.publicKey], topic: topic,
                now: { clock.now().secondsSinceEpoch }, recordsDetails: recordsDetails))
        let sleeps = Sleeps()
        let client: APNsClient
        do {
            var configuration = APNsClient.Configuration(
                credentials: credentials, endpoints: [.sandbox: fake.url, .production: fake.url], retry: retry,
                attemptTimeout: attemptTimeout, testingTrustRootsPEM: [fake.certificatePEM])
            configuration.eventLoopGroup = eventLoopGroup
            if let ping { (configuration.pingAfterSilence, configuration.pingTimeout) = ping }
            client = try APNsClient(
                configuration: configuration,
                dependencies: APNsClient.Dependencies(
                    now: { clock.now() }, sleep: { sleeps.record($0) }, unitRandom: { unitRandom }),
                logger: Logger(label: "apns-tests"))
        } catch {
            try await fake.shutdown()
            throw error
        }
        let harness = Harness(fake: fake, client: client, clock: clock, sleeps: sleeps, credentials: credentials)
        do {
            try await body(harness)
        } catch {
            try await client.shutdown()
            try await fake.shutdown()
            throw error
        }
        try await client.shutdown()
        try await fake.shutdown()
    }
}

/// A well-formed alert push; `id` picks its apns-id.
func alert(
    _ id: Int = 1, token: String = deviceToken,
    payload: [UInt8] = Array(#"{"aps":{"alert":"Time to log lunch"}}"#.utf8),
    collapseID: String? = nil
) -> PushRequest {
    PushRequest(
        id: uuid(id), deviceToken: token, environment: .production, pushType: .alert, topic: topic,
        expiration: .at(start + 3600), collapseID: collapseID, payload: payload)
}

/// A lowercase UUID numbered `n`.
func uuid(_ n: Int) -> String {
    let hex = String(n, radix: 16)
    return "00000000-0000-8000-8000-" + String(repeating: "0", count: 12 - hex.count) + hex
}

/// A JSON object of exactly `bytes` bytes.
func payload(bytes: Int) -> [UInt8] {
    let frame = #"{"aps":{},"x":""}"#
    return Array(#"{"aps":{},"x":""#.utf8) + Array(repeating: UInt8(ascii: "a"), count: bytes - frame.utf8.count)
        + Array(#""}"#.utf8)
}
