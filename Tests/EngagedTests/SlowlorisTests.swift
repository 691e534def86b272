import Foundation
import Hummingbird
import HummingbirdTesting
import Synchronization
import Testing

@testable import engaged

#if canImport(Glibc)
    import Glibc
#endif

/// Slowloris: one address opens connection after connection, each with half a header, while
/// another client probes `/healthz`. The per-address cap closes the attacker's connections past
/// 64 as they are accepted, and the header deadline ends the 64 it holds; the probe is answered
/// throughout.
@Suite("engaged: slowloris", .serialized)
struct SlowlorisTests {
    /// The attacker's connections: as many as the test process's open-file limit leaves room
    /// for beside the server's own descriptors in the same process (its hard limit is 20,000 on
    /// the CI machine), and few enough that the attack stays within tens of seconds on two cores.
    /// `ENGAGED_SLOWLORIS_CONNECTIONS` sets another count.
    static let attackConnections =
        ProcessInfo.processInfo.environment["ENGAGED_SLOWLORIS_CONNECTIONS"].flatMap { Int($0) } ?? 12_000

    /// The p99 the paced attack must stay under, when set (`ENGAGED_SLOWLORIS_P99_MS`).
    static let p99BoundMilliseconds =
        ProcessInfo.processInfo.environment["ENGAGED_SLOWLORIS_P99_MS"].flatMap { Double($0) }

    /// Raises the soft open-file limit to the hard one; returns the soft limit now in force.
    static func raiseOpenFileLimit() -> Int {
        var limit = rlimit()
        getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
        limit.rlim_cur = limit.rlim_max
        setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
        getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
        return limit.rlim_cur > rlim_t(Int.max) ? Int.max : Int(limit.rlim_cur)
    }

    /// What the attack did: connections opened and the seconds it took.
    struct Attack: Sendable {
        var opened: Int
        var failed: Int
        var seconds: Double
    }

    /// Opens `count` connections from 127.0.0.1 and sends half a header on each; keeps them open.
    /// At most `ratePerSecond` a second when given, else as fast as the machine connects.
    static func attack(port: Int, count: Int, ratePerSecond: Int?) -> (connections: [RawConnection], report: Attack) {
        let start = ContinuousClock.now
        var connections: [RawConnection] = []
        connections.reserveCapacity(count)
        var failed = 0
        for index in 0..<count {
            if let ratePerSecond, index % 100 == 0 {
                let due = start + .milliseconds(index * 1_000 / ratePerSecond)
                let wait = due - ContinuousClock.now
                if wait > .zero { usleep(useconds_t(wait / .microseconds(1))) }
            }
            guard let connection = try? RawConnection(port: port, source: "127.0.0.1", timeoutSeconds: 3) else {
                failed += 1
                continue
            }
            connection.send("GET /healthz HTTP/1.1\r\nHost: t\r\nX-Slow: ")
            connections.append(connection)
        }
        let elapsed = ContinuousClock.now - start
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return (connections, Attack(opened: connections.count, failed: failed, seconds: seconds))
    }

    /// One `/healthz` on a fresh connection from 127.0.0.2: milliseconds to the whole answer,
    /// or nil when it failed.
    static func probe(port: Int) -> Double? {
        let start = ContinuousClock.now
        guard let connection = try? RawConnection(port: port, source: "127.0.0.2", timeoutSeconds: 10) else {
            return nil
        }
        defer { connection.closeConnection() }
        connection.send("GET /healthz HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
        let answer = connection.readUntilClosed(quietSeconds: 10)
        guard answer.text.hasPrefix("HTTP/1.1 200") else { return nil }
        let elapsed = ContinuousClock.now - start
        return Double(elapsed.components.seconds) * 1_000 + Double(elapsed.components.attoseconds) / 1e15
    }

    /// Two attacks: paced at 2,000 connections a second, and unpaced, where the attacker fills
    /// the listen backlog faster than the server drains it and a probe's connection waits its
    /// turn in the kernel's queue. Every probe must be answered within ten seconds. The aim, a
    /// p99 under 100 ms for the paced attack, depends on the machine (docs/PERFORMANCE.md), so it
    /// is checked when `ENGAGED_SLOWLORIS_P99_MS` names the bound (`ENGAGED_SLOWLORIS_P99_MS=100 swift test
    /// --filter SlowlorisTests`); the p50, p99 and max are printed either way.
    @Test(arguments: [2_000, nil] as [Int?])
    func halfOpenConnectionsFromOneAddressLeaveAnotherAnswered(ratePerSecond: Int?) async throws {
        let openFiles = Self.raiseOpenFileLimit()
        // The server's side of each live connection, and its own files, share the limit.
        let count = min(Self.attackConnections, openFiles - 2_000)
        #expect(count >= 1_000, "the open-file limit \(openFiles) leaves too little room")
        let server = try await TestServer()  // the defaults: 64 an address, a 5 s header deadline
        try await server.run(.live) { client in
            let port = try #require(client.port)
            let attackDone = Atomic<Bool>(false)
            async let attacked = offThePool {
                defer { attackDone.store(true, ordering: .releasing) }
                return Self.attack(port: port, count: count, ratePerSecond: ratePerSecond)
            }
            // Probes every 20 ms from the start of the attack to a second past its end.
            let latencies = await offThePool {
                var latencies: [Double?] = []
                var doneAt: ContinuousClock.Instant?
                while doneAt.map({ ContinuousClock.now - $0 < .seconds(1) }) ?? true {
                    latencies.append(Self.probe(port: port))
                    if doneAt == nil, attackDone.load(ordering: .acquiring) { doneAt = .now }
                    usleep(20_000)
                }
                return latencies
            }
            let (connections, report) = await attacked
            // The server holds no more than the cap of the attacker's connections.
            let held = connections.filter(\.heldByServer).count
            connections.forEach { $0.closeConnection() }

            let answered = latencies.compactMap { $0 }.sorted()
            let p99 = answered.isEmpty ? .infinity : answered[min(answered.count - 1, answered.count * 99 / 100)]
            let p50 = answered.isEmpty ? .infinity : answered[answered.count / 2]
            print(
                "slowloris (\(ratePerSecond.map { "\($0)/s" } ?? "unpaced")): \(report.opened) connections from 127.0.0.1 in \(String(format: "%.1f", report.seconds)) s "
                    + "(\(report.failed) failed to connect), \(held) held by the server after; /healthz from "
                    + "127.0.0.2: \(answered.count) of \(latencies.count) answered, p50 \(String(format: "%.2f", p50)) ms, "
                    + "p99 \(String(format: "%.2f", p99)) ms, max \(String(format: "%.2f", answered.last ?? .infinity)) ms; "
                    + "over 100 ms: \(answered.filter { $0 > 100 }.map { String(format: "%.0f", $0) })")
            #expect(report.opened >= count * 9 / 10, "\(report)")
            #expect(held <= 64, "\(held) of the attacker's connections held")
            #expect(answered.count == latencies.count, "\(latencies.count - answered.count) probes failed")
            #expect(latencies.count >= 10)
            #expect((answered.last ?? .infinity) < 10_000, "max \(answered.last ?? .infinity) ms")
            if ratePerSecond != nil, let bound = Self.p99BoundMilliseconds {
                #expect(p99 < bound, "p99 \(p99) ms")
            }
        }
    }
}
