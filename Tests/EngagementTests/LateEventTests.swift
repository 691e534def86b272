import Models
import Scheduling
import TestSupport
import Testing

@testable import Engagement

/// An activity the server hears of late (`EngineInput.activity(_:occurredAt:)`): the app queued
/// it offline, and the kit withdrew at once what it made moot. A reminder the engine took as
/// fired meanwhile never showed.
@Suite("An activity heard of late")
struct LateEventTests {
    let t0 = instant("2027-03-01T07:00:00Z")
    let london = ZoneRules(identifier: "Europe/London")!

    /// A server's engine whose phone pulled the plan at `t0`, its first meal reminder after
    /// `t0 + 1 h`, and that reminder retired as fired by a background run a minute after its time.
    func firedMeal() -> (UserEngine, PlannedNotification) {
        var engine = engineWithPulledPlan(in: london, at: t0)
        let local = engine.planned.filter { ChannelPolicy.channel(for: $0.kind) == .local }
        let meal = local.first { $0.kind == .mealReminder && $0.fireAt > t0 + 3_600 }!
        _ = engine.handle(.backgroundTaskLaunched(.lapseDetection), at: meal.fireAt + 60)
        #expect(engine.state.plan.fired[meal.id] == meal.fireAt)
        return (engine, meal)
    }

    @Test func aMealLoggedOfflineBeforeItsReminderUnfiresIt() {
        var (engine, meal) = firedMeal()
        let loggedAt = meal.fireAt - 600
        let effects = engine.handle(
            .activity(.mealLogged(meal.id.meal!), occurredAt: loggedAt), at: meal.fireAt + 3_600)
        #expect(!engine.state.plan.ledger.instants.contains(meal.fireAt.secondsSinceEpoch))
        #expect(
            effects.traces.contains {
                $0.requestID == meal.id.description && $0.decision == .cancelled && $0.reason == .alreadyDone
            })
        // Never planned again, and the meal is done on the day it was logged.
        #expect(engine.state.plan.fired[meal.id] == loggedAt)
        #expect(!engine.planned.contains { $0.id == meal.id })
        #expect(engine.lastActiveAt == loggedAt)
        // A second late event finds nothing left to withdraw.
        let again = engine.handle(.activity(.moodLogged, occurredAt: loggedAt + 60), at: meal.fireAt + 3_700)
        #expect(!again.traces.contains { $0.requestID == meal.id.description })
    }

    @Test func anActivityAfterTheReminderOrOfAnotherMealUnfiresNothing() {
        var (after, meal) = firedMeal()
        _ = after.handle(.activity(.mealLogged(meal.id.meal!), occurredAt: meal.fireAt + 60), at: meal.fireAt + 3_600)
        #expect(after.state.plan.ledger.instants.contains(meal.fireAt.secondsSinceEpoch))
        #expect(after.state.plan.fired[meal.id] == meal.fireAt)

        var (other, sameMeal) = firedMeal()
        let another: MealType = sameMeal.id.meal == .dinner ? .lunch : .dinner
        _ = other.handle(
            .activity(.mealLogged(another), occurredAt: sameMeal.fireAt - 600), at: sameMeal.fireAt + 3_600)
        #expect(other.state.plan.fired[sameMeal.id] == sameMeal.fireAt)
    }

    @Test func anActivityReportedOnTimeIsTakenNow() {
        var (engine, meal) = firedMeal()
        let now = meal.fireAt + 3_600
        _ = engine.handle(.activity(.mealLogged(meal.id.meal!)), at: now)
        #expect(engine.state.plan.fired[meal.id] == meal.fireAt)
        #expect(engine.lastActiveAt == now)
    }

    /// An app open sent late shows the user awake when they opened (the local minute the lapse
    /// campaign's night rule reads), not when the server heard; its session is over by then.
    @Test func anOpenSentLateIsTheUsersAtItsInstant() {
        var engine = engineWithPulledPlan(in: london, at: t0)
        let openedAt = instant("2027-03-01T18:00:00Z")
        let heardAt = instant("2027-03-01T22:30:00Z")
        _ = engine.handle(.activity(.appOpened(sessionSeconds: 600), occurredAt: openedAt), at: heardAt)
        #expect(engine.state.activity.recentOpenMinutes.last == 18 * 60)
        #expect(engine.state.activity.activeUntil.map { $0 <= heardAt } ?? true)
        #expect(engine.lastActiveAt == openedAt)

        // One whose session outlasts the delay holds what is left of it.
        _ = engine.handle(.activity(.appOpened(sessionSeconds: 600), occurredAt: heardAt + 60), at: heardAt + 120)
        #expect(engine.state.activity.activeUntil == heardAt + 660)
    }
}
