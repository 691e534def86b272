import Models
import Testing

@testable import Scheduling

/// The phone's committed copies (`PlanningContext.committed`): kept where the phone holds them,
/// counted before anything else, withdrawn only by the user's intent.
@Suite("Planner: what the phone holds and fires before it can hear")
struct CommittedPlanTests {
    typealias T = PlannerTests
    static let noon = T.now + 2 * 3_600

    /// A committed reminder and a more valuable greeting fifteen minutes later, under `preferences`.
    static func allocate(
        preferences: NotificationPreferences, committed: Bool, done: [OccurrenceID] = [],
        greetingKind: NotificationKind = .morningGreeting
    ) -> (meal: Candidate, greeting: Candidate, allocation: Allocation) {
        let meal = T.candidate(.mealReminder, .meal(.lunch), at: 2 * 3_600, relevance: 0.2)
        let greeting = T.candidate(greetingKind, at: 2 * 3_600 + 900, relevance: 0.9)
        var context = T.context(preferences: preferences, done: done, previous: [T.planned(meal)])
        if committed { context.committed = OccurrenceMap([(meal.id, noon)]) }
        var candidates = [meal, greeting]
        Planner.order(&candidates)
        return (meal, greeting, Planner.allocate(candidates, context: context))
    }

    static func fireAt(_ id: OccurrenceID, in allocation: Allocation) -> Instant? {
        allocation.plan.first { $0.id == id }?.fireAt
    }

    static func preferences(perHour: Int = 10, perDay: Int? = nil) -> NotificationPreferences {
        var p = NotificationPreferences()
        p.maxPerHour = perHour
        p.maxPerDay = perDay
        return p
    }

    @Test func withoutACommitmentTheMoreValuableOneTakesTheHour() {
        let (meal, greeting, allocation) = Self.allocate(preferences: Self.preferences(perHour: 1), committed: false)
        #expect(Self.fireAt(greeting.id, in: allocation) == Self.noon + 900)
        #expect(Self.fireAt(meal.id, in: allocation) != Self.noon)
    }

    @Test func aCommittedCopyKeepsItsInstantAndTheHourCapCountsIt() throws {
        let (meal, greeting, allocation) = Self.allocate(preferences: Self.preferences(perHour: 1), committed: true)
        #expect(Self.fireAt(meal.id, in: allocation) == Self.noon)
        // The greeting works around it: an hour after the copy, or not at all.
        let greetingAt = try #require(Self.fireAt(greeting.id, in: allocation))
        #expect(greetingAt >= Self.noon + 3_600)
        let decision = try #require(allocation.decisions.first { $0.candidate.id == meal.id })
        #expect(decision.outcome == .send(fireAt: Self.noon, reason: .onTime))
    }

    @Test func aCommittedCopyCountsForTheDailyCap() {
        let (meal, greeting, allocation) = Self.allocate(
            preferences: Self.preferences(perDay: 1), committed: true)
        #expect(Self.fireAt(meal.id, in: allocation) == Self.noon)
        #expect(Self.fireAt(greeting.id, in: allocation) == nil)
        let outcome = allocation.decisions.first { $0.candidate.id == greeting.id }?.outcome
        #expect(outcome == .drop(reason: .capPerDay) || outcome == .fold(reason: .capPerDay))
    }

    @Test func aCommittedCopyTakesItsInstantForItsKind() {
        // Another meal reminder of the same kind wanting the very instant is dropped, not the copy.
        let meal = T.candidate(.mealReminder, .meal(.lunch), at: 2 * 3_600, relevance: 0.2)
        let rival = T.candidate(.mealReminder, .meal(.dinner), at: 2 * 3_600, relevance: 0.9)
        var context = T.context(previous: [T.planned(meal)])
        context.committed = OccurrenceMap([(meal.id, Self.noon)])
        var candidates = [meal, rival]
        Planner.order(&candidates)
        let allocation = Planner.allocate(candidates, context: context)
        #expect(Self.fireAt(meal.id, in: allocation) == Self.noon)
        #expect(allocation.decisions.first { $0.candidate.id == rival.id }?.outcome == .drop(reason: .sameInstant))
    }

    @Test func theThingDoneWithdrawsACommittedCopy() {
        let meal = T.candidate(.mealReminder, .meal(.lunch), at: 2 * 3_600)
        let (_, greeting, allocation) = Self.allocate(
            preferences: Self.preferences(perHour: 1), committed: true, done: [meal.id])
        #expect(Self.fireAt(meal.id, in: allocation) == nil)
        #expect(allocation.suppressed.contains { $0.candidate.id == meal.id && $0.reason == .alreadyDone })
        // Not counted: the greeting has the hour.
        #expect(Self.fireAt(greeting.id, in: allocation) == Self.noon + 900)
    }

    @Test func newQuietHoursOverItsInstantWithdrawACommittedCopy() throws {
        var preferences = Self.preferences(perHour: 1)
        // 11:30 to 12:30 UTC: the copy's noon falls inside, the rules move or drop it.
        preferences.quietHours = try QuietHours(start: LocalTimeOfDay("11:30")!, end: LocalTimeOfDay("12:30")!)
        let (meal, _, allocation) = Self.allocate(preferences: preferences, committed: true)
        #expect(Self.fireAt(meal.id, in: allocation) != Self.noon)
    }

    @Test func aCommittedCopyWithoutItsCandidateIsNotCounted() {
        // The kind was disabled (the engine gives no candidate): the copy is withdrawn, not counted.
        let meal = T.candidate(.mealReminder, .meal(.lunch), at: 2 * 3_600)
        let greeting = T.candidate(.morningGreeting, at: 2 * 3_600 + 900)
        var context = T.context(preferences: Self.preferences(perHour: 1), previous: [T.planned(meal)])
        context.committed = OccurrenceMap([(meal.id, Self.noon)])
        let allocation = Planner.allocate([greeting], context: context)
        #expect(Self.fireAt(greeting.id, in: allocation) == Self.noon + 900)
        #expect(Self.fireAt(meal.id, in: allocation) == nil)
    }

    @Test func aCommittedCopyTheDiffLeavesAlone() {
        let (meal, _, allocation) = Self.allocate(preferences: Self.preferences(perHour: 1), committed: true)
        let changes = Planner.diff(previous: [T.planned(meal)], allocation: allocation)
        #expect(
            !changes.contains { change in
                if case .schedule(let candidate, _, _, _) = change { return candidate.id == meal.id }
                if case .cancel(let old, _) = change { return old.id == meal.id }
                return false
            })
    }
}
