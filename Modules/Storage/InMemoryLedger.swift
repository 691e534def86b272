public import Models

/// The in-memory store's ledger: each user's rows by request, the idempotency keys applied with
/// the instant of their entry, and the retention that prunes both (`EngagementStore`'s ledger
/// retention). A value inside the store's locked storage.
struct InMemoryLedger {
    private struct UserLedger {
        var rows: [RequestID: LedgerEntry] = [:]
        /// Each key applied, with its entry's instant.
        var keys: [String: Instant] = [:]
        /// At or before the oldest instant of `rows` and `keys`: while it is inside the window, a
        /// batch looks at nothing else to prune.
        var oldest: Instant?

        /// Removes at most `LedgerRetention.prunedPerBatch` of the oldest rows, and as many of the
        /// oldest keys, from before `horizon`.
        mutating func prune(before horizon: Instant) {
            guard let oldest, oldest < horizon else { return }
            let limit = LedgerRetention.prunedPerBatch
            let expiredRows = rows.values.filter { $0.at < horizon }
                .sorted { ($0.at, $0.requestID) < ($1.at, $1.requestID) }.prefix(limit)
            for row in expiredRows { rows[row.requestID] = nil }
            let expiredKeys = keys.filter { $0.value < horizon }
                .sorted { ($0.value, $0.key) < ($1.value, $1.key) }.prefix(limit)
            for (key, _) in expiredKeys { keys[key] = nil }
            self.oldest = [rows.values.lazy.map(\.at).min(), keys.values.min()].compactMap { $0 }.min()
        }
    }

    private var users: [UserID: UserLedger] = [:]

    /// Applies `entries` in order (an entry whose key was applied is a no-op), then prunes each of
    /// their users' rows from before the window that ends at that user's newest entry.
    mutating func apply(_ entries: [LedgerEntry]) {
        guard !entries.isEmpty else { return }
        var newest: [UserID: Instant] = [:]
        for entry in entries {
            newest[entry.userID] = max(newest[entry.userID] ?? entry.at, entry.at)
            // Taken out and put back, so the user's tables are changed in place, not copied.
            var ledger = users.removeValue(forKey: entry.userID) ?? UserLedger()
            if ledger.keys[entry.idempotencyKey] == nil {
                ledger.keys[entry.idempotencyKey] = entry.at
                ledger.rows[entry.requestID] = entry
                ledger.oldest = min(ledger.oldest ?? entry.at, entry.at)
            }
            users[entry.userID] = ledger
        }
        for (userID, newest) in newest {
            users[userID]?.prune(before: newest - LedgerRetention.seconds)
            if users[userID]?.keys.isEmpty == true, users[userID]?.rows.isEmpty == true { users[userID] = nil }
        }
    }

    /// The user's rows with `from <= at < to`, by time, then request.
    func rows(userID: UserID, from: Instant, to: Instant) -> [LedgerEntry] {
        guard let rows = users[userID]?.rows else { return [] }
        return rows.values.filter { from <= $0.at && $0.at < to }
            .sorted { ($0.at, $0.requestID) < ($1.at, $1.requestID) }
    }

    /// How many rows and keys the user holds (for tests).
    func counts(userID: UserID) -> (rows: Int, keys: Int) {
        (users[userID]?.rows.count ?? 0, users[userID]?.keys.count ?? 0)
    }
}
