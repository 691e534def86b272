import Foundation
import GRDB
public import Models

/// `RuntimeStore` on SQLite: the snapshot, the step's history and the outbox rows of one input
/// in one immediate transaction (schema v2's `engineSnapshot`, `outbox` and `outboxDone`).
extension SQLiteEngagementStore {
    public func commitGroup(_ commits: [RuntimeCommit]) throws(StoreError) {
        for commit in commits { if let error = commit.validationError { throw error } }
        let profiles = try commits.map { commit throws(StoreError) in try Self.encodeProfiles(commit.batch.profiles) }
        try write { db in
            try db.inTransaction(.immediate) {
                for (commit, profiles) in zip(commits, profiles) { try Self.write(commit, profiles: profiles, db) }
                return .commit
            }
        }
    }

    /// One input's rows, inside the caller's transaction.
    private static func write(_ commit: RuntimeCommit, profiles: [(String, String)], _ db: Database) throws {
        try writeProfiles(profiles, db)
        try writeActivityEvents(commit.batch.activityEvents, db)
        try writeLedgerEntries(commit.batch.ledgerEntries, db)
        try pruneLedger(after: commit.batch.ledgerEntries, db)
        try writeEngagementStates(commit.batch.engagementStates, db)
        try writeTrace(commit.trace, userID: commit.userID, db)
        try db.cachedStatement(sql: SQLiteStatements.upsertSnapshot).execute(arguments: [
            commit.userID.rawValue, Data(commit.snapshot),
        ])
        try writeUserRecords(commit, db)
        try writeSocialEvent(commit.socialEvent, db)
        for requestID in commit.cancelledRequestIDs {
            try db.cachedStatement(sql: SQLiteStatements.deleteOutboxRequest).execute(arguments: [
                commit.userID.rawValue, requestID.rawValue,
            ])
        }
        for row in commit.outbox { try enqueueOutbox(row, db) }
    }

    /// Makes `row` pending, replacing the pending row of its request and channel, unless its key
    /// was completed (outbox identity), inside the caller's transaction.
    static func enqueueOutbox(_ row: OutboxRow, _ db: Database) throws {
        guard
            try Bool.fetchOne(db.cachedStatement(sql: SQLiteStatements.selectOutboxDone), arguments: [row.key.rawValue])
                == nil
        else { return }
        try db.cachedStatement(sql: SQLiteStatements.upsertOutbox).execute(arguments: [
            row.userID.rawValue, row.requestID.rawValue, row.channel.name, row.key.rawValue,
            row.dueAt.secondsSinceEpoch,
            row.payload.storedText,
        ])
    }

    /// Completes `key`: no longer pending, and never pending again, inside the caller's transaction.
    static func completeOutboxKey(_ key: OutboxKey, at instant: Instant, _ db: Database) throws {
        try db.cachedStatement(sql: SQLiteStatements.deleteOutboxKey).execute(arguments: [key.rawValue])
        try db.cachedStatement(sql: SQLiteStatements.insertOutboxDone).execute(arguments: [
            key.rawValue, instant.secondsSinceEpoch,
        ])
    }

    public func completeOutbox(keys: [OutboxKey], at instant: Instant) throws(StoreError) {
        try write { db in
            try db.inTransaction(.immediate) {
                for key in keys { try Self.completeOutboxKey(key, at: instant, db) }
                return .commit
            }
        }
    }

    public func snapshot(userID: UserID) throws(StoreError) -> [UInt8]? {
        try read { db in
            try Data.fetchOne(db.cachedStatement(sql: SQLiteStatements.selectSnapshot), arguments: [userID.rawValue])
                .map {
                    [UInt8]($0)
                }
        }
    }

    public func dueOutbox(through instant: Instant, limit: Int) throws(StoreError) -> [OutboxRow] {
        try read { db in
            try Row.fetchAll(
                db.cachedStatement(sql: SQLiteStatements.selectDueOutbox),
                arguments: [instant.secondsSinceEpoch, limit]
            )
            .map(Self.outboxRow)
        }
    }

    public func pendingOutbox(userID: UserID) throws(StoreError) -> [OutboxRow] {
        try read { db in
            try Row.fetchAll(db.cachedStatement(sql: SQLiteStatements.selectUserOutbox), arguments: [userID.rawValue])
                .map(
                    Self.outboxRow)
        }
    }

    public func completedOutboxKeys(among keys: [OutboxKey]) throws(StoreError) -> Set<OutboxKey> {
        try read { db in
            var completed: Set<OutboxKey> = []
            for key in keys
            where try Bool.fetchOne(
                db.cachedStatement(sql: SQLiteStatements.selectOutboxDone), arguments: [key.rawValue])
                != nil
            {
                completed.insert(key)
            }
            return completed
        }
    }

    /// A scan of the profile table's key, for start-up only (not in `SQLiteStatements.all`, whose
    /// statements are all index searches).
    public func userIDs() throws(StoreError) -> [UserID] {
        try read { db in
            try String.fetchAll(db, sql: "SELECT userID FROM profile ORDER BY userID").map(UserID.init(rawValue:))
        }
    }

    public func outboxDepth() throws(StoreError) -> Int {
        try read { db in try Int.fetchOne(db.cachedStatement(sql: SQLiteStatements.countOutbox)) ?? 0 }
    }

    private static func outboxRow(_ row: Row) -> OutboxRow {
        OutboxRow(
            key: OutboxKey(rawValue: row[0]), userID: UserID(rawValue: row[1]), requestID: RequestID(rawValue: row[2]),
            dueAt: Instant(secondsSinceEpoch: row[4]), channelName: row[3], text: row[5])
    }

}
