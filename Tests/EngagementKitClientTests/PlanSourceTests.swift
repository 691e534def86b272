import Delivery
import EngagementKit
import EngagementKitClient
import Foundation
import HTTPTypes
import Models
import Synchronization
import Testing

/// `EngagedPlanSource`: the plan pull with `If-None-Match` and its `ETag`, each answer the route
/// gives mapped to a plan, a 304 or a reason.
@Suite("EngagementKitClient: plan pull")
struct PlanSourceTests {
    static let now = Instant(iso8601: "2027-03-01T06:00:00Z")!
    static let eTag = #"W/"\#(FakeEngaged.planVersion)""#

    /// A sync holding the plan of `version` in full.
    static func holding(_ version: Int?) -> PlanSync { PlanSync(state: PlanSyncState(version: version)) }

    @Test func aFirstPullNamesNoPlanAndAppliesTheAnswer() async throws {
        let server = FakeEngaged()
        var sync = PlanSync()
        var center = SimulatedNotificationCenter(timeZone: ZoneRules(identifier: "Europe/Berlin")!)
        let pull = sync.startPull()
        let answer = try await EngagedPlanSource(connection(to: server)).pull(pull)
        guard case .applied = sync.apply(answer, to: &center, at: Self.now, answering: pull) else {
            Issue.record("expected the plan applied, got \(answer)")
            return
        }
        #expect(sync.state.version == FakeEngaged.planVersion && sync.ifNoneMatch == Self.eTag)
        #expect(center.pendingNotificationRequests.map(\.request.identifier) == ["mealReminder.2027-03-01.lunch"])
        let sent = try #require(server.requests.first)
        #expect(sent.request.method == .get && sent.request.path == "/v1/users/ana/plan")
        #expect(sent.request.headerFields[.ifNoneMatch] == nil && sent.bearer == "good")
    }

    @Test func aPullNamingTheServersPlanIsAnswered304() async throws {
        let server = FakeEngaged()
        let answer = try await EngagedPlanSource(connection(to: server)).pull(
            Self.holding(FakeEngaged.planVersion).startPull())
        #expect(answer == .notModified)
        #expect(server.requests.first?.request.headerFields[.ifNoneMatch] == Self.eTag)
    }

    @Test func aPullNamingAnOlderPlanGetsTheNewOne() async throws {
        let server = FakeEngaged()
        let answer = try await EngagedPlanSource(connection(to: server)).pull(Self.holding(7).startPull())
        guard case .plan(let plan) = answer else {
            Issue.record("expected a plan, got \(answer)")
            return
        }
        #expect(plan.version == FakeEngaged.planVersion && plan.requests.count == 1)
        #expect(server.requests.first?.request.headerFields[.ifNoneMatch] == #"W/"7""#)
    }

    @Test func aPullHoldingItsPlanAsksForWhatChangedAndAppliesTheDelta() async throws {
        let dinner = FakeEngaged.lunch("mealReminder.2027-03-01.dinner")
        let delta = FakeEngaged.plan(version: 13, requests: [dinner]).replacingOccurrences(
            of: #""timeZone""#, with: #""removed":["mealReminder.2027-03-01.lunch"],"since":12,"timeZone""#)
        let server = FakeEngaged(script: [
            "getPlan": [
                .answer(
                    .ok, body: FakeEngaged.plan(version: 12, requests: [FakeEngaged.lunch()]),
                    headers: [.eTag: #"W/"12""#]),
                .answer(.ok, body: delta, headers: [.eTag: #"W/"13""#]),
            ]
        ])
        let source = EngagedPlanSource(connection(to: server))
        var sync = PlanSync()
        var center = SimulatedNotificationCenter(timeZone: ZoneRules(identifier: "Europe/Berlin")!)
        for _ in 0..<2 {
            let pull = sync.startPull()
            let answer = try await source.pull(pull)
            guard case .applied = sync.apply(answer, to: &center, at: Self.now, answering: pull) else {
                Issue.record("expected the plan applied, got \(answer)")
                return
            }
        }
        #expect(server.requests.map(\.request.path) == ["/v1/users/ana/plan", "/v1/users/ana/plan?since=12"])
        #expect(server.requests.last?.request.headerFields[.ifNoneMatch] == #"W/"12""#)
        #expect(center.pendingNotificationRequests.map(\.request.identifier) == ["mealReminder.2027-03-01.dinner"])
        #expect(sync.state.version == 13 && sync.startPull().since == 13)
    }

    /// A request a newer server added is left out and named; the generated `LocalPlan` would
    /// refuse the whole plan.
    @Test func aRequestThisBuildCannotReadLeavesTheRestOfThePlan() async throws {
        let server = FakeEngaged()
        server.planBody.withLock {
            $0 = FakeEngaged.plan(
                version: 12, requests: [FakeEngaged.lunch(), FakeEngaged.lunch("teleport.1", kind: "teleport")])
        }
        let answer = try await EngagedPlanSource(connection(to: server)).pull(PlanSync().startPull())
        guard case .plan(let plan) = answer else {
            Issue.record("expected a plan, got \(answer)")
            return
        }
        #expect(plan.requests.map(\.request.identifier) == ["mealReminder.2027-03-01.lunch"])
        #expect(plan.unreadable.map(\.identifier) == ["teleport.1"])
    }

    @Test(arguments: [
        ("not json", ""), (#"{"timeZone":"UTC","requests":[]}"#, "version"),
        (#"{"version":-1,"timeZone":"UTC","requests":[]}"#, "version"),
        (#"{"version":3,"timeZone":"UTC","horizonEnd":"soon","requests":[]}"#, "horizonEnd"),
    ])
    func aBodyThatIsNotAPlanIsUnreadableNamingTheField(_ body: String, field: String) async throws {
        let server = FakeEngaged(script: ["getPlan": [.answer(.ok, body: body, headers: [.eTag: #"W/"3""#])]])
        do {
            let answer = try await EngagedPlanSource(connection(to: server)).pull(PlanSync().startPull())
            Issue.record("expected an unreadable plan, got \(answer)")
        } catch {
            guard case .unreadable(let read) = error else {
                Issue.record("expected an unreadable plan, got \(error)")
                return
            }
            #expect(read.field == field)
        }
    }

    @Test(arguments: [
        (7 as Int?, #"W/"8""#, "a 304 naming W/\"8\", the pull named W/\"7\""),
        (nil, #"W/"7""#, "a 304 to a pull that named no plan"),
    ])
    func a304ThatDoesNotConfirmTheHeldPlanIsUnreadable(held: Int?, eTag: String, reason: String) async {
        let server = FakeEngaged(script: ["getPlan": [.answer(.notModified, headers: [.eTag: eTag])]])
        await #expect(throws: PlanPullError.unreadable(PlanReadError(field: "ETag", reason: reason))) {
            try await EngagedPlanSource(connection(to: server)).pull(Self.holding(held).startPull())
        }
    }

    /// A 304 without an `ETag` (a proxy dropped it) confirms what was named; a strong tag
    /// compares weakly.
    @Test(arguments: [HTTPFields(), [.eTag: #""7""#], [.eTag: #"W/"7""#]])
    func a304ConfirmingTheHeldPlanIsNotModified(_ headers: HTTPFields) async throws {
        let server = FakeEngaged(script: ["getPlan": [.answer(.notModified, headers: headers)]])
        #expect(try await EngagedPlanSource(connection(to: server)).pull(Self.holding(7).startPull()) == .notModified)
    }

    @Test func anExpiredTokenIsRenewedAndThePullRepeatedOnce() async throws {
        let server = FakeEngaged(validTokens: ["fresh"])
        let link = connection(to: server, token: "expired", renewed: "fresh")
        let answer = try await EngagedPlanSource(link).pull(Self.holding(FakeEngaged.planVersion).startPull())
        #expect(answer == .notModified)
        #expect(server.requests.map(\.bearer) == ["expired", "fresh"])
        #expect(server.requests.allSatisfy { $0.request.headerFields[.ifNoneMatch] == Self.eTag })
    }

    @Test(arguments: [(nil as String?, 401, 1), ("fresh", 403, 2)])
    func aTokenStillRefusedIsNeedsToken(renewed: String?, status: Int, requests: Int) async throws {
        let refusal = HTTPResponse.Status(code: status)
        let server = FakeEngaged(script: ["getPlan": [.problem(refusal), .problem(refusal)]])
        let link = connection(to: server, renewed: renewed)
        await #expect(throws: PlanPullError.needsToken(status: status)) {
            try await EngagedPlanSource(link).pull(PlanSync().startPull())
        }
        #expect(server.requests.count == requests)
    }

    @Test(arguments: [
        (FakeEngaged.Scripted.problem(.tooManyRequests, headers: [.retryAfter: "30"]), 429, Int64(30) as Int64?),
        (
            .answer(.serviceUnavailable, body: "<html/>", contentType: "text/html", headers: [.retryAfter: "soon"]),
            503, nil
        ),
        (.problem(.internalServerError), 500, nil), (.problem(.notFound), 404, nil),
    ])
    func anyOtherStatusIsAnsweredWithItsRetryAfter(
        _ scripted: FakeEngaged.Scripted, status: Int, retryAfterSeconds: Int64?
    ) async {
        let server = FakeEngaged(script: ["getPlan": [scripted]])
        await #expect(throws: PlanPullError.answered(status: status, retryAfterSeconds: retryAfterSeconds)) {
            try await EngagedPlanSource(connection(to: server)).pull(PlanSync().startPull())
        }
    }

    @Test func noAnswerIsNoAnswer() async {
        let server = FakeEngaged(script: ["getPlan": [.noAnswer]])
        await #expect {
            try await EngagedPlanSource(connection(to: server)).pull(PlanSync().startPull())
        } throws: { error in
            guard case .noAnswer = error as? PlanPullError else { return false }
            return true
        }
    }

    /// A pull and an event meeting the same expired token at once share one renewal.
    @Test func sendersMeetingARefusalAtOnceShareOneRenewal() async throws {
        let server = FakeEngaged(validTokens: ["fresh"])
        let link = connection(to: server, token: "expired", renewed: "fresh")
        async let pulled = EngagedPlanSource(link).pull(PlanSync().startPull())
        async let sent = EngagedEventSender(link).send(
            AppEvent.activity(.moodLogged).body(at: Self.now), idempotencyKey: "k", userID: "ana")
        let (plan, event) = try await (pulled, sent)
        guard case .plan = plan else {
            Issue.record("expected a plan, got \(plan)")
            return
        }
        #expect(event.status == 202)
        #expect(await link.credential.renewals == 1)
        #expect(server.requests.filter { $0.bearer == "fresh" }.count == 2)
    }
}
