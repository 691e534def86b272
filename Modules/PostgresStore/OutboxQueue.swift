import Foundation
public import Models
import PostgresNIO
public import Runtime
public import Storage
import Synchronization

/// The due work of many workers over one PostgreSQL database (docs/ARCHITECTURE.md).
///
/// The unit of work is a *user*: `work_queue` holds one row per user with pending outbox rows,
/// at their soonest due instant. A worker claims a batch of due users with
/// `FOR UPDATE SKIP LOCKED` (concurrent claims skip each other's rows instead of waiting) and
/// writes a lease (`claimed_by`, `lease_until`, `attempts`) in the same statement; the lease,
/// not a held transaction, is what keeps every other worker off those users until it expires.
/// So one user's rows are performed by one worker at a time and in due order, without a
/// transaction held open across network sends, and a killed worker's users are claimed again
/// (rescued) by whoever asks once the lease has run out. The lease runs on the database's clock
/// (`clock_timestamp()`), one clock for all workers; due instants are the engine's time, which
/// a test may run faster than the wall.
///
/// Why per user rather than per row: the engine's rules are per user (caps, quiet hours, order),
/// and the claim re-applies them (`ClaimTimePolicy`): a backlog found at claim is merged into one
/// alert, and an alert that would land in quiet hours or past a cap is moved on. An advisory
/// lock per user would serialise the same way but holds a connection per user being worked on;
/// partitioning users by hash across workers would need a coordinator to move partitions when a
/// worker dies, which the lease gives for free.
///
/// A re-send after a crash (claimed, sent, not completed) uses the row's key, which is the
/// push's `apns-id`: the same row always goes out under the same id, and a merge is written
/// (old rows completed, the merged row pending) before anything is sent, so a rescue re-sends
/// the merged row, never its parts. The claim's commit is durable before it is answered
/// (`PostgresPool.requireDurableCommit`), so a database that crashes after the sends still knows
/// which rows may have gone out; a claim whose answer is lost is not performed by its worker,
/// and its users stay leased until the lease runs out, when the next claim finds the merged row
/// and the marks of the lost claim.
public final class OutboxQueue: Sendable {
    public let pool: PostgresPool
    /// This worker's name in `claimed_by`: unique per process (host, pid, start).
    public let workerID: String
    /// How long a claim keeps other workers off a user, in seconds.
    public let leaseSeconds: Double
    /// The margin before quiet hours in which an alert is not started (`ClaimTimePolicy`).
    public let guardSeconds: Int64
    private let claimed = Mutex(ClaimedKeys())
    private let zones = Mutex([String: ZoneRules]())

    /// Rows claimed and not yet completed: by key, and the keys of each user.
    struct ClaimedKeys {
        struct Row {
            var userID: UserID
            /// When the claim began (the lease runs from no later than this).
            var claimedAt: ContinuousClock.Instant
            /// When the user's quiet hours begin, for an ordinary alert.
            var sendBefore: Instant?
        }
        var rows: [OutboxKey: Row] = [:]
        var byUser: [UserID: Set<OutboxKey>] = [:]

        mutating func add(_ key: OutboxKey, _ row: Row) {
            rows[key] = row
            byUser[row.userID, default: []].insert(key)
        }

        /// Forgets `key`; returns its user when that was the user's last claimed row.
        mutating func remove(_ key: OutboxKey) -> UserID? {
            guard let user = rows.removeValue(forKey: key)?.userID else { return nil }
            byUser[user]?.remove(key)
            guard byUser[user]?.isEmpty == true else { return nil }
            byUser[user] = nil
            return user
        }
    }

    public init(
        pool: PostgresPool, workerID: String, leaseSeconds: Double = 30,
        guardSeconds: Int64 = ClaimTimePolicy.defaultGuardSeconds
    ) {
        self.pool = pool
        self.workerID = workerID
        self.leaseSeconds = leaseSeconds
        self.guardSeconds = guardSeconds
    }

    /// Leases up to `limit` users with work due at `now` and returns the rows to perform now,
    /// by due time then key, after the claim-time rules: deferred alerts are moved (their user's
    /// lease given back at once when nothing else is left), a backlog of alerts is merged into
    /// one row. Everything is written in one transaction before a row is returned.
    public func claim(through now: Instant, users limit: Int) throws(StoreError) -> [OutboxRow] {
        try claimWithRules(through: now, users: limit).rows
    }

    /// `claim`, with the rules the claim read (of the users with alerts due).
    func claimWithRules(through now: Instant, users limit: Int) throws(StoreError) -> (
        rows: [OutboxRow], rules: [UserID: ClaimTimePolicy.UserRules]
    ) {
        let at = ContinuousClock.now  // before the claim: the lease runs from no later than this
        let (rows, deadlines, rules) = try pool.transaction { connection in
            // Rows are sent once this commits: a server that forgot the commit after a crash
            // would hand out as never tried rows that went out (and merge them).
            try pool.requireDurableCommit(on: connection)
            return try claimInTransaction(now: now, limit: limit, connection)
        }
        claimed.withLock { claimed in
            // A user claimed again starts afresh: keys of an earlier claim that another worker
            // completed after this one's lease ran out must not hold the new lease.
            for user in Set(rows.map(\.userID)) {
                for key in claimed.byUser[user] ?? [] { _ = claimed.remove(key) }
            }
            for row in rows {
                let deadline = row.channel == .push ? deadlines[row.userID] : nil
                claimed.add(row.key, .init(userID: row.userID, claimedAt: at, sendBefore: deadline))
            }
        }
        return (rows, rules)
    }

    /// Marks `keys` as done for the lease book-keeping: every user whose claimed rows are now
    /// all done gets its lease back and its next due instant recomputed.
    public func settle(completed keys: [OutboxKey]) throws(StoreError) {
        let finished = claimed.withLock { claimed in keys.compactMap { claimed.remove($0) } }
        guard !finished.isEmpty else { return }
        try pool.transaction { connection in try release(finished, connection) }
    }

    /// Settles the claimed rows of `userIDs` that are no longer pending (a commit replaced or
    /// withdrew them, as a background job's own commit replaces its row).
    public func reconcile(userIDs: [UserID]) throws(StoreError) {
        let keys = claimed.withLock { claimed in userIDs.flatMap { claimed.byUser[$0] ?? [] } }
        guard !keys.isEmpty else { return }
        let pending = try pool.withConnection { connection in
            try pool.query("SELECT key FROM outbox WHERE key = ANY(\(keys.map(\.rawValue)))", on: connection).map {
                OutboxKey(try $0.decode(String.self))
            }
        }
        let gone = Set(keys).subtracting(pending)
        if !gone.isEmpty { try settle(completed: Array(gone)) }
    }

    /// Whether the claimed row `key` may still start its send at `now`: its user's quiet hours
    /// are more than half the guard away (`ClaimTimePolicy.Decision.sendBefore`), and the
    /// claim's lease has a fifth of its time left.
    /// (A send started later could still be going on when another worker, after the lease,
    /// claims the user again.)
    public func maySend(key: OutboxKey, at now: Instant) -> Bool {
        guard let row = claimed.withLock({ $0.rows[key] }) else { return true }
        if ContinuousClock.now - row.claimedAt > .milliseconds(Int64(leaseSeconds * 800)) { return false }
        guard let deadline = row.sendBefore else { return true }
        return now + guardSeconds / 2 < deadline
    }

    /// When the row `key` was claimed by this worker, while it is claimed.
    public func claimedAt(key: OutboxKey) -> ContinuousClock.Instant? { claimed.withLock { $0.rows[key]?.claimedAt } }

    /// Users this worker holds a lease on, for a graceful stop (they are released) and tests.
    public var leasedUsers: [UserID] { claimed.withLock { Array($0.byUser.keys).sorted() } }

    /// Gives back every lease this worker holds (a graceful stop): the users are due again at
    /// once for any worker, instead of after their lease runs out.
    public func releaseAll() throws(StoreError) {
        let users = claimed.withLock { claimed -> [UserID] in
            let users = Array(claimed.byUser.keys)
            claimed = ClaimedKeys()
            return users
        }
        guard !users.isEmpty else { return }
        try pool.transaction { connection in try release(users, connection) }
    }

    /// Deletes the record of rows completed (and merged) before `cutoff`: a queue in PostgreSQL
    /// bloats when done rows are kept. Returns how many rows went. A replayed commit older than
    /// the retention could bring such a row back; the runtime replays only its last step.
    @discardableResult
    public func pruneDone(before cutoff: Instant) throws(StoreError) -> Int {
        try pool.withConnection { connection in
            let done =
                try pool.query(
                    "WITH gone AS (DELETE FROM outbox_done WHERE done_at < \(cutoff.secondsSinceEpoch) RETURNING 1) SELECT count(*) FROM gone",
                    on: connection
                ).first?.decode(Int.self) ?? 0
            let merged =
                try pool.query(
                    "WITH gone AS (DELETE FROM outbox_merged WHERE merged_at < \(cutoff.secondsSinceEpoch) RETURNING 1) SELECT count(*) FROM gone",
                    on: connection
                ).first?.decode(Int.self) ?? 0
            return done + merged
        }
    }

    // MARK: - Inside the claim's transaction

    private func claimInTransaction(now: Instant, limit: Int, _ connection: PostgresConnection) throws
        -> ([OutboxRow], [UserID: Instant], [UserID: ClaimTimePolicy.UserRules])
    {
        let users = try pool.query(
            """
            WITH picked AS (
                SELECT user_id FROM work_queue
                WHERE due_at <= \(now.secondsSinceEpoch)
                  AND (lease_until IS NULL OR lease_until < clock_timestamp())
                ORDER BY due_at LIMIT \(limit) FOR UPDATE SKIP LOCKED)
            UPDATE work_queue w SET claimed_by = \(workerID),
                lease_until = clock_timestamp() + make_interval(secs => \(leaseSeconds)), attempts = w.attempts + 1
            FROM picked WHERE w.user_id = picked.user_id
            RETURNING w.user_id
            """, on: connection
        ).map { UserID(try $0.decode(String.self)) }
        guard !users.isEmpty else { return ([], [:], [:]) }
        var state = ClaimState()
        let due = try pool.query(
            """
            SELECT key, user_id, request_id, channel, due_at, payload, attempts, planned_at FROM outbox
            WHERE user_id = ANY(\(users.map(\.rawValue))) AND due_at <= \(now.secondsSinceEpoch)
            ORDER BY user_id, due_at, COALESCE(planned_at, due_at), key
            """, on: connection
        ).map { row in
            let (keyText, user, request, channel, dueAt, payload, attempts, plannedAt) = try row.decode(
                (String, String, String, String, Int64, String, Int32, Int64?).self)
            let key = OutboxKey(keyText)
            if attempts > 0 { state.attemptedKeys.insert(key) }
            if let plannedAt { state.plannedAt[key] = Instant(secondsSinceEpoch: plannedAt) }
            return OutboxRow(
                key: key, userID: UserID(user), requestID: RequestID(request),
                dueAt: Instant(secondsSinceEpoch: dueAt), channelName: channel, text: payload)
        }
        let alerted = Set(due.filter { $0.channel == .push }.map(\.userID)).sorted()
        let (rules, unreadable) = try self.rules(of: alerted, connection)
        state.tallies = try pool.claimTallies(of: alerted, connection)
        let outcome = OutboxClaim.decide(
            due, rules: rules, unreadable: unreadable, zone: zone, state: state, at: now, guardSeconds: guardSeconds)
        let perform = outcome.perform
        let performers = Set(perform.map(\.userID))
        let idle = users.filter { !performers.contains($0) }
        let deadlines = outcome.sendBefore
        try pool.writeClaim(outcome.record, at: now, connection)
        if !idle.isEmpty { try release(idle, connection) }
        // Marked before anything is sent: a rescue knows these may have gone out.
        try pool.query(
            "UPDATE outbox SET claimed_by = \(workerID), attempts = attempts + 1 WHERE key = ANY(\(perform.map(\.key.rawValue)))",
            on: connection)
        return (perform, deadlines, rules)
    }

    /// The rules of `users` that have a profile. Only those fields are decoded, here rather than
    /// in PostgreSQL, because workers are many and the database is one; a claim needs no other
    /// field of a profile (the cost is in docs/PERFORMANCE.md, PostgresStore).
    /// A profile whose rules do not decode makes its user unreadable, not the claim fail.
    private func rules(of users: [UserID], _ connection: PostgresConnection) throws -> (
        [UserID: ClaimTimePolicy.UserRules], unreadable: Set<UserID>
    ) {
        guard !users.isEmpty else { return ([:], []) }
        var rules: [UserID: ClaimTimePolicy.UserRules] = [:]
        var unreadable: Set<UserID> = []
        let decoder = JSONDecoder()
        for row in try pool.query(
            "SELECT user_id, json FROM profile WHERE user_id = ANY(\(users.map(\.rawValue)))", on: connection)
        {
            let (name, json) = try row.decode((String, String).self)
            let user = UserID(name)
            guard let head = try? decoder.decode(ProfileRules.self, from: Data(json.utf8)) else {
                unreadable.insert(user)
                continue
            }
            rules[user] = ClaimTimePolicy.UserRules(
                userID: user, timeZone: head.timeZone, quietHours: head.preferences?.quietHours,
                maxPerHour: head.preferences?.maxPerHour ?? NotificationPreferences().maxPerHour,
                maxPerDay: head.preferences?.maxPerDay)
        }
        return (rules, unreadable)
    }

    /// Gives back the leases of `users` held by this worker: due again at their soonest pending
    /// row, or out of the queue when none is left. The rows are locked first and then read: a
    /// server commit that queued a row for one of them meanwhile (its `noteDue` holds the row
    /// until it commits) is seen by the statements that follow the lock, each with a fresh
    /// snapshot, so its row is never overlooked.
    private func release(_ users: [UserID], _ connection: PostgresConnection) throws {
        let sorted = users.sorted().map(\.rawValue)
        try pool.query(
            """
            SELECT user_id FROM work_queue WHERE user_id = ANY(\(sorted)) AND claimed_by = \(workerID)
            ORDER BY user_id FOR UPDATE
            """, on: connection)
        try pool.query(
            """
            UPDATE work_queue w SET claimed_by = NULL, lease_until = NULL,
                due_at = COALESCE((SELECT min(o.due_at) FROM outbox o WHERE o.user_id = w.user_id), w.due_at)
            WHERE w.user_id = ANY(\(sorted)) AND w.claimed_by = \(workerID)
            """, on: connection)
        try pool.query(
            """
            DELETE FROM work_queue w WHERE w.user_id = ANY(\(sorted)) AND w.claimed_by IS NULL
              AND NOT EXISTS (SELECT 1 FROM outbox o WHERE o.user_id = w.user_id)
            """, on: connection)
    }

    private func zone(_ identifier: String) -> ZoneRules? {
        if let known = zones.withLock({ $0[identifier] }) { return known }
        guard let rules = ZoneRules(identifier: identifier) else { return nil }
        zones.withLock { $0[identifier] = rules }
        return rules
    }
}

/// The fields of a stored profile (`UserProfile`'s JSON) the claim-time rules read.
struct ProfileRules: Decodable {
    struct Preferences: Decodable {
        var quietHours: QuietHours?
        var maxPerHour: Int?
        var maxPerDay: Int?
    }
    var timeZone: String
    var preferences: Preferences?
}
