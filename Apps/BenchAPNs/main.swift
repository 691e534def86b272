// `bench-apns`: pushes per second from the real APNs client to the fake APNs on loopback over one
// HTTP/2 connection, and the time to sign one provider token. Build with -c release:
//   swift build -c release --product bench-apns && .build/release/bench-apns [--pushes N] [--concurrency C]
// The fake runs in the same process, so client and server share the machine's cores.
import APNs
import Crypto
import Delivery
import FakeAPNs
import Foundation
import Logging
import Models

func argument(_ name: String, default value: Int) -> Int {
    let arguments = CommandLine.arguments
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count,
        let parsed = Int(arguments[index + 1]),
        parsed > 0
    else { return value }
    return parsed
}

let pushCount = argument("--pushes", default: 100_000)
let concurrency = argument("--concurrency", default: 100)
let signings = argument("--signings", default: 2_000)

/// User and system CPU seconds of the process so far (client and fake together).
func cpuSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
        + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
}

/// CPU seconds per thread group: the client's event loops (`NIO-SGLTN`), the fake's (`NIO-ELT`),
/// and the rest (Swift concurrency's pool: the senders' tasks). From /proc, in clock ticks.
func cpuByThreadGroup() -> [String: Double] {
    var groups: [String: Double] = [:]
    let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
    for task in tasks {
        guard let stat = try? String(contentsOfFile: "/proc/self/task/\(task)/stat", encoding: .utf8),
            let open = stat.firstIndex(of: "("), let close = stat.lastIndex(of: ")")
        else { continue }
        let name = String(stat[stat.index(after: open)..<close])
        let fields = stat[stat.index(close, offsetBy: 2)...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { continue }
        let group = name.hasPrefix("NIO-SGLTN") ? "client_loop" : name.hasPrefix("NIO-ELT") ? "fake_loop" : "tasks"
        groups[group, default: 0] += (user + system) / 100
    }
    return groups
}

func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}

let key = P256.Signing.PrivateKey()
let credentials = try APNsCredentials(privateKey: key, keyID: "BENCH12345", teamID: "TEAM123456")

// MARK: - Signing

let clock = ContinuousClock()
var tokens: [ProviderToken] = []
tokens.reserveCapacity(signings)
let signingTime = try clock.measure {
    for n in 0..<signings {
        tokens.append(
            try ProviderToken.sign(credentials, issuedAt: Instant(secondsSinceEpoch: 1_800_000_000 + Int64(n))))
    }
}
print(
    "jwt_sign_micros_per_token=\(String(format: "%.1f", seconds(signingTime) / Double(signings) * 1e6)) "
        + "(\(signings) ES256 tokens)")

// MARK: - Pushes

let fake = try await FakeAPNs.start(
    FakeAPNs.Configuration(
        teamID: credentials.teamID, keys: [credentials.keyID: key.publicKey], topic: "com.example.fitness",
        recordsDetails: false))
let client = try APNsClient(
    configuration: APNsClient.Configuration(
        credentials: credentials, endpoints: [.production: fake.url, .sandbox: fake.url],
        testingTrustRootsPEM: [fake.certificatePEM]),
    dependencies: APNsClient.Dependencies(
        now: { Instant(Date()) }, sleep: { try await Task.sleep(for: $0) }, unitRandom: { Double.random(in: 0..<1) }),
    logger: Logger(label: "bench-apns"))
let payload = Array(
    #"{"aps":{"alert":{"title":"Lunch","body":"Log your lunch to keep the streak going"},"badge":1},"kind":"meal"}"#
        .utf8)
let token = String(repeating: "ab", count: 32)

func request(_ n: Int) -> PushRequest {
    let hex = String(n, radix: 16)
    return PushRequest(
        id: "00000000-0000-8000-8000-" + String(repeating: "0", count: 12 - hex.count) + hex, deviceToken: token,
        environment: .production, pushType: .alert, topic: "com.example.fitness", payload: payload)
}

/// Sends `count` pushes from `concurrency` workers; returns how many were delivered.
func run(_ count: Int, from first: Int) async -> Int {
    await withTaskGroup(of: Int.self) { group in
        for worker in 0..<concurrency {
            group.addTask {
                var delivered = 0
                var n = first + worker
                while n < first + count {
                    if await client.send(request(n)) == .delivered { delivered += 1 }
                    n += concurrency
                }
                return delivered
            }
        }
        return await group.reduce(0, +)
    }
}

_ = await run(min(5_000, pushCount), from: 0)  // the connection, the token, warm caches
let began = clock.now
let cpuBefore = cpuSeconds()
let threadsBefore = cpuByThreadGroup()
let delivered = await run(pushCount, from: 1_000_000)
let elapsed = clock.now - began
let cpu = cpuSeconds() - cpuBefore
let threads = cpuByThreadGroup().map { group, seconds in
    let micros = (seconds - (threadsBefore[group] ?? 0)) / Double(max(pushCount, 1)) * 1e6
    return "\(group)_cpu_micros_per_push=\(String(format: "%.1f", micros))"
}.sorted().joined(separator: " ")
// CPU per push is the steadier figure on a shared machine: pushes/s = cores / CPU per push at best.
print(
    "pushes_per_second=\(Int(Double(delivered) / seconds(elapsed))) delivered=\(delivered)/\(pushCount) "
        + "cpu_micros_per_push=\(String(format: "%.1f", cpu / Double(max(delivered, 1)) * 1e6)) (\(threads)) "
        + "concurrency=\(concurrency) seconds=\(String(format: "%.2f", seconds(elapsed))) "
        + "connections=\(fake.connectionCount) max_streams_open=\(fake.maxConcurrentStreamsSeen) "
        + "tokens_signed=\(await client.tokens.signedCount)")
try await client.shutdown()
try await fake.shutdown()
if delivered != pushCount { exit(1) }
