import Models
import Runtime
import Scheduling
import Storage
import Testing

@testable import Simulation

/// The simulated server keeps each user's pending rows as the stores keep them: the same
/// random commits and dispatches leave `UserOutbox` and `InMemoryEngagementStore` holding the
/// same rows.
@Suite("User outbox")
struct UserOutboxTests {
    static let start = Instant(secondsSinceEpoch: 1_800_000_000)

    func row(_ request: RequestID, _ channel: OutboxChannel, dueAt: Instant) -> OutboxRow {
        OutboxRow(
            key: OutboxKey.make("u1", request, dueAt, channel), userID: "u1", requestID: request,
            dueAt: dueAt, payload: payload(request, channel))
    }

    /// Work of `channel`'s kind for `request` (a row's channel is its payload's).
    func payload(_ request: RequestID, _ channel: OutboxChannel) -> OutboxPayload {
        let notification = NotificationRequest(
            identifier: request.rawValue, content: NotificationContent(kind: .mention, title: "t", body: "b"),
            trigger: .date(Self.start))
        return switch channel {
        case .push: .alert(notification)
        case .inbox: .inboxItem(notification, shownBy: .remote)
        default: .sync
        }
    }

    @Test(arguments: [1, 2, 3, 4, 5] as [UInt64])
    func holdsWhatAStoreHoldsAfterTheSameCommitsAndDispatches(seed: UInt64) throws {
        var random = SeededGenerator(seed: seed)
        let store = InMemoryEngagementStore()
        var outbox = UserOutbox()
        let requests: [RequestID] = ["a", "b", "c", "d", "inbox-sync"]
        let channels: [OutboxChannel] = [.push, .inbox, .silent]
        var now = Self.start
        // Each new row is due later than any before, so no key is made twice (a store would
        // refuse a completed one again; the simulated server never replays a commit).
        var nextDue = Self.start
        for _ in 0..<400 {
            if random.chance(0.3) {
                now = now + Int64(random.int(in: 0...600))
                let due = outbox.takeDue(at: now)
                let stored = try store.dueOutbox(through: now, limit: 10_000)
                #expect(due == stored)
                try store.completeOutbox(keys: stored.map(\.key), at: now)
            } else {
                let cancelled = random.chance(0.3) ? [requests[random.int(in: 0...3)]] : []
                var rows: [OutboxRow] = []
                for _ in 0..<random.int(in: 0...3) {
                    nextDue = nextDue + Int64(random.int(in: 1...300))
                    let next = row(requests[random.int(in: 0...4)], channels[random.int(in: 0...2)], dueAt: nextDue)
                    // A step makes one row per request and channel (`OutboxPlan.rows`).
                    rows.removeAll { $0.requestID == next.requestID && $0.channel == next.channel }
                    rows.append(next)
                }
                outbox.commit(cancelled: cancelled, rows: rows)
                try store.commit(
                    RuntimeCommit(userID: "u1", snapshot: [1], cancelledRequestIDs: cancelled, outbox: rows))
            }
            let pending = outbox.rows
            #expect(pending == (try store.pendingOutbox(userID: "u1")))
            #expect(outbox.nextDueAt == pending.first?.dueAt)
            #expect(outbox.hasSync == pending.contains { $0.channel == .silent })
        }
    }

    @Test func anEmptyOutboxHasNothingDue() {
        var outbox = UserOutbox()
        #expect(outbox.takeDue(at: Self.start).isEmpty)
        #expect(outbox.nextDueAt == nil)
        outbox.commit(cancelled: ["a"], rows: [])
        #expect(outbox.rows.isEmpty)
    }
}
