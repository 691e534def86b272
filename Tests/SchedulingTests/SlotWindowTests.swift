import Models
import Testing

@testable import Scheduling

/// Slot windows: the table per kind, shifts kept inside, and the rules that bound deferral by them.
@Suite struct SlotWindowTests {
    @Test(arguments: [
        (NotificationKind.morningGreeting, -60, 180), (.mealReminder, -60, 90), (.hydration, -30, 30),
        (.workoutReminder, -30, 10), (.preWorkout, -30, 10), (.postWorkoutCheckIn, -60, 180),
        (.weeklyReview, -120, 300), (.streakReminder, -60, 300), (.checkInReminder, -30, 180),
    ])
    func everyWallClockKindHasItsDocumentedWindow(kind: NotificationKind, earliest: Int, latest: Int) {
        #expect(SlotWindow.of(kind) == SlotWindow(earliestMinutes: earliest, latestMinutes: latest))
    }

    @Test(arguments: [
        NotificationKind.reEngagement, .reflection, .achievement, .workoutKudos, .mention, .securityAlert,
    ])
    func kindsWithoutAWallClockSlotHaveNoWindow(kind: NotificationKind) {
        #expect(SlotWindow.of(kind) == nil)
    }

    @Test func mealAndHydrationWindowsNeverOverlap() {
        let meals = MealType.allCases.map { $0.defaultTime.minutesSinceMidnight }.sorted()
        let meal = SlotWindow.of(.mealReminder)!
        for (earlier, later) in zip(meals, meals.dropFirst()) {
            #expect(earlier + meal.latestMinutes <= later + meal.earliestMinutes)
        }
        let hydration = SlotWindow.of(.hydration)!
        #expect(hydration.latestMinutes - hydration.earliestMinutes <= 60)  // hourly times: one window each
    }

    @Test(arguments: [
        // (window, shift, kept): a shift that fits stays; one that does not is cut to whole quarters inside.
        (SlotWindow(earliestMinutes: -60, latestMinutes: 90), 60, 60),
        (SlotWindow(earliestMinutes: -60, latestMinutes: 90), 120, 75),
        (SlotWindow(earliestMinutes: -60, latestMinutes: 90), -600, -60),
        (SlotWindow(earliestMinutes: -30, latestMinutes: 30), 60, 15),
        (SlotWindow(earliestMinutes: -30, latestMinutes: 30), 30, 15),
        (SlotWindow(earliestMinutes: -30, latestMinutes: 30), -60, -30),
        (SlotWindow(earliestMinutes: -30, latestMinutes: 10), 60, 0),
    ])
    func aShiftIsClampedInsideTheWindow(window: SlotWindow, shift: Int, kept: Int) {
        #expect(window.clampedShift(shift) == kept)
        #expect(kept == 0 || window.contains(offsetMinutes: kept))
    }

    @Test func theWindowIsInRealMinutesFromTheNominalInstantAcrossTheSpringForward() {
        // New York springs forward at 02:00 on 2027-03-14: 02:30 does not exist and resolves to 03:00.
        let newYork = ZoneRules(identifier: "America/New_York")!
        let nominal = newYork.instant(for: LocalDateTime.parseWithOffset("2027-03-14T02:30:00")!.local)
        #expect(newYork.formatted(nominal) == "2027-03-14T03:00:00-04:00")
        let window = SlotWindow.of(.checkInReminder)!
        #expect(newYork.formatted(window.start(nominal: nominal)) == "2027-03-14T01:30:00-05:00")
        #expect(newYork.formatted(window.end(nominal: nominal)) == "2027-03-14T06:00:00-04:00")
        #expect(window.contains(nominal + 10_799, nominal: nominal))
        #expect(!window.contains(nominal + 10_800, nominal: nominal))
    }

    // MARK: - Deferral stays inside the window

    static let now = Instant(iso8601: "2027-06-01T05:00:00Z")!

    static func breakfast(at plannedAt: Instant, windowEnd: Instant?) -> Candidate {
        Candidate(
            id: OccurrenceID(.mealReminder, date: LocalDate(year: 2027, month: 6, day: 1), .meal(.breakfast)),
            kind: .mealReminder, plannedAt: plannedAt, level: .active, policy: .standard(for: .mealReminder),
            windowEnd: windowEnd)
    }

    @Test(arguments: [
        // (quiet hours end, window end minutes after 08:00, expected): held to the end of quiet
        // hours while inside the window; dropped with the rule's reason when they last past it.
        ("08:30", 45, RuleOutcome.send(fireAt: Instant(iso8601: "2027-06-01T08:30:00Z")!, reason: .quietHours)),
        ("08:50", 45, .drop(reason: .quietHours)),
        ("08:50", 90, .send(fireAt: Instant(iso8601: "2027-06-01T08:50:00Z")!, reason: .quietHours)),
        // The staleness (60 min) still holds inside a wider window.
        ("09:30", 90, .drop(reason: .quietHours)),
    ])
    func quietHoursDeferOnlyInsideTheWindow(quietEnd: String, windowMinutes: Int64, expected: RuleOutcome) throws {
        var preferences = NotificationPreferences()
        preferences.quietHours = try QuietHours(start: LocalTimeOfDay("22:00")!, end: LocalTimeOfDay(quietEnd)!)
        let nominal = Instant(iso8601: "2027-06-01T08:00:00Z")!
        let candidate = Self.breakfast(at: nominal, windowEnd: nominal + windowMinutes * 60)
        // Without a window the staleness (60 min) alone would allow 08:50.
        let outcome = DeliveryRules.evaluate(
            candidate, at: Self.now, preferences: preferences, zone: .utc, ledger: CapLedger())
        #expect(outcome == expected)
    }

    @Test func anOccurrenceWhoseWindowHasPassedIsDroppedNeverSentLate() {
        let nominal = Instant(iso8601: "2027-06-01T08:00:00Z")!
        let candidate = Self.breakfast(at: nominal, windowEnd: nominal + 90 * 60)
        let late = Instant(iso8601: "2027-06-01T09:30:00Z")!
        #expect(
            DeliveryRules.evaluate(
                candidate, at: late - 1, preferences: NotificationPreferences(), zone: .utc, ledger: CapLedger())
                == .drop(reason: .slotWindowPassed))
        #expect(
            DeliveryRules.evaluate(
                candidate, at: late - 2, preferences: NotificationPreferences(), zone: .utc, ledger: CapLedger())
                == .send(fireAt: late - 1, reason: .onTime))
    }

    @Test func thePlannerSendsAMovedOccurrenceAtOnceOnlyWhileItsWindowLasts() {
        let nominal = Instant(iso8601: "2027-06-01T08:00:00Z")!
        let candidate = Self.breakfast(at: nominal, windowEnd: nominal + 90 * 60)
        let before = PlannedNotification(candidate: candidate, dueAt: nominal, fireAt: nominal + 3_600, zone: .utc)
        func context(at now: Instant) -> PlanningContext {
            PlanningContext(
                now: now, zone: .utc, preferences: NotificationPreferences(), ledger: CapLedger(), activeUntil: nil,
                slotBudget: 60, fired: OccurrenceMap(), done: OccurrenceMap(),
                previous: OccurrenceMap([(before.id, before)]))
        }
        // A change of zone moved it into the past: still inside the window, it goes out at once.
        let inside = Planner.allocate([candidate], context: context(at: nominal + 3_000))
        #expect(inside.plan.map(\.fireAt) == [nominal + 3_001])
        // Past the window it is dropped (and the diff cancels what the platform holds), with the reason.
        let outside = Planner.allocate([candidate], context: context(at: nominal + 5_400))
        #expect(outside.plan.isEmpty)
        #expect(outside.decisions.map(\.outcome) == [.drop(reason: .slotWindowPassed)])
        let changes = Planner.diff(previous: [before], allocation: outside)
        #expect(changes == [.cancel(before, reason: .slotWindowPassed)])
    }

    // MARK: - One of a kind per instant

    @Test func twoOfOneKindAtOneInstantKeepTheFirstInValueOrder() {
        let now = Instant(iso8601: "2027-06-01T05:00:00Z")!
        let at = Instant(iso8601: "2027-06-01T20:00:00Z")!
        let day = LocalDate(year: 2027, month: 6, day: 1)
        func reminder(_ number: Int) -> Candidate {
            Candidate(
                id: OccurrenceID(.checkInReminder, date: day, .reminder(number: number, minuteOfDay: 1_200)),
                kind: .checkInReminder, plannedAt: at, level: .active, policy: .standard(for: .checkInReminder))
        }
        let streak = Candidate(
            id: OccurrenceID(.streakReminder, date: day), kind: .streakReminder, plannedAt: at, level: .active,
            policy: .standard(for: .streakReminder))
        var candidates = [reminder(2), streak, reminder(1)]
        Planner.order(&candidates)
        let context = PlanningContext(
            now: now, zone: .utc, preferences: NotificationPreferences(), ledger: CapLedger(), activeUntil: nil,
            slotBudget: 60, fired: OccurrenceMap(), done: OccurrenceMap(), previous: OccurrenceMap())
        let allocation = Planner.allocate(candidates, context: context)
        // Another kind at the same instant is no duplicate; the second reminder is.
        #expect(allocation.plan.map(\.id).sorted() == [reminder(1).id, streak.id].sorted())
        #expect(
            allocation.decisions.first { $0.candidate.id == reminder(2).id }?.outcome == .drop(reason: .sameInstant))
        let changes = Planner.diff(previous: [], allocation: allocation)
        #expect(changes.contains(.drop(reminder(2), dueAt: at, reason: .sameInstant)))
    }

    @Test func aDailySeriesFiringTakesItsInstantForItsKind() {
        let now = Instant(iso8601: "2027-06-01T05:00:00Z")!
        let nine = Instant(iso8601: "2027-06-01T09:00:00Z")!
        let series = Candidate(
            id: .dailySeries(.hydration, minute: 540), kind: .hydration, plannedAt: nine, level: .active,
            policy: .standard(for: .hydration))
        let snoozed = Candidate(
            id: OccurrenceID(.hydration, date: LocalDate(year: 2027, month: 6, day: 2), .minuteOfDay(480), snooze: 1),
            kind: .hydration, plannedAt: nine + .secondsPerDay, level: .active, policy: .standard(for: .hydration))
        let context = PlanningContext(
            now: now, zone: .utc, preferences: NotificationPreferences(), ledger: CapLedger(), activeUntil: nil,
            slotBudget: 60, fired: OccurrenceMap(), done: OccurrenceMap(), previous: OccurrenceMap())
        let allocation = Planner.allocate(
            [snoozed], series: [series], reservedFireTimes: [nine, nine + .secondsPerDay], context: context)
        #expect(allocation.plan.map(\.id) == [series.id])
        #expect(allocation.decisions.map(\.outcome) == [.drop(reason: .sameInstant)])
    }
}
