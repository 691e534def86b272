import Foundation
import LiveActivity
import Models
import Synchronization
import Testing

@testable import EngagementKit

/// A server as the queue sees it: answers scripted per attempt, every attempt recorded.
final class ScriptedSender: EventSender {
    struct Attempt: Hashable {
        var body: Data
        var key: String
    }

    /// Each attempt takes the next answer; nil throws (no answer: offline). Past the script: 202.
    let script: Mutex<[EventAnswer?]>
    let attempts = Mutex<[Attempt]>([])

    init(_ script: [EventAnswer?] = []) { self.script = Mutex(script) }

    func send(_ body: Data, idempotencyKey: String, userID: UserID) async throws -> EventAnswer {
        struct Offline: Error {}
        attempts.withLock { $0.append(Attempt(body: body, key: idempotencyKey)) }
        let next: EventAnswer?? = script.withLock { $0.isEmpty ? .none : .some($0.removeFirst()) }
        switch next {
        case .none: return EventAnswer(status: 202)
        case .some(.none): throw Offline()
        case .some(.some(let answer)): return answer
        }
    }
}

/// A sender that holds its first answer until released, so a test can flush while it waits.
final class SlowSender: EventSender {
    let sends = Mutex(0)
    private let gate = Mutex<(started: Bool, released: Bool)>((false, false))

    func send(_ body: Data, idempotencyKey: String, userID: UserID) async throws -> EventAnswer {
        sends.withLock { $0 += 1 }
        gate.withLock { $0.started = true }
        while !gate.withLock({ $0.released }) { await Task.yield() }
        return EventAnswer(status: 202)
    }

    func started() async {
        while !gate.withLock({ $0.started }) { await Task.yield() }
    }

    func release() { gate.withLock { $0.released = true } }
}

@Suite("EngagementKit: the event queue")
struct EventQueueTests {
    static let now = Instant(iso8601: "2027-03-01T06:00:00Z")!

    static func bodies(_ sender: ScriptedSender) -> [String] {
        sender.attempts.withLock { $0.map { String(decoding: $0.body, as: UTF8.self) } }
    }

    @Test func bodiesAreTheServersEventsWithTheirInstantAndStableBytes() {
        let at = Self.now
        #expect(
            String(decoding: AppEvent.activity(.mealLogged(.lunch)).body(at: at), as: UTF8.self)
                == #"{"at":"2027-03-01T06:00:00Z","meal":"lunch","type":"mealLogged"}"#)
        #expect(
            String(
                decoding: AppEvent.notificationResponse(requestID: "r", actionIdentifier: "SNOOZE").body(at: at),
                as: UTF8.self)
                == #"{"actionIdentifier":"SNOOZE","requestID":"r","type":"notificationResponse"}"#)
        #expect(
            String(decoding: AppEvent.notificationPermission(allowed: false).body(at: at), as: UTF8.self)
                == #"{"allowed":false,"type":"notificationPermission"}"#)
        #expect(
            String(
                decoding: AppEvent.liveActivity(.pushTokenReceived(activityID: "workout-1", token: "ab")).body(at: at),
                as: UTF8.self) == #"{"activityID":"workout-1","token":"ab","type":"liveActivityToken"}"#)
        #expect(
            String(decoding: AppEvent.liveActivity(.mealEnded).body(at: at), as: UTF8.self) == #"{"type":"mealEnded"}"#)
        #expect(
            AppEvent.activity(.appOpened(sessionSeconds: 60)).body(at: at)
                == AppEvent.activity(.appOpened(sessionSeconds: 60)).body(at: at))
    }

    @Test func eventsGoInOrderEachWithItsOwnKeyAndTheNewestPlanVersionIsReported() async throws {
        let queue = EventQueue(store: InMemoryEventQueueStore(userID: "ana", installation: "phone-1"), seed: 1)
        try await queue.enqueue(.activity(.appOpened(sessionSeconds: 30)), at: Self.now)
        try await queue.enqueue(.activity(.mealLogged(.lunch)), at: Self.now + 10)
        try await queue.enqueue(.activity(.moodLogged), at: Self.now + 20)
        let sender = ScriptedSender([
            EventAnswer(status: 202, planVersion: 4), EventAnswer(status: 202, planVersion: 6),
            EventAnswer(status: 202, planVersion: 6),
        ])
        let report = try await queue.flush(via: sender, at: Self.now + 30)
        #expect(report.sent == 3 && report.planVersion == 6 && report.nextAttemptAt == nil)
        #expect(sender.attempts.withLock { $0.map(\.key) } == ["phone-1-1", "phone-1-2", "phone-1-3"])
        #expect(Self.bodies(sender).map { $0.contains("appOpened") } == [true, false, false])
        #expect(try await queue.count() == 0)
    }

    @Test func anAnswerNamesTheLiveActivitiesItsEventStartedByTheEventsSequence() async throws {
        let started = Data(
            #"{"effects":3,"planVersion":2,"liveActivities":[{"activityID":"workout-1","event":"start"}]}"#.utf8)
        let answer = EventAnswer(status: 202, body: started)
        #expect(
            answer.planVersion == 2
                && answer.liveActivities == [LiveActivityChange(activityID: "workout-1", event: .start)])
        // Bodies without them: a problem, an older server's answer, not JSON.
        #expect(EventAnswer(status: 422, body: Data(#"{"liveActivities":[]}"#.utf8)).liveActivities.isEmpty)
        #expect(EventAnswer(status: 202, body: Data(#"{"effects":0,"planVersion":1}"#.utf8)).planVersion == 1)
        #expect(EventAnswer(status: 202, body: Data("not json".utf8)) == EventAnswer(status: 202))

        let queue = EventQueue(store: InMemoryEventQueueStore(userID: "ana", installation: "phone-1"), seed: 1)
        try await queue.enqueue(.activity(.moodLogged), at: Self.now)
        let workout = try await queue.enqueue(.liveActivity(.workoutStarted(workoutType: "Run")), at: Self.now)
        let report = try await queue.flush(via: ScriptedSender([EventAnswer(status: 202), answer]), at: Self.now)
        #expect(report.liveActivities == [workout.sequence: answer.liveActivities])
    }

    @Test func offlineTheHeadWaitsWithItsKeyAndTheRestWaitBehindIt() async throws {
        let queue = EventQueue(store: InMemoryEventQueueStore(userID: "ana", installation: "p"), seed: 2)
        try await queue.enqueue(.activity(.mealLogged(.breakfast)), at: Self.now)
        try await queue.enqueue(.activity(.mealLogged(.lunch)), at: Self.now + 1)
        let sender = ScriptedSender([nil, EventAnswer(status: 503, retryAfterSeconds: 120), nil])
        var at = Self.now + 5
        var report = try await queue.flush(via: sender, at: at)
        #expect(report.sent == 0)
        let first = try #require(report.nextAttemptAt)
        #expect(first > at && first <= at + 2)
        // Not due yet: nothing is sent.
        report = try await queue.flush(via: sender, at: at)
        #expect(sender.attempts.withLock { $0.count } == 1 && report.nextAttemptAt == first)
        at = first
        report = try await queue.flush(via: sender, at: at)
        #expect(try #require(report.nextAttemptAt) >= at + 120)  // Retry-After is a floor
        at = try #require(report.nextAttemptAt)
        report = try await queue.flush(via: sender, at: at)
        let backedOff = try #require(report.nextAttemptAt) - at
        #expect(backedOff >= 4 && backedOff <= 8)  // the third failure: 8 s, jittered into 4...8
        at = try #require(report.nextAttemptAt)
        report = try await queue.flush(via: sender, at: at)
        #expect(report.sent == 2)
        // Every attempt of the first event used its one key; the second went after it.
        #expect(sender.attempts.withLock { $0.map(\.key) } == ["p-1", "p-1", "p-1", "p-1", "p-2"])
    }

    @Test func theBackOffDoublesUpToItsCapWithJitter() {
        let delays = EventQueue.RetryDelays(firstSeconds: 2, maximumSeconds: 900)
        #expect(delays.seconds(after: 1, unit: 1) == 2 && delays.seconds(after: 1, unit: 0) == 1)
        #expect(delays.seconds(after: 5, unit: 1) == 32)
        #expect(delays.seconds(after: 40, unit: 1) == 900 && delays.seconds(after: 40, unit: 0) == 450)
    }

    @Test(arguments: [400, 413, 415, 422])
    func anEventTheServerRefusesForGoodIsDroppedAndTheRestGoOn(status: Int) async throws {
        let queue = EventQueue(store: InMemoryEventQueueStore(userID: "ana", installation: "p"), seed: 3)
        try await queue.enqueue(.activity(.moodLogged), at: Self.now)
        try await queue.enqueue(.activity(.energyLogged), at: Self.now)
        let report = try await queue.flush(via: ScriptedSender([EventAnswer(status: status)]), at: Self.now)
        #expect(report.dropped == [DroppedEvent(sequence: 1, status: status)])
        #expect(report.sent == 1)
        #expect(try await queue.count() == 0)
    }

    @Test(arguments: [401, 403])
    func aRefusedTokenStopsSendingUntilResumedAndCountsNoAttempt(status: Int) async throws {
        let store = InMemoryEventQueueStore(userID: "ana", installation: "p")
        let queue = EventQueue(store: store, seed: 4)
        try await queue.enqueue(.activity(.moodLogged), at: Self.now)
        let sender = ScriptedSender([EventAnswer(status: status)])
        #expect(try await queue.flush(via: sender, at: Self.now).needsToken)
        #expect(try await queue.flush(via: sender, at: Self.now + 60).sent == 0)
        #expect(sender.attempts.withLock { $0.count } == 1)
        #expect(try store.oldest(limit: 1).first?.attempts == 0)
        await queue.resume()
        #expect(try await queue.flush(via: sender, at: Self.now + 60).sent == 1)
    }

    @Test func theSQLiteQueueKeepsEveryEventAcrossAKillAndNeverReusesASequence() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("queue-\(UUID().uuidString).sqlite")
            .path
        defer { try? FileManager.default.removeItem(atPath: path) }
        do {
            let queue = EventQueue(
                store: try SQLiteEventQueueStore(path: path, userID: "ana", newInstallation: "p"), seed: 5)
            for meal in MealType.allCases { try await queue.enqueue(.activity(.mealLogged(meal)), at: Self.now) }
            // The first is sent; the answer to the second is lost.
            _ = try await queue.flush(via: ScriptedSender([EventAnswer(status: 202), nil]), at: Self.now)
        }
        // The app was killed; a new process opens the same file.
        // The installation id is the file's: a new one offered at this open is not taken.
        let store = try SQLiteEventQueueStore(path: path, userID: "ana", newInstallation: "q")
        #expect(store.installation == "p")
        #expect(try store.count() == 3)
        let head = try #require(try store.oldest(limit: 1).first)
        #expect(head.sequence == 2 && head.attempts == 1)
        let queue = EventQueue(store: store, seed: 5)
        let sender = ScriptedSender()
        #expect(try await queue.flush(via: sender, at: head.nextAttemptAt).sent == 3)
        #expect(sender.attempts.withLock { $0.map(\.key) } == ["p-2", "p-3", "p-4"])
        let next = try await queue.enqueue(.activity(.moodLogged), at: Self.now + 60)
        #expect(next.sequence == 5)
        // One file per user: another user's queue is not this one.
        #expect(throws: QueueFileError.self) {
            try SQLiteEventQueueStore(path: path, userID: "bob", newInstallation: "r")
        }
    }

    @Test func aSecondFlushWhileOneIsSendingReturnsEmptyAndTheHeadGoesOnce() async throws {
        let queue = EventQueue(store: InMemoryEventQueueStore(userID: "ana", installation: "p"), seed: 6)
        try await queue.enqueue(.activity(.moodLogged), at: Self.now)
        let sender = SlowSender()
        async let first = queue.flush(via: sender, at: Self.now)
        await sender.started()
        let second = try await queue.flush(via: sender, at: Self.now)
        sender.release()
        #expect(second == FlushReport())
        #expect(try await first.sent == 1)
        #expect(sender.sends.withLock { $0 } == 1)
    }

    @Test func aRetryAfterIsTakenUpToADay() async throws {
        let queue = EventQueue(store: InMemoryEventQueueStore(userID: "ana", installation: "p"), seed: 7)
        try await queue.enqueue(.activity(.moodLogged), at: Self.now)
        let report = try await queue.flush(
            via: ScriptedSender([EventAnswer(status: 429, retryAfterSeconds: Int64.max)]), at: Self.now)
        #expect(report.nextAttemptAt == Self.now + 86_400)
    }

    @Test func aResponseIsTheServersEventAndTheScreenToOpen() throws {
        let lunch = try #require(
            NotificationResponse(
                requestID: "mealReminder.2027-03-01.lunch", actionIdentifier: "LOG_MEAL",
                link: "engage://meal/log/lunch"))
        #expect(lunch.deepLink == .mealLog(.lunch))
        #expect(
            lunch.event
                == .notificationResponse(requestID: "mealReminder.2027-03-01.lunch", actionIdentifier: "LOG_MEAL"))
        let workout = "workoutReminder.2027-03-01.1830"
        let tap = NotificationResponse(
            requestID: workout, actionIdentifier: NotificationActionID.defaultTap.rawValue, link: nil)
        #expect(tap?.deepLink == .workoutStart)
        #expect(NotificationResponse(requestID: workout, actionIdentifier: "SNOOZE_30", link: nil)?.deepLink == nil)
        let unknown = try #require(
            NotificationResponse(requestID: workout, actionIdentifier: "FROM_THE_FUTURE", link: nil))
        #expect(unknown.deepLink == nil)
        #expect(unknown.event == .notificationResponse(requestID: workout, actionIdentifier: "FROM_THE_FUTURE"))
        // The app's own notifications are not the engine's: nothing to send.
        #expect(NotificationResponse(requestID: "my-app-promo", actionIdentifier: "OPEN", link: nil) == nil)
        #expect(NotificationResponse(requestID: "", actionIdentifier: "OPEN", link: nil) == nil)
    }
}
