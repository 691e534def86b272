import Content
import Engagement
import Foundation
import Models
import Scheduling
import Storage
import Synchronization
import TestSupport
import Testing

@testable import Runtime

/// A transport that records what it performed, and can be told to fail.
final class RecordingTransport: ChannelTransport {
    let performed = Mutex<[OutboxRow]>([])
    let failing = Mutex(false)

    func perform(_ row: OutboxRow) async throws -> SendReport {
        struct Refused: Error {}
        if failing.withLock({ $0 }) { throw Refused() }
        performed.withLock { $0.append(row) }
        return .accepted
    }
}

/// The engine's defaults without the attention budget: hydration then goes out as daily
/// series, which the outbox tests below follow (the budget's own tests are in EngagementTests).
let withoutAttentionBudget: EngineConfiguration = {
    var configuration = EngineConfiguration()
    configuration.attentionBudget = nil
    return configuration
}()

func profile(_ id: UserID = "u1", zone: String = "Asia/Kathmandu") -> UserProfile {
    var preferences = NotificationPreferences()
    preferences.hydration = .biHourly
    preferences.settings[.workoutKudos] = .batched
    return UserProfile(
        id: id, displayName: "Ana Test", timeZone: zone,
        communication: CommunicationPreferences(absenceResponse: .checkInOnMe), preferences: preferences)
}

/// Inputs with the seconds to wait before each.
let script: [(waitSeconds: Int64, input: EngineInput)] = [
    (600, .activity(.appOpened(sessionSeconds: 120))),
    (3_600, .activity(.mealLogged(.breakfast))),
    (
        7_200,
        .socialEvent(SocialEvent(id: "s1", kind: .workoutKudos, actorName: "Ben", topic: "run", isMutualFriend: true))
    ),
    (
        300,
        .socialEvent(SocialEvent(id: "s2", kind: .workoutKudos, actorName: "Cy", topic: "run", isMutualFriend: false))
    ),
    (5 * 3_600, .activity(.workoutCompleted(durationMinutes: 40))),
    (86_400, .timeZoneChanged(ZoneRules(identifier: "America/St_Johns")!)),
    (4 * 86_400, .activity(.appOpened(sessionSeconds: 60))),
    (3_600, .activity(.checkInCompleted)),
]

@Suite("Engine runtime")
struct RuntimeTests {
    static let start = Instant(iso8601: "2027-03-27T22:00:00Z")!
    /// Someone mentions the user: a remote kind, so its notification gets a push row.
    static let mention = EngineInput.socialEvent(
        SocialEvent(id: "m1", kind: .mention, actorName: "Ben", topic: "run", isMutualFriend: true))

    @Test func theRuntimeGivesTheEffectsOfTheEngineRunDirectly() async throws {
        // The simulator's shell applies inputs to an engine in memory; the runtime restores the
        // engine from its store for every input. Both see the same effects.
        let clock = ManualClock(Self.start)
        let runtime = EngineRuntime(store: InMemoryEngagementStore(), clock: clock, content: bundledContent)
        var direct = UserEngine(
            profile: profile(), zone: ZoneRules(identifier: "Asia/Kathmandu")!, now: Self.start,
            contentSeed: EngineRuntime.contentSeed("u1"), content: bundledContent)
        _ = direct.handle(.appLaunched, at: Self.start)
        try await runtime.putUser(profile())
        for (wait, input) in script {
            let now = clock.advance(by: wait)
            await runtime.evictCache()
            let viaRuntime = try await runtime.apply(input, to: "u1").effects
            #expect(viaRuntime == direct.handle(input, at: now))
        }
    }

    @Test func aRuntimeStartedOverTheSameSQLiteFileContinuesExactly() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("runtime-\(UUID()).sqlite").path
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        let clock = ManualClock(Self.start)
        let reference = EngineRuntime(store: InMemoryEngagementStore(), clock: clock, content: bundledContent)
        var current = EngineRuntime(store: try SQLiteEngagementStore(path: path), clock: clock, content: bundledContent)
        try await reference.putUser(profile())
        try await current.putUser(profile())
        for (index, (wait, input)) in script.enumerated() {
            clock.advance(by: wait)
            if index % 3 == 2 {
                // A new process over the same file: nothing but the store survives.
                current = EngineRuntime(
                    store: try SQLiteEngagementStore(path: path), clock: clock, content: bundledContent)
            }
            let expected = try await reference.apply(input, to: "u1").effects
            let actual = try await current.apply(input, to: "u1").effects
            #expect(actual == expected)
        }
        let store = try SQLiteEngagementStore(path: path)
        try store.checkIntegrity()
    }

    @Test func aChangeOfZoneMovesThePendingRowsToTheEnginesNewFireTimes() async throws {
        let clock = ManualClock(Self.start)
        let store = InMemoryEngagementStore()
        let runtime = EngineRuntime(store: store, clock: clock, content: bundledContent)
        try await runtime.putUser(profile(zone: "Asia/Tokyo"))
        clock.advance(by: 3_600)
        try await runtime.apply(.timeZoneChanged(ZoneRules(identifier: "Europe/London")!), to: "u1")
        let engine = try #require(try await runtime.engine(of: "u1"))
        let fireTimes = Dictionary(
            zip(engine.plannedRequestIDs, engine.plannedFireTimes), uniquingKeysWith: { first, _ in first })
        // Rows due by now are the dispatcher's (the engine counts them as fired); the sync is
        // the plan's signal (`PlanSignalTests`).
        let rows = try store.pendingOutbox(userID: "u1").filter {
            $0.channel != .job && $0.channel != .silent && $0.dueAt > clock.now()
        }
        #expect(!rows.isEmpty)
        for row in rows {
            #expect(row.dueAt == fireTimes[row.requestID], "\(row.requestID) \(row.channel)")
        }
    }

    @Test func aProfileChangeReachesTheEngineAtOnce() async throws {
        // check_in_on_me -> give_me_space while away: the planned nudges go, with their rows.
        let clock = ManualClock(Self.start)
        let store = InMemoryEngagementStore()
        let runtime = EngineRuntime(store: store, clock: clock, content: bundledContent)
        try await runtime.putUser(profile())
        clock.advance(by: 4 * 86_400)
        try await runtime.apply(.backgroundTaskLaunched(.lapseDetection), to: "u1")
        #expect(
            try store.pendingOutbox(userID: "u1").contains {
                $0.requestID.rawValue.hasPrefix("reEngagement.") && $0.dueAt > clock.now()
            })
        var quiet = profile()
        quiet.communication.absenceResponse = .giveMeSpace
        try await runtime.putUser(quiet)
        await runtime.evictCache()
        // What is still to come is gone (an overdue row is the dispatcher's to send or not).
        #expect(
            try !store.pendingOutbox(userID: "u1").contains {
                $0.requestID.rawValue.hasPrefix("reEngagement.") && $0.dueAt > clock.now()
            })
        let engine = try #require(try await runtime.engine(of: "u1"))
        #expect(engine.profile.communication.absenceResponse == .giveMeSpace)
        #expect(!engine.plannedRequestIDs.contains { $0.rawValue.hasPrefix("reEngagement.") })
    }

    @Test func aDailySeriesRowComesBackForItsNextDay() async throws {
        let clock = ManualClock(Self.start)
        let store = InMemoryEngagementStore()
        let runtime = EngineRuntime(
            store: store, clock: clock, content: bundledContent, configuration: withoutAttentionBudget)
        try await runtime.putUser(profile())
        let series = try #require(
            try store.pendingOutbox(userID: "u1").first {
                $0.requestID.rawValue.contains(".daily.") && $0.channel == .inbox
            })
        clock.advance(by: series.dueAt - clock.now())
        _ = try await runtime.dispatchDue(limit: 10_000, through: RecordingTransport())
        let next = try store.pendingOutbox(userID: "u1").filter {
            $0.requestID == series.requestID && $0.channel == .inbox
        }
        #expect(next.map(\.dueAt) == [series.dueAt + 86_400])
    }

    @Test func dueRowsArePerformedOnceAndJobsRunTheEngine() async throws {
        let clock = ManualClock(Self.start)
        let store = InMemoryEngagementStore()
        let runtime = EngineRuntime(store: store, clock: clock, content: bundledContent)
        let transport = RecordingTransport()
        try await runtime.putUser(profile())
        try await runtime.apply(Self.mention, to: "u1")  // a push besides the inbox and the jobs
        #expect(try store.outboxDepth() > 0)
        // The mention's push when it is due (two days late it would be stale, and not sent),
        // then the jobs of two days.
        let mentionDueAt = try #require(try store.pendingOutbox(userID: "u1").first { $0.channel == .push }?.dueAt)
        clock.advance(by: mentionDueAt - clock.now())
        var completed = try await runtime.dispatchDue(limit: 10_000, through: transport)
        clock.advance(by: 2 * 86_400)
        completed += try await runtime.dispatchDue(limit: 10_000, through: transport)
        let performed = transport.performed.withLock { $0 }
        #expect(performed.contains { $0.channel == .push })
        #expect(Set(performed.map(\.key)).count == performed.count)
        #expect(performed.allSatisfy { $0.dueAt <= clock.now() })
        #expect(completed.contains { $0.channel == .job })
        // The lapse-detection job ran the engine (which records the user's lapse state) and
        // submitted its next run, a day later.
        #expect(try store.engagementState(userID: "u1") != nil)
        let lapseJob = BackgroundJob.lapseDetection.rawValue
        let nextRun = try #require(try store.pendingOutbox(userID: "u1").first { $0.requestID.rawValue == lapseJob })
        #expect(nextRun.dueAt > clock.now())
        // Again: nothing performed twice (only what became due since, such as a series' next day).
        let again = try await runtime.dispatchDue(limit: 10_000, through: transport)
        #expect(Set(again.map(\.key)).isDisjoint(with: performed.map(\.key)))
        let all = transport.performed.withLock { $0 }.map(\.key)
        #expect(Set(all).count == all.count)
    }

    @Test func aRowWhoseSendFailsStaysPendingAndIsSentLaterWithTheSameKey() async throws {
        let clock = ManualClock(Self.start)
        let store = InMemoryEngagementStore()
        let runtime = EngineRuntime(store: store, clock: clock, content: bundledContent)
        let transport = RecordingTransport()
        try await runtime.putUser(profile())
        try await runtime.apply(Self.mention, to: "u1")
        clock.advance(by: 86_400)
        let due = try store.dueOutbox(through: clock.now(), limit: 10_000).filter { $0.channel == .push }
        #expect(!due.isEmpty)
        transport.failing.withLock { $0 = true }
        _ = try await runtime.dispatchDue(limit: 10_000, through: transport)
        let pending = Set(try store.pendingOutbox(userID: "u1").map(\.key))
        #expect(Set(due.map(\.key)).isSubset(of: pending))
        #expect(transport.performed.withLock { $0 }.isEmpty)
        transport.failing.withLock { $0 = false }
        _ = try await runtime.dispatchDue(limit: 10_000, through: transport)
        #expect(transport.performed.withLock { $0 }.filter { $0.channel == .push }.map(\.key) == due.map(\.key))
    }

    @Test func aCrashAfterTheSendButBeforeTheCompletionResendsWithTheSameKey() async throws {
        // A row sent but not completed (the process died in between) is sent again with its key,
        // which the receiver uses to drop the repeat; no other row goes twice. (That a replayed
        // commit never revives a completed row is the store's contract, tested there.)
        let clock = ManualClock(Self.start)
        let store = InMemoryEngagementStore()
        let runtime = EngineRuntime(
            store: store, clock: clock, content: bundledContent, configuration: withoutAttentionBudget)
        try await runtime.putUser(profile())
        try await runtime.apply(Self.mention, to: "u1")
        clock.advance(by: 86_400)
        let first = try #require(
            try store.dueOutbox(through: clock.now(), limit: 10_000).first { $0.channel == .push })
        let transport = RecordingTransport()
        _ = try await transport.perform(first)  // sent, then the process died
        _ = try await runtime.dispatchDue(limit: 10_000, through: transport)
        let keys = transport.performed.withLock { $0 }.map(\.key)
        #expect(keys.filter { $0 == first.key }.count == 2)
        #expect(Set(keys).count == keys.count - 1)
    }

    @Test func badInputIsRefusedAndChangesNothing() async throws {
        let clock = ManualClock(Self.start)
        let store = InMemoryEngagementStore()
        let runtime = EngineRuntime(store: store, clock: clock, content: bundledContent)
        await #expect(throws: RuntimeError.unknownUser("nobody")) {
            try await runtime.apply(.activity(.coachChat), to: "nobody")
        }
        await #expect(throws: RuntimeError.unknownTimeZone("Mars/Olympus")) {
            try await runtime.putUser(profile(zone: "Mars/Olympus"))
        }
        #expect(try store.profile(id: "u1") == nil)
        #expect(try store.outboxDepth() == 0)
    }

    @Test(arguments: [
        (UserID("u1"), RequestID("mealReminder.2027-03-01.lunch"), Int64(0), OutboxChannel.push),
        (UserID("u2"), RequestID("mealReminder.2027-03-01.lunch"), Int64(0), OutboxChannel.push),
        (UserID("u1"), RequestID("mealReminder.2027-03-01.lunch"), Int64(60), OutboxChannel.push),
        (UserID("u1"), RequestID("mealReminder.2027-03-01.lunch"), Int64(0), OutboxChannel.inbox),
    ])
    func outboxKeysAreDeterministicUUIDs(user: UserID, request: RequestID, offset: Int64, channel: OutboxChannel) {
        let key = OutboxKey.make(user, request, Self.start + offset, channel)
        #expect(key == OutboxKey.make(user, request, Self.start + offset, channel))
        #expect(key != OutboxKey.make(user, request, Self.start + offset + 1, channel))
        #expect(UUID(uuidString: key.rawValue) != nil)
        #expect(Array(key.rawValue)[14] == "8")
    }

    /// Keys are stored in outboxes and stores: their bytes never change (these were made by the
    /// first implementation, which hashed the joined text).
    @Test func outboxKeysKeepTheirValues() {
        #expect(
            OutboxKey.make("ana", "hydration.2027-03-01.0900", Instant(secondsSinceEpoch: 1_803_960_000), .push)
                == "05a85b68-6ea8-8899-b62a-f96163aec38c")
        #expect(
            OutboxKey.make("u-é", "liveActivity.a-1.3", Instant(secondsSinceEpoch: -5), .liveActivity)
                == "2fc42726-0ad4-8c54-ab59-7c254b54b8f5")
    }
}
