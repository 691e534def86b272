import Engagement
import Models
import Scheduling
import Storage
import Synchronization
import TestSupport
import Testing

@testable import Runtime

@Suite("Runtime trace")
struct RuntimeTraceTests {
    /// Every `.trace` effect of the step, as the store should keep it.
    static func expected(_ effects: [Effect], input: String) -> [TraceRecord] {
        effects.compactMap { effect in
            guard case .trace(let entry) = effect else { return nil }
            return TraceRecord(
                userID: entry.userID, at: entry.at, requestID: RequestID(entry.requestID), kind: entry.kind,
                decision: entry.decision, reason: entry.reason, fireAt: entry.fireAt, detail: entry.detail,
                groupID: entry.groupID, input: input)
        }
    }

    @Test func eachStepCommitsItsTracedDecisionsWithTheInputThatCausedThem() async throws {
        let clock = ManualClock(RuntimeTests.start)
        let store = InMemoryEngagementStore()
        let runtime = EngineRuntime(store: store, clock: clock, content: bundledContent)
        let reported = Mutex<[TraceRecord]>([])
        runtime.committedTrace.set { records in reported.withLock { $0 += records } }

        try await runtime.putUser(profile())
        var expected = try Self.stored(store).map(Self.withoutID)  // appLaunched
        #expect(!expected.isEmpty && expected.allSatisfy { $0.input == "appLaunched" })
        for (wait, input) in script {
            clock.advance(by: wait)
            let effects = try await runtime.apply(input, to: "u1").effects
            expected += Self.expected(effects, input: StepRecords.inputName(input))
        }
        var changed = profile()
        changed.preferences.maxPerHour = 1
        clock.advance(by: 60)
        try await runtime.putUser(changed)

        let stored = try Self.stored(store)
        #expect(stored.count > expected.count)  // the update traced its own decisions
        #expect(stored.prefix(expected.count).map(Self.withoutID) == expected)
        #expect(stored.dropFirst(expected.count).allSatisfy { $0.input == "userUpdated" })
        #expect(stored.contains { $0.input == "socialEvent" && $0.decision == .folded })
        // What was reported is what was committed, ids aside.
        #expect(reported.withLock { $0 }.map(Self.withoutID) == stored.map(Self.withoutID))
    }

    @Test(arguments: [
        (EngineInput.appLaunched, "appLaunched"),
        (.activity(.mealLogged(.lunch)), "mealLogged"),
        (.notificationResponse(requestID: "r", kind: .hydration, action: .dismiss), "notificationResponse"),
        (.unrecognizedResponse(requestID: "r", kind: .hydration, actionIdentifier: "X"), "notificationResponse"),
        (.backgroundTaskLaunched(.lapseDetection), "backgroundTask:com.airfit.lapseDetection"),
    ])
    func inputsHaveStableNames(input: EngineInput, name: String) {
        #expect(StepRecords.inputName(input) == name)
    }

    @Test func aStepWithoutAnInputIsAUserUpdate() {
        #expect(StepRecords.inputName(nil) == "userUpdated")
    }

    /// An entry for a group's counted items names no request of its own: it writes no ledger row
    /// (the group it leaves would read as planned again).
    @Test func anEntryForCountedItemsWritesNoLedgerRow() throws {
        let engine = UserEngine(
            profile: profile(), zone: try #require(ZoneRules(identifier: "Europe/Berlin")), now: RuntimeTests.start,
            content: bundledContent)
        func entry(_ counted: Int?) -> Effect {
            .trace(
                TraceEntry(
                    at: RuntimeTests.start, userID: "u1", subject: .external("workoutKudos.2027-03-01.2"),
                    kind: .workoutKudos, decision: .folded, reason: .capPerDay,
                    group: OccurrenceID(requestID: "workoutKudos.2027-03-02.3"), groupKey: "workoutKudos/dailyDigest",
                    countedItems: counted))
        }
        let batch = StepRecords.batch(
            for: nil, effects: [entry(4), entry(nil)], engine: engine, at: RuntimeTests.start)
        #expect(batch.ledgerEntries.count == 1)
    }

    static func stored(_ store: some TraceStore) throws -> [TraceRecord] {
        try store.traceRecords(
            userID: "u1", after: TracePosition(at: Instant(secondsSinceEpoch: 0), id: 0), limit: 10_000)
    }

    static func withoutID(_ record: TraceRecord) -> TraceRecord {
        var record = record
        record.id = 0
        return record
    }
}
