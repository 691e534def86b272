public import Models
import PostgresNIO
public import Storage

/// `TraceStore` on PostgreSQL: the `trace` table of schema step 5, written inside the commit's
/// transaction. Ids come from the table's identity, never reused. A commit writes its user's
/// snapshot (locking that row) before its trace, so one user's records get ids in commit order
/// even when several processes commit for the user.
extension PostgresRuntimeStore {
    public func traceRecords(userID: UserID, after position: TracePosition, limit: Int) throws(StoreError)
        -> [TraceRecord]
    {
        guard limit > 0 else { return [] }
        return try pool.reading { session in
            try session.rows(
                """
                SELECT id, request_id, kind, decision, reason, at, fire_at, detail, group_id, input FROM trace
                WHERE user_id = \(userID.rawValue) AND (at, id) > (\(position.at.secondsSinceEpoch), \(position.id))
                ORDER BY at, id LIMIT \(limit)
                """
            ).map { row throws(StoreError) in try Self.traceRecord(row, userID: userID) }
        }
    }

    /// Inserts the commit's trace records and prunes the user's records past the retention
    /// window, at most `TraceRetention.prunedPerCommit` of the oldest.
    static func writeTrace(_ records: [TraceRecord], userID: UserID, _ session: PostgresSession) throws {
        guard let newest = records.map(\.at).max() else { return }
        for record in records {
            try session.execute(
                """
                INSERT INTO trace (user_id, at, request_id, kind, decision, reason, fire_at, detail, group_id, input)
                VALUES (\(record.userID.rawValue), \(record.at.secondsSinceEpoch), \(record.requestID.rawValue),
                    \(record.kind.rawValue), \(record.decision.rawValue), \(record.reason.rawValue),
                    \(record.fireAt?.secondsSinceEpoch), \(record.detail), \(record.groupID), \(record.input))
                """)
        }
        try session.execute(
            """
            DELETE FROM trace WHERE id IN (
                SELECT id FROM trace
                WHERE user_id = \(userID.rawValue) AND at < \((newest - TraceRetention.seconds).secondsSinceEpoch)
                ORDER BY at, id LIMIT \(TraceRetention.prunedPerCommit))
            """)
    }

    private static func traceRecord(_ row: PostgresRow, userID: UserID) throws(StoreError) -> TraceRecord {
        let (id, requestID, kindName, decisionName, reasonName, at, fireAt, detail, groupID, input) =
            try PostgresColumns.decode(
                row, as: (Int64, String, String, String, String, Int64, Int64?, String, String?, String).self,
                table: "trace")
        let described = "record \(id)"
        guard let kind = NotificationKind(rawValue: kindName) else {
            throw PostgresColumns.unknownValue(kindName, table: "trace", column: "kind", row: described)
        }
        guard let decision = TraceDecision(rawValue: decisionName) else {
            throw PostgresColumns.unknownValue(decisionName, table: "trace", column: "decision", row: described)
        }
        guard let reason = ReasonCode(rawValue: reasonName) else {
            throw PostgresColumns.unknownValue(reasonName, table: "trace", column: "reason", row: described)
        }
        return TraceRecord(
            id: id, userID: userID, at: Instant(secondsSinceEpoch: at), requestID: RequestID(requestID), kind: kind,
            decision: decision, reason: reason, fireAt: fireAt.map(Instant.init(secondsSinceEpoch:)), detail: detail,
            groupID: groupID, input: input)
    }
}
