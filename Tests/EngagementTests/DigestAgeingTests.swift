import Models
import Scheduling
import TestSupport
import Testing

@testable import Engagement

/// A digest the caps keep blocking does not carry its items for ever: an item that has waited
/// `NotificationGroup.maximumWaitSeconds` is dropped, traced `stale` with its group; a younger
/// one in the same digest moves on.
@Suite struct DigestAgeingTests {
    let london = ZoneRules(identifier: "Europe/London")!
    let t0 = instant("2027-06-01T10:00:00+01:00")

    func engineWithADigest() -> (UserEngine, OccurrenceID) {
        var engine = UserEngine(
            profile: makeProfile { $0.settings[.workoutKudos] = .daily }, zone: london, now: t0)
        _ = engine.handle(.appLaunched, at: t0)
        _ = engine.handle(.socialEvent(kudos(1)), at: t0)
        let group = engine.state.social.groups.first { $0.isDigest }!
        return (engine, group.id)
    }

    @Test func aBlockedDigestMovesItsItemsToTheNextOneWhileTheyAreYoung() {
        var (engine, group) = engineWithADigest()
        var effects: [Effect] = []
        engine.regroup(group, because: .capPerDay, at: t0 + 12 * .secondsPerHour, into: &effects)
        let folded = effects.traces.filter { $0.decision == .folded }
        #expect(folded.map(\.requestID) == ["k1"])
        #expect(engine.state.social.groups.first?.foldedAt == [t0])
    }

    @Test func aDigestBlockedPastTheMaximumWaitDropsItsItemsAsStale() {
        var (engine, group) = engineWithADigest()
        var effects: [Effect] = []
        // Blocked once, a day and a half later: moved on, still waiting since t0.
        engine.regroup(group, because: .capPerDay, at: t0 + 36 * .secondsPerHour, into: &effects)
        let index = engine.state.social.groups.firstIndex { $0.isDigest }!
        #expect(engine.state.social.groups[index].foldedAt == [t0])
        // A second item joins that digest, fresh.
        engine.state.social.groups[index].add(kudos(2), foldedAt: t0 + 48 * .secondsPerHour)
        let next = engine.state.social.groups[index]
        effects = []
        engine.regroup(next.id, because: .capPerDay, at: t0 + 60 * .secondsPerHour, into: &effects)
        let dropped = effects.traces.filter { $0.decision == .dropped }
        #expect(dropped.map(\.requestID) == ["k1"])
        #expect(dropped.allSatisfy { $0.reason == .stale && $0.groupID == next.id.description })
        #expect(effects.traces.filter { $0.decision == .folded }.map(\.requestID) == ["k2"])
    }

    @Test func howLongAnItemWaitsSurvivesASnapshot() throws {
        var (engine, group) = engineWithADigest()
        var effects: [Effect] = []
        engine.regroup(group, because: .capPerDay, at: t0 + 12 * .secondsPerHour, into: &effects)
        let restored = try UserEngine(
            restoring: engine.snapshot(), profile: engine.profile, zone: london, content: bundledContent)
        #expect(restored.state.social.groups.first?.foldedAt == [t0])
    }
}
