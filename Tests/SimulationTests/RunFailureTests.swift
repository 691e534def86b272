import Models
import Storage
import TestSupport
import Testing

@testable import Simulation

/// The simulator is a library: when its output cannot be written it throws, and only the
/// `simulate` executable turns that into an exit status (74).
@Suite struct RunFailureTests {
    /// A store whose device is full: every batch is refused, nothing is ever stored.
    struct FullStore: EngagementStore {
        func apply(_ batch: StoreBatch) throws(StoreError) { throw .diskFull("simulated") }
        func profile(id: UserID) throws(StoreError) -> UserProfile? { nil }
        func activityEvents(userID: UserID, since: Instant) throws(StoreError) -> [ActivityEvent] { [] }
        func lastActiveAt(userID: UserID) throws(StoreError) -> Instant? { nil }
        func usersInactive(since: Instant) throws(StoreError) -> [UserID] { [] }
        func ledger(userID: UserID, from: Instant, to: Instant) throws(StoreError) -> [LedgerEntry] { [] }
        func engagementState(userID: UserID) throws(StoreError) -> EngagementState? { nil }
    }

    @Test func aRefusedStoreBatchEndsTheRunWithAnErrorInsteadOfExiting() throws {
        var scenario = try Scenario.parse(baseScenario(), file: "test.json")
        scenario.users = 3
        scenario.weeks = 1
        var zones: [String: ZoneRules] = ["UTC": .utc]
        for name in scenario.timeZones.names { zones[name] = ZoneRules(identifier: name) }
        let shard = try Shard(
            scenario: scenario, zones: zones, userRange: 0..<3, eventsPath: nil, showProgress: false,
            templates: bundledTemplates, store: FullStore())
        #expect {
            try shard.run()
        } throws: { error in
            guard case .store(let underlying) = error as? SimulationError else { return false }
            return underlying as? StoreError == .diskFull("simulated")
        }
    }
}
