import Foundation
public import Models
import PostgresNIO
public import Storage

/// The claim-time rules' records in PostgreSQL (`ClaimRecordStore`): tallies in `user_sends`,
/// deferrals in `outbox.due_at` and `planned_at`, merges in `outbox_merged`. Written inside the
/// caller's transaction, by the workers' claim (`OutboxQueue`) and by the store itself when a
/// runtime applies the rules (`PostgresRuntimeStore.recordClaim`).
extension PostgresPool {
    /// Writes `record`'s deferrals, merges, expired keys and tallies (not its performed keys: the
    /// queue marks them with its claim, the store as attempted).
    func writeClaim(_ record: ClaimRecord, at now: Instant, _ connection: PostgresConnection) throws {
        try writeDeferrals(record.deferrals, connection)
        try writeCompletions(merges: record.merges, expired: record.expiredKeys, at: now, connection)
        try writeTallies(record.tallies, connection)
    }

    func claimTallies(of users: [UserID], _ connection: PostgresConnection) throws -> [UserID: AlertTally] {
        guard !users.isEmpty else { return [:] }
        var tallies: [UserID: AlertTally] = [:]
        let rows = try query(
            "SELECT user_id, local_day, local_hour, sent_today, sent_this_hour FROM user_sends WHERE user_id = ANY(\(users.map(\.rawValue)))",
            on: connection)
        for row in rows {
            let (user, day, hour, today, thisHour) = try row.decode((String, Int64, Int64, Int, Int).self)
            tallies[UserID(user)] = AlertTally(localDay: day, localHour: hour, sentToday: today, sentThisHour: thisHour)
        }
        return tallies
    }

    private func writeDeferrals(_ deferrals: [OutboxDeferral], _ connection: PostgresConnection) throws {
        guard !deferrals.isEmpty else { return }
        let keys = deferrals.map(\.key.rawValue)
        let untils = deferrals.map(\.until.secondsSinceEpoch)
        let firsts = deferrals.map(\.firstDueAt.secondsSinceEpoch)
        try query(
            """
            UPDATE outbox o SET planned_at = COALESCE(o.planned_at, d.first), due_at = d.until
            FROM unnest(\(keys)::text[], \(untils)::bigint[], \(firsts)::bigint[]) AS d(key, until, first)
            WHERE o.key = d.key
            """, on: connection)
    }

    /// The merges' parts and the expired alerts completed, and the merged rows made pending.
    private func writeCompletions(
        merges: [OutboxMerge], expired: [OutboxKey], at now: Instant, _ connection: PostgresConnection
    ) throws {
        guard !merges.isEmpty || !expired.isEmpty else { return }
        let replaced = merges.flatMap(\.replacedKeys)
        let into = merges.flatMap { merge in merge.replacedKeys.map { _ in merge.row.key } }
        let rows = merges.map(\.row)
        // Every key under one ordered lock, as every writer of `outbox_done` takes them: a merged
        // row whose key another process completes meanwhile is seen done below.
        try query(OutboxSQL.lockKeys(replaced + expired + rows.map(\.key)), on: connection)
        // Completed as the store completes keys (`OutboxSQL.complete`: under their key locks), so a
        // replayed commit of a merged part or an expired alert in another process cannot make it
        // pending again.
        for statement in OutboxSQL.complete(keys: replaced + expired, doneAt: now.secondsSinceEpoch) {
            try query(statement, on: connection)
        }
        guard !merges.isEmpty else { return }
        try query(
            """
            INSERT INTO outbox_merged (key, merged_into, merged_at)
            SELECT k, i, \(now.secondsSinceEpoch) FROM unnest(\(replaced.map(\.rawValue))::text[], \(into.map(\.rawValue))::text[]) AS m(k, i)
            ON CONFLICT DO NOTHING
            """, on: connection)
        // Pending unless its key is done (a merge recorded again after its send completed), the
        // rule of `OutboxSQL.enqueue`.
        try query(
            """
            INSERT INTO outbox (user_id, request_id, channel, key, due_at, payload)
            SELECT * FROM unnest(\(rows.map(\.userID.rawValue))::text[], \(rows.map(\.requestID.rawValue))::text[],
                \(rows.map(\.channel.name))::text[], \(rows.map(\.key.rawValue))::text[], \(rows.map(\.dueAt.secondsSinceEpoch))::bigint[],
                \(rows.map(\.payload.storedText))::text[]) AS m(user_id, request_id, channel, key, due_at, payload)
            WHERE NOT EXISTS (SELECT 1 FROM outbox_done d WHERE d.key = m.key)
            ON CONFLICT (user_id, request_id, channel) DO UPDATE SET key = excluded.key, due_at = excluded.due_at,
                payload = excluded.payload
            """, on: connection)
    }

    private func writeTallies(_ tallies: [UserID: AlertTally], _ connection: PostgresConnection) throws {
        guard !tallies.isEmpty else { return }
        let sorted = tallies.sorted { $0.key < $1.key }
        try query(
            """
            INSERT INTO user_sends (user_id, local_day, local_hour, sent_today, sent_this_hour)
            SELECT * FROM unnest(\(sorted.map(\.key.rawValue))::text[], \(sorted.map(\.value.localDay))::bigint[],
                \(sorted.map(\.value.localHour))::bigint[], \(sorted.map { Int64($0.value.sentToday) })::bigint[],
                \(sorted.map { Int64($0.value.sentThisHour) })::bigint[])
            ON CONFLICT (user_id) DO UPDATE SET local_day = excluded.local_day, local_hour = excluded.local_hour,
                sent_today = excluded.sent_today, sent_this_hour = excluded.sent_this_hour
            """, on: connection)
    }
}

extension PostgresRuntimeStore {
    /// Due rows are listed as they stand (`serve` dispatching on a manual clock); workers claim
    /// through `ClaimingRuntimeStore`.
    public var claimsWithRules: Bool { false }

    public func claimState(userIDs: [UserID]) throws(StoreError) -> ClaimState {
        guard !userIDs.isEmpty else { return ClaimState() }
        return try pool.transaction { connection in
            var state = ClaimState()
            state.tallies = try pool.claimTallies(of: userIDs, connection)
            let rows = try pool.query(
                """
                SELECT key, attempts, planned_at FROM outbox
                WHERE user_id = ANY(\(userIDs.map(\.rawValue))) AND (attempts > 0 OR planned_at IS NOT NULL)
                """, on: connection)
            for row in rows {
                let (text, attempts, plannedAt) = try row.decode((String, Int32, Int64?).self)
                let key = OutboxKey(text)
                if attempts > 0 { state.attemptedKeys.insert(key) }
                if let plannedAt { state.plannedAt[key] = Instant(secondsSinceEpoch: plannedAt) }
            }
            return state
        }
    }

    public func recordClaim(_ record: ClaimRecord, at instant: Instant) throws(StoreError) {
        try pool.transaction { connection in
            try pool.requireDurableCommit(on: connection)  // the rows are performed once this commits
            try pool.writeClaim(record, at: instant, connection)
            if !record.performedKeys.isEmpty {
                try pool.query(
                    "UPDATE outbox SET attempts = attempts + 1 WHERE key = ANY(\(record.performedKeys.map(\.rawValue)))",
                    on: connection
                )
            }
        }
    }
}
