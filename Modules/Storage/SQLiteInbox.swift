import Foundation
import GRDB
public import Models

extension SQLiteSchema {
    /// Migration `v3-inbox`: each user's notification center. An item's state is its rank
    /// (`InboxState.rawValue`: 0 unseen, 1 seen, 2 read, 3 archived), so "only forward" is a MAX.
    static let versionInbox = """
        -- One row per delivered item; seq is the user's delivery order (pages are keyed on it) and
        -- id is the key of the outbox row it came from.
        CREATE TABLE inboxItem (
            userID TEXT NOT NULL,
            seq INTEGER NOT NULL,
            id TEXT NOT NULL UNIQUE,
            requestID TEXT NOT NULL,
            kind TEXT NOT NULL,
            title TEXT NOT NULL,
            body TEXT NOT NULL,
            deliveredAt INTEGER NOT NULL,
            state INTEGER NOT NULL CHECK (state BETWEEN 0 AND 3),
            PRIMARY KEY (userID, seq)
        ) STRICT, WITHOUT ROWID;

        -- Per user: the last sequence given out and the read-all watermark (items with
        -- seq <= readThrough count as read unless archived).
        CREATE TABLE inboxUser (
            userID TEXT NOT NULL PRIMARY KEY,
            lastSeq INTEGER NOT NULL,
            readThrough INTEGER NOT NULL
        ) STRICT, WITHOUT ROWID;
        """
}

extension SQLiteStatements {
    static let selectInboxUser = "SELECT lastSeq, readThrough FROM inboxUser WHERE userID = ?"
    static let upsertInboxLastSeq = """
        INSERT INTO inboxUser (userID, lastSeq, readThrough) VALUES (?, ?, 0)
        ON CONFLICT (userID) DO UPDATE SET lastSeq = excluded.lastSeq
        """
    static let insertInboxItem = """
        INSERT INTO inboxItem (userID, seq, id, requestID, kind, title, body, deliveredAt, state)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0)
        """
    static let selectInboxPage = """
        SELECT seq, id, requestID, kind, title, body, deliveredAt, state FROM inboxItem
        WHERE userID = ? AND seq < ? AND state < 3 ORDER BY seq DESC LIMIT ?
        """
    /// total, unread, unseen; the watermark is bound twice.
    static let selectInboxCounts = """
        SELECT COUNT(*), COALESCE(SUM(seq > ? AND state < 2), 0), COALESCE(SUM(seq > ? AND state = 0), 0)
        FROM inboxItem WHERE userID = ? AND state < 3
        """
    static let updateInboxState = "UPDATE inboxItem SET state = MAX(state, ?) WHERE id = ? AND userID = ?"
    static let selectInboxItem = """
        SELECT seq, id, requestID, kind, title, body, deliveredAt, state FROM inboxItem WHERE id = ? AND userID = ?
        """
    static let updateInboxReadThrough = "UPDATE inboxUser SET readThrough = lastSeq WHERE userID = ?"
}

/// `InboxStore` on SQLite (a `RuntimeStore` requirement; migration `v3-inbox`): a delivery, the
/// completion of its outbox row and the next row of a repeating request are one immediate
/// transaction.
extension SQLiteEngagementStore {
    @discardableResult
    public func deliverToInbox(_ delivery: InboxDelivery, next: [OutboxRow], at instant: Instant) throws(StoreError)
        -> Bool
    {
        try InboxRules.check(delivery, next: next)
        let row = delivery.row
        return try write { db in
            var fresh = false
            try db.inTransaction(.immediate) {
                fresh = try !Self.isDone(row.key, db)
                if fresh {
                    let (lastSequence, _) = try Self.inboxUser(row.userID, db)
                    try db.cachedStatement(sql: SQLiteStatements.insertInboxItem).execute(arguments: [
                        row.userID.rawValue, lastSequence + 1, row.key.rawValue, row.requestID.rawValue, delivery.kind,
                        delivery.title,
                        delivery.body, instant.secondsSinceEpoch,
                    ])
                    try db.cachedStatement(sql: SQLiteStatements.upsertInboxLastSeq).execute(arguments: [
                        row.userID.rawValue, lastSequence + 1,
                    ])
                }
                try Self.completeOutboxKey(row.key, at: instant, db)
                for row in next { try Self.enqueueOutbox(row, db) }
                return .commit
            }
            return fresh
        }
    }

    public func inboxPage(userID: UserID, before sequence: Int64?, limit: Int) throws(StoreError) -> InboxPage {
        try InboxRules.checkLimit(limit)
        return try read { db in
            let (_, readThrough) = try Self.inboxUser(userID, db)
            // One more than asked: whether there is a next page.
            let rows = try Row.fetchAll(
                db.cachedStatement(sql: SQLiteStatements.selectInboxPage),
                arguments: [userID.rawValue, sequence ?? .max, limit + 1])
            let items = try rows.prefix(limit).map { row in try Self.inboxItem(row, userID: userID, readThrough) }
            return InboxPage(
                items: items, nextBefore: rows.count > limit ? items.last?.sequence : nil,
                counts: try Self.inboxCounts(userID, readThrough: readThrough, db))
        }
    }

    public func setInboxState(userID: UserID, itemID: String, to state: InboxState) throws(StoreError)
        -> InboxItem?
    {
        try write { db in
            var item: InboxItem?
            try db.inTransaction(.immediate) {
                try db.cachedStatement(sql: SQLiteStatements.updateInboxState).execute(arguments: [
                    state.rawValue, itemID, userID.rawValue,
                ])
                let (_, readThrough) = try Self.inboxUser(userID, db)
                item = try Row.fetchOne(
                    db.cachedStatement(sql: SQLiteStatements.selectInboxItem), arguments: [itemID, userID.rawValue]
                ).map { row in try Self.inboxItem(row, userID: userID, readThrough) }
                return .commit
            }
            return item
        }
    }

    @discardableResult
    public func readAllInbox(userID: UserID) throws(StoreError) -> InboxCounts {
        try write { db in
            var counts = InboxCounts.zero
            try db.inTransaction(.immediate) {
                try db.cachedStatement(sql: SQLiteStatements.updateInboxReadThrough).execute(arguments: [
                    userID.rawValue
                ])
                let (_, readThrough) = try Self.inboxUser(userID, db)
                counts = try Self.inboxCounts(userID, readThrough: readThrough, db)
                return .commit
            }
            return counts
        }
    }

    // MARK: - Plumbing

    private static func isDone(_ key: OutboxKey, _ db: Database) throws -> Bool {
        try Bool.fetchOne(db.cachedStatement(sql: SQLiteStatements.selectOutboxDone), arguments: [key.rawValue]) != nil
    }

    /// The user's last sequence and watermark (0 and 0 before their first item).
    private static func inboxUser(_ userID: UserID, _ db: Database) throws -> (lastSequence: Int64, readThrough: Int64)
    {
        guard
            let row = try Row.fetchOne(
                db.cachedStatement(sql: SQLiteStatements.selectInboxUser), arguments: [userID.rawValue])
        else { return (0, 0) }
        return (row[0], row[1])
    }

    private static func inboxCounts(_ userID: UserID, readThrough: Int64, _ db: Database) throws -> InboxCounts {
        guard
            let row = try Row.fetchOne(
                db.cachedStatement(sql: SQLiteStatements.selectInboxCounts),
                arguments: [readThrough, readThrough, userID.rawValue])
        else { return .zero }
        return InboxCounts(total: row[0], unread: row[1], unseen: row[2])
    }

    /// An item row as the user sees it; a state outside 0...3 means the file is damaged.
    private static func inboxItem(_ row: Row, userID: UserID, _ readThrough: Int64) throws -> InboxItem {
        let rank: Int = row[7]
        guard let stored = InboxState(rawValue: rank) else {
            throw StoreError.corrupt("inbox item \(row[1] as String) has state \(rank)")
        }
        let sequence: Int64 = row[0]
        return InboxItem(
            id: row[1], userID: userID, sequence: sequence, requestID: RequestID(rawValue: row[2]), kind: row[3],
            title: row[4],
            body: row[5], deliveredAt: Instant(secondsSinceEpoch: row[6]),
            state: InboxRules.effectiveState(stored, sequence: sequence, readThrough: readThrough))
    }
}
