import Content
import Delivery
import Engagement
import Foundation
import Logging
import Models
import Runtime
import Simulation
import Storage
import Synchronization
import TestSupport
import Testing

@testable import engaged

/// Requests in the order they were sent at, and by `apns-id` among those sent at one instant
/// (the server sends a dispatch's rows concurrently).
private func sentOrder(_ requests: [(request: PushRequest, at: Instant)]) -> [PushRequest] {
    requests.sorted { ($0.at, $0.request.id) < ($1.at, $1.request.id) }.map(\.request)
}

/// One path: the simulator's server side is the server's code. A simulated run records what its
/// server was asked (each user's engine inputs, dispatches and inbox reads) and every APNs
/// request it sent (`ServerTape`); the same asks, replayed through `engaged`'s runtime (a
/// SQLite store, a manual clock) and its APNs channel, must send the same requests, byte for
/// byte: `apns-id`, push type, topic, priority, expiration, collapse id, token and payload.
///
/// What the comparison leaves out, and why: Live Activity pushes (the simulated phone starts
/// its activities and the simulator pushes their updates itself), and the server's background
/// jobs (the simulated phone runs the engine's background tasks itself: their launches are
/// among the replayed inputs, so the replay drops the job rows). APNs is perfect in this run:
/// both sides see every push accepted.
@Suite("Server agreement: engaged and the simulator send the same pushes")
struct ServerAgreementTests {
    static let topic = "com.example.fitness"

    /// The smoke scenario's first week for `users` users, recorded. The run is synchronous and
    /// takes seconds: it runs on a thread of its own, not one of the few the test suites share
    /// for their async work (other suites' deadlines would starve).
    func recordedRun(users: Int) async throws -> (Scenario, ServerTape) {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(with: Result { try recordedRunNow(users: users) })
            }
        }
    }

    private func recordedRunNow(users: Int) throws -> (Scenario, ServerTape) {
        let path =
            URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Simulation/Scenarios/smoke.json").path
        var scenario = try Scenario.load(path: path)
        scenario.users = users
        scenario.weeks = 1
        scenario.threads = 1
        scenario.drainDays = 0
        let tape = ServerTape()
        var options = RunOptions(scenario: scenario, templates: bundledTemplates, outputDirectory: nil)
        options.tape = tape
        _ = try Simulator.run(options)
        return (scenario, tape)
    }

    @Test func theSameAsksSendTheSameAPNsRequestsByteForByte() async throws {
        let (scenario, tape) = try await recordedRun(users: 16)
        var configuration = EngineConfiguration()
        configuration.holdoutShare = scenario.holdoutShare
        configuration.attentionBudget = scenario.attention.budget
        configuration.budgetHoldoutShare = scenario.attention.holdoutShare
        var compared = 0
        var inputs = 0
        for userID in tape.userIDs {
            let entries = tape.entries(of: userID)
            let expected = sentOrder(
                entries.compactMap { if case .sent(let request) = $0.entry { (request, $0.at) } else { nil } })
            let replayed = try await replay(entries, of: userID, configuration: configuration)
            inputs += entries.count { if case .input = $0.entry { true } else { false } }
            #expect(replayed.count == expected.count, "\(userID): \(replayed.count) sent, \(expected.count) simulated")
            for (index, (sent, simulated)) in zip(replayed, expected).enumerated() where sent != simulated {
                Issue.record("\(userID) push \(index): engaged sent \(sent), the simulator \(simulated)")
                break
            }
            compared += min(replayed.count, expected.count)
        }
        #expect(compared > 100, "too few pushes compared to mean much: \(compared)")
        #expect(inputs > 700, "\(inputs) inputs")
    }

    /// Replays one user's asks through a fresh `engaged` runtime; returns the alert and sync
    /// requests its APNs channel sent.
    private func replay(
        _ entries: [(entry: ServerTape.Entry, at: Instant)], of userID: String, configuration: EngineConfiguration
    ) async throws -> [PushRequest] {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("agreement-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try SQLiteEngagementStore(path: directory.appendingPathComponent("engaged.sqlite").path)
        let clock = ManualClock(try #require(entries.first?.at))
        let runtime = EngineRuntime(store: store, clock: clock, content: bundledContent, configuration: configuration)
        var logger = Logger(label: "agreement")
        logger.logLevel = .critical
        let pushes = KeptPushes(clock: clock)
        let channel = APNsChannelTransport(
            runtime: runtime, push: pushes, topic: Self.topic, metrics: ServerMetrics(), logger: logger)
        var launchedAt: Instant?
        for (entry, at) in entries {
            clock.advance(by: at - clock.now())
            switch entry {
            case .installed(let profile, let token):
                try await runtime.putUser(profile)
                _ = try await runtime.registerDevice(
                    token: token, environment: .production, platform: "ios", for: userID)
                launchedAt = at
            case .input(let input):
                // `putUser` launched the engine already.
                if case .appLaunched = input, launchedAt == at {
                    launchedAt = nil
                    continue
                }
                // The simulated phone holds its engine: every input reaches the plan's holder
                // directly, as the phone's own would (no signal: `PlanSignal`).
                try await runtime.apply(input, to: userID, from: .device)
            case .dispatched:
                _ = try await runtime.dispatchDue(limit: 10_000, through: channel)
            case .read(let requestID):
                let page = try await runtime.inbox(of: userID, cursor: nil, limit: 100)
                let item = try #require(
                    page.items.filter { $0.requestID == requestID && $0.state < .read }.min {
                        $0.sequence < $1.sequence
                    },
                    "\(userID) read \(requestID) at \(at.iso8601): not unread in engaged's inbox")
                _ = try await runtime.setInboxState(.read, item: item.id, of: userID)
            case .readAll:
                _ = try await runtime.readAllInbox(of: userID)
            case .sent:
                break
            }
            // The simulated phone runs the engine's background tasks itself.
            let jobs = try store.pendingOutbox(userID: userID).filter { $0.channel == .job }
            if !jobs.isEmpty { try store.completeOutbox(keys: jobs.map(\.key), at: at) }
        }
        return sentOrder(pushes.requests.withLock { $0 }.filter { $0.request.pushType != .liveactivity })
    }
}
