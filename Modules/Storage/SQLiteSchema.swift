import GRDB
public import Models

/// The on-disk layout of `SQLiteEngagementStore`: one GRDB migration per schema version, and
/// the marks that tell a store file from any other SQLite database.
///
/// Every table is `STRICT` (a value of the wrong type is refused on write, so a read that meets
/// one knows the file is damaged) and `WITHOUT ROWID` (rows live in their primary key's b-tree,
/// so the queries below are one range scan each, with no second lookup).
enum SQLiteSchema {
    /// `PRAGMA application_id` of every store file ("EngE" in ASCII). A SQLite database without
    /// it is another application's and is refused, never migrated.
    static let applicationID: Int32 = 0x456E_6745

    /// The schema version this build reads and writes, kept in `PRAGMA user_version` and set by
    /// the migration that creates it, in the same transaction.
    static let version = 8

    /// Tables that may exist in a file before the first migration commits: GRDB creates its
    /// bookkeeping table outside the migration's transaction, so a crash in between leaves it.
    static let bookkeepingTables: Set<String> = ["grdb_migrations"]

    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        // Never `eraseDatabaseOnSchemaChange`: nothing may silently reset the data.
        migrator.registerMigration("v1") { db in
            try db.execute(sql: version1)
            try db.execute(sql: "PRAGMA application_id = \(applicationID)")
            try db.execute(sql: "PRAGMA user_version = 1")
        }
        migrator.registerMigration("v2") { db in
            try db.execute(sql: version2)
            try db.execute(sql: "PRAGMA user_version = 2")
        }
        migrator.registerMigration("v3-inbox") { db in
            try db.execute(sql: versionInbox)  // SQLiteInbox.swift
            try db.execute(sql: "PRAGMA user_version = 3")
        }
        migrator.registerMigration("v4-users") { db in
            try db.execute(sql: version4Users)
            try db.execute(sql: "PRAGMA user_version = 4")
        }
        migrator.registerMigration("v5-trace") { db in
            try db.execute(sql: SQLiteTraceStatements.createTable)
            try db.execute(sql: "PRAGMA user_version = 5")
        }
        migrator.registerMigration("v6-token-revocations") { db in
            try db.execute(sql: version6TokenRevocations)  // SQLiteUserRecords.swift
            try db.execute(sql: "PRAGMA user_version = 6")
        }
        migrator.registerMigration("v7-claims") { db in
            try db.execute(sql: SQLiteClaimStatements.migration)  // SQLiteClaims.swift
            try db.execute(sql: "PRAGMA user_version = 7")
        }
        migrator.registerMigration("v8-social-ids") { db in
            try db.execute(sql: version8SocialIDs)  // SQLiteSocialEvents.swift
            try db.execute(sql: "PRAGMA user_version = 8")
        }
        return migrator
    }

    private static let version1 = """
        CREATE TABLE profile (
            userID TEXT NOT NULL PRIMARY KEY,
            json TEXT NOT NULL
        ) STRICT, WITHOUT ROWID;

        -- One row per distinct event. The key makes a replayed event a no-op and serves "a user's
        -- events since t"; seq (per user, in arrival order) orders events with equal times.
        CREATE TABLE activityEvent (
            userID TEXT NOT NULL,
            at INTEGER NOT NULL,
            kind TEXT NOT NULL,
            detail TEXT NOT NULL,
            seq INTEGER NOT NULL,
            PRIMARY KEY (userID, at, kind, detail)
        ) STRICT, WITHOUT ROWID;

        -- Per user: the newest event time and the number of events, kept in the same transaction
        -- as the events. "Users inactive since t" is a range of the lastActiveAt index instead of
        -- a scan over every event.
        CREATE TABLE userActivity (
            userID TEXT NOT NULL PRIMARY KEY,
            lastActiveAt INTEGER NOT NULL,
            eventCount INTEGER NOT NULL
        ) STRICT, WITHOUT ROWID;
        CREATE INDEX userActivity_lastActiveAt ON userActivity (lastActiveAt);

        -- The latest state of each request.
        CREATE TABLE ledger (
            userID TEXT NOT NULL,
            requestID TEXT NOT NULL,
            kind TEXT NOT NULL,
            state TEXT NOT NULL,
            at INTEGER NOT NULL,
            reason TEXT,
            -- NULL when it is the conventional <requestID>/<state> (LedgerEntry.transitionKey).
            idempotencyKey TEXT,
            PRIMARY KEY (userID, requestID)
        ) STRICT, WITHOUT ROWID;
        -- A user's ledger by time (caps, dedup, "why didn't I get my reminder?").
        CREATE INDEX ledger_userID_at ON ledger (userID, at, requestID);
        -- Requests not yet delivered, by time, across users (the planner's due notifications).
        CREATE INDEX ledger_due ON ledger (at, userID) WHERE state IN ('planned', 'pending');

        -- The idempotency keys applied, per user: a replayed ledger write is a no-op. Keys and rows
        -- past the ledger's retention are pruned (v8-social-ids adds the keys' instants).
        CREATE TABLE ledgerKey (
            userID TEXT NOT NULL,
            idempotencyKey TEXT NOT NULL,
            PRIMARY KEY (userID, idempotencyKey)
        ) STRICT, WITHOUT ROWID;

        CREATE TABLE engagementState (
            userID TEXT NOT NULL PRIMARY KEY,
            lapseStage TEXT NOT NULL,
            reEngagementAttempts INTEGER NOT NULL,
            campaignStartedAt INTEGER,
            checkpoint TEXT
        ) STRICT, WITHOUT ROWID;
        """
}

extension SQLiteSchema {
    /// The runtime's tables: each user's engine snapshot and the transactional outbox.
    fileprivate static let version2 = """
        CREATE TABLE engineSnapshot (
            userID TEXT NOT NULL PRIMARY KEY,
            bytes BLOB NOT NULL
        ) STRICT, WITHOUT ROWID;

        -- Pending work, one row per (user, request, channel); the key is the idempotency key.
        CREATE TABLE outbox (
            userID TEXT NOT NULL,
            requestID TEXT NOT NULL,
            channel TEXT NOT NULL,
            key TEXT NOT NULL UNIQUE,
            dueAt INTEGER NOT NULL,
            payload TEXT NOT NULL,
            PRIMARY KEY (userID, requestID, channel)
        ) STRICT, WITHOUT ROWID;
        CREATE INDEX outbox_due ON outbox (dueAt, key);

        -- Keys performed: a replayed commit never makes them pending again.
        CREATE TABLE outboxDone (
            key TEXT NOT NULL PRIMARY KEY,
            doneAt INTEGER NOT NULL
        ) STRICT, WITHOUT ROWID;
        """
}

/// Every statement the store runs on its tables, named so the tests can check each one's query
/// plan.
enum SQLiteStatements {
    static let upsertProfile = """
        INSERT INTO profile (userID, json) VALUES (?, ?) ON CONFLICT (userID) DO UPDATE SET json = excluded.json
        """
    static let selectUserActivity = "SELECT lastActiveAt, eventCount FROM userActivity WHERE userID = ?"
    static let insertActivityEvent = """
        INSERT INTO activityEvent (userID, at, kind, detail, seq) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING
        """
    static let upsertUserActivity = """
        INSERT INTO userActivity (userID, lastActiveAt, eventCount) VALUES (?, ?, ?)
        ON CONFLICT (userID) DO UPDATE SET lastActiveAt = excluded.lastActiveAt, eventCount = excluded.eventCount
        """
    static let insertLedgerKey = """
        INSERT INTO ledgerKey (userID, idempotencyKey, at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING
        """
    static let upsertLedger = """
        INSERT INTO ledger (userID, requestID, kind, state, at, reason, idempotencyKey) VALUES (?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT (userID, requestID) DO UPDATE SET kind = excluded.kind, state = excluded.state, at = excluded.at,
            reason = excluded.reason, idempotencyKey = excluded.idempotencyKey
        """
    static let upsertEngagementState = """
        INSERT INTO engagementState (userID, lapseStage, reEngagementAttempts, campaignStartedAt, checkpoint)
        VALUES (?, ?, ?, ?, ?)
        ON CONFLICT (userID) DO UPDATE SET lapseStage = excluded.lapseStage,
            reEngagementAttempts = excluded.reEngagementAttempts, campaignStartedAt = excluded.campaignStartedAt,
            checkpoint = excluded.checkpoint
        """
    static let selectProfile = "SELECT json FROM profile WHERE userID = ?"
    static let selectActivityEvents = """
        SELECT at, kind, detail FROM activityEvent WHERE userID = ? AND at >= ? ORDER BY at, seq
        """
    static let selectLastActiveAt = "SELECT lastActiveAt FROM userActivity WHERE userID = ?"
    static let selectUsersInactive = """
        SELECT userID FROM userActivity INDEXED BY userActivity_lastActiveAt WHERE lastActiveAt < ?
        """
    static let selectLedger = """
        SELECT requestID, kind, state, at, reason, idempotencyKey FROM ledger
        WHERE userID = ? AND at >= ? AND at < ? ORDER BY at, requestID
        """
    static let selectEngagementState = """
        SELECT lapseStage, reEngagementAttempts, campaignStartedAt, checkpoint FROM engagementState WHERE userID = ?
        """
    /// Not run by the store yet: the planner's "due notifications" across users, which the
    /// `ledger_due` index serves.
    static let selectDueLedger = """
        SELECT userID, requestID FROM ledger WHERE state IN ('planned', 'pending') AND at <= ? ORDER BY at
        """

    static let upsertSnapshot = """
        INSERT INTO engineSnapshot (userID, bytes) VALUES (?, ?) ON CONFLICT (userID) DO UPDATE SET bytes = excluded.bytes
        """
    static let selectSnapshot = "SELECT bytes FROM engineSnapshot WHERE userID = ?"
    static let deleteOutboxRequest = "DELETE FROM outbox WHERE userID = ? AND requestID = ?"
    static let selectOutboxDone = "SELECT 1 FROM outboxDone WHERE key = ?"
    static let upsertOutbox = """
        INSERT INTO outbox (userID, requestID, channel, key, dueAt, payload) VALUES (?, ?, ?, ?, ?, ?)
        ON CONFLICT (userID, requestID, channel) DO UPDATE SET key = excluded.key,
            dueAt = CASE WHEN outbox.key = excluded.key THEN MIN(outbox.dueAt, excluded.dueAt) ELSE excluded.dueAt END,
            payload = excluded.payload,
            attempts = CASE WHEN outbox.key = excluded.key THEN outbox.attempts ELSE 0 END,
            plannedAt = CASE WHEN outbox.key = excluded.key THEN outbox.plannedAt END
        """
    static let selectDueOutbox = """
        SELECT key, userID, requestID, channel, dueAt, payload FROM outbox INDEXED BY outbox_due
        WHERE dueAt <= ? ORDER BY dueAt, key LIMIT ?
        """
    static let deleteOutboxKey = "DELETE FROM outbox WHERE key = ?"
    static let insertOutboxDone = "INSERT INTO outboxDone (key, doneAt) VALUES (?, ?) ON CONFLICT DO NOTHING"
    static let countOutbox = "SELECT COUNT(*) FROM outbox"
    static let selectUserOutbox = """
        SELECT key, userID, requestID, channel, dueAt, payload FROM outbox WHERE userID = ? ORDER BY dueAt, key
        """

    /// The tables of a file being inspected before it is opened as a store.
    static let selectTableNames = """
        SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name
        """

    /// Every statement with its name, for the query-plan test.
    static let all: [(name: String, sql: String)] = [
        ("upsertProfile", upsertProfile), ("selectUserActivity", selectUserActivity),
        ("insertActivityEvent", insertActivityEvent), ("upsertUserActivity", upsertUserActivity),
        ("insertLedgerKey", insertLedgerKey), ("upsertLedger", upsertLedger),
        ("upsertEngagementState", upsertEngagementState), ("selectProfile", selectProfile),
        ("selectActivityEvents", selectActivityEvents), ("selectLastActiveAt", selectLastActiveAt),
        ("selectUsersInactive", selectUsersInactive), ("selectLedger", selectLedger),
        ("selectEngagementState", selectEngagementState), ("selectDueLedger", selectDueLedger),
        ("upsertSnapshot", upsertSnapshot), ("selectSnapshot", selectSnapshot),
        ("deleteOutboxRequest", deleteOutboxRequest), ("selectOutboxDone", selectOutboxDone),
        ("upsertOutbox", upsertOutbox), ("selectDueOutbox", selectDueOutbox), ("deleteOutboxKey", deleteOutboxKey),
        ("insertOutboxDone", insertOutboxDone), ("selectUserOutbox", selectUserOutbox),
        // The inbox's (SQLiteInbox.swift).
        ("selectInboxUser", selectInboxUser), ("upsertInboxLastSeq", upsertInboxLastSeq),
        ("insertInboxItem", insertInboxItem), ("selectInboxPage", selectInboxPage),
        ("selectInboxCounts", selectInboxCounts), ("updateInboxState", updateInboxState),
        ("selectInboxItem", selectInboxItem), ("updateInboxReadThrough", updateInboxReadThrough),
    ]
}

/// `ActivityKind` as two text columns: the case name and its associated value ('' for none).
/// Both are part of the event's key, so the same fact stored twice is one row. Every store with
/// columns (SQLite, PostgreSQL) stores kinds this way.
public enum ActivityKindColumns {
    public static func encode(_ kind: ActivityKind) -> (name: String, detail: String) {
        switch kind {
        case .appOpened(let sessionSeconds): (kind.name, String(sessionSeconds))
        case .workoutCompleted(let durationMinutes): (kind.name, String(durationMinutes))
        case .mealLogged(let meal): (kind.name, meal.rawValue)
        case .moodLogged, .energyLogged, .coachChat, .checkInCompleted: (kind.name, "")
        }
    }

    /// The kind the columns describe, or nil when they describe none (a damaged row).
    public static func decode(name: String, detail: String) -> ActivityKind? {
        switch name {
        case "appOpened": Int(detail).map { .appOpened(sessionSeconds: $0) }
        case "workoutCompleted": Int(detail).map { .workoutCompleted(durationMinutes: $0) }
        case "mealLogged": MealType(rawValue: detail).map { .mealLogged($0) }
        case "moodLogged" where detail.isEmpty: .moodLogged
        case "energyLogged" where detail.isEmpty: .energyLogged
        case "coachChat" where detail.isEmpty: .coachChat
        case "checkInCompleted" where detail.isEmpty: .checkInCompleted
        default: nil
        }
    }
}
