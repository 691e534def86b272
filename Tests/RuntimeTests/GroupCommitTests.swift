import Content
import Dispatch
import Engagement
import Foundation
import Models
import Storage
import Synchronization
import TestSupport
import Testing

@testable import Runtime

/// A store that can hold its writer at the start of a group and fail the group it holds.
final class ControlledStore: RuntimeStore {
    let base = InMemoryEngagementStore()
    let holding = Mutex(false)
    /// The next this many groups fail.
    let failures = Mutex(0)
    /// Groups that reached the store while holding was on (the writer waits on `release`).
    let held = Mutex(0)
    let release = DispatchSemaphore(value: 0)

    func commitGroup(_ commits: [RuntimeCommit]) throws(StoreError) {
        if holding.withLock({ $0 }) {
            held.withLock { $0 += 1 }
            release.wait()
        }
        let fail = failures.withLock { failures in
            defer { failures = max(0, failures - 1) }
            return failures > 0
        }
        if fail { throw .unavailable("disk full (test)") }
        try base.commitGroup(commits)
    }

    func snapshot(userID: UserID) throws(StoreError) -> [UInt8]? { try base.snapshot(userID: userID) }
    func dueOutbox(through instant: Instant, limit: Int) throws(StoreError) -> [OutboxRow] {
        try base.dueOutbox(through: instant, limit: limit)
    }
    func completeOutbox(keys: [OutboxKey], at instant: Instant) throws(StoreError) {
        try base.completeOutbox(keys: keys, at: instant)
    }
    func outboxDepth() throws(StoreError) -> Int { try base.outboxDepth() }
    var claimsWithRules: Bool { base.claimsWithRules }
    func claimState(userIDs: [UserID]) throws(StoreError) -> ClaimState { try base.claimState(userIDs: userIDs) }
    func recordClaim(_ record: ClaimRecord, at instant: Instant) throws(StoreError) {
        try base.recordClaim(record, at: instant)
    }
    func userIDs() throws(StoreError) -> [UserID] { try base.userIDs() }
    func traceRecords(userID: UserID, after position: TracePosition, limit: Int) throws(StoreError) -> [TraceRecord] {
        try base.traceRecords(userID: userID, after: position, limit: limit)
    }
    func pendingOutbox(userID: UserID) throws(StoreError) -> [OutboxRow] { try base.pendingOutbox(userID: userID) }
    func completedOutboxKeys(among keys: [OutboxKey]) throws(StoreError) -> Set<OutboxKey> {
        try base.completedOutboxKeys(among: keys)
    }
    func apply(_ batch: StoreBatch) throws(StoreError) { try base.apply(batch) }
    func profile(id: UserID) throws(StoreError) -> UserProfile? { try base.profile(id: id) }
    func activityEvents(userID: UserID, since: Instant) throws(StoreError) -> [ActivityEvent] {
        try base.activityEvents(userID: userID, since: since)
    }
    func lastActiveAt(userID: UserID) throws(StoreError) -> Instant? { try base.lastActiveAt(userID: userID) }
    func usersInactive(since: Instant) throws(StoreError) -> [UserID] { try base.usersInactive(since: since) }
    func ledger(userID: UserID, from: Instant, to: Instant) throws(StoreError) -> [LedgerEntry] {
        try base.ledger(userID: userID, from: from, to: to)
    }
    func engagementState(userID: UserID) throws(StoreError) -> EngagementState? {
        try base.engagementState(userID: userID)
    }
    func deliverToInbox(_ delivery: InboxDelivery, next: [OutboxRow], at instant: Instant) throws(StoreError) -> Bool {
        try base.deliverToInbox(delivery, next: next, at: instant)
    }
    func inboxPage(userID: UserID, before sequence: Int64?, limit: Int) throws(StoreError) -> InboxPage {
        try base.inboxPage(userID: userID, before: sequence, limit: limit)
    }
    func setInboxState(userID: UserID, itemID: String, to state: InboxState) throws(StoreError) -> InboxItem? {
        try base.setInboxState(userID: userID, itemID: itemID, to: state)
    }
    func readAllInbox(userID: UserID) throws(StoreError) -> InboxCounts { try base.readAllInbox(userID: userID) }
}

@Suite("Group commit")
struct GroupCommitTests {
    static let start = Instant(iso8601: "2027-03-27T22:00:00Z")!
    static let inputs: [EngineInput] = [
        .activity(.appOpened(sessionSeconds: 120)), .activity(.mealLogged(.breakfast)),
        .activity(.workoutCompleted(durationMinutes: 30)), .activity(.moodLogged), .activity(.coachChat),
    ]

    /// Polls `condition` every millisecond for up to 120 seconds of wall time: what it waits for
    /// is a task being scheduled, which can take seconds when the whole suite loads the machine.
    func eventually(_ condition: () -> Bool) async throws {
        let giveUpAt = ContinuousClock.now + .seconds(120)
        while !condition(), ContinuousClock.now < giveUpAt { try await Task.sleep(for: .milliseconds(1)) }
        #expect(condition())
    }

    @Test func concurrentInputsAreCommittedTogetherAndEachUserInOrder() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("group-\(UUID()).sqlite").path
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        let clock = ManualClock(Self.start)
        let store = try SQLiteEngagementStore(path: path)
        let runtime = EngineRuntime(store: store, clock: clock, content: bundledContent)
        let referenceStore = InMemoryEngagementStore()
        let reference = EngineRuntime(store: referenceStore, clock: clock, content: bundledContent)
        let users = (0..<24).map { UserID("u\($0)") }
        for user in users {
            try await runtime.putUser(profile(user))
            try await reference.putUser(profile(user))
        }
        // Each user's inputs in order, all users at once; the reference runs one after another.
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            for user in users {
                tasks.addTask { for input in Self.inputs { try await runtime.apply(input, to: user) } }
            }
            try await tasks.waitForAll()
        }
        for user in users { for input in Self.inputs { try await reference.apply(input, to: user) } }
        let reopened = EngineRuntime(
            store: try SQLiteEngagementStore(path: path), clock: clock, content: bundledContent)
        for user in users {
            let stored = try #require(try await reopened.engine(of: user))
            let expected = try #require(try await reference.engine(of: user))
            #expect(stored.snapshot() == expected.snapshot(), "user \(user)")
        }
        #expect(try store.outboxDepth() == (try referenceStore.outboxDepth()))
    }

    @Test func aFailedCommitLeavesTheStoreAsIfTheInputNeverHappened() async throws {
        let clock = ManualClock(Self.start)
        let store = ControlledStore()
        let runtime = EngineRuntime(store: store, clock: clock, content: bundledContent)
        let reference = EngineRuntime(store: InMemoryEngagementStore(), clock: clock, content: bundledContent)
        try await runtime.putUser(profile())
        try await reference.putUser(profile())
        clock.advance(by: 600)
        store.failures.withLock { $0 = 1 }
        await #expect(throws: RuntimeError.self) { try await runtime.apply(Self.inputs[0], to: "u1") }
        // The next input starts from the committed engine, not from the failed step's.
        clock.advance(by: 600)
        let effects = try await runtime.apply(Self.inputs[1], to: "u1").effects
        #expect(effects == (try await reference.apply(Self.inputs[1], to: "u1").effects))
        #expect(try store.snapshot(userID: "u1") == (try await reference.engine(of: "u1"))?.snapshot())
    }

    @Test func aStepBuiltOnAFailedOneIsRefusedEvenWhenAlreadyQueued() async throws {
        let clock = ManualClock(Self.start)
        let store = ControlledStore()
        let runtime = EngineRuntime(store: store, clock: clock, content: bundledContent)
        let reference = EngineRuntime(store: InMemoryEngagementStore(), clock: clock, content: bundledContent)
        try await runtime.putUser(profile())
        try await runtime.putUser(profile("u2"))
        try await reference.putUser(profile())
        try await reference.putUser(profile("u2"))
        store.holding.withLock { $0 = true }
        store.failures.withLock { $0 = 1 }
        // The first step is being written (held); two more queue behind it: one of the same user
        // (built on the first) and one of another user (independent).
        let first = Task { try await runtime.apply(Self.inputs[0], to: "u1") }
        try await eventually { store.held.withLock { $0 } == 1 }
        let derived = Task { try await runtime.apply(Self.inputs[1], to: "u1") }
        let other = Task { try await runtime.apply(Self.inputs[2], to: "u2") }
        try await eventually { runtime.group.waitingCount == 2 }
        store.holding.withLock { $0 = false }
        store.release.signal()  // the held group fails
        await #expect(throws: RuntimeError.self) { try await first.value }
        await #expect(throws: RuntimeError.self) { try await derived.value }
        _ = try await other.value
        _ = try await reference.apply(Self.inputs[2], to: "u2")
        // u1 continues from what was committed: neither refused step is in it.
        let effects = try await runtime.apply(Self.inputs[3], to: "u1").effects
        #expect(effects == (try await reference.apply(Self.inputs[3], to: "u1").effects))
        for user: UserID in ["u1", "u2"] {
            #expect(try store.snapshot(userID: user) == (try await reference.engine(of: user))?.snapshot())
        }
    }
}
