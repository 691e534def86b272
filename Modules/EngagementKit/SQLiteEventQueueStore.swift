public import Foundation
import GRDB
public import Models

/// The queue's events in a SQLite file on the device (GRDB): each append is a committed
/// transaction before it returns, so an app killed at any instant keeps every event it was
/// told of; sequences come from `AUTOINCREMENT`, so one is never given twice, even after the
/// newest event was removed.
public final class SQLiteEventQueueStore: EventQueueStore, Sendable {
    private let database: DatabaseQueue

    /// Opens (or creates) the queue at `path`.
    public init(path: String) throws {
        database = try DatabaseQueue(path: path)
        try database.write { db in
            try db.execute(
                sql: """
                    CREATE TABLE IF NOT EXISTS queuedEvent (
                        sequence INTEGER PRIMARY KEY AUTOINCREMENT,
                        body BLOB NOT NULL,
                        enqueuedAt INTEGER NOT NULL,
                        attempts INTEGER NOT NULL,
                        nextAttemptAt INTEGER NOT NULL)
                    """)
        }
    }

    public func append(body: Data, at instant: Instant) throws -> QueuedEvent {
        try database.write { db in
            try db.execute(
                sql: "INSERT INTO queuedEvent (body, enqueuedAt, attempts, nextAttemptAt) VALUES (?, ?, 0, ?)",
                arguments: [body, instant.secondsSinceEpoch, instant.secondsSinceEpoch])
            return QueuedEvent(sequence: db.lastInsertedRowID, body: body, enqueuedAt: instant, nextAttemptAt: instant)
        }
    }

    public func oldest(limit: Int) throws -> [QueuedEvent] {
        try database.read { db in
            try Row.fetchAll(
                db, sql: "SELECT * FROM queuedEvent ORDER BY sequence LIMIT ?", arguments: [max(0, limit)]
            ).map { row in
                QueuedEvent(
                    sequence: row["sequence"], body: row["body"],
                    enqueuedAt: Instant(secondsSinceEpoch: row["enqueuedAt"]), attempts: row["attempts"],
                    nextAttemptAt: Instant(secondsSinceEpoch: row["nextAttemptAt"]))
            }
        }
    }

    public func update(_ event: QueuedEvent) throws {
        try database.write { db in
            try db.execute(
                sql: "UPDATE queuedEvent SET attempts = ?, nextAttemptAt = ? WHERE sequence = ?",
                arguments: [event.attempts, event.nextAttemptAt.secondsSinceEpoch, event.sequence])
        }
    }

    public func remove(sequence: Int64) throws {
        try database.write { db in
            try db.execute(sql: "DELETE FROM queuedEvent WHERE sequence = ?", arguments: [sequence])
        }
    }

    public func count() throws -> Int {
        try database.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM queuedEvent") ?? 0 }
    }
}
