import Models
import Scheduling
import Testing

@testable import Engagement

/// Inputs that change the plan's key but not the plan run no pass (`doneChangesLeaveThePlan`,
/// `responsesKeepTheOrder`, a fired group leaving the key): each case here is shown to skip the
/// pass and to leave nothing a full pass would schedule or cancel; the random streams of
/// `IncrementalPlanTests` hold the same over every input.
@Suite struct PlanInputChangesTests {
    let london = ZoneRules(identifier: "Europe/London")!
    let morning = Instant(iso8601: "2027-06-01T08:00:00+01:00")!

    /// Lunch logged after its reminder fired: the reminder is skipped as fired before anyone
    /// asks whether it is done, so the new done mark moves nothing.
    @Test func aMealLoggedAfterItsReminderFiredRunsNoPass() throws {
        var engine = UserEngine(profile: makeProfile(), zone: london, now: morning)
        _ = engine.handle(.appLaunched, at: morning)
        let lunch = try #require(engine.state.plan.planned.first { $0.id.description.hasSuffix("lunch") })
        let afterLunch = lunch.fireAt + 600
        // Activity a minute before, so logging the meal does not move the lapse campaign.
        _ = engine.handle(.activity(.moodLogged), at: afterLunch)
        #expect(engine.state.plan.fired.contains(lunch.id))
        let passAt = engine.lastPlanPassAt
        let doneBefore = try #require(engine.state.plan.lastKey?.done)

        _ = engine.handle(.activity(.mealLogged(.lunch)), at: afterLunch + 60)
        #expect(engine.state.activity.done.contains(lunch.id))
        #expect(engine.state.plan.lastKey?.done != doneBefore, "the kept key takes what is done now")
        #expect(engine.lastPlanPassAt == passAt, "no pass")
        #expect(engine.fullReplanChanges(at: afterLunch + 60).isEmpty)
    }

    /// Lunch logged while its reminder waits: the reminder is done, so a pass cancels it.
    @Test func aMealLoggedBeforeItsReminderCancelsIt() throws {
        var engine = UserEngine(profile: makeProfile(), zone: london, now: morning)
        _ = engine.handle(.appLaunched, at: morning)
        let lunch = try #require(engine.state.plan.planned.first { $0.id.description.hasSuffix("lunch") })
        let effects = engine.handle(.activity(.mealLogged(.lunch)), at: morning + 600)
        #expect(engine.lastPlanPassAt == morning + 600)
        #expect(effects.cancelledIDs.contains(lunch.id.description))
    }

    /// Under a budget, a response at an hour no candidate of its kind falls in leaves every
    /// value as it was; piling up acted responses at a later hydration's hour lifts it above
    /// what went before it, which asks for a pass.
    @Test func responsesAskForAPassOnlyWhenTheyReorder() throws {
        let profile = makeProfile { $0.interruptionBudgetPerDay = 4 }
        var engine = UserEngine(profile: profile, zone: london, now: morning)
        _ = engine.handle(.appLaunched, at: morning)
        let now = morning + 60
        let order = try #require(engine.state.plan.lastOrder)
        let future = order.filter { $0.plannedAt > now }
        let first = try #require(future.first)
        func hour(_ candidate: OrderedCandidate) -> Int { london.localDateTime(at: candidate.plannedAt).hour }
        let later = try #require(
            future.last { $0.kind != first.kind || hour($0) != hour(first) }, "a candidate worth less than the first")
        let usedHours = Set(future.filter { $0.kind == later.kind }.map(hour))
        let quietHour = try #require((0..<24).first { !usedHours.contains($0) })

        var untouched = engine
        untouched.state.coaching.responses.record(.ignored, slot: LearningSlot(later.kind), hour: quietHour)
        let horizonEnd = engine.routineHorizonEnd(at: now)
        var exact = untouched
        let matchesExactly = exact.lastKeyMatches(at: now, horizonEnd: horizonEnd, exactly: true)
        let matches = untouched.lastKeyMatches(at: now, horizonEnd: horizonEnd)
        #expect(!matchesExactly)
        #expect(matches)
        #expect(untouched.fullReplanChanges(at: now).isEmpty)

        var reordering = engine
        for _ in 0..<40 {
            reordering.state.coaching.responses.record(.acted, slot: LearningSlot(later.kind), hour: hour(later))
        }
        #expect(!reordering.responsesKeepTheOrder(at: now))
        let reorderedMatches = reordering.lastKeyMatches(at: now, horizonEnd: horizonEnd)
        #expect(!reorderedMatches)
    }

    /// A social item sent alone fires: the group leaves the state and the kept key together, so
    /// the next input runs no pass for it.
    @Test func aFiredGroupLeavesTheKeyWithIt() throws {
        var engine = UserEngine(profile: makeProfile(), zone: london, now: morning)
        _ = engine.handle(.appLaunched, at: morning)
        let event = SocialEvent(id: "s1", kind: .workoutKudos, actorName: "Ben", topic: "run", isMutualFriend: true)
        _ = engine.handle(.socialEvent(event), at: morning + 600)
        let group = try #require(engine.state.social.groups.first)
        let planned = try #require(engine.state.plan.planned.first { $0.id == group.id })
        let passAt = engine.lastPlanPassAt

        let later = planned.fireAt + 60
        _ = engine.handle(.notificationPermission(allowed: true), at: later)
        #expect(engine.state.social.groups.isEmpty)
        #expect(engine.state.plan.fired.contains(group.id))
        #expect(engine.lastPlanPassAt == passAt, "no pass")
        #expect(engine.fullReplanChanges(at: later).isEmpty)
    }

    /// A restored engine does not know its last pass's candidates: a change of what is done asks
    /// for a pass until it has run one.
    @Test func aRestoredEngineAsksForAPassOnADoneChange() throws {
        var engine = UserEngine(profile: makeProfile(), zone: london, now: morning)
        _ = engine.handle(.appLaunched, at: morning)
        engine.state.plan.lastOrder = nil
        engine.state.activity.done[
            OccurrenceID(.mealReminder, date: LocalDate(year: 2027, month: 5, day: 1), .meal(.lunch))] =
            morning
        #expect(!engine.doneChangesLeaveThePlan())
        let horizonEnd = engine.routineHorizonEnd(at: morning + 60)
        let matches = engine.lastKeyMatches(at: morning + 60, horizonEnd: horizonEnd)
        #expect(!matches)
    }
}
