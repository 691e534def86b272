import Delivery
import EngagementKit
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LiveActivity
import Logging
import Models
import Runtime
import Storage
import Synchronization
import Testing

@testable import engaged

/// End to end: a live `engaged` on a manual clock and a phone running EngagementKit, over days.
/// A user is created; the phone registers and pulls; reminders fire at their planned times; an
/// action becomes an event and a new plan; two days offline, the plan still fires, a meal logged
/// offline withdraws its reminder at once (it never fires), and the queued events are applied
/// once, at their instants, when the phone is back; a preference the backend writes reaches the
/// phone through the sync push, and the disabled kind stops within one sync.
@Suite("engaged and EngagementKit: a phone lives days with the server")
struct PhoneEndToEndTests {
    /// A test server whose due rows go through the real APNs channel into `pushes`.
    static func serverSendingToAPNs() async throws -> (TestServer, KeptPushes) {
        var server = try await TestServer()
        let pushes = KeptPushes(clock: server.clock)
        var logger = Logger(label: "end-to-end")
        logger.logLevel = .critical
        server.environment.transport = PushChannelTransport(
            runtime: server.environment.runtime, push: pushes, topic: "com.example.fitness",
            metrics: ServerMetrics(), logger: logger)
        return (server, pushes)
    }

    @Test func aPhoneFollowsTheServersPlanThroughDaysOfUseAndTwoOffline() async throws {
        let (server, pushes) = try await Self.serverSendingToAPNs()
        let clock = server.clock
        let store = server.store
        try await server.run(.live) { client in
            #expect(try await client.send(.put, "/v1/users/ana", berlin).status == .created)
            let link = PhoneLink(client: client, token: try await userToken("ana"), userID: "ana")
            var phone = KitPhone(link: link)
            _ = phone.center.requestAuthorization(options: [.alert, .sound, .badge], userAllows: true)

            // First launch: registered, permission told, the whole plan held.
            try await phone.foreground(at: clock.now())
            #expect(try store.devices(userID: "ana").map(\.token) == [DeviceReporter.hex(phone.pushToken)])
            #expect(!phone.pendingIDs.isEmpty)
            #expect(phone.pendingIDs == (try await KitPhone.serverPlan(client)))

            var pushesSeen = 0
            var syncsReceived = 0
            /// Moves the server's clock on by `hours`, an hour at a time, firing what falls due on
            /// the phone and handing it the server's background pushes while it is online (APNs
            /// keeps only the newest for a phone that is not: it arrives when the phone is back);
            /// returns what fired.
            func live(hours: Int, _ phone: inout KitPhone) async throws -> [DeliveredNotification] {
                var fired: [DeliveredNotification] = []
                for _ in 0..<hours {
                    let advanced = try await client.send(.post, "/v1/admin/clock", #"{"advanceSeconds": 3600}"#)
                    #expect(advanced.status == .ok)
                    fired += phone.fire(through: clock.now())
                    guard link.online.withLock({ $0 }) else { continue }
                    let sent = pushes.requests.withLock { Array($0.dropFirst(pushesSeen)) }.map(\.request)
                    pushesSeen += sent.count
                    let own = sent.filter { $0.deviceToken == DeviceReporter.hex(phone.pushToken) }
                    for push in own.filter({ $0.pushType == .background }) {
                        try await phone.receive(push, at: clock.now())
                        syncsReceived += 1
                    }
                }
                return fired
            }

            // Day one: the meal reminders fire at their planned times. The user answers the
            // first one: the response and the meal logged are events, and a new plan follows.
            let dayOne = try await live(hours: 8, &phone)
            let meal = try #require(dayOne.first { $0.request.content.kind == .mealReminder }, "no meal reminder fired")
            let response = try #require(
                NotificationResponse(
                    requestID: meal.request.identifier.rawValue,
                    actionIdentifier: NotificationActionID.logMeal.rawValue,
                    link: meal.request.content.deepLink.description))
            guard case .mealLog(let loggedMeal?)? = response.deepLink else {
                Issue.record("the meal reminder's action opens \(String(describing: response.deepLink))")
                return
            }
            let versionBefore = try #require(phone.sync.state.version)
            try await phone.queue.enqueue(response.event, at: clock.now())
            try await phone.queue.enqueue(.activity(.mealLogged(loggedMeal)), at: clock.now())
            try await phone.foreground(at: clock.now())
            #expect(try #require(phone.sync.state.version) > versionBefore)
            #expect(phone.pendingIDs == (try await KitPhone.serverPlan(client)))

            // Two days offline: the plan it holds fires on; what the user does waits in the queue.
            link.online.withLock { $0 = false }
            let heldToPlanOnline = phone.heldToPlan
            var offlineFired: [DeliveredNotification] = []
            var enqueued: [Instant] = []
            var mealsLoggedOffline: [(id: Models.RequestID, at: Instant)] = []
            for _ in 0..<2 {
                offlineFired += try await live(hours: 12, &phone)
                enqueued.append(clock.now())
                try await phone.queue.enqueue(.activity(.moodLogged), at: clock.now())
                let attempt = try await phone.queue.flush(via: link, at: clock.now())
                #expect(attempt.sent == 0 && attempt.nextAttemptAt != nil)
                // A meal logged offline before its reminder: the kit withdraws the reminder at
                // once, though the server cannot hear of the meal yet.
                let now = clock.now()
                if let reminder = phone.center.pendingNotificationRequests.first(where: {
                    $0.request.content.kind == .mealReminder && $0.nextFire > now
                        && Self.berlinZone.localDate(at: $0.nextFire) == Self.berlinZone.localDate(at: now)
                }), let meal = OccurrenceID(requestID: reminder.request.identifier)?.meal {
                    try await phone.queue.enqueue(.activity(.mealLogged(meal)), at: now)
                    let withdrawn = phone.sync.withdraw(
                        after: WithdrawingEvent(.mealLogged(meal), at: now), from: &phone.center)
                    #expect(withdrawn == [reminder.request.identifier])
                    mealsLoggedOffline.append((reminder.request.identifier, now))
                }
                offlineFired += try await live(hours: 12, &phone)
            }
            #expect(!offlineFired.isEmpty && phone.heldToPlan > heldToPlanOnline)
            #expect(!mealsLoggedOffline.isEmpty, "no meal reminder was pending offline")
            for logged in mealsLoggedOffline {
                #expect(!offlineFired.contains { $0.request.identifier == logged.id }, "\(logged.id) fired")
            }
            // Back online: the newest push held for it arrives; each queued event is applied
            // once, at the instant it happened.
            link.online.withLock { $0 = true }
            let sentMeanwhile = pushes.requests.withLock { Array($0.dropFirst(pushesSeen)) }.map(\.request)
            pushesSeen += sentMeanwhile.count
            let held = try #require(
                sentMeanwhile.last {
                    $0.pushType == .background && $0.deviceToken == DeviceReporter.hex(phone.pushToken)
                }, "no sync was sent in two days")
            try await phone.receive(held, at: clock.now())
            #expect(SyncSignal(payload: Data(held.payload)) != nil)
            let moodsBefore = try Self.moods(store)
            try await phone.foreground(at: clock.now())
            let left = try await phone.queue.count()
            #expect(left == 0)
            #expect(try Self.moods(store) == moodsBefore + enqueued)
            // Each meal logged offline is applied once, at the instant it happened.
            let meals = try store.activityEvents(userID: "ana", since: TestServer.start - 86_400).filter {
                if case .mealLogged = $0.kind { true } else { false }
            }.map(\.at)
            for logged in mealsLoggedOffline { #expect(meals.filter { $0 == logged.at }.count == 1) }
            #expect(phone.pendingIDs == (try await KitPhone.serverPlan(client)))

            // The backend disables meal reminders: the sync push carries the new version, the
            // phone pulls once, and no meal reminder is left on it or fires a day later.
            let (pullsBefore, syncsBefore) = (phone.pulls, syncsReceived)
            let put = try await client.send(
                .put, "/v1/users/ana",
                #"{"timeZone": "Europe/Berlin", "displayName": "Ana Test", "preferences": {"settings": {"mealReminder": "disabled"}}}"#
            )
            #expect(put.status == .ok)
            _ = try await live(hours: 1, &phone)
            #expect(syncsReceived > syncsBefore && phone.pulls == pullsBefore + 1)
            // The pulls named the plan held (`?since=`): the server answered with what changed,
            // and the phone still holds the server's plan.
            #expect(phone.deltas > 0)
            #expect(!phone.pendingIDs.contains { $0.rawValue.hasPrefix("mealReminder.") })
            #expect(phone.pendingIDs == (try await KitPhone.serverPlan(client)))
            let unread = try await client.send(.get, "/v1/users/ana/inbox").json["unread"] as? Int
            #expect(phone.center.badgeCount == unread)
            let dayAfter = try await live(hours: 24, &phone)
            #expect(!dayAfter.isEmpty)
            #expect(!dayAfter.contains { $0.request.content.kind == .mealReminder })
            // Every sync kept the badge on the server's count, through days of them.
            #expect(syncsReceived >= 4)
            let unreadAtEnd = try await client.send(.get, "/v1/users/ana/inbox").json["unread"] as? Int
            #expect(phone.center.badgeCount == unreadAtEnd)
        }
    }

    @Test func everyEventTheKitSendsIsOneTheServerTakesFromTheApp() async throws {
        let server = try await TestServer()
        try await server.run { client in
            #expect(try await client.send(.put, "/v1/users/ana", berlin).status == .created)
            let token = try await userToken("ana")
            let activities: [ActivityKind] =
                [
                    .appOpened(sessionSeconds: 45), .workoutCompleted(durationMinutes: 30), .moodLogged, .energyLogged,
                    .coachChat, .checkInCompleted,
                ] + MealType.allCases.map { .mealLogged($0) }
            let events: [AppEvent] =
                activities.map { .activity($0) } + [
                    .notificationResponse(requestID: "mealReminder.2027-03-01.lunch", actionIdentifier: "LOG_MEAL"),
                    .notificationResponse(
                        requestID: "mealReminder.2027-03-01.dinner", actionIdentifier: "SOMETHING_NEW"),
                    .notificationPermission(allowed: false), .notificationPermission(allowed: true),
                ]
            for (index, event) in events.enumerated() {
                let body = String(decoding: event.body(at: TestServer.start - Int64(index)), as: UTF8.self)
                let response = try await client.send(
                    .post, "/v1/users/ana/events", body, headers: headers(key: token, idempotencyKey: "kit-\(index)"))
                #expect(response.status == .accepted, "\(body): \(response.text)")
            }
            #expect(
                try server.store.activityEvents(userID: "ana", since: TestServer.start - 86_400).count
                    == activities.count)
        }
    }

    @Test func aLiveActivityTheAnswerNamesIsUpdatedThroughTheTokenTheAppReports() async throws {
        let (server, pushes) = try await Self.serverSendingToAPNs()
        try await server.run { client in
            #expect(try await client.send(.put, "/v1/users/ana", berlin).status == .created)
            let link = PhoneLink(client: client, token: try await userToken("ana"), userID: "ana")
            let queue = EventQueue(store: InMemoryEventQueueStore(userID: "ana", installation: "ana-phone"), seed: 3)
            let now = TestServer.start
            let start = try await queue.enqueue(.liveActivity(.workoutStarted(workoutType: "Run")), at: now)
            let started = try await queue.flush(via: link, at: now)
            let change = try #require(started.liveActivities[start.sequence]?.first)
            #expect(change.event == .start)
            // The app starts the activity; ActivityKit hands it a push token, which it reports.
            let activityToken = String(repeating: "c3", count: 32)
            let state = WorkoutActivityAttributes.ContentState(
                elapsedSeconds: 600, heartRate: 150, activeCalories: 120, currentExercise: "Intervals")
            let events: [AppEvent] = [
                .liveActivity(.pushTokenReceived(activityID: change.activityID, token: activityToken)),
                .liveActivity(.workoutUpdated(state)),
                .liveActivity(.workoutEnded(state)),
                .liveActivity(
                    .mealStarted(MealActivityAttributes(meal: .dinner, targetCalories: 700, targetProteinGrams: 40))),
                .liveActivity(
                    .mealUpdated(
                        MealActivityAttributes.ContentState(
                            itemsLogged: 1, totalCalories: 300, totalProteinGrams: 12, lastFoodItem: "Soup"))),
                .liveActivity(.mealEnded),
            ]
            for event in events { try await queue.enqueue(event, at: now) }
            let report = try await queue.flush(via: link, at: now)
            #expect(report.sent == events.count && report.dropped.isEmpty)
            let changes = report.liveActivities.sorted { $0.key < $1.key }.flatMap(\.value).filter {
                $0.activityID == change.activityID
            }
            #expect(changes.map(\.event) == [.update, .end])
            // The update and the end went to the token the app reported.
            _ = try await client.send(.post, "/v1/admin/clock", #"{"advanceSeconds": 60}"#)
            let toActivity = pushes.requests.withLock { $0 }.map(\.request).filter {
                $0.pushType == .liveactivity && $0.deviceToken == activityToken
            }
            let pushedEvents = toActivity.compactMap { push in
                (try? JSONSerialization.jsonObject(with: Data(push.payload)) as? [String: Any])
                    .flatMap { $0["aps"] as? [String: Any] }?["event"] as? String
            }
            #expect(pushedEvents == ["update", "end"])
        }
    }

    /// The instants of ana's moods the server recorded.
    static let berlinZone = ZoneRules(identifier: "Europe/Berlin")!

    static func moods(_ store: SQLiteEngagementStore) throws -> [Instant] {
        try store.activityEvents(userID: "ana", since: TestServer.start - 86_400).filter {
            $0.kind == .moodLogged
        }.map(\.at)
    }
}
