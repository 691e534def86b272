import Foundation
import Models
import Scheduling
import Storage
import Testing

/// `PendingOutbox` keeps rows by the outbox identity, as the SQLite store keeps them: the same
/// random commits, claims, inbox deliveries and completions, for two users, leave both holding
/// the same rows and the same claim state. (The in-memory store is a `PendingOutbox`, so the
/// conformance suite checks its clauses one by one; this checks them in every mix.)
@Suite("Pending outbox")
struct PendingOutboxTests {
    static let start = Instant(secondsSinceEpoch: 1_800_000_000)
    static let users: [UserID] = ["u1", "u2"]
    static let requests: [RequestID] = ["a", "b", "c", "d"]
    static let channels: [OutboxChannel] = [.push, .inbox, .silent]

    func row(_ user: UserID, _ request: RequestID, _ channel: OutboxChannel, dueAt: Instant) -> OutboxRow {
        let notification = NotificationRequest(
            identifier: request, content: NotificationContent(kind: .mention, title: "t", body: "b"),
            trigger: .date(dueAt))
        let payload: OutboxPayload =
            switch channel {
            case .push: .alert(notification)
            case .inbox: .inboxItem(notification, shownBy: .remote)
            default: .sync
            }
        return OutboxRow(
            key: OutboxKey(rawValue: "\(user)-\(request)-\(dueAt.secondsSinceEpoch)-\(channel.name)"), userID: user,
            requestID: request, dueAt: dueAt, payload: payload)
    }

    @Test(arguments: [1, 2, 3, 4, 5, 6] as [UInt64])
    func holdsWhatSQLiteHoldsAfterTheSameWrites(seed: UInt64) throws {
        try withTemporaryDirectory { directory in
            let store = try SQLiteEngagementStore(path: directory.appendingPathComponent("outbox.sqlite").path)
            var outbox = PendingOutbox()
            var random = SeededGenerator(seed: seed)
            var now = Self.start
            // Keys repeat now and then (the same request, channel and instant), so a completed
            // key is made again and must be refused by both.
            func draw(for user: UserID) -> OutboxRow {
                row(
                    user, Self.requests[random.int(in: 0...3)], Self.channels[random.int(in: 0...2)],
                    dueAt: Self.start + Int64(60 * random.int(in: 0...40)))
            }
            for step in 0..<500 {
                now = now + Int64(random.int(in: 0...30))
                let user = Self.users[random.int(in: 0...1)]
                switch random.int(in: 0...9) {
                case 0...3:
                    let cancelled = random.chance(0.3) ? [Self.requests[random.int(in: 0...3)]] : []
                    var rows: [OutboxRow] = []
                    for _ in 0..<random.int(in: 0...3) {
                        let next = draw(for: user)
                        // A commit holds one row per request and channel.
                        rows.removeAll { $0.slot == next.slot }
                        rows.append(next)
                    }
                    outbox.commit(userID: user, cancelled: cancelled, rows: rows)
                    try store.commit(
                        RuntimeCommit(userID: user, snapshot: [1], cancelledRequestIDs: cancelled, outbox: rows))
                case 4...5:
                    let due = Array(outbox.due(through: now))
                    #expect(due == (try store.dueOutbox(through: now, limit: 1_000)), "step \(step)")
                    let done = due.filter { _ in random.chance(0.5) }.map(\.key)
                    for key in done { outbox.complete(key, at: now) }
                    try store.completeOutbox(keys: done, at: now)
                case 6...7:
                    let record = claimRecord(over: outbox.rows, &random, at: now)
                    outbox.apply(record, at: now)
                    try store.recordClaim(record, at: now)
                default:
                    guard let item = outbox.rows.first(where: { $0.channel == .inbox }) else { continue }
                    let delivery = InboxDelivery(row: item, kind: "mention", title: "t", body: "b")
                    let next =
                        random.chance(0.5) ? [row(item.userID, "series", .inbox, dueAt: item.dueAt + 86_400)] : []
                    outbox.complete(item.key, at: now)
                    for row in next { outbox.enqueue(row) }
                    try store.deliverToInbox(delivery, next: next, at: now)
                }
                for user in Self.users {
                    #expect(
                        outbox.rows.filter { $0.userID == user } == (try store.pendingOutbox(userID: user)),
                        "step \(step)")
                }
                #expect(
                    outbox.claimState(of: Set(Self.users)) == (try store.claimState(userIDs: Self.users)),
                    "step \(step)")
            }
        }
    }

    /// A claim over some pending rows: deferrals (one of a key no longer pending), a merge of
    /// two alerts of one user, tallies and performed keys.
    func claimRecord(over pending: [OutboxRow], _ random: inout SeededGenerator, at now: Instant) -> ClaimRecord {
        var record = ClaimRecord()
        let alerts = pending.filter { $0.channel == .push }
        for alert in alerts where random.chance(0.3) {
            record.deferrals.append(
                OutboxDeferral(
                    key: alert.key, until: alert.dueAt + 3_600, reason: "maxPerHour", firstDueAt: alert.dueAt))
        }
        if random.chance(0.1) {
            record.deferrals.append(
                OutboxDeferral(key: "not-pending", until: now + 60, reason: "quietHours", firstDueAt: now))
        }
        let deferred = Set(record.deferrals.map(\.key))
        let user = Self.users[random.int(in: 0...1)]
        let mergeable = alerts.filter { $0.userID == user && !deferred.contains($0.key) }
        if mergeable.count >= 2, random.chance(0.3) {
            var merged = mergeable[0]
            merged.requestID = RequestID(rawValue: "merged/\(now.secondsSinceEpoch)")
            merged.key = OutboxKey(rawValue: "\(user)-merged-\(now.secondsSinceEpoch)")
            record.merges.append(OutboxMerge(row: merged, replacedKeys: mergeable.prefix(2).map(\.key)))
            record.performedKeys.append(merged.key)
        }
        record.tallies[user] = AlertTally(
            localDay: 20_000, localHour: 480_000, sentToday: random.int(in: 0...5), sentThisHour: 1)
        record.performedKeys += pending.filter { !deferred.contains($0.key) && random.chance(0.2) }.map(\.key)
        return record
    }

    @Test func anEmptyOutboxHasNothingDue() {
        var outbox = PendingOutbox()
        #expect(outbox.due(through: Self.start).isEmpty)
        #expect(outbox.nextDueAt == nil)
        outbox.commit(userID: "u1", cancelled: ["a"], rows: [])
        #expect(outbox.rows.isEmpty)
    }

    @Test func aBoundedOutboxForgetsACompletedKeyAfterItsRetention() {
        var outbox = PendingOutbox(completedKeyRetentionSeconds: 3_600)
        let alert = row("u1", "a", .push, dueAt: Self.start)
        outbox.enqueue(alert)
        outbox.complete(alert.key, at: Self.start)
        let refused = !outbox.enqueue(alert)
        #expect(refused)
        // Within the retention the key is refused; past it (a later completion prunes) it is not.
        outbox.complete("other", at: Self.start + 3_600)
        #expect(outbox.wasCompleted(alert.key))
        outbox.complete("another", at: Self.start + 3_601)
        #expect(!outbox.wasCompleted(alert.key))
        #expect(outbox.wasCompleted("other") && outbox.wasCompleted("another"))
        let taken = outbox.enqueue(alert)
        #expect(taken)
    }
}
