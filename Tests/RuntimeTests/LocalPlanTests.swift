import Models
import Scheduling
import Storage
import TestSupport
import Testing

@testable import Runtime

/// The local plan read from a user's pending rows: what the phone should hold.
@Suite("Local plan")
struct LocalPlanTests {
    static let now = Instant(iso8601: "2027-03-01T09:00:00Z")!
    let steps = OutboxStepsTests()

    @Test func itHoldsLocalRequestsStillAheadAndDailySeriesSoonestFirst() {
        let lunch = steps.request(.mealReminder, "mealReminder.2027-03-01.lunch")
        let dinner = steps.request(.mealReminder, "mealReminder.2027-03-01.dinner")
        let greeting = steps.request(.morningGreeting, "morningGreeting.2027-03-01")
        let mention = steps.request(.mention, "mention.2027-03-01.1")
        var unreadable = steps.row(lunch, .inbox, dueAt: Self.now + 60)
        unreadable.requestID = "hydration.2027-03-01.7"
        unreadable.payload = .unreadable("{", channel: .inbox)
        let pending = [
            steps.row(dinner, .inbox, dueAt: Self.now + 9 * 3_600),
            steps.row(lunch, .inbox, dueAt: Self.now + 3 * 3_600),
            steps.row(greeting, .inbox, dueAt: Self.now),  // fell due: the phone fired it
            steps.row(steps.dailyHydration, .inbox, dueAt: Self.now - 60),  // a series: always held
            steps.row(mention, .inbox, dueAt: Self.now + 60),  // pushed, not the phone's
            steps.row(mention, .push, dueAt: Self.now + 60),
            steps.row(lunch, .push, dueAt: Self.now + 3 * 3_600),  // not an inbox row
            unreadable,
        ]
        let plan = LocalPlan(
            pending: pending, version: 0, zone: OutboxStepsTests.berlin, horizonEnd: nil, withdrawals: { _ in [] },
            at: Self.now)
        #expect(plan.entries.map(\.request.identifier) == [lunch.identifier, dinner.identifier, "hydration.10:00"])
        // The series' row fell due a minute ago (not dispatched yet): listed at its next match.
        #expect(plan.entries.last?.nextFireAt == Instant(iso8601: "2027-03-02T09:00:00Z"))
        #expect(
            LocalPlan(
                pending: [], version: 0, zone: OutboxStepsTests.berlin, horizonEnd: nil, withdrawals: { _ in [] },
                at: Self.now
            ).entries
                .isEmpty)
    }
}
