import Models
import Scheduling
import TestSupport
import Testing

@testable import Engagement

/// Inputs that change the plan's key but not the plan run no pass (`doneChangesLeaveThePlan`,
/// `responsesKeepTheOrder`, a fired group leaving the key), and firings that may change it do:
/// each case here is shown to skip the pass or not; the random streams of `IncrementalPlanTests`
/// hold a skipped pass equal to a full one over every input.
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
        #expect(effects.cancelledIDs.contains(lunch.id.requestID))
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

    /// A notification exempt from a limit it counts against (a mention, from the caps) was placed
    /// without regard to what the pass placed before it: its firing plans again.
    @Test func aFiredMentionPlansAgain() throws {
        var engine = UserEngine(profile: makeProfile(), zone: london, now: morning)
        _ = engine.handle(.appLaunched, at: morning)
        let event = SocialEvent(id: "m1", kind: .mention, actorName: "Lea", topic: "run", isMutualFriend: true)
        _ = engine.handle(.socialEvent(event), at: morning + 600)
        let mention = try #require(engine.state.plan.planned.first { $0.kind == .mention })
        let later = mention.fireAt + 60
        _ = engine.handle(.notificationPermission(allowed: true), at: later)
        #expect(engine.state.plan.fired.contains(mention.id))
        #expect(engine.lastPlanPassAt == later)
    }

    /// Under a daily cap a firing plans again (a candidate the hourly cap moved past midnight was
    /// not counted on the day it left); without one, a routine firing asks for no pass.
    @Test(arguments: [nil, 8] as [Int?])
    func aRoutineFiringPlansAgainOnlyUnderADailyCap(maxPerDay: Int?) throws {
        let early = Instant(iso8601: "2027-06-01T06:00:00+01:00")!
        var engine = UserEngine(profile: makeProfile { $0.maxPerDay = maxPerDay }, zone: london, now: early)
        _ = engine.handle(.appLaunched, at: early)
        let first = try #require(engine.state.plan.planned.first { !$0.repeatsDaily })
        let passAt = engine.lastPlanPassAt
        let later = first.fireAt + 60
        try #require(later < early + 6 * 3_600, "before local noon, when the horizon's end moves")
        _ = engine.handle(.notificationPermission(allowed: true), at: later)
        #expect(engine.state.plan.fired.contains(first.id))
        #expect(engine.lastPlanPassAt == (maxPerDay == nil ? passAt : later))
        #expect(engine.fullReplanChanges(at: later).isEmpty)
    }

    /// A restored engine recomputes the last pass's candidates (`rememberLastPass`): those the
    /// checks read (not fired, not past) are the ones the engine that never stopped keeps.
    @Test(arguments: [1, 3, 4] as [UInt64])
    func aRestoredEngineRemembersTheCandidatesTheChecksRead(seed: UInt64) throws {
        let profile = IncrementalPlanTests.profile(seed: seed)
        let zone = ZoneRules(identifier: profile.timeZone)!
        let start = Instant(iso8601: "2027-03-24T06:00:00Z")!
        var engine = UserEngine(profile: profile, zone: zone, now: start)
        var compared = 0
        for (index, (input, at)) in SnapshotTests.inputs(seed: seed, count: 160, start: start).enumerated() {
            _ = engine.handle(input, at: at)
            guard index % 8 == 7, engine.planIsSettled else { continue }
            let restored = try UserEngine(
                restoring: engine.snapshot(), profile: engine.profile, zone: engine.zone, content: bundledContent)
            func read(_ engine: UserEngine) -> [OrderedCandidate] {
                (engine.state.plan.lastOrder ?? []).filter {
                    $0.plannedAt >= at && !engine.state.plan.fired.contains($0.id)
                }
            }
            #expect(read(restored) == read(engine), "input \(index) (\(input)) at \(at)")
            compared += 1
        }
        #expect(compared > 10)
    }
}
