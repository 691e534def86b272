import Engagement
import Foundation
import Models
import Storage
import Synchronization
import TestSupport
import Testing

@testable import Runtime

/// Social event ids in the runtime: a namespace of their own per user, remembered for a retention
/// window after they were taken in, so a repeat notifies no one twice.
@Suite("Engine runtime: social ids")
struct SocialIDTests {
    /// Midday in the profile's zone (Asia/Kathmandu), outside quiet hours.
    static let start = Instant(iso8601: "2027-03-29T06:00:00Z")!

    static func mention(_ id: String) -> EngineInput {
        .socialEvent(SocialEvent(id: id, kind: .mention, actorName: "Ben", topic: "run", isMutualFriend: true))
    }

    /// A store of `kind` in a fresh folder, and a function that removes the folder.
    static func makeStore(_ kind: String) throws -> (any RuntimeStore, () -> Void) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("social-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let remove = { _ = try? FileManager.default.removeItem(at: directory) }
        guard kind == "sqlite" else { return (InMemoryEngagementStore(), remove) }
        return (try SQLiteEngagementStore(path: directory.appendingPathComponent("s.sqlite").path), remove)
    }

    /// Moves the clock on by `seconds` in steps of `stepSeconds`, performing what falls due at each.
    static func run(
        _ runtime: EngineRuntime, _ clock: ManualClock, for seconds: Int64, stepSeconds: Int64 = 900,
        through transport: RecordingTransport
    ) async throws {
        var elapsed: Int64 = 0
        while elapsed < seconds {
            let step = min(stepSeconds, seconds - elapsed)
            clock.advance(by: step)
            elapsed += step
            for _ in 0..<8 where try await !runtime.dispatchDue(limit: 1_000, through: transport).isEmpty {}
        }
    }

    static func traces(_ effects: [Effect]) -> [TraceEntry] {
        effects.compactMap { if case .trace(let entry) = $0 { entry } else { nil } }
    }

    /// Pushes performed for mentions.
    static func mentionPushes(_ transport: RecordingTransport) -> Int {
        transport.performed.withLock { $0 }.filter {
            $0.channel == .push && $0.payload.notification?.content.kind == .mention
        }.count
    }

    @Test func aSocialEventsDecisionsWriteNoLedgerRow() throws {
        let engine = UserEngine(
            profile: profile(), zone: try #require(ZoneRules(identifier: "Europe/Berlin")), now: Self.start,
            content: bundledContent)
        func entry(_ subject: TraceSubject) -> Effect {
            .trace(
                TraceEntry(
                    at: Self.start, userID: "u1", subject: subject, kind: .workoutKudos, decision: .folded,
                    reason: .batched))
        }
        let batch = StepRecords.batch(
            for: nil,
            effects: [entry(.socialEvent("mealReminder.2027-04-12.lunch")), entry(.external("answered.1"))],
            engine: engine, at: Self.start)
        #expect(batch.ledgerEntries.map(\.requestID) == ["answered.1"])
        // Its decisions are still traced, under the id as given.
        let trace = StepRecords.traceRecords(
            for: nil, effects: [entry(.socialEvent("mealReminder.2027-04-12.lunch"))], userID: "u1")
        #expect(trace.map(\.requestID) == ["mealReminder.2027-04-12.lunch"])
    }

    @Test(arguments: ["memory", "sqlite"])
    func aSocialIDEqualToARequestIDLeavesThatRequestAlone(storeKind: String) async throws {
        // Two users' runtimes, the same in all but the social event's id: one takes an id equal
        // to a planned reminder's request id, the other an id of its own. The reminder's ledger
        // row and rows must come out the same in both.
        let (namesake, removeNamesake) = try Self.makeStore(storeKind)
        let (control, removeControl) = try Self.makeStore(storeKind)
        defer {
            removeNamesake()
            removeControl()
        }
        let clock = ManualClock(Self.start)
        let runtimes = [namesake, control].map {
            EngineRuntime(store: $0, clock: clock, content: bundledContent, configuration: withoutAttentionBudget)
        }
        for runtime in runtimes { try await runtime.putUser(profile()) }
        let far = Self.start + 30 * .secondsPerDay
        let planned = try namesake.ledger(userID: "u1", from: Self.start - 1, to: far)
        let reminder = try #require(planned.first { $0.kind == .mealReminder } ?? planned.first)
        clock.advance(by: 60)
        // Kudos are batched (`profile()`): the item is traced as folded into its batch.
        try await runtimes[0].apply(SocialStorageTests.kudos(reminder.requestID.rawValue), to: "u1")
        try await runtimes[1].apply(SocialStorageTests.kudos("post-77"), to: "u1")

        let ledger = try namesake.ledger(userID: "u1", from: Self.start - 1, to: far)
        #expect(ledger == (try control.ledger(userID: "u1", from: Self.start - 1, to: far)))
        #expect(ledger.first { $0.requestID == reminder.requestID } == reminder)
        #expect(!ledger.contains { $0.kind == .workoutKudos && $0.requestID == reminder.requestID })
        #expect(try namesake.pendingOutbox(userID: "u1") == (try control.pendingOutbox(userID: "u1")))
        // The id is kept where social ids live.
        let record = try #require(try namesake.socialEventRecord(userID: "u1", eventID: reminder.requestID.rawValue))
        #expect(record.seenAt == clock.now())
        #expect(try namesake.socialEventRecord(userID: "u1", eventID: "post-77") == nil)
    }

    @Test(arguments: ["memory", "sqlite"])
    func aRepeatAfterDeliveryNotifiesNoOneAgain(storeKind: String) async throws {
        let (store, remove) = try Self.makeStore(storeKind)
        defer { remove() }
        let clock = ManualClock(Self.start)
        let runtime = EngineRuntime(
            store: store, clock: clock, content: bundledContent, configuration: withoutAttentionBudget)
        try await runtime.putUser(profile())
        let transport = RecordingTransport()
        try await runtime.apply(Self.mention("m1"), to: "u1")
        try await Self.run(runtime, clock, for: 6 * 3_600, through: transport)
        #expect(Self.mentionPushes(transport) == 1)
        let inboxBefore = try await runtime.inbox(of: "u1", cursor: nil, limit: 100).items.filter {
            $0.kind == "mention"
        }
        #expect(inboxBefore.count == 1)

        // The backend's webhook is retried hours after the push went out, then again days later.
        for wait: Int64 in [3_600, 3 * .secondsPerDay] {
            clock.advance(by: wait)
            let effects = try await runtime.apply(Self.mention("m1"), to: "u1").effects
            let traces = Self.traces(effects)
            #expect(effects.count == 1)
            #expect(traces.map(\.reason) == [.duplicateEvent])
            #expect(traces.first?.decision == .suppressed)
            #expect(traces.first?.subject == .socialEvent("m1"))
            #expect(traces.first?.detail.contains("already received at") == true, "\(traces)")
            try await Self.run(runtime, clock, for: 6 * 3_600, through: transport)
        }
        #expect(Self.mentionPushes(transport) == 1)
        let inboxAfter = try await runtime.inbox(of: "u1", cursor: nil, limit: 100).items.filter {
            $0.kind == "mention"
        }
        #expect(inboxAfter == inboxBefore)
        // The first arrival's window stands: a repeat does not extend it.
        #expect(try store.socialEventRecord(userID: "u1", eventID: "m1")?.seenAt == Self.start)
    }

    @Test(
        arguments: [
            (nil, SocialEventRecord.defaultRetentionSeconds - 60, true),
            (nil, SocialEventRecord.defaultRetentionSeconds, false),
            (7_200, 7_140, true),
            (7_200, 7_200, false),
        ] as [(Int64?, Int64, Bool)])
    func anIDIsADuplicateForItsRetentionWindowOnly(retention: Int64?, repeatAfter: Int64, duplicate: Bool)
        async throws
    {
        let clock = ManualClock(Self.start)
        let store = InMemoryEngagementStore()
        let runtime =
            if let retention {
                EngineRuntime(
                    store: store, clock: clock, content: bundledContent, configuration: withoutAttentionBudget,
                    socialIDRetentionSeconds: retention)
            } else {
                EngineRuntime(
                    store: store, clock: clock, content: bundledContent, configuration: withoutAttentionBudget)
            }
        try await runtime.putUser(profile())
        let transport = RecordingTransport()
        try await runtime.apply(Self.mention("m1"), to: "u1")
        try await Self.run(runtime, clock, for: repeatAfter, stepSeconds: 3_600, through: transport)
        #expect(Self.mentionPushes(transport) == 1)
        let again = Self.traces(try await runtime.apply(Self.mention("m1"), to: "u1").effects)
            .filter { $0.subject == .socialEvent("m1") }
        #expect((again.map(\.reason) == [.duplicateEvent]) == duplicate, "\(again)")
        try await Self.run(runtime, clock, for: 6 * 3_600, through: transport)
        #expect(Self.mentionPushes(transport) == (duplicate ? 1 : 2))
        let record = try #require(try store.socialEventRecord(userID: "u1", eventID: "m1"))
        #expect(record.seenAt == (duplicate ? Self.start : Self.start + repeatAfter))
        #expect(record.expiresAt == record.seenAt + (retention ?? SocialEventRecord.defaultRetentionSeconds))
    }

    @Test func repeatsArrivingTogetherAreTakenInOnce() async throws {
        let clock = ManualClock(Self.start)
        let store = InMemoryEngagementStore()
        let runtime = EngineRuntime(
            store: store, clock: clock, content: bundledContent, configuration: withoutAttentionBudget)
        try await runtime.putUser(profile())
        let reasons = try await withThrowingTaskGroup(of: [ReasonCode].self) { group in
            for _ in 0..<8 {
                group.addTask {
                    Self.traces(try await runtime.apply(Self.mention("m1"), to: "u1").effects)
                        .filter { $0.subject == .socialEvent("m1") }.map(\.reason)
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(reasons.filter { $0 != [.duplicateEvent] }.count == 1, "\(reasons)")
        #expect(try store.socialEventRecordCount() == 1)
    }
}
