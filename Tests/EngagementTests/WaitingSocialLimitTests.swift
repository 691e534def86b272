import Models
import Scheduling
import TestSupport
import Testing

@testable import Engagement

/// One user's waiting social items are bounded (`EngineConfiguration.waitingSocialItemLimit`):
/// beyond the limit an item is only counted in its kind's digest, and the count travels with
/// the digest (copy, regrouping, staleness, a disabled kind, snapshots) as the kept items do.
@Suite struct WaitingSocialLimitTests {
    let london = ZoneRules(identifier: "Europe/London")!
    let t0 = instant("2027-06-01T10:00:00+01:00")

    func engine(limit: Int, _ setting: NotificationSetting = .daily) -> UserEngine {
        var configuration = EngineConfiguration()
        configuration.waitingSocialItemLimit = limit
        var engine = UserEngine(
            profile: makeProfile { $0.settings[.workoutKudos] = setting }, zone: london, now: t0,
            configuration: configuration)
        _ = engine.handle(.appLaunched, at: t0)
        return engine
    }

    /// Kudos `numbers`, the n-th at `t0 + n` seconds (or all at `t0 + 1`, before a single goes out).
    func receive(_ numbers: ClosedRange<Int>, _ engine: inout UserEngine, together: Bool = false) -> [TraceEntry] {
        numbers.flatMap { n in
            engine.handle(.socialEvent(kudos(n)), at: t0 + (together ? 1 : Int64(n))).traces.filter {
                $0.requestID == "k\(n)"
            }
        }
    }

    var digestOf: (UserEngine) -> NotificationGroup? { { $0.state.social.groups.first { $0.isDigest } } }

    @Test func itemsBeyondTheLimitAreCountedInTheDigestAndItsCopy() throws {
        var engine = engine(limit: 3)
        let traces = receive(1...7, &engine)
        #expect(traces.map(\.reason) == [.digest, .digest, .digest] + Array(repeating: .waitingItemsFull, count: 4))
        #expect(traces.allSatisfy { $0.decision == .folded })
        let digest = try #require(digestOf(engine))
        #expect(digest.items.map(\.id) == ["k1", "k2", "k3"])
        #expect(digest.countedItems == 4 && digest.countedSince == t0 + 4 && digest.countedLatest == t0 + 7)
        #expect(traces.last?.detail.hasPrefix("dailyDigest of 7") == true)
        let request = engine.groupRequest(digest, candidate: engine.groupCandidate(digest), fireAt: digest.sendAt)
        #expect(request.content.body.contains("7"), "\(request.content.body)")
        #expect(engine.groupCandidate(digest).revision == 7)
    }

    @Test func aBatchedOrImmediateKindBeyondTheLimitIsCountedInItsDailyDigest() throws {
        for setting in [NotificationSetting.batched, .immediate] {
            var engine = engine(limit: 2, setting)
            let traces = receive(1...3, &engine, together: true)
            #expect(traces.last?.reason == .waitingItemsFull)
            let digest = try #require(digestOf(engine))
            #expect(digest.mode == .dailyDigest && digest.countedItems == 1)
            #expect(traces.last?.groupID == digest.id.description)
        }
    }

    @Test func aFloodKeepsTheStateBounded() {
        var engine = engine(limit: 200)
        for n in 1...2_000 { _ = engine.handle(.socialEvent(kudos(n)), at: t0 + Int64(n / 100)) }
        let kept = engine.state.social.groups.reduce(0) { $0 + $1.items.count }
        let counted = engine.state.social.groups.reduce(0) { $0 + $1.countedItems }
        #expect(kept == 200 && counted == 1_800)
        #expect(engine.snapshot().count < 16_000, "\(engine.snapshot().count) bytes")
    }

    @Test func aBlockedDigestMovesItsCountedItemsWithOneTraceEntry() throws {
        var engine = engine(limit: 1)
        _ = receive(1...3, &engine)
        let blocked = try #require(digestOf(engine))
        var effects: [Effect] = []
        engine.regroup(blocked.id, because: .capPerDay, at: t0 + 12 * .secondsPerHour, into: &effects)
        let next = try #require(digestOf(engine))
        #expect(next.id != blocked.id && next.items.map(\.id) == ["k1"] && next.countedItems == 2)
        #expect(next.countedSince == t0 + 2)
        let moved = effects.traces.filter { $0.requestID == blocked.id.description }
        #expect(moved.count == 1 && moved.first?.decision == .folded && moved.first?.countedItems == 2)
        #expect(moved.first?.groupID == next.id.description && moved.first?.reason == .capPerDay)
    }

    @Test func countedItemsPastTheMaximumWaitAreDroppedAsStale() throws {
        var engine = engine(limit: 1)
        _ = receive(1...3, &engine)
        var effects: [Effect] = []
        let first = try #require(digestOf(engine))
        engine.regroup(first.id, because: .capPerDay, at: t0 + 36 * .secondsPerHour, into: &effects)
        let second = try #require(digestOf(engine))
        effects = []
        engine.regroup(second.id, because: .capPerDay, at: t0 + 60 * .secondsPerHour, into: &effects)
        let dropped = effects.traces.filter { $0.decision == .dropped }
        #expect(dropped.map(\.requestID) == ["k1", second.id.description])
        #expect(dropped.map(\.countedItems) == [nil, 2])
        #expect(dropped.allSatisfy { $0.reason == .stale && $0.groupID == second.id.description })
        #expect(engine.state.social.groups.isEmpty)
    }

    /// Counted items move on while the newest of them is young, carrying the oldest one's wait;
    /// a kept item of the same digest that waited too long is dropped alone.
    @Test func countedItemsMoveOnWhileTheNewestIsYoung() throws {
        var engine = engine(limit: 1)
        _ = receive(1...2, &engine)
        var effects: [Effect] = []
        let first = try #require(digestOf(engine))
        engine.regroup(first.id, because: .capPerDay, at: t0 + 36 * .secondsPerHour, into: &effects)
        // One more counted at +47 h joins the digest the others moved to.
        _ = engine.handle(.socialEvent(kudos(3)), at: t0 + 47 * .secondsPerHour)
        let second = try #require(digestOf(engine))
        #expect(second.countedItems == 2 && second.countedLatest == t0 + 47 * .secondsPerHour)
        effects = []
        engine.regroup(second.id, because: .capPerDay, at: t0 + 60 * .secondsPerHour, into: &effects)
        #expect(effects.traces.filter { $0.decision == .dropped }.map(\.requestID) == ["k1"])
        let third = try #require(digestOf(engine))
        #expect(third.items.isEmpty && third.countedItems == 2 && third.countedSince == t0 + 2)
    }

    @Test func disablingTheKindSuppressesItsCountedItems() throws {
        var engine = engine(limit: 1)
        _ = receive(1...2, &engine)
        let digest = try #require(digestOf(engine))
        var preferences = engine.profile.preferences
        preferences.settings[.workoutKudos] = .disabled
        let effects = engine.handle(.preferencesChanged(preferences), at: t0 + 600)
        let suppressed = effects.traces.filter { $0.reason == .kindDisabled && $0.groupID != nil }
        #expect(suppressed.map(\.requestID) == ["k1", digest.id.description])
        #expect(engine.state.social.groups.isEmpty)
    }

    @Test func countedItemsSurviveASnapshotAndAnOlderVersionHasNone() throws {
        var engine = engine(limit: 2)
        _ = receive(1...5, &engine)
        let restored = try UserEngine(
            restoring: engine.snapshot(), profile: engine.profile, zone: london, configuration: engine.configuration,
            content: bundledContent)
        #expect(restored.state.social.groups == engine.state.social.groups)
        let older = try UserEngine(
            restoring: engine.snapshot(version: 4), profile: engine.profile, zone: london,
            configuration: engine.configuration, content: bundledContent)
        #expect(older.state.social.groups.map(\.countedItems) == [0])
        #expect(older.state.social.groups.map(\.items) == engine.state.social.groups.map(\.items))
    }
}
