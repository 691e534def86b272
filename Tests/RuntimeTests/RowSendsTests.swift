import Delivery
import LiveActivity
import Models
import Scheduling
import Storage
import Testing

@testable import Runtime

/// How a due send row becomes APNs requests and how their answers become a report: the rules
/// the runtime's transport and the simulator both run (`RowSends`).
@Suite("Row sends")
struct RowSendsTests {
    static let now = Instant(iso8601: "2027-03-01T09:00:00Z")!
    static let berlin = ZoneRules(identifier: "Europe/Berlin")!
    static let topic = "com.example.fitness"

    static func device(_ token: Character, registeredAt: Instant = now - 3_600, sandbox: Bool = false)
        -> DeviceRegistration
    {
        DeviceRegistration(
            token: String(repeating: token, count: 64), userID: "u1", environment: sandbox ? .sandbox : .production,
            platform: "ios", registeredAt: registeredAt)
    }

    static func alertRow(_ kind: NotificationKind = .mention) -> OutboxRow {
        let content = NotificationContent(kind: kind, title: "Ben", body: "mentioned you")
        let request = NotificationRequest(identifier: "mention.1", content: content, trigger: .date(now))
        return OutboxRow(
            key: OutboxKey.make("u1", request.identifier, now, .push), userID: "u1", requestID: request.identifier,
            dueAt: now, payload: .alert(request))
    }

    static func liveActivityRow(_ event: LiveActivityCommand.Event, token: String?) -> OutboxRow {
        let command = LiveActivityCommand(
            activityID: "workout-1", event: event,
            attributes: .workout(WorkoutActivityAttributes(workoutType: "run", startedAt: now)),
            content: LiveActivityContent(state: .workout(.init(elapsedSeconds: 60))), priority: .high, at: now,
            pushToken: token, sequence: 2)
        let requestID = RequestID(rawValue: command.requestID)
        return OutboxRow(
            key: OutboxKey.make("u1", requestID, now, .liveActivity), userID: "u1", requestID: requestID, dueAt: now,
            payload: .liveActivity(command))
    }

    @Test func workIsReadFromTheRowsChannelAndPayload() {
        let alert = Self.alertRow()
        guard case .alert(let request) = RowSends.work(for: alert) else {
            Issue.record("an alert row is an alert")
            return
        }
        #expect(request.identifier == "mention.1")
        // A push row that carries no notification is refused, not dropped.
        var broken = alert
        broken.payload = .unreadable("{", channel: .push)
        #expect(RowSends.work(for: broken) == .done(.refused(reason: "Unreadable")))
        var sync = alert
        sync.payload = .sync
        #expect(RowSends.work(for: sync) == .sync)
        #expect(
            RowSends.work(for: Self.liveActivityRow(.start, token: "ab")) == .done(.withheld(reason: "AppStarts")))
        #expect(RowSends.work(for: Self.liveActivityRow(.update, token: nil)) == .done(.withheld(reason: "NoToken")))
        // The app starts its activities and reports their tokens: that is not a failed send.
        #expect(RowSends.isLeftToTheApp(.withheld(reason: RowSends.appStarts)))
        #expect(RowSends.isLeftToTheApp(.withheld(reason: RowSends.noToken)))
        #expect(!RowSends.isLeftToTheApp(.withheld(reason: "PayloadTooLarge")))
        #expect(!RowSends.isLeftToTheApp(.refused(reason: "Unreadable")))
        // An inbox item is the runtime's own work, never a send.
        var item = alert
        item.payload = .inboxItem(request, shownBy: .remote)
        #expect(RowSends.work(for: item) == .done(.refused(reason: "Unreadable")))
        guard case .liveActivity(_, let token) = RowSends.work(for: Self.liveActivityRow(.end, token: "ab")) else {
            Issue.record("an end with a token is sent")
            return
        }
        #expect(token == "ab")
    }

    @Test func anAlertGoesToEveryDeviceCarryingTheBadge() throws {
        let row = Self.alertRow()
        let devices = [Self.device("a"), Self.device("b", sandbox: true)]
        guard
            case .push(let push) = RowSends.alert(
                try #require(row.payload.notification), of: row, badge: 3, rules: nil, devices: devices,
                topic: Self.topic, at: Self.now)
        else {
            Issue.record("not prepared")
            return
        }
        #expect(push.targets.map(\.request.deviceToken) == devices.map(\.token))
        #expect(push.targets.map(\.request.environment) == [.production, .sandbox])
        #expect(push.targets.allSatisfy { $0.request.id == row.key.rawValue })
        #expect(push.carriedBadge == 3)
        // No device: prepared all the same, with nothing to send, and reported accepted.
        guard
            case .push(let none) = RowSends.alert(
                try #require(row.payload.notification), of: row, badge: 3, rules: nil, devices: [], topic: Self.topic,
                at: Self.now)
        else {
            Issue.record("not prepared")
            return
        }
        #expect(none.targets.isEmpty)
        #expect(RowSends.report(none, outcomes: [], unreadNow: nil) == .accepted)
    }

    @Test func anOrdinaryAlertInsideQuietHoursIsWithheld() throws {
        let row = Self.alertRow()
        // 10:00 in Berlin, inside quiet hours from 09:00 to 11:00.
        let quiet = try QuietHours(
            start: try #require(LocalTimeOfDay(hour: 9)), end: try #require(LocalTimeOfDay(hour: 11)))
        let rules = ShowingRules(quietHours: quiet, zone: Self.berlin)
        let sent = RowSends.alert(
            try #require(row.payload.notification), of: row, badge: 0, rules: rules, devices: [Self.device("a")],
            topic: Self.topic, at: Self.now)
        #expect(sent == .notSent(.withheld(reason: "InQuietHours")))
    }

    @Test func aLiveActivityGoesToItsOwnTokenAtTheNewestDevicesService() {
        let row = Self.liveActivityRow(.update, token: "cd")
        guard case .liveActivity(let command, let token) = RowSends.work(for: row) else {
            Issue.record("not a Live Activity send")
            return
        }
        let devices = [
            Self.device("a", registeredAt: Self.now - 60), Self.device("b", registeredAt: Self.now - 30, sandbox: true),
        ]
        guard
            case .push(let push) = RowSends.liveActivity(
                command, token: token, of: row, devices: devices, topic: Self.topic)
        else {
            Issue.record("not prepared")
            return
        }
        #expect(push.targets.count == 1)
        #expect(push.targets[0].request.deviceToken == "cd")
        #expect(push.targets[0].request.environment == .sandbox)
        #expect(push.targets[0].device == nil)
        #expect(push.carriedBadge == nil)
    }

    @Test(
        arguments: [
            ([PushOutcome.delivered], 3, nil, SendReport.accepted),
            ([.delivered], 3, 3, .accepted),
            ([.delivered], 3, 4, .acceptedWithOutdatedBadge),
            (
                [.delivered, .rejected(PushFailure(status: 400, reason: "BadPriority"))], 3, 4,
                .refused(reason: "BadPriority")
            ),
            (
                [
                    .rejected(PushFailure(status: 400, reason: "BadPriority")),
                    .failedAfterRetries(PushFailure(status: 503, reason: "ServiceUnavailable"), attempts: 4),
                ],
                3, nil, .failed(reason: "ServiceUnavailable")
            ),
            ([.tokenRetired(PushFailure(status: 410, reason: "Unregistered"), since: now)], 3, nil, .accepted),
            // Every token retired: no device took the badge, so a moved count asks for no sync.
            ([.tokenRetired(PushFailure(status: 410, reason: "Unregistered"), since: now)], 3, 4, .accepted),
        ] as [([PushOutcome], Int, Int?, SendReport)])
    func anAlertsReportSumsItsDevicesAndChecksItsBadge(
        outcomes: [PushOutcome], carried: Int, unreadNow: Int?, expected: SendReport
    ) throws {
        let row = Self.alertRow()
        guard
            case .push(let push) = RowSends.alert(
                try #require(row.payload.notification), of: row, badge: carried, rules: nil,
                devices: [Self.device("a")],
                topic: Self.topic, at: Self.now)
        else {
            Issue.record("not prepared")
            return
        }
        #expect(RowSends.report(push, outcomes: outcomes, unreadNow: unreadNow) == expected)
    }

    /// A sync retried while an alert got through carries the count of when it was prepared: the
    /// report says so, as it does for an alert.
    @Test func aSyncCarriesItsCountAndIsReportedOutdatedWhenTheCountMoved() {
        var row = Self.alertRow()
        row.payload = .sync
        let push = RowSends.sync(
            of: row, counts: InboxCounts(total: 2, unread: 1, unseen: 1), planVersion: 7, devices: [Self.device("a")],
            silentPushes: SilentPushPlan(), topic: Self.topic)
        #expect(push.carriedBadge == 1)
        #expect(push.targets.map(\.request.pushType) == [.background])
        #expect(RowSends.report(push, outcomes: [.delivered], unreadNow: 1) == .accepted)
        #expect(RowSends.report(push, outcomes: [.delivered], unreadNow: nil) == .accepted)
        #expect(RowSends.report(push, outcomes: [.delivered], unreadNow: 5) == .acceptedWithOutdatedBadge)
    }

    /// A send reads only what its work needs, and the one preparation both shells run gives
    /// each channel's push from those facts.
    @Test func eachWorkReadsItsFactsAndIsPreparedFromThem() throws {
        let alert = Self.alertRow()
        var sync = alert
        sync.payload = .sync
        let activity = Self.liveActivityRow(.update, token: "feed")
        #expect(RowSends.work(for: alert).reads == [.counts, .rules])
        #expect(RowSends.work(for: sync).reads == [.counts, .planVersion])
        #expect(RowSends.work(for: activity).reads.isEmpty)
        #expect(RowSends.work(for: Self.liveActivityRow(.start, token: nil)).reads.isEmpty)
        let facts = SendFacts(
            counts: InboxCounts(total: 3, unread: 2, unseen: 1), planVersion: 9, devices: [Self.device("a")])
        let plan = SilentPushPlan()
        guard
            case .push(let pushed) = RowSends.prepare(
                RowSends.work(for: alert), of: alert, facts: facts, silentPushes: plan, topic: Self.topic,
                at: Self.now)
        else {
            Issue.record("an alert with a device is pushed")
            return
        }
        #expect(pushed.carriedBadge == 2 && pushed.targets.count == 1)
        guard
            case .push(let synced) = RowSends.prepare(
                .sync, of: sync, facts: facts, silentPushes: plan, topic: Self.topic, at: Self.now)
        else {
            Issue.record("a sync is pushed")
            return
        }
        let direct = RowSends.sync(
            of: sync, counts: try #require(facts.counts), planVersion: 9, devices: facts.devices, silentPushes: plan,
            topic: Self.topic)
        #expect(synced == direct)
        #expect(
            RowSends.prepare(
                RowSends.work(for: Self.liveActivityRow(.start, token: nil)), of: activity, facts: facts,
                silentPushes: plan, topic: Self.topic, at: Self.now) == .notSent(.withheld(reason: RowSends.appStarts)))
    }

    @Test func aRetiredTokenRemovesItsDeviceUnlessRegisteredAgainSince() {
        let retiredAt = Self.now
        let gone = PushOutcome.tokenRetired(PushFailure(status: 410, reason: "Unregistered"), since: retiredAt)
        let badToken = PushOutcome.tokenRetired(PushFailure(status: 400, reason: "BadDeviceToken"), since: nil)
        let request = PushRequest(
            id: "k", deviceToken: "a", environment: .production, pushType: .alert, topic: Self.topic,
            expiration: .nowOrNever, payload: [])
        let before = RowPush.Target(request: request, device: Self.device("a", registeredAt: retiredAt - 1))
        let atTheInstant = RowPush.Target(request: request, device: Self.device("a", registeredAt: retiredAt))
        let after = RowPush.Target(request: request, device: Self.device("a", registeredAt: retiredAt + 1))
        let activity = RowPush.Target(request: request, device: nil)
        #expect(RowSends.retires(before, after: gone))
        #expect(RowSends.retires(atTheInstant, after: gone))
        #expect(!RowSends.retires(after, after: gone))
        #expect(RowSends.retires(after, after: badToken))
        #expect(!RowSends.retires(activity, after: gone))
        #expect(!RowSends.retires(before, after: .delivered))
        #expect(!RowSends.retires(before, after: .rejected(PushFailure(status: 400, reason: "BadPriority"))))
    }
}
