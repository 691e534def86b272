import Models
import Scheduling
import TestSupport
import Testing

@testable import Engagement

/// `notificationPermission`: while the device refuses notifications the engine plans nothing
/// there and withdraws what it had planned, so its belief is what the device holds; when allowed
/// again it plans afresh from that moment.
@Suite struct NotificationPermissionTests {
    let london = ZoneRules(identifier: "Europe/London")!
    let t0 = instant("2027-06-01T12:00:00+01:00")

    func launchedEngine() -> (UserEngine, [Effect]) {
        // Without the attention budget hydration is a daily series: the refusal withdraws it too.
        var engine = UserEngine(
            profile: makeProfile { $0.hydration = .triDaily }, zone: london, now: t0,
            configuration: .withoutAttentionBudget)
        let effects = engine.handle(.appLaunched, at: t0)
        return (engine, effects)
    }

    func localPlanned(_ engine: UserEngine) -> [PlannedNotification] {
        engine.planned.filter { ChannelPolicy.channel(for: $0.kind) == .local }
    }

    @Test func aRefusalWithdrawsEveryLocalRequestWithItsReason() {
        var (engine, launched) = launchedEngine()
        let scheduledLocal = Set(
            launched.scheduled.map(\.request.identifier).filter {
                ChannelPolicy.channel(for: OccurrenceID(requestID: $0)!.kind) == .local
            })
        #expect(!scheduledLocal.isEmpty)
        #expect(launched.scheduled.contains { $0.request.trigger.repeats })
        let effects = engine.handle(.notificationPermission(allowed: false), at: t0 + 60)
        #expect(Set(effects.cancelledIDs) == scheduledLocal)
        #expect(effects.scheduled.isEmpty)
        let cancelled = effects.traces.filter { $0.decision == .cancelled }
        #expect(cancelled.count == scheduledLocal.count)
        #expect(cancelled.allSatisfy { $0.reason == .notificationsNotAllowed })
        #expect(localPlanned(engine).isEmpty)
    }

    @Test func nothingIsScheduledOnTheDeviceWhileRefusedAndTheDaysGoOn() {
        var (engine, _) = launchedEngine()
        _ = engine.handle(.notificationPermission(allowed: false), at: t0 + 60)
        var effects: [Effect] = []
        for day in 1...3 {
            effects += engine.handle(.activity(.appOpened(sessionSeconds: 60)), at: t0 + Int64(day) * .secondsPerDay)
        }
        #expect(effects.scheduled.allSatisfy { ChannelPolicy.channel(for: $0.request.content.kind) != .local })
        #expect(localPlanned(engine).isEmpty)
        #expect(effects.traces.contains { $0.decision == .suppressed && $0.reason == .notificationsNotAllowed })
    }

    @Test func allowedAgainPlansAfreshFromThatMomentNeverAtAnOldTime() {
        var (engine, _) = launchedEngine()
        _ = engine.handle(.notificationPermission(allowed: false), at: t0 + 60)
        // A day later, the user still active (a lapse would pause routine reminders anyway).
        _ = engine.handle(.activity(.appOpened(sessionSeconds: 60)), at: t0 + .secondsPerDay)
        let back = t0 + .secondsPerDay + 2 * .secondsPerHour
        let effects = engine.handle(.notificationPermission(allowed: true), at: back)
        let local = effects.scheduled.filter { ChannelPolicy.channel(for: $0.request.content.kind) == .local }
        #expect(!local.isEmpty)
        #expect(local.allSatisfy { $0.fireAt > back })
        #expect(localPlanned(engine).count == local.count)
    }

    @Test func allowedWhenNeverRefusedChangesNothing() {
        var (engine, _) = launchedEngine()
        let before = engine.planned
        let effects = engine.handle(.notificationPermission(allowed: true), at: t0 + 60)
        #expect(effects.scheduled.isEmpty && effects.cancelledIDs.isEmpty)
        #expect(engine.planned == before)
    }

    @Test func theRefusalSurvivesASnapshotAndAnOlderSnapshotReadsAllowed() throws {
        var (engine, _) = launchedEngine()
        _ = engine.handle(.notificationPermission(allowed: false), at: t0 + 60)
        let restored = try UserEngine(
            restoring: engine.snapshot(), profile: engine.profile, zone: london, content: bundledContent)
        #expect(restored.state.plan.deviceRefuses)
        let older = try UserEngine(
            restoring: engine.snapshot(version: 3), profile: engine.profile, zone: london, content: bundledContent)
        #expect(!older.state.plan.deviceRefuses)
        // The older format cannot say the device refused: its reader plans afresh at once (and a
        // refused schedule would teach it again) rather than trust a plan key it cannot rebuild.
        var upgraded = older
        let effects = upgraded.handle(.activity(.moodLogged), at: t0 + 120)
        #expect(effects.scheduled.contains { ChannelPolicy.channel(for: $0.request.content.kind) == .local })
    }
}
