import Models
import Scheduling
import TestSupport
import Testing

@testable import Engagement

/// `UserEngine.localPlanRevision`: it moves exactly at the steps that change what the phone holds
/// on the local channel, only ever grows while the engine runs on, and survives a snapshot.
@Suite("Local plan revision")
struct LocalPlanRevisionTests {
    /// Whether a step whose effects are `effects`, taken from an engine that planned
    /// `localBefore` (the local requests' identifiers), changes the phone's local plan.
    static func changesLocalPlan(_ effects: [Effect], input: EngineInput, localBefore: Set<String>) -> Bool {
        if case .timeZoneChanged = input, !localBefore.isEmpty { return true }
        return effects.contains { effect in
            switch effect {
            case .schedule(_, _, let channel): channel == .local
            case .cancel(let ids): ids.contains { localBefore.contains($0.rawValue) }
            default: false
            }
        }
    }

    static func localIDs(_ engine: UserEngine) -> Set<String> {
        Set(engine.planned.filter { ChannelPolicy.channel(for: $0.kind) == .local }.map(\.id.description))
    }

    @Test(arguments: [1, 2, 3, 4, 5] as [UInt64])
    func theRevisionMovesExactlyWhenTheLocalPlanDoes(seed: UInt64) throws {
        let start = instant("2027-03-01T07:00:00Z")
        let profile = SnapshotTests.profile(seed: seed)
        var engine = UserEngine(
            profile: profile, zone: ZoneRules(identifier: profile.timeZone)!, now: start,
            configuration: seed % 2 == 0 ? .withoutAttentionBudget : EngineConfiguration())
        var moved = 0
        var still = 0
        for (input, at) in SnapshotTests.inputs(seed: seed, count: 300, start: start) {
            let before = engine.localPlanRevision
            let localBefore = Self.localIDs(engine)
            let effects = engine.handle(input, at: at)
            let changed = Self.changesLocalPlan(effects, input: input, localBefore: localBefore)
            #expect(engine.localPlanRevision >= before)
            #expect((engine.localPlanRevision != before) == changed, "\(input) at \(at.iso8601)")
            if changed { moved += 1 } else { still += 1 }
        }
        // Both kinds of step happen, or the test proves little.
        #expect(moved > 10 && still > 10, "moved \(moved), still \(still)")
    }

    @Test func theFirstPassPlansTheRoutineAndLaterPassesWithNothingNewKeepIt() {
        let t0 = instant("2027-03-01T07:00:00Z")
        var engine = UserEngine(
            profile: makeProfile(), zone: ZoneRules(identifier: "Europe/London")!, now: t0,
            configuration: .withoutAttentionBudget)
        #expect(engine.localPlanRevision == 0)
        _ = engine.handle(.appLaunched, at: t0)
        let launched = engine.localPlanRevision
        #expect(launched > 0)
        _ = engine.handle(.activity(.moodLogged), at: t0 + 60)
        #expect(engine.localPlanRevision == launched)
        _ = engine.handle(.activity(.mealLogged(.lunch)), at: t0 + 120)
        #expect(engine.localPlanRevision > launched)
    }

    @Test func theRevisionSurvivesASnapshotAndAnOlderOneReadsAsZero() throws {
        let t0 = instant("2027-03-01T07:00:00Z")
        let zone = ZoneRules(identifier: "Europe/London")!
        var engine = UserEngine(profile: makeProfile(), zone: zone, now: t0)
        _ = engine.handle(.appLaunched, at: t0)
        _ = engine.handle(.activity(.mealLogged(.lunch)), at: t0 + 120)
        #expect(engine.localPlanRevision > 1)
        let restored = try UserEngine(
            restoring: engine.snapshot(), profile: engine.profile, zone: zone, content: bundledContent)
        #expect(restored.localPlanRevision == engine.localPlanRevision)
        let older = try UserEngine(
            restoring: engine.snapshot(version: 5), profile: engine.profile, zone: zone, content: bundledContent)
        #expect(older.localPlanRevision == 0)
    }

    @Test(arguments: [0, 1, 127, 128, 300, 16_383, 16_384, 1 << 40])
    func theRevisionIsReadFromTheSnapshotsEndWithoutRestoringIt(revision: Int) throws {
        let t0 = instant("2027-03-01T07:00:00Z")
        for refuses in [false, true] {
            var engine = UserEngine(profile: makeProfile(), zone: ZoneRules(identifier: "Europe/London")!, now: t0)
            _ = engine.handle(.appLaunched, at: t0)
            engine.state.plan.localRevision = revision
            engine.state.plan.deviceRefuses = refuses
            #expect(try EngineSnapshot.localPlanRevision(of: engine.snapshot()) == revision)
            #expect(try EngineSnapshot.localPlanRevision(of: engine.snapshot(version: 5)) == 0)
        }
    }

    @Test func everyRandomRunsSnapshotAgreesWithTheRestoredEngine() throws {
        let start = instant("2027-03-01T07:00:00Z")
        let profile = SnapshotTests.profile(seed: 3)
        var engine = UserEngine(profile: profile, zone: ZoneRules(identifier: profile.timeZone)!, now: start)
        for (input, at) in SnapshotTests.inputs(seed: 3, count: 200, start: start) {
            _ = engine.handle(input, at: at)
            #expect(try EngineSnapshot.localPlanRevision(of: engine.snapshot()) == engine.localPlanRevision)
        }
        #expect(throws: SnapshotError.self) { try EngineSnapshot.localPlanRevision(of: [0x45, 0x53]) }
        #expect(throws: SnapshotError.self) { try EngineSnapshot.localPlanRevision(of: [1, 2, 3, 4]) }
        #expect(throws: SnapshotError.self) { try EngineSnapshot.localPlanRevision(of: [0x45, 0x53, 10, 0]) }
        #expect(throws: SnapshotError.self) { try EngineSnapshot.localPlanRevision(of: [0x45, 0x53, 6, 0, 0x80]) }
    }
}
