import Models
import Scheduling
import Testing

@testable import Engagement

/// A change of how notifications look reaches what is already planned: every planned request is
/// written again under its identifier. A change that does not (a cap) rewrites nothing.
@Suite struct RewriteOnProfileChangeTests {
    let london = ZoneRules(identifier: "Europe/London")!
    let t0 = instant("2027-06-01T05:00:00Z")

    func engine() -> (UserEngine, [NotificationRequest]) {
        var profile = makeProfile { $0.hydration = .biHourly }
        profile.privacyLevel = .public
        var engine = UserEngine(profile: profile, zone: london, now: t0, configuration: .withoutAttentionBudget)
        let planned = engine.handle(.appLaunched, at: t0).scheduled.map(\.request)
        return (engine, planned)
    }

    @Test func turningPrivacyToPrivateRewritesEveryPlannedRequestWithoutTheName() throws {
        var (engine, planned) = engine()
        #expect(planned.contains { ($0.content.title + $0.content.body).contains("Ana") })
        #expect(planned.contains { $0.trigger.repeats })
        var profile = engine.profile
        profile.privacyLevel = .private
        let rewritten = engine.handle(.profileChanged(profile), at: t0 + 60).scheduled.map(\.request)
        #expect(Set(rewritten.map(\.identifier)) == Set(planned.map(\.identifier)))
        #expect(!rewritten.contains { ($0.content.title + $0.content.body).contains("Ana") })
    }

    @Test func turningSoundOffRewritesThemSilent() {
        var (engine, planned) = engine()
        #expect(planned.allSatisfy { $0.content.sound != nil })
        var preferences = engine.profile.preferences
        preferences.soundEnabled = false
        let rewritten = engine.handle(.preferencesChanged(preferences), at: t0 + 60).scheduled.map(\.request)
        #expect(Set(rewritten.map(\.identifier)) == Set(planned.map(\.identifier)))
        #expect(rewritten.allSatisfy { $0.content.sound == nil })
    }

    /// One change that rewrites the copy and ends the hydration series: the series is cancelled,
    /// not left firing on the phone.
    @Test func aSeriesThatIsNoLongerPlannedIsCancelledNotOrphanedByTheRewrite() {
        var (engine, planned) = engine()
        let series = planned.filter { $0.trigger.repeats }.map(\.identifier)
        #expect(!series.isEmpty)
        var preferences = engine.profile.preferences
        preferences.soundEnabled = false
        preferences.hydration = nil
        let effects = engine.handle(.preferencesChanged(preferences), at: t0 + 60)
        #expect(Set(series).isSubset(of: Set(effects.cancelledIDs)))
        #expect(!effects.scheduled.contains { $0.request.trigger.repeats })
        #expect(!engine.planned.contains { $0.repeatsDaily })
    }

    @Test func aChangeThatDoesNotShowRewritesNothing() {
        var (engine, _) = engine()
        var preferences = engine.profile.preferences
        preferences.maxPerHour = 9
        #expect(engine.handle(.preferencesChanged(preferences), at: t0 + 60).scheduled.isEmpty)
    }
}
