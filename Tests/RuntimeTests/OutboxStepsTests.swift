import Delivery
import Engagement
import Models
import Scheduling
import Storage
import TestSupport
import Testing

@testable import Runtime

/// The server's dispatch decisions as pure steps: the step of each due row, and what follows a
/// send, whichever shell carries them out.
@Suite("Outbox steps")
struct OutboxStepsTests {
    static let now = Instant(iso8601: "2027-03-01T09:00:00Z")!
    static let berlin = ZoneRules(identifier: "Europe/Berlin")!
    static let silent = SilentPushPlan()

    func request(_ kind: NotificationKind, _ id: RequestID, trigger: NotificationTrigger? = nil) -> NotificationRequest
    {
        NotificationRequest(
            identifier: id, content: NotificationContent(kind: kind, title: "t", body: "b"),
            trigger: trigger ?? .date(Self.now))
    }

    func row(_ request: NotificationRequest, _ channel: OutboxChannel, dueAt: Instant = now) -> OutboxRow {
        OutboxRow(
            key: OutboxKey.make("u1", request.identifier, dueAt, channel), userID: "u1", requestID: request.identifier,
            dueAt: dueAt,
            payload: channel == .inbox
                ? .inboxItem(request, shownBy: ChannelPolicy.channel(for: request.content.kind)) : .alert(request))
    }

    var dailyHydration: NotificationRequest {
        request(.hydration, "hydration.10:00", trigger: .calendar(CalendarMatch(hour: 10, minute: 0), repeats: true))
    }

    @Test func aRemoteKindsInboxRowIsDeliveredWithNothingAfterIt() {
        let inbox = row(request(.mention, "mention.1"), .inbox)
        guard
            case .deliverToInbox(let delivery, let next) = OutboxSteps.step(
                for: inbox, zone: Self.berlin, silentPushes: Self.silent, at: Self.now)
        else {
            Issue.record("not delivered")
            return
        }
        #expect(delivery.row == inbox)
        #expect(delivery.kind == "mention")
        // Its push carries the badge: no sync.
        #expect(next.isEmpty)
    }

    @Test func aRemoteKindsInboxRowWithoutItsAlertInTheClaimAsksForABadgeSync() {
        let mention = request(.mention, "mention.1")
        let inbox = row(mention, .inbox)
        let alert = row(mention, .push)
        func next(of rows: [OutboxRow]) -> [OutboxRow]? {
            let steps = OutboxSteps.steps(
                for: rows, zone: { _ in Self.berlin }, silentPushes: Self.silent, at: Self.now)
            #expect(steps.map(\.row) == [inbox] + rows.filter { $0.channel != .inbox })
            guard case .deliverToInbox(_, let next) = steps.first?.step else { return nil }
            return next
        }
        // Its alert carries the new count.
        #expect(next(of: [alert, inbox]) == [])
        // The claim deferred or expired its alert: the badge is synced without it.
        #expect(next(of: [inbox]) == [Self.silent.row(for: "u1", changedAt: Self.now)])
        // Another user's alert carries nothing of this user's.
        var others = row(request(.mention, "mention.2"), .push)
        others.userID = "u2"
        #expect(next(of: [inbox, others]) == [Self.silent.row(for: "u1", changedAt: Self.now)])
    }

    @Test func aLocalKindsInboxRowAsksForABadgeSyncAtTheNextSlot() {
        let inbox = row(request(.mealReminder, "meal.lunch"), .inbox)
        let step = OutboxSteps.step(for: inbox, zone: Self.berlin, silentPushes: Self.silent, at: Self.now)
        guard case .deliverToInbox(_, let next) = step else {
            Issue.record("not delivered: \(step)")
            return
        }
        #expect(next == [Self.silent.row(for: "u1", changedAt: Self.now)])
    }

    @Test func aDailySeriesIsDueAgainAtItsNextMatchInTheUsersZone() throws {
        let first = Instant(iso8601: "2027-03-01T09:00:00Z")!  // 10:00 in Berlin
        let inbox = row(dailyHydration, .inbox, dueAt: first)
        let next = try #require(OutboxSteps.nextRepeat(of: inbox, in: Self.berlin))
        #expect(next.dueAt == first + 86_400)
        #expect(next.key == OutboxKey.make("u1", inbox.requestID, next.dueAt, .inbox))
        #expect(next.payload == inbox.payload)
        // Across the spring change the wall time stays 10:00.
        let beforeDST = Instant(iso8601: "2027-03-27T09:00:00Z")!
        let after = try #require(
            OutboxSteps.nextRepeat(of: row(dailyHydration, .inbox, dueAt: beforeDST), in: Self.berlin))
        #expect(after.dueAt == Instant(iso8601: "2027-03-28T08:00:00Z")!)
        // A one-off has no next row.
        #expect(OutboxSteps.nextRepeat(of: row(request(.mention, "m"), .inbox), in: Self.berlin) == nil)
    }

    @Test func aSyncPastItsGraceMovesToTheNextSlotUnsent() {
        let slot = Self.silent.slot(after: Self.now)
        let sync = Self.silent.row(for: "u1", dueAt: slot)
        #expect(OutboxSteps.step(for: sync, zone: nil, silentPushes: Self.silent, at: slot + 60) == .send)
        let late = slot + Self.silent.graceSeconds + 1
        #expect(
            OutboxSteps.step(for: sync, zone: nil, silentPushes: Self.silent, at: late)
                == .moveSync(next: Self.silent.row(for: "u1", changedAt: late)))
    }

    @Test func whatCannotBeReadIsDiscardedNotLeftToHoldUpTheQueue() {
        var unreadable = row(request(.mention, "m"), .inbox)
        unreadable.payload = .unreadable("{\"aps\":", channel: .inbox)
        #expect(
            OutboxSteps.step(for: unreadable, zone: nil, silentPushes: Self.silent, at: Self.now)
                == .discard(reason: "Unreadable"))
        // Whatever its channel: a push row the transport could only refuse is not sent.
        unreadable.payload = .unreadable("{\"aps\":", channel: .push)
        #expect(
            OutboxSteps.step(for: unreadable, zone: nil, silentPushes: Self.silent, at: Self.now)
                == .discard(reason: "Unreadable"))
        let job = OutboxRow(
            key: "k", userID: "u1", requestID: "com.example.someFutureJob", dueAt: Self.now,
            payload: .unreadable(#"{"job":"com.example.someFutureJob"}"#, channel: .job))
        #expect(
            OutboxSteps.step(for: job, zone: nil, silentPushes: Self.silent, at: Self.now)
                == .discard(reason: "UnknownJob"))
    }

    @Test func anAlertThatDidNotCarryItsCountIsFollowedByABadgeSync() {
        let push = row(request(.mention, "m"), .push)
        let sync = Self.silent.row(for: "u1", changedAt: Self.now)
        func next(_ report: SendReport) -> [OutboxRow] {
            OutboxSteps.afterSend(push, report: report, zone: Self.berlin, silentPushes: Self.silent, at: Self.now).rows
        }
        #expect(next(.accepted).isEmpty)
        #expect(next(.withheld(reason: "InQuietHours")) == [sync])
        #expect(next(.refused(reason: "BadTopic")) == [sync])
        #expect(next(.failed(reason: "ServiceUnavailable")) == [sync])
        #expect(next(.acceptedWithOutdatedBadge) == [sync])
    }

    /// An alert or a sync retried while the inbox's count changed got through carrying the older
    /// count, perhaps after another push had shown the newer one: a sync follows at the next slot.
    @Test func aPushWhoseBadgeChangedWhileItWasSentIsFollowedByABadgeSync() {
        #expect(SendReport.accepted.ofBadge(carrying: 3, unreadNow: nil) == .accepted)
        #expect(SendReport.accepted.ofBadge(carrying: 3, unreadNow: 3) == .accepted)
        #expect(SendReport.accepted.ofBadge(carrying: 3, unreadNow: 2) == .acceptedWithOutdatedBadge)
        #expect(
            SendReport.failed(reason: "ServiceUnavailable").ofBadge(carrying: 3, unreadNow: 2)
                == .failed(reason: "ServiceUnavailable"))
        // Sent at its slot, the last one by now.
        let sync = Self.silent.row(for: "u1", dueAt: Self.silent.slot(after: Self.now) - Self.silent.slotSeconds)
        let after = OutboxSteps.afterSend(
            sync, report: .acceptedWithOutdatedBadge, zone: nil, silentPushes: Self.silent, at: Self.now)
        #expect(after.rows == [Self.silent.row(for: "u1", changedAt: Self.now)])
        #expect(!after.syncMissed)
    }

    @Test func aSyncThatFailedMovesToTheNextSlotAndARefusedOneIsDone() {
        // Sent at its slot, the last one by now (an early sync's follow-up: `EarlySyncTests`).
        let sync = Self.silent.row(for: "u1", dueAt: Self.silent.slot(after: Self.now) - Self.silent.slotSeconds)
        func next(_ report: SendReport) -> [OutboxRow] {
            OutboxSteps.afterSend(sync, report: report, zone: nil, silentPushes: Self.silent, at: Self.now).rows
        }
        #expect(next(.accepted).isEmpty)
        #expect(next(.refused(reason: "BadTopic")).isEmpty)
        #expect(next(.failed(reason: "ServiceUnavailable")) == [Self.silent.row(for: "u1", changedAt: Self.now)])
    }

    /// Only a sync that did not reach the phone tells the engine so; an alert's outcome never does.
    @Test(arguments: [
        (SendReport.accepted, false), (.acceptedWithOutdatedBadge, false), (.withheld(reason: "NoDevice"), true),
        (.refused(reason: "BadDeviceToken"), true), (.failed(reason: "ServiceUnavailable"), true),
    ])
    func aSyncThatDidNotReachThePhoneIsAMissedSync(report: SendReport, missed: Bool) {
        let sync = Self.silent.row(for: "u1", dueAt: Self.silent.slot(after: Self.now))
        let push = row(request(.mention, "m"), .push)
        #expect(
            OutboxSteps.afterSend(sync, report: report, zone: nil, silentPushes: Self.silent, at: Self.now).syncMissed
                == missed)
        #expect(
            !OutboxSteps.afterSend(push, report: report, zone: Self.berlin, silentPushes: Self.silent, at: Self.now)
                .syncMissed)
    }

    @Test func aSeriesAlertIsDueAgainWhateverTheSendsOutcome() {
        let push = row(dailyHydration, .push)
        for report in [SendReport.accepted, .failed(reason: "ServiceUnavailable")] {
            let next = OutboxSteps.afterSend(
                push, report: report, zone: Self.berlin, silentPushes: Self.silent, at: Self.now
            ).rows
            #expect(next.first?.dueAt == Self.now + 86_400)
            #expect(next.first?.channel == .push)
        }
    }

    @Test func aReportSumsTheDevicesWorstOutcome() {
        let refused = PushFailure(status: 400, reason: "BadTopic")
        let unavailable = PushFailure(status: 503, reason: "ServiceUnavailable")
        #expect(SendReport(outcomes: []) == .accepted)
        #expect(SendReport(outcomes: [.delivered, .tokenRetired(refused, since: nil)]) == .accepted)
        #expect(SendReport(outcomes: [.delivered, .rejected(refused)]) == .refused(reason: "BadTopic"))
        #expect(
            SendReport(outcomes: [.failedAfterRetries(unavailable, attempts: 3), .rejected(refused)])
                == .failed(reason: "ServiceUnavailable"))
    }

    @Test func aZoneChangeMovesPendingRowsToTheEnginesNewTimesButNotJobsOrTouchedRequests() {
        let meal = row(request(.mealReminder, "meal"), .inbox, dueAt: Self.now + 3_600)
        let touched = row(request(.mealReminder, "touched"), .inbox, dueAt: Self.now + 3_600)
        let past = row(request(.mealReminder, "past"), .inbox, dueAt: Self.now + 3_600)
        let job = OutboxRow(
            key: "j", userID: "u1", requestID: RequestID(BackgroundJob.allCases[0].rawValue),
            dueAt: Self.now + 60, payload: .job(BackgroundJob.allCases[0]))
        let moved = OutboxSteps.moved(
            [meal, touched, past, job], plannedIDs: ["meal", "touched", "past", job.requestID],
            fireTimes: [Self.now + 7_200, Self.now + 7_200, Self.now - 60, Self.now + 120], touched: ["touched"],
            at: Self.now)
        #expect(moved.map(\.requestID) == ["meal"])
        #expect(moved.first?.dueAt == Self.now + 7_200)
        #expect(moved.first?.key == OutboxKey.make("u1", "meal", Self.now + 7_200, .inbox))
    }

    @Test func inboxRowsGoFirstWithinAnInstantAndTheOrderHoldsOtherwise() {
        let a = row(request(.mention, "a"), .push)
        let b = row(request(.mention, "b"), .inbox)
        let c = row(request(.mention, "c"), .push, dueAt: Self.now + 1)
        let d = row(request(.mention, "d"), .inbox, dueAt: Self.now + 1)
        #expect(OutboxSteps.inboxFirst([a, b, c, d]).map(\.requestID) == ["b", "a", "d", "c"])
        #expect(OutboxSteps.inboxFirst([a]) == [a])
        #expect(OutboxSteps.inboxFirst([]).isEmpty)
    }

    @Test func unreadableRowsAreCompletedAndHoldUpNoOneBehindThem() async throws {
        let store = InMemoryEngagementStore()
        let clock = ManualClock(Self.now)
        let runtime = EngineRuntime(store: store, clock: clock, content: bundledContent)
        try await runtime.putUser(profile("u1", zone: "Europe/Berlin"))
        var rows: [OutboxRow] = []
        for index in 0..<5 {
            var unreadable = row(request(.mention, "damaged.\(index)"), .inbox, dueAt: Self.now - 60)
            unreadable.payload = .unreadable("{", channel: .inbox)
            rows.append(unreadable)
        }
        let readable = row(request(.mention, "fine"), .inbox, dueAt: Self.now - 30)
        let snapshot = try #require(try store.snapshot(userID: "u1"))
        try store.commit(RuntimeCommit(userID: "u1", snapshot: snapshot, outbox: rows + [readable]))
        let transport = RecordingTransport()
        for _ in 0..<3 { _ = try await runtime.dispatchDue(limit: 2, through: transport) }
        #expect(try store.pendingOutbox(userID: "u1").filter { $0.dueAt <= Self.now }.isEmpty)
        #expect(try store.inboxCounts(userID: "u1").total == 1)
    }

    @Test func aBadgeSyncThatCannotBeCommittedLeavesTheAlertCompletedNotResent() async throws {
        let store = InMemoryEngagementStore()
        let runtime = EngineRuntime(store: store, clock: ManualClock(Self.now), content: bundledContent)
        try await runtime.putUser(profile("u1", zone: "Europe/Berlin"))
        // The user's stored engine no longer restores (a newer version wrote it): no row can be
        // committed for them, a badge sync included.
        let alert = row(request(.mention, "m"), .push, dueAt: Self.now - 1)
        try store.commit(RuntimeCommit(userID: "u1", snapshot: [0xFF, 0x00], outbox: [alert]))
        await runtime.evictCache()
        let transport = ReportingTransport(report: .failed(reason: "ServiceUnavailable"))
        let done = try await runtime.dispatchDue(through: transport)
        #expect(done.contains { $0.key == alert.key })
        #expect(try !store.pendingOutbox(userID: "u1").contains { $0.key == alert.key })
        #expect(try !store.pendingOutbox(userID: "u1").contains { $0.channel == .silent })
    }
}

/// A transport that reports every send as `report`.
private struct ReportingTransport: ChannelTransport {
    let report: SendReport

    func perform(_ row: OutboxRow) async throws -> SendReport { report }
}
