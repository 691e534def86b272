import Delivery
import Foundation
import Models
import Testing

@testable import EngagementKit

/// `PlanSync` and `PlanReconciliation`: the device's pending list follows the server's plan,
/// touching only what the kit placed and only what changed, never past 64, never going back to
/// an older plan.
@Suite("EngagementKit: plan sync")
struct PlanSyncTests {
    static let berlin = ZoneRules(identifier: "Europe/Berlin")!
    static let now = Instant(iso8601: "2027-03-01T06:00:00Z")!

    static func entry(_ identifier: RequestID, in minutes: Int64, title: String = "Lunch", repeats: Bool = false)
        -> ServerPlan.Entry
    {
        let at = now + minutes * 60
        let trigger: NotificationTrigger =
            repeats
            ? .calendar(CalendarMatch(hour: berlin.localDateTime(at: at).hour, minute: 0), repeats: true) : .date(at)
        return ServerPlan.Entry(
            request: NotificationRequest(
                identifier: identifier, content: NotificationContent(kind: .mealReminder, title: title, body: "Eat"),
                trigger: trigger),
            nextFireAt: at)
    }

    static func plan(_ version: Int, _ entries: [ServerPlan.Entry]) -> PlanAnswer {
        .plan(ServerPlan(version: version, timeZone: "Europe/Berlin", horizonEnd: nil, requests: entries))
    }

    static func pendingIDs(_ center: SimulatedNotificationCenter) -> Set<RequestID> {
        Set(center.pendingNotificationRequests.map(\.request.identifier))
    }

    @Test func aFirstPullPlacesThePlanAndRegistersTheCategories() {
        var center = SimulatedNotificationCenter(timeZone: Self.berlin)
        var sync = PlanSync()
        #expect(sync.ifNoneMatch == nil)
        let entries = [Self.entry("a", in: 60), Self.entry("b", in: 120)]
        let outcome = sync.apply(Self.plan(3, entries), to: &center, at: Self.now)
        guard case .applied(let made, let refused, _) = outcome else {
            Issue.record("expected applied, got \(outcome)")
            return
        }
        #expect(made.add.map(\.identifier) == ["a", "b"] && made.remove.isEmpty && refused.isEmpty)
        #expect(Self.pendingIDs(center) == ["a", "b"])
        #expect(Set(center.notificationCategories.map(\.id)) == Set(NotificationCategory.all.map(\.id)))
        #expect(
            sync.state
                == PlanSyncState(
                    version: 3, owned: ["a", "b"], oneOffs: ["a": Self.now + 3_600, "b": Self.now + 7_200],
                    plan: entries))
        #expect(sync.ifNoneMatch == #"W/"3""#)
    }

    @Test func aNewPlanRemovesWhatWentReplacesWhatChangedAndLeavesTheRest() {
        var center = SimulatedNotificationCenter(timeZone: Self.berlin)
        var sync = PlanSync()
        _ = sync.apply(
            Self.plan(3, [Self.entry("a", in: 60), Self.entry("b", in: 120), Self.entry("c", in: 180)]), to: &center,
            at: Self.now)
        let outcome = sync.apply(
            Self.plan(
                4, [Self.entry("a", in: 60), Self.entry("b", in: 150), Self.entry("d", in: 200, repeats: true)]),
            to: &center, at: Self.now + 60)
        guard case .applied(let made, _, _) = outcome else {
            Issue.record("expected applied, got \(outcome)")
            return
        }
        #expect(made.remove == ["c"])
        #expect(made.add.map(\.identifier) == ["b", "d"])  // a is the same: not touched
        #expect(Self.pendingIDs(center) == ["a", "b", "d"])
        #expect(sync.state.version == 4)
    }

    @Test func theAppsOwnRequestsAreNeverTouchedAndKeepTheirSlots() throws {
        var center = SimulatedNotificationCenter(timeZone: Self.berlin)
        for index in 0..<60 {
            try center.add(
                NotificationRequest(
                    identifier: "app.\(index)", content: NotificationContent(kind: .hydration, title: "Own", body: "x"),
                    trigger: .date(Self.now + Int64(index + 1) * 600)), at: Self.now)
        }
        var sync = PlanSync()
        let entries = (0..<10).map { Self.entry("plan.\($0)", in: Int64($0 + 1) * 30) }
        // The plan names one of the app's own identifiers: the app's stays.
        let clash = Self.entry("app.0", in: 5, title: "Not yours")
        let outcome = sync.apply(Self.plan(5, [clash] + entries), to: &center, at: Self.now)
        guard case .applied(let made, _, _) = outcome else {
            Issue.record("expected applied, got \(outcome)")
            return
        }
        #expect(center.pendingNotificationRequests.count == 64)
        #expect(made.add.map(\.identifier) == ["plan.0", "plan.1", "plan.2", "plan.3"])
        #expect(made.leftOut == (4..<10).map { "plan.\($0)" })
        #expect((0..<60).allSatisfy { index in Self.pendingIDs(center).contains("app.\(index)") })
        #expect(
            center.pendingNotificationRequests.first { $0.request.identifier == "app.0" }?.request.content.title
                == "Own")
        #expect(sync.state.owned == ["plan.0", "plan.1", "plan.2", "plan.3"])
        // What was left out is not held: the version is not taken, so the next pull (after the
        // app's own requests fired) places it.
        #expect(sync.state.version == nil && sync.needsPull(signalled: 5))
        center.removePendingNotificationRequests(withIdentifiers: (0..<60).map { "app.\($0)" })
        _ = sync.apply(Self.plan(5, [clash] + entries), to: &center, at: Self.now + 60)
        #expect(sync.state.version == 5)
        #expect(Set(entries.map(\.request.identifier)).isSubset(of: Self.pendingIDs(center)))
    }

    @Test func aRefusedReplacementLeavesTheEarlierRequestTheKitsToRemoveLater() {
        var center = SimulatedNotificationCenter(timeZone: Self.berlin)
        var sync = PlanSync()
        _ = sync.apply(Self.plan(1, [Self.entry("a", in: 60)]), to: &center, at: Self.now)
        center.setAuthorizationStatus(.denied)
        let outcome = sync.apply(Self.plan(2, [Self.entry("a", in: 90)]), to: &center, at: Self.now)
        guard case .applied(_, let refused, _) = outcome else {
            Issue.record("expected applied, got \(outcome)")
            return
        }
        #expect(refused == ["a": .notificationsNotAllowed])
        #expect(sync.state.owned == ["a"])  // still pending, still the kit's
        center.setAuthorizationStatus(.authorized)
        _ = sync.apply(Self.plan(3, []), to: &center, at: Self.now)
        #expect(center.pendingNotificationRequests.isEmpty)
    }

    @Test func aHugePlanFillsTheSixtyFourSlotsSoonestFirst() {
        var center = SimulatedNotificationCenter(timeZone: Self.berlin)
        var sync = PlanSync()
        let entries = (0..<500).map { Self.entry("p\($0)", in: Int64($0 + 1)) }
        _ = sync.apply(Self.plan(1, entries), to: &center, at: Self.now)
        #expect(Self.pendingIDs(center) == Set((0..<64).map { "p\($0)" }))
        // An empty plan removes everything the kit placed, and nothing else.
        _ = sync.apply(Self.plan(2, []), to: &center, at: Self.now)
        #expect(center.pendingNotificationRequests.isEmpty)
        #expect(sync.state == PlanSyncState(version: 2, owned: [], plan: []))
    }

    @Test func aOneOffTheDeviceShowedIsNotPlacedAgainWhenALaterPlanMovesIt() {
        var center = SimulatedNotificationCenter(timeZone: Self.berlin)
        var sync = PlanSync()
        _ = sync.apply(
            Self.plan(1, [Self.entry("a", in: 60), Self.entry("s", in: 90, repeats: true)]), to: &center, at: Self.now)
        // The stale copy fires at its old time; the server had moved it an hour later.
        let fired = center.fireDue(through: Self.now + 100 * 60)
        #expect(Set(fired.map(\.request.identifier)) == ["a", "s"])
        let moved = Self.plan(2, [Self.entry("a", in: 120), Self.entry("s", in: 90 + 24 * 60, repeats: true)])
        _ = sync.apply(moved, to: &center, at: Self.now + 100 * 60)
        // Not shown a second time; the daily series stays, and the plan is held in full.
        #expect(Self.pendingIDs(center) == ["s"])
        #expect(sync.state.version == 2)
    }

    @Test func aOneOffThatFiredIsNotPlacedAgainAfterTheDeliveredListWasCleared() {
        var center = SimulatedNotificationCenter(timeZone: Self.berlin)
        var sync = PlanSync()
        _ = sync.apply(Self.plan(1, [Self.entry("a", in: 60)]), to: &center, at: Self.now)
        _ = center.fireDue(through: Self.now + 61 * 60)
        // The app opened and cleared what was shown; the server's copy moved an hour later.
        center.removeAllDeliveredNotifications()
        _ = sync.apply(Self.plan(2, [Self.entry("a", in: 120)]), to: &center, at: Self.now + 62 * 60)
        #expect(center.pendingNotificationRequests.isEmpty)
        #expect(sync.state.version == 2 && sync.state.oneOffs["a"] == Self.now + 3_600)
        // Two days on, the record is gone.
        _ = sync.apply(Self.plan(3, []), to: &center, at: Self.now + 3 * 86_400)
        #expect(sync.state.oneOffs.isEmpty)
    }

    @Test func aServerThatWentBackIsFollowedButAnOvertakenAnswerIsNot() {
        var center = SimulatedNotificationCenter(timeZone: Self.berlin)
        var sync = PlanSync()
        _ = sync.apply(Self.plan(9, [Self.entry("a", in: 60)]), to: &center, at: Self.now)
        // Two pulls leave holding 9; the newer answer lands first, the slower one is overtaken.
        let first = sync.startPull()
        let second = sync.startPull()
        #expect(first.ifNoneMatch == #"W/"9""#)
        _ = sync.apply(Self.plan(11, [Self.entry("b", in: 60)]), to: &center, at: Self.now, answering: second)
        #expect(
            sync.apply(Self.plan(10, [Self.entry("c", in: 60)]), to: &center, at: Self.now, answering: first)
                == .refusedOlder(held: 11, offered: 10))
        #expect(Self.pendingIDs(center) == ["b"])
        // The server restored a backup: asked while holding 11, it answers 4, which is what it holds.
        let afterRestore = sync.startPull()
        let outcome = sync.apply(
            Self.plan(4, [Self.entry("d", in: 60)]), to: &center, at: Self.now, answering: afterRestore)
        guard case .applied = outcome else {
            Issue.record("expected applied, got \(outcome)")
            return
        }
        #expect(Self.pendingIDs(center) == ["d"] && sync.state.version == 4)
    }

    @Test func anOlderPlanNeverReplacesANewerOneAndNotModifiedChangesNothing() {
        var center = SimulatedNotificationCenter(timeZone: Self.berlin)
        var sync = PlanSync()
        _ = sync.apply(Self.plan(7, [Self.entry("a", in: 60)]), to: &center, at: Self.now)
        let before = center
        #expect(sync.apply(Self.plan(6, []), to: &center, at: Self.now) == .refusedOlder(held: 7, offered: 6))
        #expect(sync.apply(.notModified, to: &center, at: Self.now) == .unchanged)
        #expect(sync.apply(Self.plan(7, [Self.entry("a", in: 60)]), to: &center, at: Self.now) == .unchanged)
        #expect(center == before)
        #expect(sync.needsPull(signalled: 8))
        #expect(!sync.needsPull(signalled: 7))
        // An older signal costs a pull at most (a server restored from a backup answers it).
        #expect(sync.needsPull(signalled: 6))
        #expect(PlanSync().needsPull(signalled: 0))
    }

    @Test func refusedRequestsAreNotOwnedAndTheNextPullGetsTheWholePlanAgain() {
        var center = SimulatedNotificationCenter(timeZone: Self.berlin, authorizationStatus: .denied)
        var sync = PlanSync()
        let outcome = sync.apply(Self.plan(3, [Self.entry("a", in: 60)]), to: &center, at: Self.now)
        guard case .applied(_, let refused, _) = outcome else {
            Issue.record("expected applied, got \(outcome)")
            return
        }
        #expect(refused == ["a": .notificationsNotAllowed])
        #expect(sync.state == PlanSyncState(version: nil, owned: [], lastApplied: 3))
        #expect(sync.ifNoneMatch == nil)
        // Allowed again: the same plan is placed.
        center.setAuthorizationStatus(.authorized)
        _ = sync.apply(Self.plan(3, [Self.entry("a", in: 60)]), to: &center, at: Self.now)
        #expect(Self.pendingIDs(center) == ["a"])
        #expect(sync.state.version == 3)
    }

    @Test func theStateSurvivesTheAppBeingKilled() throws {
        let state = PlanSyncState(version: 9, owned: ["a", "b"], lastApplied: 10, oneOffs: ["a": Self.now])
        let bytes = try JSONEncoder().encode(state)
        #expect(try JSONDecoder().decode(PlanSyncState.self, from: bytes) == state)
        // A state an earlier build wrote keeps only the version and what the kit owns.
        let earlier = try JSONDecoder().decode(PlanSyncState.self, from: Data(#"{"version":9,"owned":["a"]}"#.utf8))
        #expect(earlier == PlanSyncState(version: 9, owned: ["a"], lastApplied: 9))
        // The one-offs are an object keyed by identifier, as builds with text keys wrote them.
        let object = try JSONSerialization.jsonObject(with: bytes) as? [String: Any]
        #expect((object?["oneOffs"] as? [String: Any])?.keys.sorted() == ["a"])
    }

    @Test func aStateWithOneOffsAndWithdrawalsReadsBackWhateverTheAppsEncoderConvertsKeysTo() throws {
        let state = PlanSyncState(
            version: 4, owned: ["mealReminder.2027-03-01.lunch"], lastApplied: 4,
            oneOffs: ["mealReminder.2027-03-01.lunch": Self.now],
            withdrawals: ["mealReminder.2027-03-01.lunch": [Withdrawal(.mealLogged(.lunch), from: Self.now - 600)]])
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        #expect(try decoder.decode(PlanSyncState.self, from: try encoder.encode(state)) == state)
        // As an earlier build wrote it, with text keys.
        let earlier = try JSONEncoder().encode(state)
        let text = String(decoding: earlier, as: UTF8.self)
        #expect(text.contains(#""oneOffs":{"mealReminder.2027-03-01.lunch":"#))
        #expect(try JSONDecoder().decode(PlanSyncState.self, from: earlier) == state)
    }
}
