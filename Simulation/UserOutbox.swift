import Models
import Storage

/// One user's pending outbox rows on the simulated server, kept as every `RuntimeStore` keeps
/// them: a withdrawn request's rows go, and a row replaces the pending row of its request and
/// channel. A user has a few at a time, so they are an array searched in order.
///
/// Unlike a store it does not remember completed keys: a store needs them because a replayed
/// commit must not bring a performed row back, and the simulated server never replays a commit
/// (a failed one is rolled back and retried before its rows are kept).
struct UserOutbox {
    private(set) var rows: [OutboxRow] = []

    /// Commits a step's rows (`OutboxPlan.rows`): the cancelled requests' rows are withdrawn,
    /// then each row is made pending.
    mutating func commit(cancelled: [String], rows new: [OutboxRow]) {
        if !cancelled.isEmpty, !rows.isEmpty {
            rows.removeAll { row in cancelled.contains(row.requestID) }
        }
        for row in new { enqueue(row) }
    }

    /// Makes `row` pending, replacing the pending row of its request and channel.
    mutating func enqueue(_ row: OutboxRow) {
        rows.removeAll { $0.requestID == row.requestID && $0.channel == row.channel }
        rows.append(row)
    }

    /// Takes the rows due by `now` out, in due order (`dueAt`, then key), as a store lists them.
    mutating func takeDue(at now: Instant) -> [OutboxRow] {
        guard rows.contains(where: { $0.dueAt <= now }) else { return [] }
        let due = rows.filter { $0.dueAt <= now }.sorted { ($0.dueAt, $0.key) < ($1.dueAt, $1.key) }
        rows.removeAll { $0.dueAt <= now }
        return due
    }

    /// The soonest pending row's instant (no allocation: it is asked after every step).
    var nextDueAt: Instant? {
        var next: Instant?
        for index in rows.indices where next == nil || rows[index].dueAt < next! { next = rows[index].dueAt }
        return next
    }

    /// Whether a badge sync is pending.
    var hasSync: Bool { rows.contains { $0.channel == .silent } }
}
