import GRDB
public import Models

extension SQLiteSchema {
    /// Migration `v8-social-ids`: the social event ids each user took in (`SocialEventStore`),
    /// and the instant of each ledger key, by which the ledger's retention prunes keys with
    /// their rows. A key stored before it takes its user's newest ledger instant, so it is kept a
    /// whole window after the upgrade.
    static let version8SocialIDs = """
        CREATE TABLE socialEvent (
            userID TEXT NOT NULL,
            eventID TEXT NOT NULL,
            seenAt INTEGER NOT NULL,
            expiresAt INTEGER NOT NULL,
            PRIMARY KEY (userID, eventID)
        ) STRICT, WITHOUT ROWID;
        -- Pruning takes the soonest expiry first.
        CREATE INDEX socialEvent_expiresAt ON socialEvent (expiresAt);

        ALTER TABLE ledgerKey ADD COLUMN at INTEGER NOT NULL DEFAULT 0;
        UPDATE ledgerKey SET at = coalesce(
            (SELECT max(ledger.at) FROM ledger WHERE ledger.userID = ledgerKey.userID), 0);
        -- A user's keys by age, for the ledger's retention.
        CREATE INDEX ledgerKey_userID_at ON ledgerKey (userID, at);
        """
}

/// The statements on the `v8-social-ids` tables and the ledger's retention, named so the tests
/// can check each one's query plan.
enum SQLiteSocialStatements {
    static let pruneSocialEvents = """
        DELETE FROM socialEvent WHERE (userID, eventID) IN (
            SELECT userID, eventID FROM socialEvent INDEXED BY socialEvent_expiresAt
            WHERE expiresAt <= ? ORDER BY expiresAt, userID, eventID LIMIT ?)
        """
    /// Keeps a live record of the id (the first arrival's window stands); replaces an expired one.
    static let upsertSocialEvent = """
        INSERT INTO socialEvent (userID, eventID, seenAt, expiresAt) VALUES (?, ?, ?, ?)
        ON CONFLICT (userID, eventID) DO UPDATE SET seenAt = excluded.seenAt, expiresAt = excluded.expiresAt
        WHERE socialEvent.expiresAt <= excluded.seenAt
        """
    static let selectSocialEvent = "SELECT seenAt, expiresAt FROM socialEvent WHERE userID = ? AND eventID = ?"
    static let countSocialEvents = "SELECT COUNT(*) FROM socialEvent INDEXED BY socialEvent_expiresAt"
    /// The user's oldest rows from before the window (`LedgerRetention`).
    static let pruneLedger = """
        DELETE FROM ledger WHERE userID = ? AND requestID IN (
            SELECT requestID FROM ledger INDEXED BY ledger_userID_at
            WHERE userID = ? AND at < ? ORDER BY at, requestID LIMIT ?)
        """
    /// The user's oldest keys from before the window.
    static let pruneLedgerKeys = """
        DELETE FROM ledgerKey WHERE userID = ? AND idempotencyKey IN (
            SELECT idempotencyKey FROM ledgerKey INDEXED BY ledgerKey_userID_at
            WHERE userID = ? AND at < ? ORDER BY at, idempotencyKey LIMIT ?)
        """

    static let all: [(name: String, sql: String)] = [
        ("pruneSocialEvents", pruneSocialEvents), ("upsertSocialEvent", upsertSocialEvent),
        ("selectSocialEvent", selectSocialEvent), ("countSocialEvents", countSocialEvents),
        ("pruneLedger", pruneLedger), ("pruneLedgerKeys", pruneLedgerKeys),
    ]
}

/// `SocialEventStore` on SQLite (migration `v8-social-ids`), and the ledger's retention.
extension SQLiteEngagementStore {
    /// The commit's social event record, inside the commit's transaction: expired records of any
    /// user pruned first, a bounded number.
    static func writeSocialEvent(_ record: SocialEventRecord?, _ db: Database) throws {
        guard let record else { return }
        try db.cachedStatement(sql: SQLiteSocialStatements.pruneSocialEvents).execute(arguments: [
            record.seenAt.secondsSinceEpoch, SocialEventRecord.prunedPerCommit,
        ])
        try db.cachedStatement(sql: SQLiteSocialStatements.upsertSocialEvent).execute(arguments: [
            record.userID.rawValue, record.eventID, record.seenAt.secondsSinceEpoch,
            record.expiresAt.secondsSinceEpoch,
        ])
    }

    /// Prunes each user's ledger rows and keys from before the window that ends at that user's
    /// newest entry in `entries`, a bounded number, inside the caller's transaction.
    static func pruneLedger(after entries: [LedgerEntry], _ db: Database) throws {
        guard !entries.isEmpty else { return }
        var newest: [UserID: Instant] = [:]
        for entry in entries { newest[entry.userID] = max(newest[entry.userID] ?? entry.at, entry.at) }
        let rows = try db.cachedStatement(sql: SQLiteSocialStatements.pruneLedger)
        let keys = try db.cachedStatement(sql: SQLiteSocialStatements.pruneLedgerKeys)
        for (userID, newest) in newest.sorted(by: { $0.key < $1.key }) {
            let horizon = (newest - LedgerRetention.seconds).secondsSinceEpoch
            let arguments: StatementArguments = [
                userID.rawValue, userID.rawValue, horizon, LedgerRetention.prunedPerBatch,
            ]
            try rows.execute(arguments: arguments)
            try keys.execute(arguments: arguments)
        }
    }

    public func socialEventRecord(userID: UserID, eventID: String) throws(StoreError) -> SocialEventRecord? {
        try read { db in
            try Row.fetchOne(
                db.cachedStatement(sql: SQLiteSocialStatements.selectSocialEvent),
                arguments: [userID.rawValue, eventID]
            ).map { row in
                SocialEventRecord(
                    userID: userID, eventID: eventID,
                    seenAt: Instant(secondsSinceEpoch: try row.decode(Int64.self, atIndex: 0)),
                    expiresAt: Instant(secondsSinceEpoch: try row.decode(Int64.self, atIndex: 1)))
            }
        }
    }

    public func socialEventRecordCount() throws(StoreError) -> Int {
        try read { db in try Int.fetchOne(db.cachedStatement(sql: SQLiteSocialStatements.countSocialEvents)) ?? 0 }
    }
}
