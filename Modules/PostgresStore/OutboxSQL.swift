public import Models
public import PostgresNIO
public import Storage

/// The outbox statements that every writer of `outbox` and `outbox_done` must share: the store's
/// commits and deliveries, and the workers' queue when it completes rows.
///
/// Contract: a key completed (in `outbox_done`) is never pending again. The store checks
/// `outbox_done` and writes a row while holding the row's key lock (`lockKeys`), and completes
/// keys while holding theirs; so a completion and a commit of the same key are serialised, and
/// whichever comes second sees the other (each statement of a `READ COMMITTED` transaction sees
/// what committed before it began). Anyone else who completes keys must do it as `complete`
/// describes, in one transaction.
public enum OutboxSQL {
    /// The first key of the two-key advisory locks taken on outbox keys ("OBX1" in ASCII); the
    /// second is `hashtext(key)`.
    public static let keyLockSpace: Int32 = 0x4F42_5831

    /// Takes the transaction-scoped lock of each of `keys`, in one fixed order (by hash) so two
    /// transactions locking overlapping sets never wait on each other in a cycle.
    public static func lockKeys(_ keys: [OutboxKey]) -> PostgresQuery {
        let keys = keys.map(\.rawValue)
        return """
            SELECT pg_advisory_xact_lock(\(keyLockSpace), hash) FROM (
                SELECT DISTINCT hashtext(key) AS hash FROM unnest(\(keys)) AS key ORDER BY hash) AS sorted
            """
    }

    /// Remembers `keys` as performed at `doneAt` (seconds since 1970); a key already done keeps
    /// its first time.
    public static func markDone(keys: [OutboxKey], doneAt: Int64) -> PostgresQuery {
        let keys = keys.map(\.rawValue)
        return """
            INSERT INTO outbox_done (key, done_at) SELECT key, \(doneAt) FROM unnest(\(keys)) AS key
            ON CONFLICT (key) DO NOTHING
            """
    }

    /// Removes the pending rows of `keys`.
    public static func deletePending(keys: [OutboxKey]) -> PostgresQuery {
        "DELETE FROM outbox WHERE key = ANY(\(keys.map(\.rawValue)))"
    }

    /// Completing keys: `lockKeys`, `markDone` and `deletePending`, in this order and in one
    /// transaction.
    public static func complete(keys: [OutboxKey], doneAt: Int64) -> [PostgresQuery] {
        [lockKeys(keys), markDone(keys: keys, doneAt: doneAt), deletePending(keys: keys)]
    }

    /// Makes a row pending unless its key is done, replacing the pending row of its request and
    /// channel; returns `due_at` when it wrote the row. A row replaced by one with another key is
    /// new work, so its claim and attempts are cleared; the same key keeps them, and the earlier
    /// of the two due instants (`RuntimeStore`'s outbox identity). Run it under
    /// the row's `lockKeys`.
    static func enqueue(
        userID: UserID, requestID: RequestID, channel: String, key: OutboxKey, dueAt: Int64, payload: String
    ) -> PostgresQuery {
        """
        INSERT INTO outbox (user_id, request_id, channel, key, due_at, payload)
        SELECT \(userID.rawValue), \(requestID.rawValue), \(channel), \(key.rawValue), \(dueAt), \(payload)
        WHERE NOT EXISTS (SELECT 1 FROM outbox_done WHERE outbox_done.key = \(key.rawValue))
        ON CONFLICT (user_id, request_id, channel) DO UPDATE SET
            key = excluded.key, payload = excluded.payload,
            due_at = CASE WHEN outbox.key = excluded.key THEN LEAST(outbox.due_at, excluded.due_at) ELSE excluded.due_at END,
            claimed_by = CASE WHEN outbox.key = excluded.key THEN outbox.claimed_by END,
            lease_until = CASE WHEN outbox.key = excluded.key THEN outbox.lease_until END,
            attempts = CASE WHEN outbox.key = excluded.key THEN outbox.attempts ELSE 0 END,
            planned_at = CASE WHEN outbox.key = excluded.key THEN outbox.planned_at END
        RETURNING due_at
        """
    }
}
