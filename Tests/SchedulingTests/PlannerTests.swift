import Models
import Testing

@testable import Scheduling

/// The planner's stages, each with its own table of cases.
@Suite("Planner stages")
struct PlannerTests {
    static let now = Instant(iso8601: "2027-03-02T10:00:00Z")!
    static let day = LocalDate(year: 2027, month: 3, day: 2)

    static func candidate(
        _ kind: NotificationKind, _ slot: OccurrenceSlot = .day, at offsetSeconds: Int64, relevance: Double? = nil,
        deferral: DeferralPolicy? = nil
    ) -> Candidate {
        var policy = KindPolicy.standard(for: kind)
        if let relevance { policy.relevance = relevance }
        if let deferral { policy.deferral = deferral }
        return Candidate(
            id: OccurrenceID(kind, date: day, slot), kind: kind, plannedAt: now + offsetSeconds, level: .active,
            policy: policy)
    }

    static func context(
        preferences: NotificationPreferences = NotificationPreferences(), slotBudget: Int = 60,
        fired: [OccurrenceID] = [], done: [OccurrenceID] = [], previous: [PlannedNotification] = [],
        ledger: [Instant] = []
    ) -> PlanningContext {
        PlanningContext(
            now: now, zone: .utc, preferences: preferences, ledger: CapLedger(ledger), activeUntil: nil,
            slotBudget: slotBudget, fired: OccurrenceMap(fired.map { ($0, now - 60) }),
            done: OccurrenceMap(done.map { ($0, now - 60) }), previous: OccurrenceMap(previous.map { ($0.id, $0) }))
    }

    static func planned(_ candidate: Candidate, fireAt: Instant? = nil) -> PlannedNotification {
        PlannedNotification(
            candidate: candidate, dueAt: candidate.plannedAt, fireAt: fireAt ?? candidate.plannedAt, zone: .utc)
    }

    // MARK: - order

    @Test func orderPutsValueFirstThenTimeThenIdentity() {
        let lowEarly = Self.candidate(.hydration, .minuteOfDay(600), at: 60, relevance: 0.3)
        let highLate = Self.candidate(.morningGreeting, at: 7_200, relevance: 0.9)
        let highEarly = Self.candidate(.weeklyReview, at: 600, relevance: 0.9)
        var candidates = [lowEarly, highLate, highEarly]
        Planner.order(&candidates)
        #expect(candidates.map(\.id) == [highEarly.id, highLate.id, lowEarly.id])
    }

    // MARK: - allocate

    struct AllocationCase: Sendable, CustomTestStringConvertible {
        var name: String
        var offsetSeconds: Int64
        var fired = false
        var done = false
        var plannedBefore = false
        /// nil: not evaluated; otherwise the fire time's offset from now.
        var expectedFireOffset: Int64?
        var expectedSuppressed = false
        var testDescription: String { name }
    }

    @Test(arguments: [
        AllocationCase(name: "a future candidate is planned on time", offsetSeconds: 3_600, expectedFireOffset: 3_600),
        AllocationCase(name: "an occurrence already fired is skipped", offsetSeconds: 3_600, fired: true),
        AllocationCase(
            name: "an occurrence already done is suppressed", offsetSeconds: 3_600, done: true,
            expectedSuppressed: true),
        AllocationCase(name: "a time passed before it was ever planned is not sent late", offsetSeconds: -600),
        AllocationCase(
            name: "a planned one moved into the past is due just after now", offsetSeconds: -600, plannedBefore: true,
            expectedFireOffset: 1),
        AllocationCase(
            name: "a planned one overdue past its staleness still goes out just after now", offsetSeconds: -10_000,
            plannedBefore: true, expectedFireOffset: 1),
    ])
    func allocateDecidesEachCandidate(_ c: AllocationCase) {
        let meal = Self.candidate(.mealReminder, .meal(.lunch), at: c.offsetSeconds)
        let context = Self.context(
            fired: c.fired ? [meal.id] : [], done: c.done ? [meal.id] : [],
            previous: c.plannedBefore ? [Self.planned(meal)] : [])
        let allocation = Planner.allocate([meal], context: context)
        #expect(allocation.plan.first?.fireAt == c.expectedFireOffset.map { Self.now + $0 })
        #expect(allocation.suppressed.map(\.candidate.id) == (c.expectedSuppressed ? [meal.id] : []))
        if c.expectedFireOffset != nil {
            #expect(allocation.decisions.first?.dueAt == Self.now + max(c.offsetSeconds, 1))
            #expect(allocation.plan.first?.plannedAt == Self.now + max(c.offsetSeconds, 1))
        }
    }

    @Test func allocateStopsAtTheSlotBudgetInValueOrder() {
        let candidates = (0..<5).map { Self.candidate(.hydration, .minuteOfDay(600 + $0), at: Int64(3_600 * ($0 + 1))) }
        var preferences = NotificationPreferences()
        preferences.maxPerHour = 10
        let allocation = Planner.allocate(candidates, context: Self.context(preferences: preferences, slotBudget: 3))
        #expect(allocation.plan.map(\.id) == candidates.prefix(3).map(\.id))
        #expect(allocation.decisions.count == 3)
    }

    @Test func allocateCountsEachPlannedFireTimeAgainstTheHourlyCap() {
        var preferences = NotificationPreferences()
        preferences.maxPerHour = 1
        let first = Self.candidate(.mealReminder, .meal(.breakfast), at: 600, deferral: .deferUntilAllowed)
        let second = Self.candidate(.mealReminder, .meal(.lunch), at: 900, deferral: .deferUntilAllowed)
        let allocation = Planner.allocate([first, second], context: Self.context(preferences: preferences))
        #expect(allocation.plan.map(\.fireAt) == [Self.now + 600, Self.now + 600 + 3_600])
    }

    @Test func seriesTakeTheirSlotsFirstAndTheirFiringsCountAgainstTheCaps() {
        var preferences = NotificationPreferences()
        preferences.maxPerHour = 1
        let series = Candidate(
            id: .dailySeries(.hydration, minute: 630), kind: .hydration, plannedAt: Self.now + 1_800, level: .active,
            policy: .standard(for: .hydration))
        let meal = Self.candidate(.mealReminder, .meal(.lunch), at: 1_800, deferral: .deferUntilAllowed)
        let allocation = Planner.allocate(
            [meal], series: [series], reservedFireTimes: [Self.now + 1_800],
            context: Self.context(preferences: preferences))
        #expect(allocation.plan.first?.id == series.id && allocation.plan.first?.repeatsDaily == true)
        #expect(allocation.plan.last?.fireAt == Self.now + 1_800 + 3_600)
    }

    // MARK: - diff

    @Test func diffOfAnUnchangedPlanIsEmpty() {
        let meal = Self.candidate(.mealReminder, .meal(.lunch), at: 3_600)
        let allocation = Planner.allocate([meal], context: Self.context(previous: [Self.planned(meal)]))
        #expect(Planner.diff(previous: [Self.planned(meal)], allocation: allocation).isEmpty)
    }

    @Test func diffSchedulesWhatIsNewOrMovedAndCancelsWhatIsGoneWithTheReasonItKnows() {
        let kept = Self.candidate(.mealReminder, .meal(.lunch), at: 3_600)
        let moved = Self.candidate(.mealReminder, .meal(.snack), at: 7_200)
        let gone = Self.candidate(.mealReminder, .meal(.dinner), at: 9_000)
        let doneNow = Self.candidate(.mealReminder, .meal(.breakfast), at: 1_800)
        let new = Self.candidate(.morningGreeting, at: 5_400)
        let previous = [
            Self.planned(doneNow), Self.planned(kept), Self.planned(moved, fireAt: Self.now + 7_000),
            Self.planned(gone),
        ]
        let context = Self.context(done: [doneNow.id], previous: previous)
        let allocation = Planner.allocate([doneNow, kept, moved, new], context: context)
        let changes = Planner.diff(previous: previous, allocation: allocation)
        #expect(
            changes == [
                .cancel(Self.planned(doneNow), reason: .alreadyDone), .cancel(Self.planned(gone), reason: nil),
                .schedule(moved, dueAt: moved.plannedAt, fireAt: moved.plannedAt, reason: .onTime),
                .schedule(new, dueAt: new.plannedAt, fireAt: new.plannedAt, reason: .onTime),
            ])
    }

    struct DropCase: Sendable, CustomTestStringConvertible {
        var name: String
        var kind: NotificationKind
        var slot: OccurrenceSlot
        var deferral: DeferralPolicy
        var plannedBefore: Bool
        var expected: String
        var testDescription: String { name }
    }

    @Test(arguments: [
        DropCase(
            name: "a routine drop never planned is traced as dropped", kind: .hydration, slot: .minuteOfDay(1_380),
            deferral: .drop, plannedBefore: false, expected: "drop"),
        DropCase(
            name: "a routine drop planned before is its cancellation", kind: .hydration, slot: .minuteOfDay(1_380),
            deferral: .drop, plannedBefore: true, expected: "cancel"),
        DropCase(
            name: "a blocked social group moves to the digest", kind: .workoutKudos, slot: .group(3),
            deferral: .foldIntoDigest, plannedBefore: false, expected: "regroup"),
        DropCase(
            name: "a dropped social group moves to the digest too", kind: .workoutKudos, slot: .group(3),
            deferral: .drop, plannedBefore: false, expected: "regroup"),
    ])
    func diffOfABlockedCandidate(_ c: DropCase) {
        var preferences = NotificationPreferences()
        preferences.quietHours = try? QuietHours(
            start: LocalTimeOfDay(minutesSinceMidnight: 22 * 60), end: LocalTimeOfDay(minutesSinceMidnight: 7 * 60))
        // 23:00 UTC: inside quiet hours, which outlast the deadline of a drop or a fold.
        let candidate = Self.candidate(c.kind, c.slot, at: 13 * 3_600, deferral: c.deferral)
        let previous = c.plannedBefore ? [Self.planned(candidate)] : []
        let allocation = Planner.allocate(
            [candidate], context: Self.context(preferences: preferences, previous: previous))
        let changes = Planner.diff(previous: previous, allocation: allocation)
        let kinds = changes.map { change -> String in
            switch change {
            case .cancel: "cancel"
            case .schedule: "schedule"
            case .drop: "drop"
            case .regroup: "regroup"
            case .suppress: "suppress"
            }
        }
        #expect(kinds == [c.expected])
    }
}
