public import Models
public import PostgresNIO

/// The statements that keep `work_queue` (one row per user with pending outbox rows, at the
/// soonest due instant) in step with the outbox. The store's commits call `noteDue`; the
/// workers' `OutboxQueue` claims and settles the rows.
public enum WorkQueueSQL {
    /// Marks `userID` as having work due at `dueAt` (or earlier, if it already had): run in the
    /// same transaction as the outbox rows it is for.
    public static func noteDue(userID: UserID, dueAt: Int64) -> PostgresQuery {
        """
        INSERT INTO work_queue (user_id, due_at) VALUES (\(userID.rawValue), \(dueAt))
        ON CONFLICT (user_id) DO UPDATE SET due_at = LEAST(work_queue.due_at, excluded.due_at)
        """
    }
}
