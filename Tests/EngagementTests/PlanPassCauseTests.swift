import Models
import Scheduling
import TestSupport
import Testing

@testable import Engagement

/// Why an input ran a planning pass (`UserEngine.planPassCauses`), as `simulate --check-plans`
/// tallies it.
@Suite struct PlanPassCauseTests {
    let zone = ZoneRules(identifier: "Asia/Kathmandu")!
    let start = Instant(iso8601: "2027-03-10T07:00:00+05:45")!

    @Test func aPassIsTracedToWhatChanged() throws {
        var engine = UserEngine(
            profile: UserProfile(id: "u1", displayName: "Ana", timeZone: zone.identifier), zone: zone, now: start)
        // The first input has no key to compare: it plans afresh.
        var before = engine
        _ = engine.handle(.appLaunched, at: start)
        #expect(engine.planPassCauses(since: before, at: start) == [.keyForgottenBefore])

        // An input that changes nothing the pass reads runs none, and has no cause.
        before = engine
        _ = engine.handle(.activity(.moodLogged), at: start + 60)
        #expect(engine.lastPlanPassAt == before.lastPlanPassAt)
        #expect(engine.planPassCauses(since: before, at: start + 60).isEmpty)

        // Quiet hours set: the profile changed.
        before = engine
        var preferences = engine.profile.preferences
        preferences.quietHours = try QuietHours(
            start: LocalTimeOfDay("12:00")!, end: LocalTimeOfDay("14:00")!)
        _ = engine.handle(.preferencesChanged(preferences), at: start + 120)
        #expect(engine.planPassCauses(since: before, at: start + 120).contains(.profileRevision))

        // A pull that changes what the phone holds keeps the key: an input the phone hears of at
        // once (nothing committed, nothing held later) plans nothing.
        let held = engine.planned.map { (requestID: $0.id.requestID, fireAt: $0.fireAt) }
        let holdsChanged = engine.phoneApplied(held, at: start + 180)
        #expect(holdsChanged)
        before = engine
        _ = engine.handle(.activity(.moodLogged), at: start + 240)
        #expect(engine.planPassCauses(since: before, at: start + 240).isEmpty)

        // A snapshot of the version before stores no pass: the restored engine plans afresh.
        var restored = try UserEngine(
            restoring: engine.snapshot(version: 8), profile: engine.profile, zone: engine.zone,
            content: bundledContent)
        before = restored
        _ = restored.handle(.activity(.moodLogged), at: start + 300)
        #expect(restored.planPassCauses(since: before, at: start + 300) == [.keyForgottenBefore])
    }
}
