import Engagement
import Models
import Storage
import TestSupport
import Testing

@testable import Runtime

/// `PlanSignal`: a step that changes the local plan for anyone but the phone commits the
/// user's badge and inbox sync, inside the silent budget; the phone's own step does not.
@Suite("Plan signal")
struct PlanSignalTests {
    static let start = Instant(iso8601: "2027-03-01T06:00:00Z")!

    @Test func theBackendAlwaysAsksAndAPhoneOnlyForItsUsersOtherDevices() throws {
        #expect(try PlanSignal.asksForSync(source: .backend, otherDevices: { () throws(RuntimeError) in false }))
        #expect(try PlanSignal.asksForSync(source: .device, otherDevices: { () throws(RuntimeError) in true }))
        #expect(!(try PlanSignal.asksForSync(source: .device, otherDevices: { () throws(RuntimeError) in false })))
    }

    func launched() async throws -> (EngineRuntime, InMemoryEngagementStore, ManualClock) {
        let clock = ManualClock(Self.start)
        let store = InMemoryEngagementStore()
        let runtime = EngineRuntime(store: store, clock: clock, content: bundledContent)
        try await runtime.putUser(profile(zone: "Europe/Berlin"))
        return (runtime, store, clock)
    }

    static func syncRows(_ store: InMemoryEngagementStore) throws -> [OutboxRow] {
        try store.pendingOutbox(userID: "u1").filter { $0.channel == .silent }
    }

    @Test func theAnswerCarriesTheRevisionAndThePhonesOwnStepSignalsNothing() async throws {
        let (runtime, store, clock) = try await launched()
        #expect(try Self.syncRows(store).isEmpty)
        let before = try await runtime.localPlanVersion(of: "u1")
        clock.advance(by: 60)
        let applied = try await runtime.apply(.activity(.mealLogged(.lunch)), to: "u1", from: .device)
        #expect(applied.localPlanRevision > before)
        #expect(try await runtime.localPlanVersion(of: "u1") == applied.localPlanRevision)
        #expect(try await runtime.localPlan(of: "u1").version == applied.localPlanRevision)
        #expect(try Self.syncRows(store).isEmpty)
    }

    @Test func aBackendStepThatMovesThePlanCommitsOneSyncAtTheNextSlot() async throws {
        let (runtime, store, clock) = try await launched()
        clock.advance(by: 60)
        try await runtime.apply(.activity(.mealLogged(.lunch)), to: "u1", from: .backend)
        let plan = SilentPushPlan()
        #expect(try Self.syncRows(store).map(\.dueAt) == [plan.slot(after: clock.now())])
        clock.advance(by: 60)
        let lunchVersion = try await runtime.localPlanVersion(of: "u1")
        let dinner = try await runtime.apply(.activity(.mealLogged(.dinner)), to: "u1")
        #expect(dinner.localPlanRevision > lunchVersion)  // a second change, coalesced
        #expect(try Self.syncRows(store).count == 1)
    }

    @Test func aPhonesStepSignalsItsUsersOtherDevices() async throws {
        let (runtime, store, clock) = try await launched()
        _ = try await runtime.registerDevice(
            token: String(repeating: "a", count: 64), environment: .production, platform: "ios", for: "u1")
        clock.advance(by: 60)
        let before = try await runtime.localPlanVersion(of: "u1")
        let lunch = try await runtime.apply(.activity(.mealLogged(.lunch)), to: "u1", from: .device)
        #expect(lunch.localPlanRevision > before)
        #expect(try Self.syncRows(store).isEmpty)  // one device: it holds the answer
        _ = try await runtime.registerDevice(
            token: String(repeating: "b", count: 64), environment: .production, platform: "ios", for: "u1")
        clock.advance(by: 60)
        try await runtime.apply(.activity(.mealLogged(.dinner)), to: "u1", from: .device)
        #expect(try Self.syncRows(store).count == 1)
    }

    @Test func theVersionIsTheCommittedOneWhateverTheCacheHolds() async throws {
        let (runtime, store, clock) = try await launched()
        let before = try await runtime.localPlanVersion(of: "u1")
        // Another process (a worker) commits a step the cache of this one never saw.
        let other = EngineRuntime(store: store, clock: clock, content: bundledContent)
        clock.advance(by: 60)
        let applied = try await other.apply(.activity(.mealLogged(.lunch)), to: "u1")
        #expect(applied.localPlanRevision > before)
        #expect(try await runtime.localPlanVersion(of: "u1") == applied.localPlanRevision)
        #expect(try await runtime.localPlan(of: "u1").version == applied.localPlanRevision)
    }

    @Test func aBackendStepThatLeavesThePlanSignalsNothing() async throws {
        let (runtime, store, clock) = try await launched()
        let before = try await runtime.localPlanVersion(of: "u1")
        clock.advance(by: 60)
        let applied = try await runtime.apply(.activity(.moodLogged), to: "u1")
        #expect(applied.localPlanRevision == before)
        #expect(try Self.syncRows(store).isEmpty)
    }

    @Test func theVersionStaysAsTimePassesWhileWhatFiredLeavesThePlan() async throws {
        let (runtime, _, clock) = try await launched()
        let first = try await runtime.localPlan(of: "u1")
        let soonest = try #require(first.entries.first { !$0.request.trigger.repeats })
        clock.advance(by: soonest.nextFireAt - clock.now() + 1)
        let later = try await runtime.localPlan(of: "u1")
        #expect(later.version == first.version)
        #expect(!later.entries.contains { $0.request.identifier == soonest.request.identifier })
    }

    @Test func anUnknownUserHasNoVersion() async throws {
        let runtime = EngineRuntime(
            store: InMemoryEngagementStore(), clock: ManualClock(Self.start), content: bundledContent)
        await #expect(throws: RuntimeError.unknownUser("nobody")) { try await runtime.localPlanVersion(of: "nobody") }
    }
}
