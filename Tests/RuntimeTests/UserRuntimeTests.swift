import Engagement
import Foundation
import Models
import Storage
import TestSupport
import Testing

@testable import Runtime

private let start = Instant(iso8601: "2027-03-01T06:00:00Z")!
private let startMilliseconds = start.secondsSinceEpoch * 1_000

/// A profile write of `groups` with values that differ from the defaults in every group.
private func update(
    _ groups: Set<UserFieldGroup>, at milliseconds: Int64?, zone: String = "Europe/Berlin", name: String = "Ana",
    id: UserID = "u1"
) -> UserUpdate {
    var preferences = NotificationPreferences()
    preferences.maxPerHour = 3
    return UserUpdate(
        proposed: UserProfile(
            id: id, displayName: name, timeZone: zone, motivationalStyle: .challenging,
            communication: CommunicationPreferences(absenceResponse: .giveMeSpace), privacyLevel: .private,
            preferences: preferences, locale: "de-DE"),
        groups: groups, updatedAtMilliseconds: milliseconds)
}

@Suite("Last-write-wins per field group")
struct UserMergeTests {
    private let stored = UserProfile(id: "u1", displayName: "Old", timeZone: "UTC")

    @Test func aNewUserTakesEveryGroupButVersionsOnlyTheWrittenOnes() {
        let outcome = UserMerge.merge(
            stored: nil, versions: UserVersions(), update: update([.timeZone, .profile], at: 5), stampMilliseconds: 5)
        #expect(outcome.profile == update([], at: nil).proposed)
        #expect(outcome.versions == UserVersions([.timeZone: 5, .profile: 5]))
        #expect(outcome.applied == [.timeZone, .profile])
        #expect(outcome.stale.isEmpty)
    }

    @Test(arguments: [
        // (stored version of every group, stamp, applied?)
        (Int64(1_000), Int64(999), false),  // older loses
        (1_000, 1_001, true),  // newer wins
        (1_000, 1_000, true),  // equal: the later arrival wins
    ])
    func aGroupIsAppliedUnlessTheStoredVersionIsNewer(storedVersion: Int64, stamp: Int64, applied: Bool) {
        let versions = UserVersions(
            Dictionary(uniqueKeysWithValues: UserFieldGroup.allCases.map { ($0, storedVersion) }))
        let write = update(Set(UserFieldGroup.allCases), at: stamp)
        let outcome = UserMerge.merge(stored: stored, versions: versions, update: write, stampMilliseconds: stamp)
        #expect(outcome.profile == (applied ? write.proposed : stored))
        #expect(outcome.applied == (applied ? Set(UserFieldGroup.allCases) : []))
        #expect(outcome.stale == (applied ? [] : Set(UserFieldGroup.allCases)))
        #expect(outcome.versions[.profile] == (applied ? stamp : storedVersion))
    }

    @Test func groupsAreDecidedOneByOne() {
        // timeZone was written at 10, profile at 30, preferences never: a write at 20 of all four.
        let versions = UserVersions([.timeZone: 10, .profile: 30, .communication: 20])
        let write = update(Set(UserFieldGroup.allCases), at: 20)
        let outcome = UserMerge.merge(stored: stored, versions: versions, update: write, stampMilliseconds: 20)
        #expect(outcome.applied == [.timeZone, .communication, .preferences])
        #expect(outcome.stale == [.profile])
        #expect(outcome.profile.timeZone == "Europe/Berlin")
        #expect(outcome.profile.displayName == "Old")
        #expect(outcome.profile.locale == "en")
        #expect(outcome.profile.communication.absenceResponse == .giveMeSpace)
        #expect(outcome.profile.preferences.maxPerHour == 3)
        #expect(outcome.versions == UserVersions([.timeZone: 20, .profile: 30, .communication: 20, .preferences: 20]))
    }

    @Test func groupsOutsideTheWriteAreLeftAlone() {
        let write = update([.timeZone], at: 50)
        let outcome = UserMerge.merge(
            stored: stored, versions: UserVersions([.profile: 1]), update: write, stampMilliseconds: 50)
        #expect(outcome.profile == UserProfile(id: "u1", displayName: "Old", timeZone: "Europe/Berlin"))
        #expect(outcome.versions == UserVersions([.profile: 1, .timeZone: 50]))
        #expect(outcome.applied == [.timeZone])
    }
}

@Suite("Runtime users, devices and idempotency")
struct UserRuntimeTests {
    private func runtime(_ store: any RuntimeStore = InMemoryEngagementStore(), clock: ManualClock = ManualClock(start))
        -> EngineRuntime
    {
        EngineRuntime(store: store, clock: clock, content: bundledContent)
    }

    @Test func aStaleWriteCommitsNothing() async throws {
        let store = InMemoryEngagementStore()
        let runtime = runtime(store)
        let created = try await runtime.putUser(update([.timeZone, .profile], at: startMilliseconds))
        #expect(created.created)
        let snapshot = try store.snapshot(userID: "u1")
        let stale = try await runtime.putUser(update([.profile], at: startMilliseconds - 1, name: "Older"))
        #expect(!stale.created)
        #expect(stale.stale == [.profile])
        #expect(stale.profile.displayName == "Ana")
        #expect(try store.snapshot(userID: "u1") == snapshot)
        #expect(try store.profile(id: "u1")?.displayName == "Ana")
        #expect(
            try await runtime.userVersions(of: "u1")
                == UserVersions([.timeZone: startMilliseconds, .profile: startMilliseconds]))
    }

    @Test func aWriteWithoutUpdatedAtIsStampedByTheClock() async throws {
        let clock = ManualClock(start)
        let runtime = runtime(clock: clock)
        try await runtime.putUser(update([.timeZone], at: nil))
        clock.advance(by: 90)
        let result = try await runtime.putUser(update([.timeZone, .preferences], at: nil, zone: "Asia/Tokyo"))
        #expect(
            result.versions
                == UserVersions([.timeZone: startMilliseconds + 90_000, .preferences: startMilliseconds + 90_000]))
        #expect(result.profile.timeZone == "Asia/Tokyo")
        #expect(try await runtime.engine(of: "u1")?.zone.identifier == "Asia/Tokyo")
    }

    @Test func anUpdatedAtFarAheadOfTheClockIsRefused() async throws {
        let store = InMemoryEngagementStore()
        let runtime = runtime(store)
        let ahead = startMilliseconds + EngineRuntime.maxUpdateAheadSeconds * 1_000 + 1
        await #expect(throws: RuntimeError.self) { try await runtime.putUser(update([.timeZone], at: ahead)) }
        #expect(try store.profile(id: "u1") == nil)
        // A day ahead exactly is a clock a little off, accepted.
        try await runtime.putUser(update([.timeZone], at: ahead - 1))
        #expect(try store.profile(id: "u1") != nil)
    }

    @Test func keyedInputsAreAppliedOnceAcrossARestart() async throws {
        try await withTemporaryStore { path in
            let clock = ManualClock(start)
            let first = runtime(try SQLiteEngagementStore(path: path), clock: clock)
            try await first.putUser(update([.timeZone], at: nil))
            let outcome = try await first.apply(
                .activity(.moodLogged), to: "u1", idempotencyKey: "k", requestHash: "h1"
            ) { effects, _ in (202, Array("effects \(effects.count)".utf8)) }
            guard case .applied(let record) = outcome else {
                Issue.record("expected applied, got \(outcome)")
                return
            }
            // A new runtime over the same file: the record is there, the input is not applied again.
            clock.advance(by: 3_600)
            let store = try SQLiteEngagementStore(path: path)
            let second = runtime(store, clock: clock)
            let replay = try await second.apply(
                .activity(.moodLogged), to: "u1", idempotencyKey: "k", requestHash: "h1"
            ) { _, _ in (500, []) }
            #expect(replay == .replayed(record))
            let conflict = try await second.apply(
                .activity(.energyLogged), to: "u1", idempotencyKey: "k", requestHash: "h2"
            ) { _, _ in (500, []) }
            #expect(conflict == .conflicted(record))
            #expect(try store.activityEvents(userID: "u1", since: start).map(\.kind) == [.moodLogged])
        }
    }

    @Test func anExpiredKeyIsANewRequest() async throws {
        let clock = ManualClock(start)
        let store = InMemoryEngagementStore()
        let runtime = runtime(store, clock: clock)
        try await runtime.putUser(update([.timeZone], at: nil))
        _ = try await runtime.apply(.activity(.moodLogged), to: "u1", idempotencyKey: "k", requestHash: "h") { _, _ in
            (202, [])
        }
        clock.advance(by: IdempotencyRecord.retentionSeconds - 1)
        #expect(try await runtime.idempotencyRecord(userID: "u1", key: "k") != nil)
        clock.advance(by: 1)
        #expect(try await runtime.idempotencyRecord(userID: "u1", key: "k") == nil)
        let again = try await runtime.apply(.activity(.moodLogged), to: "u1", idempotencyKey: "k", requestHash: "h") {
            _, _ in (202, [])
        }
        guard case .applied(let record) = again else {
            Issue.record("expected applied, got \(again)")
            return
        }
        #expect(record.createdAt == clock.now())
        #expect(try store.activityEvents(userID: "u1", since: start).count == 2)
    }

    @Test func aKeyedInputForAnUnknownUserKeepsNoRecord() async throws {
        let store = InMemoryEngagementStore()
        let runtime = runtime(store)
        await #expect(throws: RuntimeError.unknownUser("u1")) {
            try await runtime.apply(.activity(.moodLogged), to: "u1", idempotencyKey: "k", requestHash: "h") { _, _ in
                (202, [])
            }
        }
        #expect(try store.idempotencyRecordCount() == 0)
    }

    @Test func concurrentCallsWithOneKeyApplyTheInputOnce() async throws {
        let store = InMemoryEngagementStore()
        let runtime = runtime(store)
        try await runtime.putUser(update([.timeZone], at: nil))
        let outcomes = try await withThrowingTaskGroup(of: KeyedApply.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    try await runtime.apply(.activity(.coachChat), to: "u1", idempotencyKey: "k", requestHash: "h") {
                        effects, _ in (202, Array("\(effects.count)".utf8))
                    }
                }
            }
            var outcomes: [KeyedApply] = []
            for try await outcome in group { outcomes.append(outcome) }
            return outcomes
        }
        let applied = outcomes.compactMap { outcome -> IdempotencyRecord? in
            if case .applied(let record) = outcome { return record } else { return nil }
        }
        #expect(applied.count == 1)
        #expect(outcomes.filter { $0 == .replayed(applied[0]) }.count == 7)
        #expect(try store.idempotencyRecordCount() == 1)
        #expect(runtime.writeGate.heldCount == 0)
    }

    @Test func aKeyBeingAppliedRefusesAnotherCallThatWillNotWait() async throws {
        let store = InMemoryEngagementStore()
        let runtime = runtime(store)
        try await runtime.putUser(update([.timeZone], at: nil))
        // The first call holds the key's lock (as while its commit is being written).
        #expect(runtime.writeGate.tryAcquire("key\u{1F}u1\u{1F}k"))
        #expect(!runtime.writeGate.tryAcquire("key\u{1F}u1\u{1F}k"))
        let refused = try await runtime.apply(
            .activity(.moodLogged), to: "u1", idempotencyKey: "k", requestHash: "h", whileKeyRuns: .refuse
        ) { _, _ in (202, []) }
        #expect(refused == .running)
        #expect(try store.idempotencyRecordCount() == 0)
        // Keys are per user: another user's key of the same text is free.
        try await runtime.putUser(update([.timeZone], at: nil, id: "u2"))
        let other = try await runtime.apply(
            .activity(.moodLogged), to: "u2", idempotencyKey: "k", requestHash: "h", whileKeyRuns: .refuse
        ) { _, _ in (202, []) }
        guard case .applied = other else {
            Issue.record("expected the other user's key to apply, got \(other)")
            return
        }
        runtime.writeGate.release("key\u{1F}u1\u{1F}k")
        let applied = try await runtime.apply(
            .activity(.moodLogged), to: "u1", idempotencyKey: "k", requestHash: "h", whileKeyRuns: .refuse
        ) { _, _ in (202, []) }
        guard case .applied(let record) = applied else {
            Issue.record("expected the freed key to apply, got \(applied)")
            return
        }
        #expect(record.key == "k")
        #expect(runtime.writeGate.heldCount == 0)
    }

    @Test func concurrentWritesOfOneUserLeaveTheNewestStanding() async throws {
        let runtime = runtime()
        try await runtime.putUser(update([.timeZone], at: 0))
        // Stamps 1 to 12, each with a zone change (the slow path), sent all at once in any order.
        let zones = ["Asia/Tokyo", "Europe/Paris", "America/Denver"]
        try await withThrowingTaskGroup(of: Void.self) { group in
            for stamp in (1...12).shuffled() {
                group.addTask {
                    _ = try await runtime.putUser(
                        update([.timeZone, .profile], at: Int64(stamp), zone: zones[stamp % 3], name: "n\(stamp)"))
                }
            }
            try await group.waitForAll()
        }
        let engine = try #require(try await runtime.engine(of: "u1"))
        #expect(engine.profile.displayName == "n12")
        #expect(engine.profile.timeZone == zones[12 % 3])
        #expect(engine.zone.identifier == zones[12 % 3])
        #expect(try await runtime.userVersions(of: "u1") == UserVersions([.timeZone: 12, .profile: 12]))
    }

    @Test func devicesBelongToKnownUsersAndMoveBetweenThem() async throws {
        let runtime = runtime()
        let token = String(repeating: "AB", count: 32)
        await #expect(throws: RuntimeError.unknownUser("u1")) {
            try await runtime.registerDevice(token: token, environment: .sandbox, platform: "ios", for: "u1")
        }
        try await runtime.putUser(update([.timeZone], at: nil))
        var other = update([.timeZone], at: nil)
        other.proposed.id = "u2"
        try await runtime.putUser(other)
        let first = try await runtime.registerDevice(token: token, environment: .sandbox, platform: "ios", for: "u1")
        #expect(first.isNew)
        #expect(first.registration.token == token.lowercased())
        let again = try await runtime.registerDevice(token: token, environment: .production, platform: "ios", for: "u1")
        #expect(!again.isNew)
        let moved = try await runtime.registerDevice(token: token, environment: .production, platform: "ios", for: "u2")
        #expect(moved.isNew)
        #expect(try await runtime.devices(of: "u1").isEmpty)
        #expect(try await runtime.devices(of: "u2").map(\.token) == [token.lowercased()])
        // The push channel's removal on APNs 410, whoever holds the token, in either case.
        #expect(try await runtime.removeDevice(token: token)?.userID == "u2")
        #expect(try await runtime.devices(of: "u2").isEmpty)
        await #expect(
            throws: RuntimeError.invalidInput(field: "token", problem: "a device token is hex digits only (0-9, a-f)")
        ) {
            try await runtime.registerDevice(token: "zz", environment: .sandbox, platform: "ios", for: "u1")
        }
    }
}

/// A store path in a new temporary directory, removed afterwards.
private func withTemporaryStore(_ body: (String) async throws -> Void) async throws {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
        "UserRuntimeTests-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    try await body(directory.appendingPathComponent("store.sqlite").path)
}
