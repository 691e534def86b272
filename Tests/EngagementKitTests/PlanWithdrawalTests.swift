import Delivery
import Foundation
import Models
import Testing

@testable import EngagementKit

/// `PlanSync.withdraw` and the plan's `withdrawnBy`: the phone withdraws a request the moment
/// its user does what makes it moot, offline or not, keeps it withdrawn while plans made before
/// the server heard still list it, and reads a withdrawal it does not know as none.
@Suite("EngagementKit: withdrawal on the phone")
struct PlanWithdrawalTests {
    static let berlin = PlanSyncTests.berlin
    static let now = PlanSyncTests.now  // 07:00 in Berlin
    static let dayStart = Instant(iso8601: "2027-02-28T23:00:00Z")!
    static let dayEnd = Instant(iso8601: "2027-03-01T23:00:00Z")!

    static func lunch(in minutes: Int64 = 330) -> ServerPlan.Entry {
        var entry = PlanSyncTests.entry("mealReminder.2027-03-01.lunch", in: minutes)
        entry.withdrawnBy = [Withdrawal(.mealLogged(.lunch), from: dayStart, until: dayEnd)]
        return entry
    }

    static func greeting() -> ServerPlan.Entry { PlanSyncTests.entry("morningGreeting.2027-03-02", in: 1_440) }

    static func synced(_ entries: [ServerPlan.Entry]) -> (PlanSync, SimulatedNotificationCenter) {
        var center = SimulatedNotificationCenter(timeZone: berlin)
        var sync = PlanSync()
        _ = sync.apply(PlanSyncTests.plan(5, entries), to: &center, at: now)
        return (sync, center)
    }

    @Test func aMealLoggedWithdrawsThatMealsReminderAtOnceAndNothingElse() {
        var (sync, center) = Self.synced([Self.lunch(), Self.greeting()])
        let dinner = sync.withdraw(after: WithdrawingEvent(.mealLogged(.dinner), at: Self.now + 60), from: &center)
        #expect(dinner.isEmpty)
        let withdrawn = sync.withdraw(after: WithdrawingEvent(.mealLogged(.lunch), at: Self.now + 120), from: &center)
        #expect(withdrawn == ["mealReminder.2027-03-01.lunch"])
        #expect(PlanSyncTests.pendingIDs(center) == ["morningGreeting.2027-03-02"])
        // The version stays held: the phone holds what that plan wants, and no pull is needed
        // until the server names a new one.
        #expect(sync.state.version == 5 && !sync.needsPull(signalled: 5))
    }

    @Test func aPlanMadeBeforeTheServerHeardDoesNotPlaceItAgain() {
        var (sync, center) = Self.synced([Self.lunch(), Self.greeting()])
        sync.withdraw(after: WithdrawingEvent(.mealLogged(.lunch), at: Self.now + 120), from: &center)
        // A background refresh brings the same plan (or a newer one that still lists lunch).
        let outcome = sync.apply(
            PlanSyncTests.plan(6, [Self.lunch(), Self.greeting()]), to: &center, at: Self.now + 600)
        guard case .applied(let made, _, let withdrawn) = outcome else {
            Issue.record("expected applied, got \(outcome)")
            return
        }
        #expect(made.add.isEmpty && withdrawn == ["mealReminder.2027-03-01.lunch"])
        #expect(PlanSyncTests.pendingIDs(center) == ["morningGreeting.2027-03-02"])
        #expect(sync.state.version == 6)
        // Once the server heard, its plan lists lunch no more: nothing left to withdraw.
        let heard = sync.apply(PlanSyncTests.plan(7, [Self.greeting()]), to: &center, at: Self.now + 900)
        #expect(heard == .unchanged)
    }

    @Test func anEventBeforeThePlanStillWithdrawsFromIt() {
        // Lunch logged offline before the first pull of the day.
        var center = SimulatedNotificationCenter(timeZone: Self.berlin)
        var sync = PlanSync()
        sync.withdraw(after: WithdrawingEvent(.mealLogged(.lunch), at: Self.now - 60), from: &center)
        _ = sync.apply(PlanSyncTests.plan(5, [Self.lunch(), Self.greeting()]), to: &center, at: Self.now)
        #expect(PlanSyncTests.pendingIDs(center) == ["morningGreeting.2027-03-02"])
    }

    @Test func anEventOutsideTheWithdrawalsDayWithdrawsNothing() {
        var (sync, center) = Self.synced([Self.lunch()])
        let yesterday = sync.withdraw(
            after: WithdrawingEvent(.mealLogged(.lunch), at: Self.dayStart - 1), from: &center)
        #expect(yesterday.isEmpty && PlanSyncTests.pendingIDs(center) == ["mealReminder.2027-03-01.lunch"])
    }

    @Test func aRequestTheAppPlacedItselfIsNeverWithdrawn() throws {
        var center = SimulatedNotificationCenter(timeZone: Self.berlin)
        let own = Self.lunch().request
        try center.add(own, at: Self.now)
        var sync = PlanSync()
        _ = sync.apply(PlanSyncTests.plan(5, [Self.greeting()]), to: &center, at: Self.now)
        sync.withdraw(after: WithdrawingEvent(.mealLogged(.lunch), at: Self.now + 60), from: &center)
        #expect(PlanSyncTests.pendingIDs(center).contains(own.identifier))
    }

    @Test func eventsAreKeptSevenDaysAndAtMostTheLimit() {
        var center = SimulatedNotificationCenter(timeZone: Self.berlin)
        var sync = PlanSync()
        for index in 0..<(PlanSync.eventLimit + 10) {
            sync.withdraw(after: WithdrawingEvent(.moodLogged, at: Self.now + Int64(index)), from: &center)
        }
        #expect(sync.state.events.count == PlanSync.eventLimit)
        #expect(sync.state.events.first?.at == Self.now + 10)
        sync.withdraw(
            after: WithdrawingEvent(.moodLogged, at: Self.now + PlanSync.eventRetentionSeconds + 1_000), from: &center)
        #expect(sync.state.events.count == 1)
    }

    /// An event queued late (the app's clock, or an offline queue) takes its place in time, so
    /// the oldest are always the first forgotten; a state made out of order is put in order.
    @Test func eventsStayOldestFirstWhateverOrderTheyCome() {
        var center = SimulatedNotificationCenter(timeZone: Self.berlin)
        var sync = PlanSync()
        for offset: Int64 in [300, 100, 200, 100, 0] {
            sync.withdraw(after: WithdrawingEvent(.moodLogged, at: Self.now + offset), from: &center)
        }
        #expect(sync.state.events.map(\.at) == [0, 100, 100, 200, 300].map { Self.now + $0 })
        sync.withdraw(
            after: WithdrawingEvent(.moodLogged, at: Self.now + 150 + PlanSync.eventRetentionSeconds), from: &center)
        #expect(
            sync.state.events.map(\.at) == [
                Self.now + 200, Self.now + 300, Self.now + 150 + PlanSync.eventRetentionSeconds,
            ])
        let made = PlanSyncState(events: [
            WithdrawingEvent(.moodLogged, at: Self.now + 9),
            WithdrawingEvent(.workoutCompleted(durationMinutes: 30), at: Self.now + 1),
            WithdrawingEvent(.mealLogged(.lunch), at: Self.now + 9),
        ])
        #expect(made.events.map(\.at) == [Self.now + 1, Self.now + 9, Self.now + 9])
        #expect(made.events.last?.kinds.contains(.mealLogged(.lunch)) == true)
        // Set out of order after it was made: still oldest first, so the stale one is forgotten.
        var state = PlanSyncState()
        state.events = [
            WithdrawingEvent(.moodLogged, at: Self.now), WithdrawingEvent(.moodLogged, at: Self.now - 8 * 86_400),
        ]
        #expect(state.events.map(\.at) == [Self.now - 8 * 86_400, Self.now])
        var restored = PlanSync(state: state)
        restored.withdraw(after: WithdrawingEvent(.moodLogged, at: Self.now + 1), from: &center)
        #expect(restored.state.events.map(\.at) == [Self.now, Self.now + 1])
    }

    @Test func theStateWithWithdrawalsSurvivesARelaunchAndAnOlderStateReads() throws {
        var (sync, center) = Self.synced([Self.lunch()])
        sync.withdraw(after: WithdrawingEvent(.moodLogged, at: Self.now + 60), from: &center)
        let bytes = try JSONEncoder().encode(sync.state)
        #expect(try JSONDecoder().decode(PlanSyncState.self, from: bytes) == sync.state)
        let older = try JSONDecoder().decode(PlanSyncState.self, from: Data(#"{"version":3,"owned":["a"]}"#.utf8))
        #expect(older.withdrawals.isEmpty && older.events.isEmpty)
    }

    @Test func thePlanCarriesWithdrawalsAndOneThisBuildCannotReadIsReported() throws {
        let withdrawals =
            #"[{"activity":"mealLogged","meal":"lunch","from":"2027-02-28T18:15:00Z","until":"2027-03-01T18:15:00Z"},{"activity":"teleported","from":"2027-02-28T18:15:00Z","until":null},{"activity":"mealLogged","meal":"brunch","from":"2027-02-28T18:15:00Z","until":null},{"activity":"anyActivity","from":"yesterday","until":null}]"#
        let request = ServerPlanTests.request().dropLast() + #","withdrawnBy":\#(withdrawals)}"#
        let plan = try ServerPlan.decode(ServerPlanTests.body([String(request), ServerPlanTests.request("breakfast")]))
        #expect(plan.unreadable.isEmpty)
        #expect(plan.requests.map(\.request.identifier) == ["mealReminder.2027-03-01.lunch", "breakfast"])
        #expect(
            plan.requests.first?.withdrawnBy == [
                Withdrawal(
                    .mealLogged(.lunch), from: Instant(iso8601: "2027-02-28T18:15:00Z")!,
                    until: Instant(iso8601: "2027-03-01T18:15:00Z")!)
            ])
        #expect(plan.requests.last?.withdrawnBy == [])
        #expect(
            plan.unreadableWithdrawals.map(\.identifier) == Array(repeating: "mealReminder.2027-03-01.lunch", count: 3))
        let reasons = plan.unreadableWithdrawals.map(\.reason)
        #expect(reasons[0].contains("teleported") && reasons[1].contains("brunch") && reasons[2].contains("yesterday"))
    }

    @Test func theWireFormReadsBackAsItWasWritten() throws {
        let withdrawal = Withdrawal(.workoutDone, from: Self.dayStart, until: Self.dayEnd)
        let wire = PlanWire.Withdrawal(withdrawal)
        let bytes = try JSONEncoder().encode(wire)
        let read = try JSONDecoder().decode(PlanWire.Withdrawal.self, from: bytes)
        #expect(try read.withdrawal().get() == withdrawal)
        let open = PlanWire.Withdrawal(Withdrawal(.anyActivity, from: Self.dayStart))
        #expect(String(decoding: try JSONEncoder().encode(open), as: UTF8.self).contains(#""until":null"#))
    }

    @Test func newQuietHoursWithdrawWhatFiresInsideThemButACriticalOne() throws {
        // Lunch at 12:30 Berlin, the greeting at 07:00 tomorrow.
        var critical = PlanSyncTests.entry("securityAlert.2027-03-01", in: 360)
        critical.request.content.interruptionLevel = .critical
        var (sync, center) = Self.synced([Self.lunch(), Self.greeting(), critical])
        let quiet = try QuietHours(
            start: LocalTimeOfDay(minutesSinceMidnight: 12 * 60), end: LocalTimeOfDay(minutesSinceMidnight: 14 * 60))
        let withdrawn = sync.withdraw(ruledOutBy: .quietHours(quiet), zone: Self.berlin, from: &center)
        #expect(withdrawn == ["mealReminder.2027-03-01.lunch"])
        #expect(PlanSyncTests.pendingIDs(center) == ["morningGreeting.2027-03-02", "securityAlert.2027-03-01"])
        // The next signal pulls the plan the server made with the new setting.
        #expect(sync.state.version == nil && sync.needsPull(signalled: 5))
    }

    @Test func aKindTurnedOffGiveMeSpaceAndNotificationsOffWithdrawTheirs() {
        var nudge = PlanSyncTests.entry("reEngagement.2027-03-01.1", in: 600)
        nudge.request.content.kind = .reEngagement
        var (sync, center) = Self.synced([Self.lunch(), Self.greeting(), nudge])
        #expect(sync.withdraw(ruledOutBy: .giveMeSpace, zone: Self.berlin, from: &center) == [nudge.request.identifier])
        #expect(sync.withdraw(ruledOutBy: .kindsDisabled([.hydration]), zone: Self.berlin, from: &center).isEmpty)
        #expect(
            sync.withdraw(ruledOutBy: .kindsDisabled([.mealReminder]), zone: Self.berlin, from: &center)
                == ["mealReminder.2027-03-01.lunch", "morningGreeting.2027-03-02"])  // both are meal reminders here
        #expect(PlanSyncTests.pendingIDs(center).isEmpty)
        var (other, otherCenter) = Self.synced([Self.greeting()])
        #expect(other.withdraw(ruledOutBy: .notificationsOff, zone: Self.berlin, from: &otherCenter).count == 1)
    }
}
