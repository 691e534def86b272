import Models
import Testing

@testable import Scheduling

/// The attention budget: a day's count, its exemptions, fold or drop, value-first allocation.
@Suite struct AttentionBudgetTests {
    let day = LocalDate(year: 2027, month: 6, day: 1)
    let now = Instant(iso8601: "2027-06-01T05:00:00Z")!

    func meal(_ meal: MealType, at time: String) -> Candidate {
        Candidate(
            id: OccurrenceID(.mealReminder, date: day, .meal(meal)), kind: .mealReminder,
            plannedAt: Instant(iso8601: "2027-06-01T\(time):00Z")!, level: .active,
            policy: .standard(for: .mealReminder))
    }

    func social(_ kind: NotificationKind, group: Int, at time: String, digest: Bool = false) -> Candidate {
        var policy = KindPolicy.standard(for: kind)
        if digest { policy.deferral = .deferUntilAllowed }
        return Candidate(
            id: OccurrenceID(kind, daysSinceEpoch: day.daysSinceEpoch, .group(group)), kind: kind,
            plannedAt: Instant(iso8601: "2027-06-01T\(time):00Z")!, level: .active, policy: policy, isDigest: digest)
    }

    func context(_ budget: AttentionBudget?, ledger: CapLedger = CapLedger()) -> PlanningContext {
        PlanningContext(
            now: now, zone: .utc, preferences: NotificationPreferences(), ledger: ledger, activeUntil: nil,
            slotBudget: 60, fired: OccurrenceMap(), done: OccurrenceMap(), previous: OccurrenceMap(),
            attentionBudget: budget)
    }

    @Test func theDefaultIsAFullRoutineDayAndTheBudgetIsAtLeastOne() {
        #expect(AttentionBudget().interruptionsPerDay == 8)
        #expect(AttentionBudget(interruptionsPerDay: 0).interruptionsPerDay == 1)
    }

    @Test func aUsersOwnNumberWinsOverTheAppsAndNoneMeansNone() {
        let app = AttentionBudget(interruptionsPerDay: 8)
        #expect(AttentionBudget.effective(app: app, userPerDay: 3) == AttentionBudget(interruptionsPerDay: 3))
        #expect(AttentionBudget.effective(app: app, userPerDay: nil) == app)
        #expect(AttentionBudget.effective(app: nil, userPerDay: nil) == nil)
        #expect(AttentionBudget.effective(app: nil, userPerDay: 5) == AttentionBudget(interruptionsPerDay: 5))
    }

    @Test func aFullLocalDayCutsAndTheNextDayHasRoomAgain() {
        let budget = AttentionBudget(interruptionsPerDay: 2)
        let full = CapLedger([Instant(iso8601: "2027-06-01T01:00:00Z")!, Instant(iso8601: "2027-06-01T02:00:00Z")!])
        let lunch = meal(.lunch, at: "12:30")
        #expect(
            budget.cut(lunch, firingAt: lunch.plannedAt, zone: .utc, ledger: full) == .drop(reason: .attentionBudget))
        #expect(budget.cut(lunch, firingAt: lunch.plannedAt + .secondsPerDay, zone: .utc, ledger: full) == nil)
        #expect(budget.cut(lunch, firingAt: lunch.plannedAt, zone: .utc, ledger: CapLedger()) == nil)
    }

    @Test func theDayIsTheUsersLocalDay() {
        // 23:30 UTC on 1 June is 2 June in Tokyo: the ledger's two entries of 1 June (Tokyo) do not count.
        let tokyo = ZoneRules(identifier: "Asia/Tokyo")!
        let budget = AttentionBudget(interruptionsPerDay: 2)
        let ledger = CapLedger([Instant(iso8601: "2027-06-01T01:00:00Z")!, Instant(iso8601: "2027-06-01T02:00:00Z")!])
        let late = meal(.breakfast, at: "23:30")
        #expect(budget.cut(late, firingAt: late.plannedAt, zone: tokyo, ledger: ledger) == nil)
        #expect(budget.cut(late, firingAt: late.plannedAt, zone: .utc, ledger: ledger) != nil)
    }

    @Test(arguments: [NotificationKind.mention, .followRequest])
    func transactionalKindsAreNeverCut(kind: NotificationKind) {
        let budget = AttentionBudget(interruptionsPerDay: 1)
        let full = CapLedger([Instant(iso8601: "2027-06-01T01:00:00Z")!])
        let candidate = social(kind, group: 1, at: "12:00")
        #expect(budget.exempts(candidate))
        #expect(budget.cut(candidate, firingAt: candidate.plannedAt, zone: .utc, ledger: full) == nil)
    }

    @Test func aDigestIsNeverCutAndASingleSocialItemFoldsIntoIt() {
        let budget = AttentionBudget(interruptionsPerDay: 1)
        let full = CapLedger([Instant(iso8601: "2027-06-01T01:00:00Z")!])
        let digest = social(.workoutKudos, group: 1, at: "19:00", digest: true)
        #expect(budget.cut(digest, firingAt: digest.plannedAt, zone: .utc, ledger: full) == nil)
        let single = social(.workoutKudos, group: 2, at: "12:00")
        #expect(
            budget.cut(single, firingAt: single.plannedAt, zone: .utc, ledger: full) == .fold(reason: .attentionBudget))
    }

    @Test func theBudgetGoesToTheMostValuableAndTheCutIsTraced() {
        let budget = AttentionBudget(interruptionsPerDay: 2)
        let breakfast = meal(.breakfast, at: "08:00")
        let lunch = meal(.lunch, at: "12:30")
        let dinner = meal(.dinner, at: "18:30")
        var candidates = [breakfast, lunch, dinner]
        // The user values dinner most, then lunch: breakfast (the earliest) is what is cut.
        Planner.order(&candidates) { $0.id == dinner.id ? 2 : $0.id == lunch.id ? 1 : 0.5 }
        #expect(candidates.map(\.id) == [dinner.id, lunch.id, breakfast.id])
        let allocation = Planner.allocate(candidates, context: context(budget))
        #expect(allocation.plan.map(\.id) == [lunch.id, dinner.id])
        #expect(allocation.decisions.last?.outcome == .drop(reason: .attentionBudget))
        let changes = Planner.diff(previous: [], allocation: allocation)
        #expect(changes.contains(.drop(breakfast, dueAt: breakfast.plannedAt, reason: .attentionBudget)))
    }

    @Test func withoutABudgetNothingIsCut() {
        let candidates = [meal(.breakfast, at: "08:00"), meal(.lunch, at: "12:30"), meal(.dinner, at: "18:30")]
        let allocation = Planner.allocate(candidates, context: context(nil))
        #expect(allocation.plan.count == 3)
    }

    @Test func aPlannedNotificationDisplacedByAMoreValuableOneIsCancelledWithTheBudgetsReason() {
        let budget = AttentionBudget(interruptionsPerDay: 1)
        let breakfast = meal(.breakfast, at: "08:00")
        let dinner = meal(.dinner, at: "18:30")
        let before = PlannedNotification(
            candidate: breakfast, dueAt: breakfast.plannedAt, fireAt: breakfast.plannedAt, zone: .utc)
        let allocation = Planner.allocate([dinner, breakfast], context: context(budget))
        let changes = Planner.diff(previous: [before], allocation: allocation)
        #expect(changes.first == .cancel(before, reason: .attentionBudget))
    }

    @Test func valueTiesGoToTheEarlierTime() {
        var candidates = [meal(.dinner, at: "18:30"), meal(.breakfast, at: "08:00")]
        Planner.order(&candidates) { _ in 1 }
        #expect(candidates.map(\.kind) == [.mealReminder, .mealReminder])
        #expect(candidates.first?.plannedAt == Instant(iso8601: "2027-06-01T08:00:00Z")!)
    }

    @Test func theExplanationNamesTheBudget() {
        let text = AttentionBudget(interruptionsPerDay: 6).explain(value: 0.125)
        #expect(text.contains("attention budget of 6 interruptions"))
        #expect(text.contains("0.13") || text.contains("0.12"))
    }
}
