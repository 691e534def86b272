import Foundation
public import Models
import PostgresNIO
public import Storage

/// A `RuntimeStore` in PostgreSQL, for several processes (API servers, workers) sharing one
/// database. It keeps the same contract as `SQLiteEngagementStore` and passes the same
/// conformance suites; the schema is `PostgresSchema`'s.
///
/// - **Transactions.** `apply`, `commitGroup`, `completeOutbox`, `deliverToInbox` and every other
///   write run in one `READ COMMITTED` transaction each (`PostgresPool.transaction`): all or
///   nothing. A commit that writes outbox rows also notes the user's soonest new row in
///   `work_queue` (`WorkQueueSQL.noteDue`), in the same transaction. Everything is validated
///   before the transaction begins, with the same rules and messages as the other stores.
/// - **Snapshot versions (optimistic concurrency).** Each `engine_snapshot` row has a `version`,
///   incremented by every write. The store remembers, per user, the version it last read
///   (`snapshot(userID:)`, 0 when there was no row) or wrote, and a commit writes the snapshot
///   only over that version:
///   - nothing remembered: written unconditionally (inserted, or updated to version + 1);
///   - 0 remembered: inserted, and refused if a row exists;
///   - `v` remembered: updated only where the version is still `v`.
///
///   A refused write means another process committed for the user since this one read: the
///   whole group is rolled back, the user's remembered version is forgotten (so the next read
///   reloads), and the commit throws `StoreError.unavailable("the snapshot of user \"X\" was
///   changed by another process; load it again")`. After a successful commit the store
///   remembers the versions it wrote. `forgetSnapshotVersions()` forgets them all.
/// - **Outbox keys.** Writes of outbox rows and completions of keys hold the keys' advisory
///   locks (`OutboxSQL`), so a completed key is never pending again, even when a completion and
///   a replayed commit race in two processes.
/// - **Errors.** `StoreError` only: PostgreSQL's refusals and lost connections are
///   `.unavailable` (retrying may succeed), a value that does not read back is `.corrupt` naming
///   its table and column, a database of a newer build is `.newerSchema`.
public final class PostgresRuntimeStore: RuntimeStore {
    /// The schema version this build reads and writes (`engaged_schema`).
    public static var schemaVersion: Int { PostgresSchema.version }

    /// The connections the store borrows; the store does not close it.
    public let pool: PostgresPool
    /// The version of each user's snapshot as this store last read or wrote it.
    let snapshotVersions = SnapshotVersions()

    /// Opens the store on `pool`'s database, creating or upgrading the schema (several processes
    /// may do it at once). Throws `.newerSchema` for a database of a newer build.
    public init(pool: PostgresPool) throws(StoreError) {
        self.pool = pool
        try PostgresSchema.migrate(pool)
    }

    /// Forgets every remembered snapshot version: each user's next commit writes its snapshot
    /// unconditionally, unless the user's snapshot is read first.
    public func forgetSnapshotVersions() { snapshotVersions.forgetAll() }

    // MARK: - Commits

    public func commitGroup(_ commits: [RuntimeCommit]) throws(StoreError) {
        for commit in commits { if let error = commit.validationError { throw error } }
        let profiles = try commits.map { commit throws(StoreError) in try ProfileJSON.encode(commit.batch.profiles) }
        guard !commits.isEmpty else { return }
        let keys = commits.flatMap { $0.outbox.map(\.key) }
        var versions = snapshotVersions.versions(of: Set(commits.map(\.userID)))
        var conflictedUser: UserID?
        do {
            try pool.writing { session in
                if !keys.isEmpty { try session.execute(OutboxSQL.lockKeys(keys)) }
                for (commit, profiles) in zip(commits, profiles) {
                    guard
                        let version = try Self.writeSnapshot(
                            commit, over: versions[commit.userID], session)
                    else {
                        conflictedUser = commit.userID
                        throw StoreError.unavailable(
                            "the snapshot of user \"\(commit.userID)\" was changed by another process; load it again")
                    }
                    versions[commit.userID] = version
                    try Self.write(commit, profiles: profiles, session)
                }
            }
        } catch {
            if let conflictedUser { snapshotVersions.forget(conflictedUser) }
            throw error
        }
        snapshotVersions.remember(versions)
    }

    /// Writes the commit's snapshot over `expected` (see the type's contract); returns the
    /// version written, or nil when the row is not at `expected`.
    private static func writeSnapshot(_ commit: RuntimeCommit, over expected: Int64?, _ session: PostgresSession)
        throws -> Int64?
    {
        let bytes = PostgresColumns.bytea(commit.snapshot)
        let rows: [PostgresRow]
        switch expected {
        case nil:
            rows = try session.rows(
                """
                INSERT INTO engine_snapshot (user_id, bytes, version) VALUES (\(commit.userID.rawValue), \(bytes), 1)
                ON CONFLICT (user_id) DO UPDATE SET bytes = excluded.bytes, version = engine_snapshot.version + 1
                RETURNING version
                """)
        case 0?:
            rows = try session.rows(
                """
                INSERT INTO engine_snapshot (user_id, bytes, version) VALUES (\(commit.userID.rawValue), \(bytes), 1)
                ON CONFLICT (user_id) DO NOTHING RETURNING version
                """)
        case let version?:
            rows = try session.rows(
                """
                UPDATE engine_snapshot SET bytes = \(bytes), version = version + 1
                WHERE user_id = \(commit.userID.rawValue) AND version = \(version) RETURNING version
                """)
        }
        return try rows.first.map { row throws(StoreError) in
            try PostgresColumns.decode(row, as: Int64.self, table: "engine_snapshot")
        }
    }

    /// One input's rows after its snapshot, inside the caller's transaction.
    private static func write(_ commit: RuntimeCommit, profiles: [ProfileJSON], _ session: PostgresSession) throws {
        try writeBatch(commit.batch, profiles: profiles, session)
        try writeTrace(commit.trace, userID: commit.userID, session)
        try writeUserRecords(commit, session)
        if !commit.cancelledRequestIDs.isEmpty {
            try session.execute(
                "DELETE FROM outbox WHERE user_id = \(commit.userID.rawValue) AND request_id = ANY(\(commit.cancelledRequestIDs.map(\.rawValue)))"
            )
        }
        try enqueue(commit.outbox, session)
    }

    /// Makes `rows` (of one user) pending, except those whose key is done, and notes the
    /// soonest of those written in `work_queue`. The caller holds the rows' key locks.
    static func enqueue(_ rows: [OutboxRow], _ session: PostgresSession) throws {
        var soonest: Int64?
        for row in rows {
            let written = try session.rows(
                OutboxSQL.enqueue(
                    userID: row.userID, requestID: row.requestID, channel: row.channel.name, key: row.key,
                    dueAt: row.dueAt.secondsSinceEpoch, payload: row.payload.storedText))
            if !written.isEmpty { soonest = min(soonest ?? .max, row.dueAt.secondsSinceEpoch) }
        }
        if let soonest, let userID = rows.first?.userID {
            try session.execute(WorkQueueSQL.noteDue(userID: userID, dueAt: soonest))
        }
    }

    public func snapshot(userID: UserID) throws(StoreError) -> [UInt8]? {
        let stored = try pool.reading { session in
            try session.rows("SELECT bytes, version FROM engine_snapshot WHERE user_id = \(userID.rawValue)").first.map
            {
                row throws(StoreError) in
                try PostgresColumns.decode(row, as: (ByteBuffer, Int64).self, table: "engine_snapshot")
            }
        }
        snapshotVersions.remember([userID: stored?.1 ?? 0])
        return stored.map { PostgresColumns.bytes($0.0) }
    }

    // MARK: - Outbox

    public func completeOutbox(keys: [OutboxKey], at instant: Instant) throws(StoreError) {
        guard !keys.isEmpty else { return }
        try pool.writing { session in
            for statement in OutboxSQL.complete(keys: keys, doneAt: instant.secondsSinceEpoch) {
                try session.execute(statement)
            }
        }
    }

    public func dueOutbox(through instant: Instant, limit: Int) throws(StoreError) -> [OutboxRow] {
        guard limit > 0 else { return [] }
        return try pool.reading { session in
            try session.rows(
                """
                SELECT key, user_id, request_id, channel, due_at, payload FROM outbox
                WHERE due_at <= \(instant.secondsSinceEpoch) ORDER BY due_at, key COLLATE "C" LIMIT \(limit)
                """
            ).map(Self.outboxRow)
        }
    }

    public func pendingOutbox(userID: UserID) throws(StoreError) -> [OutboxRow] {
        try pool.reading { session in
            try session.rows(
                """
                SELECT key, user_id, request_id, channel, due_at, payload FROM outbox
                WHERE user_id = \(userID.rawValue) ORDER BY due_at, key COLLATE "C"
                """
            ).map(Self.outboxRow)
        }
    }

    public func completedOutboxKeys(among keys: [OutboxKey]) throws(StoreError) -> Set<OutboxKey> {
        guard !keys.isEmpty else { return [] }
        return try pool.reading { session in
            var completed: Set<OutboxKey> = []
            for row in try session.rows("SELECT key FROM outbox_done WHERE key = ANY(\(keys.map(\.rawValue)))") {
                completed.insert(
                    OutboxKey(rawValue: try PostgresColumns.decode(row, as: String.self, table: "outbox_done")))
            }
            return completed
        }
    }

    public func outboxDepth() throws(StoreError) -> Int {
        try pool.reading { session in
            try session.rows("SELECT COUNT(*) FROM outbox").first.map { row throws(StoreError) in
                try PostgresColumns.decode(row, as: Int.self, table: "outbox")
            } ?? 0
        }
    }

    public func userIDs() throws(StoreError) -> [UserID] {
        try pool.reading { session in
            try session.rows(#"SELECT user_id FROM profile ORDER BY user_id COLLATE "C""#).map {
                row throws(StoreError) in UserID(try PostgresColumns.decode(row, as: String.self, table: "profile"))
            }
        }
    }

    private static func outboxRow(_ row: PostgresRow) throws(StoreError) -> OutboxRow {
        let (key, userID, requestID, channel, dueAt, payload) = try PostgresColumns.decode(
            row, as: (String, String, String, String, Int64, String).self, table: "outbox")
        return OutboxRow(
            key: OutboxKey(key), userID: UserID(userID), requestID: RequestID(requestID),
            dueAt: Instant(secondsSinceEpoch: dueAt), channelName: channel, text: payload)
    }
}

/// The snapshot version of each user as one store last read or wrote it (see
/// `PostgresRuntimeStore`). A lock guards the dictionary; `Synchronization.Mutex` would need
/// macOS 15 and the package supports macOS 14.
final class SnapshotVersions: @unchecked Sendable {
    // @unchecked Sendable is safe: `byUser` is only touched while holding `lock`.
    private let lock = NSLock()
    private var byUser: [UserID: Int64] = [:]

    /// The remembered versions of `userIDs` (users with none are absent).
    func versions(of userIDs: Set<UserID>) -> [UserID: Int64] {
        lock.withLock {
            var versions: [UserID: Int64] = [:]
            for userID in userIDs { versions[userID] = byUser[userID] }
            return versions
        }
    }

    func remember(_ versions: [UserID: Int64]) {
        lock.withLock { byUser.merge(versions) { _, new in new } }
    }

    func forget(_ userID: UserID) { _ = lock.withLock { byUser.removeValue(forKey: userID) } }

    func forgetAll() { lock.withLock { byUser.removeAll() } }
}
