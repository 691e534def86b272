import Foundation
import GRDB
public import Models

/// `ClaimRecordStore` on SQLite (`v7-claims`): each pending row's attempts and first due instant
/// in `outbox`, each user's tally in `alertTally`.
extension SQLiteEngagementStore {
    /// Due rows are listed as they stand: the runtime claims them.
    public var claimsWithRules: Bool { false }

    public func claimState(userIDs: [UserID]) throws(StoreError) -> ClaimState {
        try read { db in
            var state = ClaimState()
            for user in userIDs {
                if let row = try Row.fetchOne(
                    db.cachedStatement(sql: SQLiteClaimStatements.selectAlertTally), arguments: [user.rawValue])
                {
                    state.tallies[user] = AlertTally(
                        localDay: row[0], localHour: row[1], sentToday: row[2], sentThisHour: row[3])
                }
                for row in try Row.fetchAll(
                    db.cachedStatement(sql: SQLiteClaimStatements.selectClaimedRows), arguments: [user.rawValue])
                {
                    let key = OutboxKey(row[0] as String)
                    if (row[1] as Int64) > 0 { state.attemptedKeys.insert(key) }
                    if let plannedAt: Int64 = row[2] { state.plannedAt[key] = Instant(secondsSinceEpoch: plannedAt) }
                }
            }
            return state
        }
    }

    public func recordClaim(_ record: ClaimRecord, at instant: Instant) throws(StoreError) {
        try write { db in
            try db.inTransaction(.immediate) {
                for deferral in record.deferrals {
                    try db.cachedStatement(sql: SQLiteClaimStatements.deferOutbox).execute(arguments: [
                        deferral.firstDueAt.secondsSinceEpoch, deferral.until.secondsSinceEpoch, deferral.key.rawValue,
                    ])
                }
                for merge in record.merges {
                    for key in merge.replacedKeys { try Self.completeOutboxKey(key, at: instant, db) }
                    try Self.enqueueOutbox(merge.row, db)
                }
                for key in record.expiredKeys { try Self.completeOutboxKey(key, at: instant, db) }
                for (user, tally) in record.tallies {
                    try db.cachedStatement(sql: SQLiteClaimStatements.upsertAlertTally).execute(arguments: [
                        user.rawValue, tally.localDay, tally.localHour, tally.sentToday, tally.sentThisHour,
                    ])
                }
                for key in record.performedKeys {
                    try db.cachedStatement(sql: SQLiteClaimStatements.markAttempted).execute(arguments: [key.rawValue])
                }
                return .commit
            }
        }
    }
}

enum SQLiteClaimStatements {
    /// `attempts` counts the claims that handed a row to be performed; `plannedAt` is the instant
    /// a deferred row was first due (null until it is deferred).
    static let migration = """
        ALTER TABLE outbox ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE outbox ADD COLUMN plannedAt INTEGER;
        CREATE TABLE alertTally (
            userID TEXT NOT NULL PRIMARY KEY,
            localDay INTEGER NOT NULL,
            localHour INTEGER NOT NULL,
            sentToday INTEGER NOT NULL,
            sentThisHour INTEGER NOT NULL
        ) STRICT, WITHOUT ROWID;
        """

    static let selectAlertTally = """
        SELECT localDay, localHour, sentToday, sentThisHour FROM alertTally WHERE userID = ?
        """
    static let selectClaimedRows = """
        SELECT key, attempts, plannedAt FROM outbox WHERE userID = ? AND (attempts > 0 OR plannedAt IS NOT NULL)
        """
    static let deferOutbox = "UPDATE outbox SET plannedAt = COALESCE(plannedAt, ?), dueAt = ? WHERE key = ?"
    static let markAttempted = "UPDATE outbox SET attempts = attempts + 1 WHERE key = ?"
    static let upsertAlertTally = """
        INSERT INTO alertTally (userID, localDay, localHour, sentToday, sentThisHour) VALUES (?, ?, ?, ?, ?)
        ON CONFLICT (userID) DO UPDATE SET localDay = excluded.localDay, localHour = excluded.localHour,
            sentToday = excluded.sentToday, sentThisHour = excluded.sentThisHour
        """

    /// Every statement with its name, for the query-plan test.
    static let all: [(name: String, sql: String)] = [
        ("selectAlertTally", selectAlertTally), ("selectClaimedRows", selectClaimedRows),
        ("deferOutbox", deferOutbox), ("markAttempted", markAttempted), ("upsertAlertTally", upsertAlertTally),
    ]
}
