public import Models
import PostgresNIO
public import Storage

/// `SocialEventStore` on PostgreSQL (schema step 8), and the ledger's retention: both written
/// inside the commit's transaction.
extension PostgresRuntimeStore {
    /// The commit's social event record: expired records of any user pruned first, soonest
    /// expiry first and a bounded number (rows another transaction is pruning are skipped rather
    /// than waited for); a live record of the same id is kept, an expired one replaced.
    static func writeSocialEvent(_ record: SocialEventRecord?, _ session: PostgresSession) throws {
        guard let record else { return }
        try session.execute(
            """
            DELETE FROM social_event WHERE (user_id, event_id) IN (
                SELECT user_id, event_id FROM social_event WHERE expires_at <= \(record.seenAt.secondsSinceEpoch)
                ORDER BY expires_at, user_id COLLATE "C", event_id COLLATE "C"
                LIMIT \(SocialEventRecord.prunedPerCommit) FOR UPDATE SKIP LOCKED)
            """)
        try session.execute(
            """
            INSERT INTO social_event (user_id, event_id, seen_at, expires_at)
            VALUES (\(record.userID.rawValue), \(record.eventID), \(record.seenAt.secondsSinceEpoch),
                \(record.expiresAt.secondsSinceEpoch))
            ON CONFLICT (user_id, event_id) DO UPDATE SET seen_at = excluded.seen_at, expires_at = excluded.expires_at
            WHERE social_event.expires_at <= excluded.seen_at
            """)
    }

    /// Prunes each user's ledger rows and keys from before the window that ends at that user's
    /// newest entry in `entries` (`LedgerRetention`), the oldest first and a bounded number.
    static func pruneLedger(after entries: [LedgerEntry], _ session: PostgresSession) throws {
        guard !entries.isEmpty else { return }
        var newest: [UserID: Instant] = [:]
        for entry in entries { newest[entry.userID] = max(newest[entry.userID] ?? entry.at, entry.at) }
        for (userID, newest) in newest.sorted(by: { $0.key < $1.key }) {
            let horizon = (newest - LedgerRetention.seconds).secondsSinceEpoch
            try session.execute(
                """
                DELETE FROM ledger WHERE user_id = \(userID.rawValue) AND request_id IN (
                    SELECT request_id FROM ledger WHERE user_id = \(userID.rawValue) AND at < \(horizon)
                    ORDER BY at, request_id COLLATE "C" LIMIT \(LedgerRetention.prunedPerBatch))
                """)
            try session.execute(
                """
                DELETE FROM ledger_key WHERE user_id = \(userID.rawValue) AND idempotency_key IN (
                    SELECT idempotency_key FROM ledger_key WHERE user_id = \(userID.rawValue) AND at < \(horizon)
                    ORDER BY at, idempotency_key COLLATE "C" LIMIT \(LedgerRetention.prunedPerBatch))
                """)
        }
    }

    public func socialEventRecord(userID: UserID, eventID: String) throws(StoreError) -> SocialEventRecord? {
        try pool.reading { session in
            try session.rows(
                """
                SELECT seen_at, expires_at FROM social_event
                WHERE user_id = \(userID.rawValue) AND event_id = \(eventID)
                """
            ).first.map { row throws(StoreError) in
                let (seenAt, expiresAt) = try PostgresColumns.decode(
                    row, as: (Int64, Int64).self, table: "social_event")
                return SocialEventRecord(
                    userID: userID, eventID: eventID, seenAt: Instant(secondsSinceEpoch: seenAt),
                    expiresAt: Instant(secondsSinceEpoch: expiresAt))
            }
        }
    }

    public func socialEventRecordCount() throws(StoreError) -> Int {
        try pool.reading { session in
            try session.rows("SELECT COUNT(*) FROM social_event").first.map { row throws(StoreError) in
                try PostgresColumns.decode(row, as: Int.self, table: "social_event")
            } ?? 0
        }
    }
}

/// A worker's store reads social ids from the database as it stands (nothing of them is
/// prefetched with a claim).
extension ClaimingRuntimeStore {
    public func socialEventRecord(userID: UserID, eventID: String) throws(StoreError) -> SocialEventRecord? {
        try base.socialEventRecord(userID: userID, eventID: eventID)
    }

    public func socialEventRecordCount() throws(StoreError) -> Int { try base.socialEventRecordCount() }
}
