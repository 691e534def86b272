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

/// A phone's network link to the server: EngagementKit's senders over the test client, with the
/// user's token. Offline, every call throws before reaching the server.
final class PhoneLink: EventSender, DeviceReportSender {
    struct Offline: Error {}

    let client: any TestClientProtocol
    let token: String
    let userID: String
    let online = Mutex(true)

    init(client: any TestClientProtocol, token: String, userID: String) {
        self.client = client
        self.token = token
        self.userID = userID
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

    func send(_ body: Data, idempotencyKey: String, userID: String) async throws -> EventAnswer {
        let response = try await request(
            .post, "/v1/users/\(userID)/events", String(decoding: body, as: UTF8.self), idempotencyKey: idempotencyKey)
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
        case .permission: return 400  // the queue's, never sent here
        }
        return Int(response.status.code)
    }

    func pull(ifNoneMatch: String?) async throws -> PlanAnswer {
        let response = try await request(.get, "/v1/users/\(userID)/plan", ifNoneMatch: ifNoneMatch)
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
    var planned: [String: Instant] = [:]
    var pulls = 0
    var heldToPlan = 0

    init(link: PhoneLink) { self.link = link }

    var pendingIDs: Set<String> { Set(center.pendingNotificationRequests.map(\.request.identifier)) }

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

    /// Pulls the plan and mirrors it; afterwards the phone holds exactly the server's plan.
    mutating func pull(at now: Instant) async throws {
        let answer = try await link.pull(ifNoneMatch: sync.ifNoneMatch)
        pulls += 1
        if case .plan(let plan) = answer {
            planned = Dictionary(plan.requests.map { ($0.request.identifier, $0.nextFireAt) }) { first, _ in first }
        }
        guard case .refusedOlder = sync.apply(answer, to: &center, at: now) else { return }
        Issue.record("an older plan was offered at \(now.iso8601)")
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

/// End to end: a live `engaged` on a manual clock and a phone running EngagementKit, over days.
/// A user is created; the phone registers and pulls; reminders fire at their planned times; an
/// action becomes an event and a new plan; two days offline, the plan still fires and the queued
/// events are applied once when the phone is back; a preference the backend writes reaches the
/// phone through the sync push, and the disabled kind stops within one sync.
@Suite("engaged and EngagementKit: a phone lives days with the server")
struct PhoneEndToEndTests {
    /// A test server whose due rows go through the real APNs channel into `pushes`.
    static func serverSendingToAPNs() async throws -> (TestServer, KeptPushes) {
        var server = try await TestServer()
        let pushes = KeptPushes(clock: server.clock)
        var logger = Logger(label: "end-to-end")
        logger.logLevel = .critical
        server.environment.transport = APNsChannelTransport(
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
            #expect(phone.pendingIDs == (try await Self.serverPlan(client)))

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
                    requestID: meal.request.identifier, actionIdentifier: NotificationActionID.logMeal.rawValue,
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
            #expect(phone.pendingIDs == (try await Self.serverPlan(client)))

            // Two days offline: the plan it holds fires on; what the user does waits in the queue.
            link.online.withLock { $0 = false }
            let heldToPlanOnline = phone.heldToPlan
            var offlineFired = 0
            var enqueued: [Instant] = []
            for _ in 0..<2 {
                offlineFired += try await live(hours: 12, &phone).count
                enqueued.append(clock.now())
                try await phone.queue.enqueue(.activity(.moodLogged), at: clock.now())
                let attempt = try await phone.queue.flush(via: link, at: clock.now())
                #expect(attempt.sent == 0 && attempt.nextAttemptAt != nil)
                offlineFired += try await live(hours: 12, &phone).count
            }
            #expect(offlineFired > 0 && phone.heldToPlan > heldToPlanOnline)
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
            #expect(phone.pendingIDs == (try await Self.serverPlan(client)))

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
            #expect(!phone.pendingIDs.contains { $0.hasPrefix("mealReminder.") })
            #expect(phone.pendingIDs == (try await Self.serverPlan(client)))
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

    /// The identifiers of the server's local plan (at most 64: the phone's limit), read with the
    /// API key.
    static func serverPlan(_ client: any TestClientProtocol) async throws -> Set<String> {
        let plan = try ServerPlan.decode(Data(try await client.send(.get, "/v1/users/ana/plan").text.utf8))
        return Set(plan.requests.prefix(64).map(\.request.identifier))
    }

    /// The instants of ana's moods the server recorded.
    static func moods(_ store: SQLiteEngagementStore) throws -> [Instant] {
        try store.activityEvents(userID: "ana", since: TestServer.start - 86_400).filter {
            $0.kind == .moodLogged
        }.map(\.at)
    }
}
