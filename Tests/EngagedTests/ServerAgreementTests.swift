import Content
import Delivery
import EngagedAPI
import Engagement
import EngagementKit
import Foundation
import Logging
import Models
import Runtime
import SimulatedPlatform
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
/// byte: `apns-id`, push type, topic, priority, expiration, collapse id, token and payload, for
/// alerts, badge syncs and Live Activity pushes. The replay's transport answers each request
/// what the simulated APNs answered it (outages, throttling, tokens retired by an uninstall),
/// so what follows an answer (a sync after a failed alert, no more sends to a retired token)
/// is compared too.
///
/// Both topologies. On `device` the simulated phone runs the engine's background tasks itself
/// (their launches are among the replayed inputs, so the replay drops the job rows) and no
/// step asks for the plan's signal. On `server` the server runs its jobs when due (the replay's
/// dispatch runs them, and their recorded launches are skipped), and each input is applied
/// from where it came (`InputSource`), so the signal's badge syncs are compared too. A sync
/// that did not reach the phone is told to the engine by the dispatch (`SendFollowUp`), so its
/// recorded step is skipped too.
@Suite("Server agreement: engaged and the simulator send the same pushes")
struct ServerAgreementTests {
    static let topic = "com.example.fitness"

    /// The smoke scenario's first week for `users` users, recorded. The run is synchronous and
    /// takes seconds: it runs on a thread of its own, not one of the few the test suites share
    /// for their async work (other suites' deadlines would starve).
    func recordedRun(users: Int, faultyAPNs: Bool, deployment: Deployment) async throws -> (Scenario, ServerTape) {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(
                    with: Result { try recordedRunNow(users: users, faultyAPNs: faultyAPNs, deployment: deployment) })
            }
        }
    }

    private func recordedRunNow(users: Int, faultyAPNs: Bool, deployment: Deployment) throws -> (Scenario, ServerTape) {
        let path =
            URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Simulation/Scenarios/smoke.json").path
        var scenario = try Scenario.load(path: path)
        scenario.users = users
        scenario.weeks = 1
        scenario.threads = 1
        scenario.drainDays = 0
        scenario.deployment = deployment
        if faultyAPNs {
            scenario.faults.apns.outagesPerWeek = 14
            scenario.faults.apns.outageMinutes = 30
            scenario.faults.apns.tooManyRequestsBurstsPerWeek = 14
            scenario.faults.apns.tooManyRequestsShare = 0.5
            scenario.faults.apns.unregisteredAfterHours = 1
            scenario.faults.uninstallOnChurn = 1
            // The dispatch stalls and claims its backlog late: the claim-time rules' deferrals
            // and merges are compared too.
            scenario.faults.serverStallsPerWeek = 7
            scenario.faults.serverStallMinutes = 90
        }
        let tape = ServerTape()
        var options = RunOptions(scenario: scenario, templates: bundledTemplates, outputDirectory: nil)
        options.tape = tape
        _ = try Simulator.run(options)
        return (scenario, tape)
    }

    /// With a perfect APNs, then with outages, throttling and uninstalls; on both topologies.
    @Test(arguments: [false, true], [Deployment.device, .server])
    func theSameAsksSendTheSameAPNsRequestsByteForByte(faultyAPNs: Bool, deployment: Deployment) async throws {
        let (scenario, tape) = try await recordedRun(users: 16, faultyAPNs: faultyAPNs, deployment: deployment)
        var configuration = EngineConfiguration()
        configuration.holdoutShare = scenario.holdoutShare
        configuration.attentionBudget = scenario.attention.budget
        configuration.budgetHoldoutShare = scenario.attention.holdoutShare
        var compared = 0
        var inputs = 0
        var kinds: [PushRequest.PushType: Int] = [:]
        var failures = 0
        var retired = 0
        var missedSyncs = 0
        var lateRows = 0
        for userID in tape.userIDs {
            let entries = tape.entries(of: userID)
            let expected = sentOrder(
                entries.compactMap { if case .sent(let request) = $0.entry { (request, $0.at) } else { nil } })
            let (replayed, late) = try await replay(
                entries, of: userID, configuration: configuration, runsJobs: deployment == .server)
            lateRows += late
            inputs += entries.count { if case .input = $0.entry { true } else { false } }
            missedSyncs += entries.count { if case .input(.syncMissed, _) = $0.entry { true } else { false } }
            for case (.answered(_, let outcome), _) in entries {
                switch outcome {
                case .delivered: break
                case .tokenRetired: retired += 1
                case .rejected, .failedAfterRetries: failures += 1
                }
            }
            for request in expected { kinds[request.pushType, default: 0] += 1 }
            #expect(replayed.count == expected.count, "\(userID): \(replayed.count) sent, \(expected.count) simulated")
            for (index, (sent, simulated)) in zip(replayed, expected).enumerated() where sent != simulated {
                Issue.record("\(userID) push \(index): engaged sent \(sent), the simulator \(simulated)")
                break
            }
            compared += min(replayed.count, expected.count)
        }
        #expect(compared > 100, "too few pushes compared to mean much: \(compared)")
        #expect(inputs > 700, "\(inputs) inputs")
        #expect(kinds[.liveactivity, default: 0] > 10, "Live Activity pushes: \(kinds)")
        #expect(kinds[.background, default: 0] > 10, "badge syncs: \(kinds)")
        if faultyAPNs {
            #expect(failures > 10, "too few sends failed to mean much: \(failures)")
            #expect(retired > 0, "no token retired")
            if deployment == .server { #expect(missedSyncs > 0, "no sync missed the phone") }
            #expect(lateRows > 10, "too few rows claimed late to mean much: \(lateRows)")
        }
    }

    /// Replays one user's asks through a fresh `engaged` runtime, its transport answering as the
    /// simulated APNs did; returns the requests its APNs channel sent, and how many rows its
    /// dispatches performed late (`ClaimTimePolicy.isOnTime`: a stall's backlog).
    private func replay(
        _ entries: [(entry: ServerTape.Entry, at: Instant)], of userID: UserID, configuration: EngineConfiguration,
        runsJobs: Bool
    ) async throws -> (sent: [PushRequest], lateRows: Int) {
        var lateRows = 0
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("agreement-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try SQLiteEngagementStore(path: directory.appendingPathComponent("engaged.sqlite").path)
        let clock = ManualClock(try #require(entries.first?.at))
        let runtime = EngineRuntime(store: store, clock: clock, content: bundledContent, configuration: configuration)
        var logger = Logger(label: "agreement")
        logger.logLevel = .critical
        let pushes = TapedAPNs(clock: clock, entries: entries)
        let channel = PushChannelTransport(
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
            case .input(let input, let source):
                // `putUser` launched the engine already.
                if case .appLaunched = input, launchedAt == at {
                    launchedAt = nil
                    continue
                }
                // On the server topology the server runs its jobs: the dispatch ran this one.
                if runsJobs, case .backgroundTaskLaunched = input { continue }
                // The dispatch told the engine of the sync it missed.
                if case .syncMissed = input { continue }
                // On the server topology the input comes by the route a deployed app or backend
                // takes: the phone's events as the kit's bytes, decoded by `engaged` and taken
                // from the caller its route names (`EventKey.source`).
                guard runsJobs else {
                    try await runtime.apply(input, to: userID, from: source)
                    continue
                }
                let routed = try Self.routed(input, of: userID, at: at)
                #expect(
                    routed.source == source,
                    "\(userID) at \(at.iso8601): the simulator gives \(input) as \(source), the route as \(routed.source)"
                )
                try await runtime.apply(routed.input, to: userID, occurredAt: routed.occurredAt, from: routed.source)
            case .dispatched:
                let completed = try await runtime.dispatchDue(limit: 10_000, through: channel)
                lateRows += completed.count { !ClaimTimePolicy.isOnTime($0.dueAt, at: at) }
            case .read(let requestID):
                let page = try await runtime.inbox(of: userID, cursor: nil, limit: 100)
                let item = try #require(
                    page.items.filter { $0.requestID == requestID && $0.state < .read }.min {
                        $0.sequence < $1.sequence
                    },
                    "\(userID) read \(requestID) at \(at.iso8601): not unread in engaged's inbox")
                _ = try await runtime.setInboxState(.read, item: item.id, of: userID)
            case .planServed:
                try await runtime.phoneWasServed(try await runtime.localPlan(of: userID), userID: userID)
            case .readAll:
                _ = try await runtime.readAllInbox(of: userID)
            case .sent, .answered:
                break
            }
            // On the device topology the simulated phone runs the engine's background tasks itself.
            if !runsJobs {
                let jobs = try store.pendingOutbox(userID: userID).filter { $0.channel == .job }
                if !jobs.isEmpty { try store.completeOutbox(keys: jobs.map(\.key), at: at) }
            }
        }
        return (sentOrder(pushes.requests.withLock { $0 }), lateRows)
    }
}

extension ServerAgreementTests {
    /// `input` as `engaged` takes it on the server topology: an event of the user's own phone is
    /// the kit's request body (`AppEvent.body`) decoded by the events route (`EventInput`), from
    /// the caller of a user token; anything else comes from the backend or the server itself.
    static func routed(_ input: EngineInput, of userID: UserID, at now: Instant) throws -> (
        input: EngineInput, occurredAt: Instant?, source: InputSource
    ) {
        let event: AppEvent
        var at = now
        switch input {
        case .activity(let kind, let occurredAt):
            event = .activity(kind)
            at = occurredAt ?? now
        case .notificationResponse(let requestID, _, let action):
            event = .notificationResponse(requestID: requestID.rawValue, actionIdentifier: action.rawValue)
        case .unrecognizedResponse(let requestID, _, let actionIdentifier):
            event = .notificationResponse(requestID: requestID.rawValue, actionIdentifier: actionIdentifier)
        case .notificationPermission(let allowed):
            event = .notificationPermission(allowed: allowed)
        case .liveActivity(let liveActivity):
            event = .liveActivity(liveActivity)
        case .timeZoneChanged(let zone, let movedAt):
            event = .timeZoneChanged(zone.identifier)
            at = movedAt ?? now
        default:
            return (input, nil, EventKey.source(of: .backend))
        }
        let source = EventKey.source(of: .user(userID))
        let decoded = try EventInput(JSONDecoder().decode(Components.Schemas.Event.self, from: event.body(at: at)))
        try decoded.check(now: now, from: source)
        return (decoded.input, decoded.occurredAt, source)
    }
}

/// A push transport that keeps every request, with the clock's time, and answers each what the
/// tape says the simulated APNs answered it: the outcomes recorded for its `apns-id`, in order
/// (a row sent again later under the same id gets the next), and 200 for a request the tape
/// has no answer for. A badge sync's answer moves the clock on to the instant the simulator
/// answered it (the APNs client's retries take time), so the step the runtime takes after a
/// sync that did not reach the phone (`EngineInput.syncMissed`) is taken when the simulator
/// took it; other answers leave the clock at the dispatch's instant, as the simulator's
/// follow-ups are.
private final class TapedAPNs: PushTransport {
    let clock: ManualClock
    let requests = Mutex<[(request: PushRequest, at: Instant)]>([])
    private let answers: Mutex<[String: [(outcome: PushOutcome, at: Instant)]]>

    init(clock: ManualClock, entries: [(entry: ServerTape.Entry, at: Instant)]) {
        self.clock = clock
        var answers: [String: [(outcome: PushOutcome, at: Instant)]] = [:]
        for (entry, at) in entries {
            if case .answered(let id, let outcome) = entry { answers[id, default: []].append((outcome, at)) }
        }
        self.answers = Mutex(answers)
    }

    func send(_ request: PushRequest) async -> PushOutcome {
        let now = clock.now()
        requests.withLock { $0.append((request, now)) }
        let answer: (outcome: PushOutcome, at: Instant)? = answers.withLock { answers in
            guard var queued = answers[request.id], !queued.isEmpty else { return nil }
            let answer = queued.removeFirst()
            answers[request.id] = queued
            return answer
        }
        guard let answer else { return .delivered }
        if request.pushType == .background { clock.advance(by: answer.at - clock.now()) }
        return answer.outcome
    }
}
