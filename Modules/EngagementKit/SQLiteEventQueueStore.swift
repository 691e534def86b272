public import Foundation
import GRDB
public import Models

/// The queue's events in a SQLite file on the device (GRDB): each append is a committed
/// transaction before it returns, so an app killed at any instant keeps every event it was
/// told of; sequences come from `AUTOINCREMENT`, so one is never given twice, even after the
/// newest event was removed.
public final class SQLiteEventQueueStore: EventQueueStore, Sendable {
    private let database: DatabaseQueue
    public let userID: UserID
    public let installation: String

    /// Opens the queue of `userID` at `path`, or creates it there with the installation id
    /// `newInstallation` (1 to 200 characters; an app passes a fresh UUID at every open, kept
    /// only when the file is new). A file made for another user throws `QueueFileError`: one
    /// file per user.
    public init(path: String, userID: UserID, newInstallation: String) throws {
        guard (1...200).contains(newInstallation.utf8.count) else {
            throw QueueFileError(problem: "an installation id is 1 to 200 characters")
        }
        database = try DatabaseQueue(path: path)
        let identity = try database.write { db -> (user: UserID, installation: String) in
            try db.execute(
                sql: """
                    CREATE TABLE IF NOT EXISTS queuedEvent (
                        sequence INTEGER PRIMARY KEY AUTOINCREMENT,
                        body BLOB NOT NULL,
                        enqueuedAt INTEGER NOT NULL,
                        attempts INTEGER NOT NULL,
                        nextAttemptAt INTEGER NOT NULL,
                        firstAttemptAt INTEGER);
                    CREATE TABLE IF NOT EXISTS queueIdentity (
                        one INTEGER PRIMARY KEY CHECK (one = 1),
                        userID TEXT NOT NULL,
                        installation TEXT NOT NULL);
                    """)
            // A file made before `firstAttemptAt` gains the column. An event already tried has
            // its first attempt no earlier than it was queued: that bound is taken, so it is
            // reported rather than missed past the key's lifetime.
            if try !db.columns(in: "queuedEvent").contains(where: { $0.name == "firstAttemptAt" }) {
                try db.execute(sql: "ALTER TABLE queuedEvent ADD COLUMN firstAttemptAt INTEGER")
                try db.execute(sql: "UPDATE queuedEvent SET firstAttemptAt = enqueuedAt WHERE attempts > 0")
            }
            try db.execute(
                sql: "INSERT OR IGNORE INTO queueIdentity (one, userID, installation) VALUES (1, ?, ?)",
                arguments: [userID.rawValue, newInstallation])
            let row = try Row.fetchOne(db, sql: "SELECT userID, installation FROM queueIdentity")
            return ((row?["userID"]).map(UserID.init(rawValue:)) ?? userID, row?["installation"] ?? newInstallation)
        }
        guard identity.user == userID else {
            throw QueueFileError(problem: "the queue at \(path) holds the events of another user")
        }
        self.userID = userID
        installation = identity.installation
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
                    nextAttemptAt: Instant(secondsSinceEpoch: row["nextAttemptAt"]),
                    firstAttemptAt: (row["firstAttemptAt"] as Int64?).map(Instant.init(secondsSinceEpoch:)))
            }
        }
    }

    public func update(_ event: QueuedEvent) throws {
        try database.write { db in
            try db.execute(
                sql: "UPDATE queuedEvent SET attempts = ?, nextAttemptAt = ?, firstAttemptAt = ? WHERE sequence = ?",
                arguments: [
                    event.attempts, event.nextAttemptAt.secondsSinceEpoch, event.firstAttemptAt?.secondsSinceEpoch,
                    event.sequence,
                ])
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

/// A queue file that cannot be opened as asked.
public struct QueueFileError: Error, Hashable, Sendable, CustomStringConvertible {
    public var problem: String
    public var description: String { "event queue: \(problem)" }
}
