import Content
import Models
import Scheduling
import Storage
import TestSupport
import Testing

@testable import Engagement
@testable import Runtime

/// A badge sync that does not reach the phone tells the user's engine at once
/// (`EngineInput.syncMissed`): the server then plans around everything the phone holds, instead
/// of taking the phone to hear of the change by the sync's bound.
@Suite struct MissedSyncTests {
    static let start = Instant(secondsSinceEpoch: 1_803_888_000)  // 2027-03-01 08:00 UTC

    /// A runtime whose user's phone holds the plan and whose backend then switched one local
    /// kind off (the phone is to hear of it with the next sync); returns when it was changed.
    static func changedAfterThePhonePulled() async throws -> (EngineRuntime, ManualClock, InMemoryEngagementStore) {
        let store = InMemoryEngagementStore()
        let clock = ManualClock(start)
        let runtime = EngineRuntime(store: store, clock: clock, content: bundledContent)
        var user = profile("u1", zone: "Europe/Berlin")
        try await runtime.putUser(user)
        try await runtime.phoneWasServed(try await runtime.localPlan(of: "u1"), userID: "u1")
        clock.advance(by: 600)
        let engine = try #require(try await runtime.engine(of: "u1"))
        let kind = try #require(engine.planned.first { ChannelPolicy.channel(for: $0.kind) == .local }?.kind)
        user.preferences.settings[kind] = .disabled
        try await runtime.putUser(user)
        return (runtime, clock, store)
    }

    @Test(arguments: [SendReport.failed(reason: "ServiceUnavailable"), .withheld(reason: "NoDevice")])
    func aSyncThatDidNotReachThePhonePlansAroundWhatItHolds(report: SendReport) async throws {
        let (runtime, clock, store) = try await Self.changedAfterThePhonePulled()
        let before = try #require(try await runtime.engine(of: "u1"))
        let hearsBy = try #require(before.state.plan.phoneHearsBy, "the phone is to hear by the sync's bound")
        let sync = try #require(try store.pendingOutbox(userID: "u1").first { $0.channel == .silent })
        #expect(hearsBy > sync.dueAt)

        let sentAt = clock.advance(by: sync.dueAt.secondsSinceEpoch - clock.now().secondsSinceEpoch)
        _ = try await runtime.dispatchDue(through: OnlySyncsTransport(report: report))
        let after = try #require(try await runtime.engine(of: "u1"))
        #expect(after.state.plan.phoneHearsBy == sentAt, "the phone hears only when it pulls, from the send")
        #expect(after.state.plan.lastPassPhone == .whenItPulls)
        #expect(after.effectiveHearing(.by(sentAt + 1_800), at: sentAt + 1) == .whenItPulls)
        // Committed: a runtime started over the same store knows it too.
        let restarted = EngineRuntime(store: store, clock: clock, content: bundledContent)
        #expect(try await restarted.engine(of: "u1")?.state.plan.phoneHearsBy == sentAt)
    }

    @Test func aSyncThatReachedThePhoneLeavesTheBoundAsItWas() async throws {
        let (runtime, clock, store) = try await Self.changedAfterThePhonePulled()
        let hearsBy = try await runtime.engine(of: "u1")?.state.plan.phoneHearsBy
        let sync = try #require(try store.pendingOutbox(userID: "u1").first { $0.channel == .silent })
        clock.advance(by: sync.dueAt.secondsSinceEpoch - clock.now().secondsSinceEpoch)
        _ = try await runtime.dispatchDue(through: OnlySyncsTransport(report: .accepted))
        #expect(try await runtime.engine(of: "u1")?.state.plan.phoneHearsBy == hearsBy)
    }
}

/// Reports every sync as `report` and every other row as accepted.
private struct OnlySyncsTransport: ChannelTransport {
    let report: SendReport

    func perform(_ row: OutboxRow) async throws -> SendReport { row.channel == .silent ? report : .accepted }
}
