import PostgresNIO
import Storage

/// The layout of `PostgresRuntimeStore`'s database: numbered migration steps, each recorded as
/// a row of `engaged_schema` in the transaction that applies it.
///
/// Contract:
/// - `migrate` runs in one transaction that first takes `pg_advisory_xact_lock(migrationLockKey)`,
///   so processes starting at once migrate one after the other: the first applies the missing
///   steps, the others find them applied.
/// - A database whose recorded version is newer than `version` is refused with
///   `StoreError.newerSchema` and left untouched.
/// - Names are snake_case; instants are `bigint` seconds since 1970 (`Instant.secondsSinceEpoch`).
///   Text that a read orders by is compared with `COLLATE "C"` (byte order, as SQLite's BINARY and
///   Swift's `<` on ASCII), whatever the database's default collation.
/// - `engine_snapshot`, `outbox`, `outbox_done` and `work_queue` are shared with the workers'
///   queue (`OutboxQueue`, `WorkQueueSQL`): their columns are part of that contract.
enum PostgresSchema {
    /// The schema version this build reads and writes: the number of steps.
    static var version: Int { steps.count }

    /// The advisory lock every migration holds for its transaction ("EngESchm" in ASCII).
    static let migrationLockKey: Int64 = 0x456E_6745_5363_686D

    /// Step `n` (1-based) brings a database from version `n - 1` to `n`; each is a list of
    /// single statements (the extended protocol runs one statement per query).
    static let steps: [(name: String, statements: [String])] = [
        ("history", history), ("runtime", runtime), ("inbox", inbox), ("users", users), ("trace", trace),
        ("queue", queue), ("token revocations", tokenRevocations), ("social ids", socialIDs),
    ]

    /// Creates or upgrades the schema (see the type's contract).
    static func migrate(_ pool: PostgresPool) throws(StoreError) {
        try pool.transaction { connection in
            let session = PostgresSession(pool: pool, connection: connection)
            try session.execute("SELECT pg_advisory_xact_lock(\(migrationLockKey))")
            try session.execute(
                PostgresQuery(unsafeSQL: "CREATE TABLE IF NOT EXISTS engaged_schema (version int PRIMARY KEY)"))
            let found =
                try session.rows("SELECT COALESCE(MAX(version), 0) FROM engaged_schema").first.map {
                    row throws(StoreError) in try PostgresColumns.decode(row, as: Int.self, table: "engaged_schema")
                } ?? 0
            if found > version { throw StoreError.newerSchema(found: found, supported: version) }
            for number in (found + 1)..<(version + 1) {
                for statement in steps[number - 1].statements {
                    try session.execute(PostgresQuery(unsafeSQL: statement))
                }
                try session.execute("INSERT INTO engaged_schema (version) VALUES (\(number))")
            }
        }
    }

    /// The version the database records (0 for an empty one), read without a lock.
    static func recordedVersion(_ pool: PostgresPool) throws(StoreError) -> Int {
        try pool.reading { session in
            let exists = try session.rows("SELECT to_regclass('engaged_schema') IS NOT NULL").first.map {
                row throws(StoreError) in try PostgresColumns.decode(row, as: Bool.self, table: "engaged_schema")
            }
            guard exists == true else { return 0 }
            return try session.rows("SELECT COALESCE(MAX(version), 0) FROM engaged_schema").first.map {
                row throws(StoreError) in try PostgresColumns.decode(row, as: Int.self, table: "engaged_schema")
            } ?? 0
        }
    }

    /// Step 1: profiles, activity, the ledger and engagement states (SQLite's `v1`).
    private static let history = [
        "CREATE TABLE profile (user_id text PRIMARY KEY, json text NOT NULL)",
        // One row per distinct event: the key makes a replayed event a no-op. seq is the arrival
        // order (one sequence for all users; only its order within a user's equal times matters).
        """
        CREATE TABLE activity_event (
            user_id text NOT NULL, at bigint NOT NULL, kind text NOT NULL, detail text NOT NULL,
            seq bigint GENERATED ALWAYS AS IDENTITY,
            PRIMARY KEY (user_id, at, kind, detail))
        """,
        "CREATE INDEX activity_event_user_at ON activity_event (user_id, at, seq)",
        // Per user: the newest event time and the number of events, kept with the events.
        """
        CREATE TABLE user_activity (
            user_id text PRIMARY KEY, last_active_at bigint NOT NULL, event_count bigint NOT NULL)
        """,
        "CREATE INDEX user_activity_last_active_at ON user_activity (last_active_at)",
        // The latest state of each request; idempotency_key is NULL when it is the conventional
        // <request_id>/<state> (LedgerEntry.transitionKey).
        """
        CREATE TABLE ledger (
            user_id text NOT NULL, request_id text NOT NULL, kind text NOT NULL, state text NOT NULL,
            at bigint NOT NULL, reason text, idempotency_key text,
            PRIMARY KEY (user_id, request_id))
        """,
        #"CREATE INDEX ledger_user_at ON ledger (user_id, at, request_id COLLATE "C")"#,
        "CREATE INDEX ledger_due ON ledger (at, user_id) WHERE state IN ('planned', 'pending')",
        // The idempotency keys applied, per user: a replayed ledger write is a no-op (step 8 adds
        // their instants, and the ledger's retention prunes old ones).
        "CREATE TABLE ledger_key (user_id text NOT NULL, idempotency_key text NOT NULL, PRIMARY KEY (user_id, idempotency_key))",
        """
        CREATE TABLE engagement_state (
            user_id text PRIMARY KEY, lapse_stage text NOT NULL, re_engagement_attempts bigint NOT NULL,
            campaign_started_at bigint, checkpoint text)
        """,
    ]

    /// Step 2: each user's engine snapshot (with its version, for optimistic concurrency), the
    /// transactional outbox, the keys performed, and the workers' queue of users with due work.
    private static let runtime = [
        "CREATE TABLE engine_snapshot (user_id text PRIMARY KEY, bytes bytea NOT NULL, version bigint NOT NULL)",
        """
        CREATE TABLE outbox (
          user_id text NOT NULL, request_id text NOT NULL, channel text NOT NULL,
          key text NOT NULL UNIQUE, due_at bigint NOT NULL, payload text NOT NULL,
          claimed_by text, lease_until timestamptz, attempts int NOT NULL DEFAULT 0,
          PRIMARY KEY (user_id, request_id, channel))
        """,
        "CREATE INDEX outbox_due ON outbox (due_at, key)",
        "CREATE INDEX outbox_user_due ON outbox (user_id, due_at, key)",
        "CREATE TABLE outbox_done (key text PRIMARY KEY, done_at bigint NOT NULL)",
        "CREATE INDEX outbox_done_at ON outbox_done (done_at)",
        """
        CREATE TABLE work_queue (user_id text PRIMARY KEY, due_at bigint NOT NULL, claimed_by text,
          lease_until timestamptz, attempts int NOT NULL DEFAULT 0)
        """,
        "CREATE INDEX work_queue_due ON work_queue (due_at)",
    ]

    /// Step 3: each user's notification center. An item's state is its rank
    /// (`InboxState.rawValue`: 0 unseen, 1 seen, 2 read, 3 archived), so "only forward" is a max.
    private static let inbox = [
        """
        CREATE TABLE inbox_item (
            user_id text NOT NULL, seq bigint NOT NULL, id text NOT NULL UNIQUE, request_id text NOT NULL,
            kind text NOT NULL, title text NOT NULL, body text NOT NULL, delivered_at bigint NOT NULL,
            state int NOT NULL CHECK (state BETWEEN 0 AND 3),
            PRIMARY KEY (user_id, seq))
        """,
        // Per user: the last sequence given out and the read-all watermark.
        "CREATE TABLE inbox_user (user_id text PRIMARY KEY, last_seq bigint NOT NULL, read_through bigint NOT NULL)",
    ]

    /// Step 4: field-group versions, idempotency records and devices (SQLite's `v4-users`).
    private static let users = [
        """
        CREATE TABLE user_version (
            user_id text NOT NULL, field_group text NOT NULL, updated_at_millis bigint NOT NULL,
            PRIMARY KEY (user_id, field_group))
        """,
        """
        CREATE TABLE idempotency_record (
            user_id text NOT NULL, key text NOT NULL, request_hash text NOT NULL, status bigint NOT NULL,
            response bytea NOT NULL, created_at bigint NOT NULL,
            PRIMARY KEY (user_id, key))
        """,
        #"CREATE INDEX idempotency_record_created_at ON idempotency_record (created_at, user_id COLLATE "C", key COLLATE "C")"#,
        """
        CREATE TABLE device (
            token text PRIMARY KEY, user_id text NOT NULL, environment text NOT NULL, platform text NOT NULL,
            registered_at bigint NOT NULL)
        """,
        #"CREATE INDEX device_user ON device (user_id, registered_at, token COLLATE "C")"#,
    ]

    /// Step 7: per user, the instant before which their user tokens are refused.
    private static let tokenRevocations = [
        "CREATE TABLE token_revocation (user_id text PRIMARY KEY, issued_before bigint NOT NULL)"
    ]

    /// Step 8: the social event ids each user took in (`SocialEventStore`, SQLiteSchema's
    /// `v8-social-ids`), and the instant of each ledger key, by which the ledger's retention
    /// prunes keys with their rows. A key stored before it takes its user's newest ledger
    /// instant, so it is kept a whole window after the upgrade.
    private static let socialIDs = [
        """
        CREATE TABLE social_event (
            user_id text NOT NULL, event_id text NOT NULL, seen_at bigint NOT NULL, expires_at bigint NOT NULL,
            PRIMARY KEY (user_id, event_id))
        """,
        #"CREATE INDEX social_event_expires_at ON social_event (expires_at, user_id COLLATE "C", event_id COLLATE "C")"#,
        "ALTER TABLE ledger_key ADD COLUMN at bigint NOT NULL DEFAULT 0",
        """
        UPDATE ledger_key SET at = COALESCE(
            (SELECT MAX(ledger.at) FROM ledger WHERE ledger.user_id = ledger_key.user_id), 0)
        """,
        #"CREATE INDEX ledger_key_user_at ON ledger_key (user_id, at, idempotency_key COLLATE "C")"#,
    ]

    /// Step 5: the decision trace. Ids come from an identity: never reused, even after pruning.
    private static let trace = [
        """
        CREATE TABLE trace (
            id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, user_id text NOT NULL, at bigint NOT NULL,
            request_id text NOT NULL, kind text NOT NULL, decision text NOT NULL, reason text NOT NULL,
            fire_at bigint, detail text NOT NULL, group_id text, input text NOT NULL)
        """,
        "CREATE INDEX trace_user_at ON trace (user_id, at, id)",
    ]

    /// Step 6: what the workers' queue keeps beside the outbox (`OutboxQueue`): the alerts each
    /// user was sent this local hour and day (claim-time caps), which rows a claim merged into
    /// which (pruned with the done rows), and the deployment's one APNs provider token.
    private static let queue = [
        """
        CREATE TABLE user_sends (user_id text PRIMARY KEY, local_day bigint NOT NULL, local_hour bigint NOT NULL,
            sent_today bigint NOT NULL, sent_this_hour bigint NOT NULL)
        """,
        "CREATE TABLE outbox_merged (key text PRIMARY KEY, merged_into text NOT NULL, merged_at bigint NOT NULL)",
        "CREATE INDEX outbox_merged_at ON outbox_merged (merged_at)",
        "CREATE TABLE provider_token (key_id text PRIMARY KEY, jwt text NOT NULL, issued_at bigint NOT NULL)",
        // A deferred row's first due instant: rows deferred to one instant keep their order.
        "ALTER TABLE outbox ADD COLUMN planned_at bigint",
        // Queue tables churn (every row is updated, then deleted): vacuum them after 2 % of
        // their rows are dead, not PostgreSQL's default 20 %, so the space of done rows is
        // reused at once and the tables stay the size of their pending work.
        "ALTER TABLE outbox SET (autovacuum_vacuum_scale_factor = 0.02, autovacuum_vacuum_insert_scale_factor = 0.02)",
        "ALTER TABLE work_queue SET (autovacuum_vacuum_scale_factor = 0.02)",
        "ALTER TABLE outbox_done SET (autovacuum_vacuum_scale_factor = 0.02)",
        "ALTER TABLE outbox_merged SET (autovacuum_vacuum_scale_factor = 0.02)",
        "ALTER TABLE user_sends SET (autovacuum_vacuum_scale_factor = 0.02)",
    ]
}
