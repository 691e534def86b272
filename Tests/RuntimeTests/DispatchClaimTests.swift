import Content
import Foundation
import Models
import Storage
import Synchronization
import TestSupport
import Testing

@testable import Runtime

/// `EngineRuntime.dispatchDue` over a store that lists rows as they stand (SQLite, as `engaged
/// serve` runs it) applies the claim-time rules a worker's claim applies: a backlog found at
/// dispatch is not a burst, and a restart forgets none of it.
@Suite("Engine runtime: claim-time rules at dispatch")
struct DispatchClaimTests {
    typealias Policy = ClaimTimePolicyTests

    /// A runtime over a SQLite store at `path`, on `clock`.
    static func runtime(_ path: String, _ clock: ManualClock) throws -> (EngineRuntime, SQLiteEngagementStore) {
        let store = try SQLiteEngagementStore(path: path)
        return (EngineRuntime(store: store, clock: clock, content: bundledContent), store)
    }

    /// Commits `rows` beside the user's engine, as a step's commit would.
    static func commit(_ rows: [OutboxRow], to store: SQLiteEngagementStore) throws {
        let snapshot = try #require(try store.snapshot(userID: "u1"))
        try store.commit(RuntimeCommit(userID: "u1", snapshot: snapshot, outbox: rows))
    }

    /// The alerts the test committed (and their merges) that `transport` sent.
    static func sent(_ transport: RecordingTransport) -> [OutboxRow] {
        transport.performed.withLock { $0 }.filter {
            $0.requestID.rawValue.hasPrefix("mention") || $0.requestID.rawValue.hasPrefix("merged/")
        }
    }

    static func withStorePath(_ body: (String) async throws -> Void) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("claims-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try await body(directory.appendingPathComponent("store.sqlite").path)
    }

    static func mention(_ name: String, at due: Instant) -> OutboxRow {
        var row = Policy.alert("mention.\(name)", at: due)
        if case .alert(var request) = row.payload {
            request.content.kind = .mention
            row.payload = .alert(request)
        }
        return row
    }

    @Test("Alerts held up for hours go out as one alert that counts them, once")
    func aBacklogIsMergedIntoOneAlert() async throws {
        try await Self.withStorePath { path in
            let clock = ManualClock(Policy.instant("2027-03-02T07:00:00Z"))  // 08:00 in Berlin
            let (runtime, store) = try Self.runtime(path, clock)
            try await runtime.putUser(Policy.profile())
            let backlog = ["08:00", "08:20", "08:40"].map {
                Self.mention($0, at: Policy.instant("2027-03-02T\($0):00Z"))
            }
            try Self.commit(backlog, to: store)
            clock.advance(by: 3 * 3_600)  // the server was stopped until 11:00 in Berlin
            let transport = RecordingTransport()
            _ = try await runtime.dispatchDue(through: transport)
            _ = try await runtime.dispatchDue(through: transport)
            let sent = Self.sent(transport)
            #expect(sent.count == 1)
            #expect(sent.first?.requestID == "merged/\(backlog[0].key)")
            if case .alert(let request)? = sent.first?.payload {
                #expect(request.content.body.hasPrefix("3 updates: "))
            } else {
                Issue.record("the merged row carries no notification")
            }
            let pending = Set(try store.pendingOutbox(userID: "u1").map(\.key))
            #expect(pending.isDisjoint(with: backlog.map(\.key)))
        }
    }

    @Test("An alert found in quiet hours waits for their end, and then goes")
    func quietHoursDeferUntilTheirEnd() async throws {
        try await Self.withStorePath { path in
            let clock = ManualClock(Policy.instant("2027-03-02T19:00:00Z"))  // 20:00 in Berlin
            let (runtime, store) = try Self.runtime(path, clock)
            try await runtime.putUser(Policy.profile())
            let alert = Self.mention("evening", at: Policy.instant("2027-03-02T20:00:00Z"))
            try Self.commit([alert], to: store)
            clock.advance(by: Policy.instant("2027-03-02T21:30:00Z") - clock.now())  // 22:30, quiet
            let transport = RecordingTransport()
            _ = try await runtime.dispatchDue(through: transport)
            #expect(Self.sent(transport).isEmpty)
            let morning = Policy.instant("2027-03-03T06:00:00Z")  // 07:00 in Berlin
            #expect(try store.pendingOutbox(userID: "u1").first { $0.key == alert.key }?.dueAt == morning)
            clock.advance(by: morning - clock.now())
            _ = try await runtime.dispatchDue(through: transport)
            #expect(Self.sent(transport).map(\.key) == [alert.key])
        }
    }

    @Test("The hourly cap counts what was sent before a restart, on time or late")
    func theTallySurvivesARestart() async throws {
        try await Self.withStorePath { path in
            let clock = ManualClock(Policy.instant("2027-03-02T08:00:00Z"))  // 09:00 in Berlin
            do {
                let (runtime, store) = try Self.runtime(path, clock)
                try await runtime.putUser(Policy.profile(maxPerHour: 1))
                try Self.commit([Self.mention("first", at: clock.now())], to: store)
                let transport = RecordingTransport()
                _ = try await runtime.dispatchDue(through: transport)
                #expect(Self.sent(transport).count == 1)
            }
            clock.advance(by: 600)
            let (runtime, store) = try Self.runtime(path, clock)
            // Due two minutes ago: late, so the rules count what went before.
            let second = Self.mention("second", at: clock.now() - 120)
            try Self.commit([second], to: store)
            let transport = RecordingTransport()
            _ = try await runtime.dispatchDue(through: transport)
            #expect(Self.sent(transport).isEmpty)
            let nextHour = Policy.instant("2027-03-02T09:00:00Z")
            #expect(try store.pendingOutbox(userID: "u1").first { $0.key == second.key }?.dueAt == nextHour)
        }
    }

    @Test("A send that failed is sent again alone, under its own key, never merged")
    func anAttemptedAlertGoesAlone() async throws {
        try await Self.withStorePath { path in
            let clock = ManualClock(Policy.instant("2027-03-02T08:00:00Z"))
            let (runtime, store) = try Self.runtime(path, clock)
            try await runtime.putUser(Policy.profile())
            let first = Self.mention("first", at: clock.now() - 600)
            try Self.commit([first], to: store)
            let transport = RecordingTransport()
            transport.failing.withLock { $0 = true }
            _ = try await runtime.dispatchDue(through: transport)
            transport.failing.withLock { $0 = false }
            clock.advance(by: 60)
            let second = Self.mention("second", at: clock.now() - 600)
            try Self.commit([second], to: store)
            // The first goes alone; the second is held back, and the batch says so.
            let alone = try await runtime.dispatchDueBatch(through: transport)
            #expect(alone.heldBack == 1 && alone.leftPending == 0)
            let next = try await runtime.dispatchDueBatch(through: transport)
            #expect(next.heldBack == 0 && next.listed >= 1)
            #expect(Self.sent(transport).map(\.key) == [first.key, second.key])
        }
    }
}
