import Delivery
import EngagementKit
import Foundation
import HTTPTypes
import HummingbirdTesting
import Models
import Synchronization
import Testing

@testable import engaged

/// A phone's network link to the server: EngagementKit's senders over the test client, with the
/// user's token. Offline, every call throws before reaching the server; `lostAnswers` event
/// answers are lost after the server applied the event (a dropped connection on the way back).
final class PhoneLink: EventSender, DeviceReportSender {
    struct Offline: Error {}
    struct Lost: Error {}

    let client: any TestClientProtocol
    let token: String
    let userID: UserID
    let online = Mutex(true)
    let lostAnswers: Mutex<Int>

    init(client: any TestClientProtocol, token: String, userID: UserID, lostAnswers: Int = 0) {
        self.client = client
        self.token = token
        self.userID = userID
        self.lostAnswers = Mutex(lostAnswers)
    }

    private func request(
        _ method: HTTPRequest.Method, _ uri: String, _ body: String? = nil, idempotencyKey: String? = nil,
        ifNoneMatch: String? = nil
    ) async throws -> TestResponse {
        guard online.withLock({ $0 }) else { throw Offline() }
        var fields = headers(key: token, idempotencyKey: idempotencyKey)
        if let ifNoneMatch { fields[.ifNoneMatch] = ifNoneMatch }
        return try await client.send(method, uri, body, headers: fields)
    }

    func send(_ body: Data, idempotencyKey: String, userID: UserID) async throws -> EventAnswer {
        let response = try await request(
            .post, "/v1/users/\(userID)/events", String(decoding: body, as: UTF8.self), idempotencyKey: idempotencyKey)
        let lost = lostAnswers.withLock { lost in
            defer { lost = max(0, lost - 1) }
            return lost > 0
        }
        if lost { throw Lost() }
        return EventAnswer(status: Int(response.status.code), body: Data(response.text.utf8))
    }

    func send(_ report: DeviceReport) async throws -> Int {
        let response: TestResponse
        switch report {
        case .register(let userID, let token, let environment):
            response = try await request(
                .post, "/v1/users/\(userID)/devices",
                #"{"token": "\#(token)", "environment": "\#(environment.rawValue)"}"#)
        case .remove(let userID, let token):
            response = try await request(.delete, "/v1/users/\(userID)/devices/\(token)")
        case .permission, .timeZone: return 400  // the queue's, never sent here
        }
        return Int(response.status.code)
    }

    func pull(_ pull: PlanPull) async throws -> PlanAnswer {
        let query = pull.since.map { "?since=\($0)" } ?? ""
        let response = try await request(.get, "/v1/users/\(userID)/plan\(query)", ifNoneMatch: pull.ifNoneMatch)
        switch response.status {
        case .notModified: return .notModified
        case .ok: return .plan(try ServerPlan.decode(Data(response.text.utf8)))
        default: throw PlanReadError(field: "", reason: "status \(response.status.code)")
        }
    }
}

/// A phone running EngagementKit: its notification center, its plan, its event queue and what
/// it told the server about itself. It keeps the instant the last plan it pulled gave each
/// request, so a firing can be held to the plan.
struct KitPhone {
    var center = SimulatedNotificationCenter(timeZone: ZoneRules(identifier: "Europe/Berlin")!)
    var sync = PlanSync()
    let reporter = DeviceReporter(installation: "ana-phone")
    let queue = EventQueue(store: InMemoryEventQueueStore(userID: "ana", installation: "ana-phone"), seed: 7)
    let link: PhoneLink
    let pushToken = Data(repeating: 0x5a, count: 32)
    /// Each request's next firing in the last plan pulled, until it fires.
    var planned: [Models.RequestID: Instant] = [:]
    var pulls = 0
    /// Pulls answered with a delta (`?since=`).
    var deltas = 0
    var heldToPlan = 0
    /// The status of the last pull: 200 or 304.
    var lastStatus: HTTPResponse.Status?

    init(link: PhoneLink) { self.link = link }

    var pendingIDs: Set<Models.RequestID> { Set(center.pendingNotificationRequests.map(\.request.identifier)) }

    /// Launch, or coming to the foreground: tells the server what it has not been told, sends the
    /// queue and pulls the plan when the queue's answers or the lack of a plan say so.
    mutating func foreground(at now: Instant) async throws {
        let reports = await reporter.reports(
            userID: "ana", pushToken: pushToken, environment: .production, permission: center.authorizationStatus,
            at: now)
        #expect(await reporter.send(reports, via: link, queue: queue, at: now) == .sent)
        let flushed = try await queue.flush(via: link, at: now)
        if sync.state.version == nil || flushed.planVersion.map(sync.needsPull) == true {
            try await pull(at: now)
        }
    }

    /// Pulls the plan with `If-None-Match` and `?since=` (a delta when the server kept the
    /// version held) and mirrors it; afterwards the phone holds exactly the server's plan.
    /// Returns what applying it did.
    @discardableResult
    mutating func pull(at now: Instant) async throws -> PlanSyncOutcome {
        let started = sync.startPull()
        let answer = try await link.pull(started)
        pulls += 1
        lastStatus = .notModified
        if case .plan(let plan) = answer {
            lastStatus = .ok
            if plan.since != nil { deltas += 1 }
        }
        let outcome = sync.apply(answer, to: &center, at: now, answering: started)
        switch outcome {
        case .refusedOlder, .refusedDelta: Issue.record("\(outcome) at \(now.iso8601)")
        case .applied, .unchanged: break
        }
        // The plan the phone now holds: the answer, or the plan it stands for when a delta.
        if case .plan(let plan) = answer, let held = plan.since == nil ? plan.requests : sync.state.plan {
            planned = Dictionary(held.map { ($0.request.identifier, $0.nextFireAt) }) { first, _ in first }
        }
        return outcome
    }

    /// The identifiers of the server's local plan (at most 64: the phone's limit), read with the
    /// API key.
    static func serverPlan(_ client: any TestClientProtocol) async throws -> Set<Models.RequestID> {
        let plan = try ServerPlan.decode(Data(try await client.send(.get, "/v1/users/ana/plan").text.utf8))
        return Set(plan.requests.prefix(64).map(\.request.identifier))
    }

    /// A background push arrived: a sync sets the badge and pulls when the plan moved.
    mutating func receive(_ push: PushRequest, at now: Instant) async throws {
        guard let signal = SyncSignal(payload: Data(push.payload)) else { return }
        center.setBadgeCount(signal.badge)
        if signal.planVersion.map(sync.needsPull) ?? true { try await pull(at: now) }
    }

    /// Fires what is due by `now`. The first firing of a request since the pull that brought it
    /// is at the instant that plan gave it (`heldToPlan` counts them).
    mutating func fire(through now: Instant) -> [DeliveredNotification] {
        let fired = center.fireDue(through: now)
        for delivered in fired {
            let id = delivered.request.identifier
            guard let planned = planned.removeValue(forKey: id) else { continue }
            #expect(delivered.deliveredAt == planned, "\(id) fired at \(delivered.deliveredAt.iso8601)")
            heldToPlan += 1
        }
        return fired
    }
}
