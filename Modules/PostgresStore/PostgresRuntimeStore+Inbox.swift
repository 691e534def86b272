public import Models
import PostgresNIO
public import Storage

/// `InboxStore` on PostgreSQL (schema step 3): a delivery, the completion of its outbox row and
/// the `next` rows are one transaction, under the keys' locks (`OutboxSQL`). Sequences come from
/// an atomic increment of the user's `inbox_user` row, so deliveries in two processes never give
/// one sequence twice.
extension PostgresRuntimeStore {
    @discardableResult
    public func deliverToInbox(_ delivery: InboxDelivery, next: [OutboxRow], at instant: Instant) throws(StoreError)
        -> Bool
    {
        try InboxRules.check(delivery, next: next)
        let row = delivery.row
        return try pool.writing { session in
            try session.execute(OutboxSQL.lockKeys([row.key] + next.map(\.key)))
            let done = try session.rows("SELECT 1 FROM outbox_done WHERE key = \(row.key.rawValue)")
            let fresh = done.isEmpty
            if fresh {
                let sequence = try session.rows(
                    """
                    INSERT INTO inbox_user (user_id, last_seq, read_through) VALUES (\(row.userID.rawValue), 1, 0)
                    ON CONFLICT (user_id) DO UPDATE SET last_seq = inbox_user.last_seq + 1 RETURNING last_seq
                    """
                ).first.map { row throws(StoreError) in
                    try PostgresColumns.decode(row, as: Int64.self, table: "inbox_user")
                }
                guard let sequence else { throw StoreError.unavailable("inbox_user returned no sequence") }
                try session.execute(
                    """
                    INSERT INTO inbox_item (user_id, seq, id, request_id, kind, title, body, delivered_at, state)
                    VALUES (\(row.userID.rawValue), \(sequence), \(row.key.rawValue), \(row.requestID.rawValue), \(delivery.kind),
                        \(delivery.title), \(delivery.body), \(instant.secondsSinceEpoch), 0)
                    """)
            }
            try session.execute(OutboxSQL.markDone(keys: [row.key], doneAt: instant.secondsSinceEpoch))
            try session.execute(OutboxSQL.deletePending(keys: [row.key]))
            try Self.enqueue(next, session)
            return fresh
        }
    }

    public func inboxPage(userID: UserID, before sequence: Int64?, limit: Int) throws(StoreError) -> InboxPage {
        try InboxRules.checkLimit(limit)
        return try pool.readingOneSnapshot { session in
            let readThrough = try Self.readThrough(userID, session)
            // One more than asked: whether there is a next page.
            let rows = try session.rows(
                """
                SELECT seq, id, request_id, kind, title, body, delivered_at, state FROM inbox_item
                WHERE user_id = \(userID.rawValue) AND seq < \(sequence ?? .max) AND state < 3 ORDER BY seq DESC
                LIMIT \(limit + 1)
                """)
            let items = try rows.prefix(limit).map { row throws(StoreError) in
                try Self.inboxItem(row, userID: userID, readThrough: readThrough)
            }
            return InboxPage(
                items: items, nextBefore: rows.count > limit ? items.last?.sequence : nil,
                counts: try Self.inboxCounts(userID, readThrough: readThrough, session))
        }
    }

    public func setInboxState(userID: UserID, itemID: String, to state: InboxState) throws(StoreError)
        -> InboxItem?
    {
        try pool.writing { session in
            let rows = try session.rows(
                """
                UPDATE inbox_item SET state = GREATEST(state, \(Int32(state.rawValue)))
                WHERE id = \(itemID) AND user_id = \(userID.rawValue)
                RETURNING seq, id, request_id, kind, title, body, delivered_at, state
                """)
            guard let row = rows.first else { return nil }
            return try Self.inboxItem(row, userID: userID, readThrough: try Self.readThrough(userID, session))
        }
    }

    @discardableResult
    public func readAllInbox(userID: UserID) throws(StoreError) -> InboxCounts {
        try pool.writing { session in
            let watermark = try session.rows(
                "UPDATE inbox_user SET read_through = last_seq WHERE user_id = \(userID.rawValue) RETURNING read_through"
            )
            guard let row = watermark.first else { return .zero }  // no items yet
            let readThrough = try PostgresColumns.decode(row, as: Int64.self, table: "inbox_user")
            return try Self.inboxCounts(userID, readThrough: readThrough, session)
        }
    }

    // MARK: - Plumbing

    /// The user's read-all watermark (0 before their first item).
    private static func readThrough(_ userID: UserID, _ session: PostgresSession) throws -> Int64 {
        try session.rows("SELECT read_through FROM inbox_user WHERE user_id = \(userID.rawValue)").first.map {
            row throws(StoreError) in try PostgresColumns.decode(row, as: Int64.self, table: "inbox_user")
        } ?? 0
    }

    private static func inboxCounts(_ userID: UserID, readThrough: Int64, _ session: PostgresSession) throws
        -> InboxCounts
    {
        guard
            let row = try session.rows(
                """
                SELECT COUNT(*), COUNT(*) FILTER (WHERE seq > \(readThrough) AND state < 2),
                    COUNT(*) FILTER (WHERE seq > \(readThrough) AND state = 0)
                FROM inbox_item WHERE user_id = \(userID.rawValue) AND state < 3
                """
            ).first
        else { return .zero }
        let (total, unread, unseen) = try PostgresColumns.decode(row, as: (Int, Int, Int).self, table: "inbox_item")
        return InboxCounts(total: total, unread: unread, unseen: unseen)
    }

    /// An item row as the user sees it; a state outside 0...3 means the row is damaged.
    private static func inboxItem(_ row: PostgresRow, userID: UserID, readThrough: Int64) throws(StoreError)
        -> InboxItem
    {
        let (sequence, id, requestID, kind, title, body, deliveredAt, rank) = try PostgresColumns.decode(
            row, as: (Int64, String, String, String, String, String, Int64, Int).self, table: "inbox_item")
        guard let stored = InboxState(rawValue: rank) else {
            throw PostgresColumns.unknownValue(String(rank), table: "inbox_item", column: "state", row: "item \(id)")
        }
        return InboxItem(
            id: id, userID: userID, sequence: sequence, requestID: RequestID(requestID), kind: kind, title: title,
            body: body,
            deliveredAt: Instant(secondsSinceEpoch: deliveredAt),
            state: InboxRules.effectiveState(stored, sequence: sequence, readThrough: readThrough))
    }
}
