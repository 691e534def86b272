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
/// the merged row, never its parts.
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
            var userID: String
            /// When the claim began (the lease runs from no later than this).
            var claimedAt: ContinuousClock.Instant
            /// When the user's quiet hours begin, for an ordinary alert.
            var sendBefore: Instant?
        }
        var rows: [String: Row] = [:]
        var byUser: [String: Set<String>] = [:]

        mutating func add(_ key: String, _ row: Row) {
            rows[key] = row
            byUser[row.userID, default: []].insert(key)
        }

        /// Forgets `key`; returns its user when that was the user's last claimed row.
        mutating func remove(_ key: String) -> String? {
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
        rows: [OutboxRow], rules: [String: ClaimTimePolicy.UserRules]
    ) {
        let at = ContinuousClock.now  // before the claim: the lease runs from no later than this
        let (rows, deadlines, rules) = try pool.transaction { connection in
            try claimInTransaction(now: now, limit: limit, connection)
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
    public func settle(completed keys: [String]) throws(StoreError) {
        let finished = claimed.withLock { claimed in keys.compactMap { claimed.remove($0) } }
        guard !finished.isEmpty else { return }
        try pool.transaction { connection in try release(finished, connection) }
    }

    /// Settles the claimed rows of `userIDs` that are no longer pending (a commit replaced or
    /// withdrew them, as a background job's own commit replaces its row).
    public func reconcile(userIDs: [String]) throws(StoreError) {
        let keys = claimed.withLock { claimed in userIDs.flatMap { claimed.byUser[$0] ?? [] } }
        guard !keys.isEmpty else { return }
        let pending = try pool.withConnection { connection in
            try pool.query("SELECT key FROM outbox WHERE key = ANY(\(keys))", on: connection).map {
                try $0.decode(String.self)
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
    public func maySend(key: String, at now: Instant) -> Bool {
        guard let row = claimed.withLock({ $0.rows[key] }) else { return true }
        if ContinuousClock.now - row.claimedAt > .milliseconds(Int64(leaseSeconds * 800)) { return false }
        guard let deadline = row.sendBefore else { return true }
        return now + guardSeconds / 2 < deadline
    }

    /// When the row `key` was claimed by this worker, while it is claimed.
    public func claimedAt(key: String) -> ContinuousClock.Instant? { claimed.withLock { $0.rows[key]?.claimedAt } }

    /// Users this worker holds a lease on, for a graceful stop (they are released) and tests.
    public var leasedUsers: [String] { claimed.withLock { Array($0.byUser.keys).sorted() } }

    /// Gives back every lease this worker holds (a graceful stop): the users are due again at
    /// once for any worker, instead of after their lease runs out.
    public func releaseAll() throws(StoreError) {
        let users = claimed.withLock { claimed -> [String] in
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
        -> ([OutboxRow], [String: Instant], [String: ClaimTimePolicy.UserRules])
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
        ).map { try $0.decode(String.self) }
        guard !users.isEmpty else { return ([], [:], [:]) }
        var claimedBefore: Set<String> = []
        let due = try pool.query(
            """
            SELECT key, user_id, request_id, channel, due_at, payload, attempts FROM outbox
            WHERE user_id = ANY(\(users)) AND due_at <= \(now.secondsSinceEpoch)
            ORDER BY user_id, due_at, COALESCE(planned_at, due_at), key
            """, on: connection
        ).map { row in
            let (key, user, request, channel, dueAt, payload, attempts) = try row.decode(
                (String, String, String, String, Int64, String, Int32).self)
            if attempts > 0 { claimedBefore.insert(key) }
            let stored = OutboxChannel(name: channel)
            return OutboxRow(
                key: key, userID: user, requestID: request, channel: stored,
                dueAt: Instant(secondsSinceEpoch: dueAt), payload: .stored(payload, channel: stored))
        }
        let byUser = Dictionary(grouping: due, by: \.userID)
        let alerted = byUser.filter { $0.value.contains { $0.channel == .push } }.map(\.key)
        let (rules, unreadable) = try self.rules(of: alerted, connection)
        let tallies = try self.tallies(of: alerted, connection)

        var perform: [OutboxRow] = []
        var deferrals: [ClaimTimePolicy.Deferral] = []
        var merges: [ClaimTimePolicy.Merge] = []
        var newTallies: [(String, AlertTally)] = []
        var idle: [String] = []
        var deadlines: [String: Instant] = [:]
        for user in users {
            let rows = byUser[user] ?? []
            let userRules = rules[user]
            if unreadable.contains(user) {
                // One damaged profile must not stop the queue: its alerts wait an hour, unsent.
                let alerts = rows.filter { $0.channel == .push }
                deferrals += alerts.map { .init(key: $0.key, until: now + 3_600, reason: "unreadableProfile") }
                let others = rows.filter { $0.channel != .push }
                if others.isEmpty { idle.append(user) }
                perform += others
                continue
            }
            let decision = ClaimTimePolicy.decide(
                rows: rows, rules: userRules, zone: userRules.flatMap { zone($0.timeZone) },
                tally: tallies[user] ?? .none, at: now, guardSeconds: guardSeconds, claimedBefore: claimedBefore)
            deferrals += decision.deferred
            if let merge = decision.merged { merges.append(merge) }
            if let tally = decision.tallyAfter { newTallies.append((user, tally)) }
            if decision.perform.isEmpty { idle.append(user) }
            if let deadline = decision.sendBefore { deadlines[user] = deadline }
            perform += decision.perform
        }
        try writeDeferrals(deferrals, connection)
        try writeMerges(merges, at: now, connection)
        try writeTallies(newTallies, connection)
        if !idle.isEmpty { try release(idle, connection) }
        // Marked before anything is sent: a rescue knows these may have gone out.
        try pool.query(
            "UPDATE outbox SET claimed_by = \(workerID), attempts = attempts + 1 WHERE key = ANY(\(perform.map(\.key)))",
            on: connection)
        perform.sort { ($0.dueAt, $0.key) < ($1.dueAt, $1.key) }
        return (perform, deadlines, rules)
    }

    /// The rules of `users` that have a profile. Only those fields are decoded, here rather than
    /// in PostgreSQL (workers are many, the database is one): decoding whole profiles would take
    /// most of a claim's time, and asking PostgreSQL to pick the fields out most of the database's.
    /// A profile whose rules do not decode makes its user unreadable, not the claim fail.
    private func rules(of users: [String], _ connection: PostgresConnection) throws -> (
        [String: ClaimTimePolicy.UserRules], unreadable: Set<String>
    ) {
        guard !users.isEmpty else { return ([:], []) }
        var rules: [String: ClaimTimePolicy.UserRules] = [:]
        var unreadable: Set<String> = []
        let decoder = JSONDecoder()
        for row in try pool.query("SELECT user_id, json FROM profile WHERE user_id = ANY(\(users))", on: connection) {
            let (user, json) = try row.decode((String, String).self)
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

    private func tallies(of users: [String], _ connection: PostgresConnection) throws -> [String: AlertTally] {
        guard !users.isEmpty else { return [:] }
        var tallies: [String: AlertTally] = [:]
        let rows = try pool.query(
            "SELECT user_id, local_day, local_hour, sent_today, sent_this_hour FROM user_sends WHERE user_id = ANY(\(users))",
            on: connection)
        for row in rows {
            let (user, day, hour, today, thisHour) = try row.decode((String, Int64, Int64, Int, Int).self)
            tallies[user] = AlertTally(localDay: day, localHour: hour, sentToday: today, sentThisHour: thisHour)
        }
        return tallies
    }

    private func writeDeferrals(_ deferrals: [ClaimTimePolicy.Deferral], _ connection: PostgresConnection) throws {
        guard !deferrals.isEmpty else { return }
        let keys = deferrals.map(\.key)
        let untils = deferrals.map(\.until.secondsSinceEpoch)
        try pool.query(
            """
            UPDATE outbox o SET planned_at = COALESCE(o.planned_at, o.due_at), due_at = d.until
            FROM unnest(\(keys)::text[], \(untils)::bigint[]) AS d(key, until)
            WHERE o.key = d.key
            """, on: connection)
    }

    private func writeMerges(_ merges: [ClaimTimePolicy.Merge], at now: Instant, _ connection: PostgresConnection)
        throws
    {
        guard !merges.isEmpty else { return }
        let replaced = merges.flatMap(\.replacedKeys)
        let into = merges.flatMap { merge in merge.replacedKeys.map { _ in merge.row.key } }
        // Completed as the store completes keys (`OutboxSQL.complete`: under their key locks), so a
        // replayed commit of a merged part in another process cannot make it pending again.
        for statement in OutboxSQL.complete(keys: replaced, doneAt: now.secondsSinceEpoch) {
            try pool.query(statement, on: connection)
        }
        try pool.query(
            """
            INSERT INTO outbox_merged (key, merged_into, merged_at)
            SELECT k, i, \(now.secondsSinceEpoch) FROM unnest(\(replaced)::text[], \(into)::text[]) AS m(k, i)
            ON CONFLICT DO NOTHING
            """, on: connection)
        let rows = merges.map(\.row)
        try pool.query(
            """
            INSERT INTO outbox (user_id, request_id, channel, key, due_at, payload)
            SELECT * FROM unnest(\(rows.map(\.userID))::text[], \(rows.map(\.requestID))::text[],
                \(rows.map(\.channel.name))::text[], \(rows.map(\.key))::text[], \(rows.map(\.dueAt.secondsSinceEpoch))::bigint[],
                \(rows.map(\.payload.storedText))::text[])
            ON CONFLICT (user_id, request_id, channel) DO UPDATE SET key = excluded.key, due_at = excluded.due_at,
                payload = excluded.payload
            """, on: connection)
    }

    private func writeTallies(_ tallies: [(String, AlertTally)], _ connection: PostgresConnection) throws {
        guard !tallies.isEmpty else { return }
        try pool.query(
            """
            INSERT INTO user_sends (user_id, local_day, local_hour, sent_today, sent_this_hour)
            SELECT * FROM unnest(\(tallies.map(\.0))::text[], \(tallies.map(\.1.localDay))::bigint[],
                \(tallies.map(\.1.localHour))::bigint[], \(tallies.map { Int64($0.1.sentToday) })::bigint[],
                \(tallies.map { Int64($0.1.sentThisHour) })::bigint[])
            ON CONFLICT (user_id) DO UPDATE SET local_day = excluded.local_day, local_hour = excluded.local_hour,
                sent_today = excluded.sent_today, sent_this_hour = excluded.sent_this_hour
            """, on: connection)
    }

    /// Gives back the leases of `users` held by this worker: due again at their soonest pending
    /// row, or out of the queue when none is left. The rows are locked first and then read: a
    /// server commit that queued a row for one of them meanwhile (its `noteDue` holds the row
    /// until it commits) is seen by the statements that follow the lock, each with a fresh
    /// snapshot, so its row is never overlooked.
    private func release(_ users: [String], _ connection: PostgresConnection) throws {
        let sorted = users.sorted()
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
