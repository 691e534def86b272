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
    /// In due order (`dueAt`, then key), as a store lists them: what is due is a prefix.
    private(set) var rows: [OutboxRow] = []

    /// Commits a step's rows (`OutboxPlan.rows`): the cancelled requests' rows are withdrawn,
    /// then each row is made pending.
    mutating func commit(cancelled: [RequestID], rows new: [OutboxRow]) {
        if !cancelled.isEmpty, !rows.isEmpty {
            rows.removeAll { row in cancelled.contains(row.requestID) }
        }
        for row in new { enqueue(row) }
    }

    /// Makes `row` pending, replacing the pending row of its request and channel. Rows are
    /// moved, not copied, to keep the order.
    mutating func enqueue(_ row: OutboxRow) {
        if let old = rows.firstIndex(where: { $0.channel == row.channel && $0.requestID == row.requestID }) {
            rows.remove(at: old)
        }
        var low = 0
        var high = rows.count
        while low < high {
            let middle = (low + high) / 2
            if (rows[middle].dueAt, rows[middle].key) < (row.dueAt, row.key) { low = middle + 1 } else { high = middle }
        }
        rows.insert(row, at: low)
    }

    /// Takes the rows due by `now` out, in due order.
    mutating func takeDue(at now: Instant) -> [OutboxRow] {
        var count = 0
        while count < rows.count, rows[count].dueAt <= now { count += 1 }
        guard count > 0 else { return [] }
        let due = Array(rows[..<count])
        rows.removeFirst(count)
        return due
    }

    /// The soonest pending row's instant.
    var nextDueAt: Instant? { rows.first?.dueAt }

    /// Whether a badge sync is pending.
    var hasSync: Bool { rows.contains { $0.channel == .silent } }
}
