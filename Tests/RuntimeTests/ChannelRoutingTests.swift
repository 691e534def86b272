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

/// A transport that records each row it performed with the clock's time then.
private final class TimedTransport: ChannelTransport {
    let clock: ManualClock
    let performed = Mutex<[(row: OutboxRow, at: Instant)]>([])

    init(clock: ManualClock) { self.clock = clock }

    func perform(_ row: OutboxRow) async throws -> SendReport {
        let now = clock.now()
        performed.withLock { $0.append((row, now)) }
        return .accepted
    }

    var syncTimes: [Instant] { performed.withLock { $0 }.filter { $0.row.channel == .silent }.map(\.at) }
}

@Suite("Engine runtime: channels")
struct ChannelRoutingTests {
    static let start = Instant(iso8601: "2027-03-27T22:00:00Z")!

    private func request(_ kind: NotificationKind, _ id: RequestID) -> NotificationRequest {
        NotificationRequest(
            identifier: id, content: NotificationContent(kind: kind, title: "t", body: "b"),
            trigger: .date(Self.start + 600))
    }

    @Test func aLocalKindIsFiledInTheInboxOnlyAndARemoteKindIsPushedToo() {
        let effects: [Effect] = [
            .schedule(
                request(.mealReminder, "mealReminder.2027-03-28.lunch"), fireAt: Self.start + 600, channel: .local),
            .schedule(request(.mention, "mention.2027-03-28.1"), fireAt: Self.start + 60, channel: .remote),
        ]
        let rows = OutboxPlan.rows(for: effects, userID: "u1", at: Self.start).rows
        #expect(rows.filter { $0.requestID.rawValue.hasPrefix("mealReminder") }.map(\.channel) == [.inbox])
        #expect(
            rows.filter { $0.requestID.rawValue.hasPrefix("mention") }.map(\.channel.name).sorted() == [
                "inbox", "push",
            ])
        #expect(effects.map(\.channel) == [.local, .remote])
    }

    @Test func syncSlotsAreStrictlyAfterTheChangeAndSpanAnHourAndTheGracePerBudget() {
        let plan = SilentPushPlan()
        #expect(plan.slotSeconds == 1_830)
        let onSlot = Instant(secondsSinceEpoch: 1_830 * 1_000_000)
        #expect(plan.slot(after: onSlot) == onSlot + 1_830)
        #expect(plan.slot(after: onSlot - 1) == onSlot)
        #expect(plan.slot(after: Instant(secondsSinceEpoch: -1)) == Instant(secondsSinceEpoch: 0))
        for perHour in 1...12 {
            let other = SilentPushPlan(perHour: perHour, graceSeconds: 45)
            #expect(Int64(perHour) * other.slotSeconds >= 3_600 + 45)
        }
        #expect(SilentPushPlan(perHour: 0).perHour == 1)
        #expect(SilentPushPlan(perHour: 99, graceSeconds: 0).graceSeconds == 1)
        #expect(plan.isSendable(dueAt: onSlot, at: onSlot + 60))
        #expect(!plan.isSendable(dueAt: onSlot, at: onSlot + 61))
    }

    @Test(arguments: [UInt64(1), 2, 3, 4])
    func syncsNeverExceedTwoInAnyHourAndTheLastChangeIsAlwaysSynced(seed: UInt64) async throws {
        // Changes at random times, a dispatcher that polls at random intervals (now and then
        // missing a slot's grace): sends stay within the budget, and the last change is synced.
        var random = SeededGenerator(seed: seed)
        let clock = ManualClock(Self.start)
        let store = InMemoryEngagementStore()
        let runtime = EngineRuntime(store: store, clock: clock, content: bundledContent)
        let transport = TimedTransport(clock: clock)
        try await runtime.putUser(profile())
        var lastChange = clock.now()
        for _ in 0..<3_000 {
            clock.advance(by: Int64.random(in: 1...90, using: &random))
            if Int.random(in: 0..<100, using: &random) < 5 {
                try await runtime.requestInboxSync(of: "u1")
                lastChange = clock.now()
            }
            if Int.random(in: 0..<10, using: &random) < 7 {
                _ = try await runtime.dispatchDue(limit: 10_000, through: transport)
            }
        }
        // A punctual dispatcher from here on sends each pending sync at its slot.
        while let pending = try store.pendingOutbox(userID: "u1").filter({ $0.channel == .silent })
            .min(by: { $0.dueAt < $1.dueAt })
        {
            clock.advance(by: max(0, pending.dueAt - clock.now()))
            _ = try await runtime.dispatchDue(limit: 10_000, through: transport)
        }
        let times = transport.syncTimes
        #expect(times.count > 10)
        for index in times.indices.dropFirst(2) {
            #expect(times[index] - times[index - 2] >= 3_600, "sends at \(times[index - 2]) ... \(times[index])")
        }
        #expect(try #require(times.last) > lastChange)
        #expect(try store.pendingOutbox(userID: "u1").allSatisfy { $0.channel != .silent })
    }

    /// The phone was to hear of a change by its slot (`SilentPushPlan.phoneHears`): a change made
    /// once that slot has come, before its sync was sent, adds the next slot's sync beside it.
    @Test func aChangeOnceASlotHasComeNeverPostponesItsSync() async throws {
        let clock = ManualClock(Self.start)
        let store = InMemoryEngagementStore()
        let runtime = EngineRuntime(store: store, clock: clock, content: bundledContent)
        try await runtime.putUser(profile())
        func pendingSyncs() throws -> [Instant] {
            try store.pendingOutbox(userID: "u1").filter { $0.channel == .silent }.map(\.dueAt).sorted()
        }
        try await runtime.requestInboxSync(of: "u1")
        let slot = try #require(try pendingSyncs().first)
        clock.advance(by: slot - clock.now())
        try await runtime.requestInboxSync(of: "u1")
        let next = runtime.silentPushes.slot(after: clock.now())
        #expect(try pendingSyncs() == [slot, next])
        // Before the slot, a change asks for the same row again.
        clock.advance(by: 1)
        try await runtime.requestInboxSync(of: "u1")
        #expect(try pendingSyncs() == [slot, next])

        let transport = TimedTransport(clock: clock)
        _ = try await runtime.dispatchDue(limit: 10_000, through: transport)
        #expect(transport.syncTimes == [clock.now()])
        #expect(try pendingSyncs() == [next])
    }

    @Test func aSyncFoundPastItsGraceMovesToTheNextSlotUnsent() async throws {
        let clock = ManualClock(Self.start)
        let store = InMemoryEngagementStore()
        let runtime = EngineRuntime(store: store, clock: clock, content: bundledContent)
        try await runtime.putUser(profile())
        try await runtime.requestInboxSync(of: "u1")
        let sync = try #require(try store.pendingOutbox(userID: "u1").first { $0.channel == .silent })
        clock.advance(by: sync.dueAt - clock.now() + 600)
        let transport = TimedTransport(clock: clock)
        _ = try await runtime.dispatchDue(limit: 10_000, through: transport)
        #expect(transport.syncTimes.isEmpty)
        let moved = try #require(try store.pendingOutbox(userID: "u1").first { $0.channel == .silent })
        #expect(moved.dueAt == runtime.silentPushes.slot(after: clock.now()))
    }

    @Test func readingTheInboxAsksForASyncAndReadingNothingNewDoesNot() async throws {
        let clock = ManualClock(Self.start)
        let store = InMemoryEngagementStore()
        let runtime = EngineRuntime(store: store, clock: clock, content: bundledContent)
        try await runtime.putUser(profile())
        // A day of routine: local kinds land in the inbox, each asking for a sync.
        clock.advance(by: 86_400)
        _ = try await runtime.dispatchDue(limit: 10_000, through: TimedTransport(clock: clock))
        #expect(try await runtime.inboxCounts(of: "u1").unread > 0)
        // Sync rows go out; then nothing is pending for the badge.
        clock.advance(by: runtime.silentPushes.slot(after: clock.now()) - clock.now())
        _ = try await runtime.dispatchDue(limit: 10_000, through: TimedTransport(clock: clock))
        #expect(try !store.pendingOutbox(userID: "u1").contains { $0.channel == .silent })

        _ = try await runtime.readAllInbox(of: "u1")
        #expect(try store.pendingOutbox(userID: "u1").contains { $0.channel == .silent })
        clock.advance(by: runtime.silentPushes.slot(after: clock.now()) - clock.now())
        _ = try await runtime.dispatchDue(limit: 10_000, through: TimedTransport(clock: clock))
        _ = try await runtime.readAllInbox(of: "u1")  // nothing unread: the badge is right already
        #expect(try !store.pendingOutbox(userID: "u1").contains { $0.channel == .silent })
    }
}

/// A transport that holds each row until `release` and records how many it held at once.
private final class GatedTransport: ChannelTransport {
    struct State {
        var inFlight = 0
        var most = 0
        /// Sends in flight per user, and the most of one user's at once.
        var userInFlight: [UserID: Int] = [:]
        var mostOfOneUser = 0
        var performed: [OutboxKey] = []
    }
    let state = Mutex(State())

    func perform(_ row: OutboxRow) async throws -> SendReport {
        state.withLock {
            $0.inFlight += 1
            $0.most = max($0.most, $0.inFlight)
            $0.userInFlight[row.userID, default: 0] += 1
            $0.mostOfOneUser = max($0.mostOfOneUser, $0.userInFlight[row.userID, default: 0])
        }
        try await Task.sleep(for: .milliseconds(20))
        state.withLock {
            $0.inFlight -= 1
            $0.userInFlight[row.userID, default: 0] -= 1
            $0.performed.append(row.key)
        }
        if row.requestID.rawValue.hasSuffix(".fails") { throw CancellationError() }
        return .accepted
    }
}

@Suite("Engine runtime: concurrent sends")
struct ConcurrentSendTests {
    /// Ten users with ten alerts each, due a second apart: users are sent at once, each user's
    /// alerts one after another in due order; a row whose send throws stays pending, and so do
    /// the user's rows after it (sent now, they would overtake it).
    @Test func usersAreSentAtOnceEachUsersRowsInDueOrderAndAFailureHoldsTheRest() async throws {
        let clock = ManualClock(ChannelRoutingTests.start)
        let store = InMemoryEngagementStore()
        let runtime = EngineRuntime(store: store, clock: clock, content: bundledContent)
        let users = (0..<10).map { UserID("u\($0)") }
        for user in users { try await runtime.putUser(profile(user)) }
        var rows: [OutboxRow] = []
        for user in users {
            let userRows = (0..<10).map { index in
                let dueAt = clock.now() - 30 + Int64(index)
                let requestID = RequestID("mention.2027-03-27.\(index)" + (index == 3 ? ".fails" : ""))
                return OutboxRow(
                    key: OutboxKey.make(user, requestID, dueAt, .push), userID: user, requestID: requestID,
                    dueAt: dueAt,
                    payload: .alert(
                        NotificationRequest(
                            identifier: requestID,
                            content: NotificationContent(kind: .mention, title: "Ben", body: "Hi"),
                            trigger: .date(dueAt))))
            }
            let snapshot = try #require(try store.snapshot(userID: user))
            try store.commit(RuntimeCommit(userID: user, snapshot: snapshot, outbox: userRows))
            rows += userRows
        }
        let transport = GatedTransport()
        let completed = try await runtime.dispatchDue(limit: 10_000, through: transport)
        let state = transport.state.withLock { $0 }
        #expect(state.most > 1)
        #expect(state.most <= EngineRuntime.maxConcurrentSends)
        #expect(state.mostOfOneUser == 1)
        #expect(Set(state.performed).count == state.performed.count)
        // Each user's first four rows were tried, in due order; the fourth failed.
        for user in users {
            let sent = state.performed.filter { key in rows.contains { $0.key == key && $0.userID == user } }
            #expect(sent == rows.filter { $0.userID == user }.prefix(4).map(\.key), "\(user)'s alerts in due order")
        }
        let pushes = completed.filter { $0.channel == .push }
        #expect(pushes.count == 30)
        for user in users {
            let pending = try store.pendingOutbox(userID: user).filter { $0.requestID.rawValue.hasPrefix("mention.") }
            #expect(
                Set(pending.map(\.key)) == Set(rows.filter { $0.userID == user }.dropFirst(3).map(\.key)),
                "\(user)'s failed row and those after it stay pending")
        }
    }
}
