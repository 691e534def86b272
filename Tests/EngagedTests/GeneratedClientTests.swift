import EngagedAPI
import EngagedClient
import Foundation
import HTTPTypes
import HummingbirdTesting
import Models
import OpenAPIRuntime
import Testing

@testable import engaged

/// The client generated from openapi.yaml against the server over loopback: every operation's
/// request is one the server reads, and every answer decodes as the document says, so the
/// document, the server and the client agree.
@Suite("engaged: the generated client")
struct GeneratedClientTests {
    typealias Schemas = EngagedAPI.Components.Schemas

    /// Runs `test` with a client of a live test server holding the API key.
    static func withClient(
        _ test: @escaping @Sendable (Client, URL, any TestClientProtocol) async throws -> Void
    ) async throws {
        try await TestServer().run(.live) { live in
            let port = try #require(live.port)
            let url = try #require(URL(string: "http://127.0.0.1:\(port)"))
            try await test(Client(serverURL: url, credential: TestServer.apiKey), url, live)
        }
    }

    @Test func usersAreWrittenAndReadBackWithTheirVersions() async throws {
        try await Self.withClient { client, _, _ in
            #expect(try await client.health().ok.body.json.status == .ok)
            #expect(try await client.ready().ok.body.json.status == .ready)
            let metrics = try await client.metrics().ok.body.textPlainVersion_0_0_4
            #expect(try await String(collecting: metrics, upTo: 1 << 20).contains("engaged_http_requests_total"))

            // The preferences are the engine's own value, as the client sends them.
            var preferences = NotificationPreferences()
            preferences.hydration = .biHourly
            preferences.quietHours = try QuietHours(
                start: #require(LocalTimeOfDay("22:00")), end: #require(LocalTimeOfDay("07:00")))
            preferences.maxPerHour = 4
            let write = Schemas.User(
                timeZone: "Asia/Kathmandu", displayName: "Ana Silva", motivationalStyle: .supportive, locale: "pt-br",
                preferences: preferences, updatedAt: "2027-03-01T05:59:58.250Z")
            let created = try await client.putUser(path: .init(id: "ana"), body: .json(write)).created.body.json
            #expect(created.created)
            #expect(created.locale == "pt-BR")
            #expect(created.applied == [.preferences, .profile, .timeZone])
            #expect(created.versions.profile?.value == "2027-03-01T05:59:58.250Z")

            let stored = try await client.getUser(path: .init(id: "ana")).ok.body.json
            #expect(stored.id == "ana")
            #expect(stored.timeZone == "Asia/Kathmandu")
            #expect(stored.displayName == "Ana Silva")
            #expect(stored.motivationalStyle == .supportive)
            #expect(stored.absenceResponse == .lightNudge)
            #expect(stored.preferences.hydration == .biHourly)
            #expect(stored.preferences.quietHours?.start == LocalTimeOfDay("22:00"))
            #expect(stored.preferences.maxPerHour == 4)
            #expect(stored.versions.timeZone?.value == "2027-03-01T05:59:58.250Z")

            // A stale write: 200, nothing applied.
            let stale = try await client.putUser(
                path: .init(id: "ana"), body: .json(.init(timeZone: "Europe/Berlin", updatedAt: "2027-03-01T05:00:00Z"))
            ).ok.body.json
            #expect(stale.stale == [.timeZone])
            #expect(stale.timeZone == "Asia/Kathmandu")

            // Refusals decode as the document's problems.
            let unknownZone = try await client.putUser(
                path: .init(id: "ana"), body: .json(.init(timeZone: "Mars/Olympus")))
            let problem = try unknownZone.unprocessableContent.body.applicationProblemJson
            #expect(problem.status == 422)
            #expect(problem.field == "timeZone")
            let missing = try await client.getUser(path: .init(id: "nobody")).notFound.body.applicationProblemJson
            #expect(missing._type == "urn:engaged:problem:not-found")
        }
    }

    @Test func eventsThePlanAndTheScheduleRoundTrip() async throws {
        try await Self.withClient { client, _, raw in
            _ = try await client.putUser(path: .init(id: "ana"), body: .json(.init(timeZone: "Europe/Berlin"))).created
            let opened = Schemas.Event.appOpened(.init(_type: .appOpened, sessionSeconds: 120))
            // A key the URI encoding would change: the server sees it as written (`HeaderParametersAsWritten`).
            let key = "open 1/%41\"é\""
            let accepted = try await client.postEvent(
                path: .init(id: "ana"), headers: .init(idempotencyKey: key), body: .json(opened)
            ).accepted
            let first = try accepted.body.json
            #expect(accepted.headers.idempotencyReplayed == nil)
            let replay = try await client.postEvent(
                path: .init(id: "ana"), headers: .init(idempotencyKey: key), body: .json(opened)
            ).accepted
            #expect(replay.headers.idempotencyReplayed == ._true)
            #expect(try replay.body.json == first)
            // The same key from another client, with the body the generated client sent.
            let rawReplay = try await raw.send(
                .post, "/v1/users/ana/events", #"{"sessionSeconds":120,"type":"appOpened"}"#,
                headers: headers(idempotencyKey: key))
            #expect(rawReplay.headers[.init("Idempotency-Replayed")!] == "true")

            let mood = try await client.postEvent(
                path: .init(id: "ana"), body: .json(.moodLogged(.init(_type: .moodLogged, at: TestServer.start)))
            ).accepted.body.json
            #expect(mood.planVersion >= first.planVersion)
            let workout = try await client.postEvent(
                path: .init(id: "ana"),
                body: .json(.workoutStarted(.init(_type: .workoutStarted, workoutType: "run")))
            ).accepted.body.json
            #expect(workout.liveActivities?.map(\.event) == [.start])

            let planAnswer = try await client.getPlan(path: .init(id: "ana")).ok
            let plan = try planAnswer.body.json
            #expect(plan.timeZone == "Europe/Berlin")
            #expect(!plan.requests.isEmpty)
            #expect(planAnswer.headers.eTag == #"W/"\#(plan.version)""#)
            #expect(planAnswer.headers.cacheControl == "no-cache")
            for request in plan.requests {
                #expect(request.nextFireAt >= TestServer.start.date)
                #expect(Instant(iso8601: request.localTime).map(\.date) == request.nextFireAt)
            }
            let unchanged = try await client.getPlan(
                path: .init(id: "ana"), headers: .init(ifNoneMatch: planAnswer.headers.eTag))
            #expect(try unchanged.notModified.headers.eTag == planAnswer.headers.eTag)

            let schedule = try await client.getSchedule(path: .init(id: "ana")).ok.body.json
            #expect(schedule.timeZone == "Europe/Berlin")
            #expect(schedule.nextCursor?.value == nil)
            #expect(schedule.items.map(\.fireAt) == schedule.items.map(\.fireAt).sorted())

            let explain = try await client.explain(path: .init(id: "ana"), query: .init(since: "2027-03-01", limit: 5))
                .ok.body.json
            #expect(explain.items.count == 5)
            #expect(explain.nextCursor?.value != nil)
            #expect(explain.since == TestServer.start.date.addingTimeInterval(-6 * 3_600))
            let next = try await client.explain(path: .init(id: "ana"), query: .init(cursor: explain.nextCursor?.value))
                .ok.body.json
            #expect(Set(next.items.map(\.id)).isDisjoint(with: explain.items.map(\.id)))

            let badEvent = try await client.postEvent(
                path: .init(id: "ana"),
                body: .json(.workoutCompleted(.init(_type: .workoutCompleted, durationMinutes: -1)))
            )
            #expect(try badEvent.unprocessableContent.body.applicationProblemJson.field == "durationMinutes")
        }
    }

    @Test func devicesTokensTheClockAndTheInbox() async throws {
        try await Self.withClient { client, url, _ in
            _ = try await client.putUser(path: .init(id: "ana"), body: .json(.init(timeZone: "Europe/Berlin"))).created
            let token = String(repeating: "AB", count: 32)
            let device = try await client.registerDevice(
                path: .init(id: "ana"), body: .json(.init(token: token, environment: .sandbox))
            ).created.body.json
            #expect(device.id == token.lowercased())
            #expect(device.platform == .ios)
            #expect(device.registeredAt == TestServer.start.date)
            #expect(try await client.listDevices(path: .init(id: "ana")).ok.body.json.items.map(\.id) == [device.id])

            let advanced = try await client.advanceClock(body: .json(.init(advanceSeconds: 86_400))).ok.body.json
            #expect(advanced.now == TestServer.start.date.addingTimeInterval(86_400))
            #expect(advanced.dispatched > 0)

            let minted = try await client.mintUserToken(path: .init(id: "ana"), body: .json(.init(ttlSeconds: 3_600)))
                .created.body.json
            #expect(minted.userID == "ana")
            #expect(minted.issuedAt == advanced.now)
            #expect(minted.expiresAt.timeIntervalSince(minted.issuedAt) == 3_600)

            // The app's own client: the user token opens ana's inbox, devices and plan.
            let app = Client(serverURL: url, credential: minted.token)
            _ = try await app.removeDevice(path: .init(id: "ana", token: device.id)).noContent
            #expect(try await app.listDevices(path: .init(id: "ana")).ok.body.json.items.isEmpty)

            let page = try await app.getInbox(path: .init(id: "ana"), query: .init(limit: 2)).ok.body.json
            #expect(page.items.count == 2)
            #expect(page.unread == page.badge)
            #expect(page.total >= 2)
            let item = try #require(page.items.first)
            let read = try await app.setInboxItemState(
                path: .init(id: "ana", item: item.id), body: .json(.init(state: .read))
            ).ok.body.json
            #expect(read.item.state == .read)
            #expect(read.unread == page.unread - (item.state == .read ? 0 : 1))
            let all = try await app.readAllInbox(path: .init(id: "ana")).ok.body.json
            #expect(all.unread == 0)
            #expect(all.badge == 0)

            // The user token opens nothing else.
            let refused = try await app.getUser(path: .init(id: "ana"))
            #expect(try refused.unauthorized.body.applicationProblemJson.status == 401)

            let revoked = try await client.revokeUserTokens(path: .init(id: "ana")).ok.body.json
            #expect(revoked.tokensIssuedBefore > minted.issuedAt)
            let afterRevoke = try await app.getInbox(path: .init(id: "ana"))
            #expect(try afterRevoke.unauthorized.body.applicationProblemJson.status == 401)
        }
    }
}
