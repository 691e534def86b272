import EngagementKit
import EngagementKitClient
import Foundation
import HTTPTypes
import LiveActivity
import Models
import Testing

/// `EngagedEventSender`, with the queue it serves: the bytes the queue keeps are the bytes sent,
/// a refused token is renewed once and the queue goes on, and every other answer reaches the
/// queue as its status.
@Suite("EngagementKitClient: events")
struct EventSenderTests {
    static let now = Instant(iso8601: "2027-03-01T06:00:00Z")!

    static func queue() -> EventQueue {
        EventQueue(store: InMemoryEventQueueStore(userID: "ana", installation: "phone-1"), seed: 7)
    }

    static let everyKindOfEvent: [AppEvent] = [
        .activity(.appOpened(sessionSeconds: 120)), .activity(.workoutCompleted(durationMinutes: 45)),
        .activity(.mealLogged(.lunch)), .activity(.moodLogged), .activity(.energyLogged), .activity(.coachChat),
        .activity(.checkInCompleted),
        .notificationResponse(requestID: "mealReminder.2027-03-01.lunch", actionIdentifier: "LOG_MEAL"),
        .notificationPermission(allowed: false),
        .liveActivity(.workoutStarted(workoutType: "run")),
        .liveActivity(
            .workoutUpdated(.init(elapsedSeconds: 600, heartRate: 151, activeCalories: 88, currentExercise: "Tempo"))),
        .liveActivity(.workoutEnded(.init(elapsedSeconds: 1_800))),
        .liveActivity(.mealStarted(.init(meal: .dinner, targetCalories: 700, targetProteinGrams: 40))),
        .liveActivity(.mealUpdated(.init(itemsLogged: 2, totalCalories: 420, lastFoodItem: "Rice/beans"))),
        .liveActivity(.mealEnded),
        .liveActivity(.pushTokenReceived(activityID: "workout-1", token: "ab12")),
    ]

    /// The server compares a key's bodies byte for byte: what the client writes from the queued
    /// body is that body.
    @Test(arguments: everyKindOfEvent)
    func theBytesSentAreTheBytesTheQueueKeeps(_ event: AppEvent) async throws {
        let server = FakeEngaged()
        let answer = try await EngagedEventSender(connection(to: server)).send(
            event.body(at: Self.now), idempotencyKey: "phone-1-1", userID: "ana")
        #expect(answer.status == 202)
        let sent = try #require(server.requests.first)
        #expect(String(decoding: sent.body, as: UTF8.self) == String(decoding: event.body(at: Self.now), as: UTF8.self))
        #expect(sent.request.method == .post && sent.request.path == "/v1/users/ana/events")
        #expect(sent.idempotencyKey == "phone-1-1" && sent.bearer == "good")
    }

    @Test func aFlushSendsEveryEventInOrderWithItsKeyAndReadsTheAnswers() async throws {
        let server = FakeEngaged(script: [
            "postEvent": [
                .answer(
                    .accepted,
                    body:
                        #"{"effects":2,"liveActivities":[{"activityID":"workout-1","event":"start"}],"planVersion":9}"#
                )
            ]
        ])
        let queue = Self.queue()
        let started = try await queue.enqueue(.liveActivity(.workoutStarted(workoutType: "run")), at: Self.now)
        try await queue.enqueue(.activity(.mealLogged(.lunch)), at: Self.now)
        let report = try await queue.flush(via: EngagedEventSender(connection(to: server)), at: Self.now)
        #expect(report.sent == 2 && report.dropped.isEmpty && !report.needsToken)
        #expect(report.planVersion == FakeEngaged.planVersion)
        #expect(
            report.liveActivities == [started.sequence: [LiveActivityChange(activityID: "workout-1", event: .start)]])
        #expect(server.requests.map(\.idempotencyKey) == ["phone-1-1", "phone-1-2"])
        #expect(try await queue.count() == 0)
    }

    @Test func anExpiredTokenIsRenewedOnceAndTheQueueGoesOn() async throws {
        let server = FakeEngaged(validTokens: ["fresh"])
        let link = connection(to: server, token: "expired", renewed: "fresh")
        let queue = Self.queue()
        for _ in 0..<3 { try await queue.enqueue(.activity(.moodLogged), at: Self.now) }
        let report = try await queue.flush(via: EngagedEventSender(link), at: Self.now)
        #expect(report.sent == 3 && !report.needsToken)
        #expect(server.requests.map(\.bearer) == ["expired", "fresh", "fresh", "fresh"])
        #expect(server.requests.prefix(2).map(\.idempotencyKey) == ["phone-1-1", "phone-1-1"])
        #expect(await link.credential.renewals == 1)
        #expect(await link.credential.token == "fresh")
    }

    @Test func withoutANewTokenTheQueueKeepsItsEventsAndSaysSoUntilResumed() async throws {
        let server = FakeEngaged(validTokens: ["fresh"])
        let link = connection(to: server, token: "expired", renewed: nil)
        let queue = Self.queue()
        try await queue.enqueue(.activity(.moodLogged), at: Self.now)
        try await queue.enqueue(.activity(.coachChat), at: Self.now)
        let refused = try await queue.flush(via: EngagedEventSender(link), at: Self.now)
        #expect(refused.needsToken && refused.sent == 0 && refused.dropped.isEmpty)
        #expect(try await queue.count() == 2)
        #expect(server.requests.count == 1)

        await link.credential.replace(with: "fresh")
        await queue.resume()
        let resumed = try await queue.flush(via: EngagedEventSender(link), at: Self.now)
        #expect(resumed.sent == 2 && !resumed.needsToken)
        #expect(server.requests.map(\.idempotencyKey) == ["phone-1-1", "phone-1-1", "phone-1-2"])
    }

    /// A 403 the new token meets too (an event this user may not send): one renewal, one repeat,
    /// then the queue stops rather than asking for tokens without end.
    @Test func aRefusalTheNewTokenMeetsTooStopsTheQueueAfterOneRepeat() async throws {
        let server = FakeEngaged(
            validTokens: ["good", "fresh"], script: ["postEvent": [.problem(.forbidden), .problem(.forbidden)]])
        let link = connection(to: server, renewed: "fresh")
        let queue = Self.queue()
        try await queue.enqueue(.activity(.moodLogged), at: Self.now)
        let report = try await queue.flush(via: EngagedEventSender(link), at: Self.now)
        #expect(report.needsToken && report.sent == 0)
        #expect(server.requests.map(\.bearer) == ["good", "fresh"])
        #expect(await link.credential.renewals == 1)
        #expect(try await queue.count() == 1)
    }

    /// Busy, failing or behind a proxy whose error page is HTML: the event waits, never before
    /// `Retry-After`.
    @Test(arguments: [
        (FakeEngaged.Scripted.problem(.tooManyRequests, headers: [.retryAfter: "120"]), Int64(120)),
        (.problem(.internalServerError), 0),
        (
            .answer(
                .serviceUnavailable, body: "<html>down</html>", contentType: "text/html", headers: [.retryAfter: "60"]),
            60
        ),
        (.answer(.badGateway, body: "<html>bad gateway</html>", contentType: "text/html"), 0),
        (.noAnswer, 0),
    ])
    func anAnswerToRetryLaterKeepsTheEvent(_ scripted: FakeEngaged.Scripted, retryAfterSeconds: Int64) async throws {
        let server = FakeEngaged(script: ["postEvent": [scripted]])
        let queue = Self.queue()
        try await queue.enqueue(.activity(.moodLogged), at: Self.now)
        let report = try await queue.flush(via: EngagedEventSender(connection(to: server)), at: Self.now)
        #expect(report.sent == 0 && report.dropped.isEmpty && !report.needsToken)
        let next = try #require(report.nextAttemptAt)
        #expect(next > Self.now && next >= Self.now + retryAfterSeconds)
        #expect(try await queue.count() == 1)
    }

    @Test func aRetryAfterReachesTheQueueAsTheSendersAnswer() async throws {
        let server = FakeEngaged(script: ["postEvent": [.problem(.tooManyRequests, headers: [.retryAfter: "30"])]])
        let answer = try await EngagedEventSender(connection(to: server)).send(
            AppEvent.activity(.moodLogged).body(at: Self.now), idempotencyKey: "k", userID: "ana")
        #expect(answer == EventAnswer(status: 429, retryAfterSeconds: 30))
    }

    /// The server applied the event; an answer it cannot read still removes it, with nothing
    /// else learnt.
    @Test(arguments: [#"{"effects":"#, "not json", #"{"effects":1}"#])
    func anAcceptedAnswerWithAnUnreadableBodyStillCountsAsSent(_ body: String) async throws {
        let server = FakeEngaged(script: ["postEvent": [.answer(.accepted, body: body)]])
        let answer = try await EngagedEventSender(connection(to: server)).send(
            AppEvent.activity(.moodLogged).body(at: Self.now), idempotencyKey: "k", userID: "ana")
        #expect(answer == EventAnswer(status: 202))
    }

    @Test func anUnreadableProblemBodyKeepsItsStatus() async throws {
        let server = FakeEngaged(script: [
            "postEvent": [.answer(.unprocessableContent, body: "{", contentType: "application/problem+json")]
        ])
        let queue = Self.queue()
        let event = try await queue.enqueue(.activity(.moodLogged), at: Self.now)
        let report = try await queue.flush(via: EngagedEventSender(connection(to: server)), at: Self.now)
        #expect(report.dropped.map(\.sequence) == [event.sequence] && report.dropped.map(\.status) == [422])
    }

    /// A body the document does not read never leaves the phone: 400, as the server answers
    /// it, so the queue drops it instead of holding up the events behind it.
    @Test(arguments: [#"{"type":"teleported","at":"2027-03-01T06:00:00Z"}"#, #"{"type":"moodLogged","extra":1}"#, "[]"])
    func aBodyTheDocumentDoesNotReadIsAnswered400WithoutARequest(_ body: String) async throws {
        let server = FakeEngaged()
        let answer = try await EngagedEventSender(connection(to: server)).send(
            Data(body.utf8), idempotencyKey: "k", userID: "ana")
        #expect(answer.status == 400)
        #expect(server.requests.isEmpty)
    }
}
