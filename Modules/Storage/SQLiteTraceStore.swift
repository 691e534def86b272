import Foundation
import GRDB
public import Models

/// `TraceStore` on SQLite: the `trace` table of migration `v5-trace`, written inside the
/// runtime's commit transaction (`SQLiteEngagementStore.commit`).
extension SQLiteEngagementStore {
    public func traceRecords(userID: UserID, after position: TracePosition, limit: Int) throws(StoreError)
        -> [TraceRecord]
    {
        guard limit > 0 else { return [] }
        let path = path
        return try read { db in
            try Row.fetchAll(
                db.cachedStatement(sql: SQLiteTraceStatements.selectTrace),
                arguments: [
                    userID.rawValue, position.at.secondsSinceEpoch, position.at.secondsSinceEpoch, position.id, limit,
                ]
            )
            .map { row throws(StoreError) in try Self.traceRecord(row, userID: userID, path: path) }
        }
    }

    /// Inserts the commit's trace records (ids from the table's AUTOINCREMENT, never reused) and
    /// prunes the user's records past the retention window, a bounded number per commit.
    static func writeTrace(_ records: [TraceRecord], userID: UserID, _ db: Database) throws {
        guard let newest = records.map(\.at).max() else { return }
        let insert = try db.cachedStatement(sql: SQLiteTraceStatements.insertTrace)
        for record in records {
            try insert.execute(arguments: [
                record.userID.rawValue, record.at.secondsSinceEpoch, record.requestID.rawValue, record.kind.rawValue,
                record.decision.rawValue, record.reason.rawValue, record.fireAt?.secondsSinceEpoch, record.detail,
                record.groupID, record.input,
            ])
        }
        try db.cachedStatement(sql: SQLiteTraceStatements.pruneTrace).execute(arguments: [
            userID.rawValue, (newest - TraceRetention.seconds).secondsSinceEpoch, TraceRetention.prunedPerCommit,
        ])
    }

    private static func traceRecord(_ row: Row, userID: UserID, path: String) throws(StoreError) -> TraceRecord {
        let kind: String = row[2]
        let decision: String = row[3]
        let reason: String = row[4]
        guard let kind = NotificationKind(rawValue: kind), let decision = TraceDecision(rawValue: decision),
            let reason = ReasonCode(rawValue: reason)
        else {
            throw .corrupt("\(path): trace row \(row[0] as Int64) has an unknown kind, decision or reason")
        }
        return TraceRecord(
            id: row[0], userID: userID, at: Instant(secondsSinceEpoch: row[5]), requestID: RequestID(rawValue: row[1]),
            kind: kind,
            decision: decision, reason: reason, fireAt: (row[6] as Int64?).map(Instant.init(secondsSinceEpoch:)),
            detail: row[7], groupID: row[8], input: row[9])
    }
}

/// The trace table and its statements.
enum SQLiteTraceStatements {
    /// Migration `v5-trace`. A rowid table: AUTOINCREMENT gives every record an id larger than
    /// any before it, even after the newest were pruned; the index serves a user's trace by time
    /// and the pruning of its oldest rows.
    static let createTable = """
        CREATE TABLE trace (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            userID TEXT NOT NULL,
            at INTEGER NOT NULL,
            requestID TEXT NOT NULL,
            kind TEXT NOT NULL,
            decision TEXT NOT NULL,
            reason TEXT NOT NULL,
            fireAt INTEGER,
            detail TEXT NOT NULL,
            groupID TEXT,
            input TEXT NOT NULL
        ) STRICT;
        CREATE INDEX trace_userID_at ON trace (userID, at, id);
        """

    static let insertTrace = """
        INSERT INTO trace (userID, at, requestID, kind, decision, reason, fireAt, detail, groupID, input)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        """
    /// After (at, id): a later time, or the same time and a larger id.
    static let selectTrace = """
        SELECT id, requestID, kind, decision, reason, at, fireAt, detail, groupID, input
        FROM trace INDEXED BY trace_userID_at
        WHERE userID = ? AND (at > ? OR (at = ? AND id > ?)) ORDER BY at, id LIMIT ?
        """
    static let pruneTrace = """
        DELETE FROM trace WHERE id IN (
            SELECT id FROM trace INDEXED BY trace_userID_at WHERE userID = ? AND at < ? ORDER BY at, id LIMIT ?)
        """

    /// Every statement with its name, for the query-plan test.
    static let all: [(name: String, sql: String)] = [
        ("insertTrace", insertTrace), ("selectTrace", selectTrace), ("pruneTrace", pruneTrace),
    ]
}
