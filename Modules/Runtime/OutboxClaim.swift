public import Models
public import Storage

/// One claim of due rows, as every shell makes it: the PostgreSQL workers' queue inside its
/// claim's transaction, `EngineRuntime.dispatchDue` over a store that lists rows as they stand,
/// and the simulator's server. Each user's rows are put in their planned order and decided by
/// `ClaimTimePolicy`; what the decisions change is one `ClaimRecord` for the store to write
/// before anything is performed.
public enum OutboxClaim {
    public struct Outcome: Hashable, Sendable {
        /// Rows to perform now, by due time then key.
        public var perform: [OutboxRow] = []
        public var record = ClaimRecord()
        /// Per user whose claim holds an ordinary alert: when their next quiet hours begin
        /// (`ClaimTimePolicy.Decision.sendBefore`).
        public var sendBefore: [UserID: Instant] = [:]
    }

    /// Decides `due` (rows of any users, as listed) at `now`. `rules` holds the rules of the
    /// alerted users that have a profile; the alerts of `unreadable` users (a profile that does
    /// not decode) wait an hour, unsent, and their other rows are performed. `zone` resolves a
    /// time-zone name, nil when this build does not know it.
    public static func decide(
        _ due: [OutboxRow], rules: [UserID: ClaimTimePolicy.UserRules], unreadable: Set<UserID>,
        zone: (String) -> ZoneRules?, state: ClaimState, at now: Instant,
        guardSeconds: Int64 = ClaimTimePolicy.defaultGuardSeconds
    ) -> Outcome {
        var outcome = Outcome()
        var users: [UserID] = []
        var byUser: [UserID: [OutboxRow]] = [:]
        for row in due {
            if byUser[row.userID] == nil { users.append(row.userID) }
            byUser[row.userID, default: []].append(row)
        }
        for user in users {
            let rows = planned(byUser[user] ?? [], state: state)
            guard rows.contains(where: { $0.channel == .push }) else {
                outcome.perform += rows
                continue
            }
            if unreadable.contains(user) {
                for alert in rows where alert.channel == .push {
                    outcome.record.deferrals.append(
                        OutboxDeferral(
                            key: alert.key, until: now + 3_600, reason: "unreadableProfile",
                            firstDueAt: state.plannedAt[alert.key] ?? alert.dueAt))
                }
                outcome.perform += rows.filter { $0.channel != .push }
                continue
            }
            let userRules = rules[user]
            let decision = ClaimTimePolicy.decide(
                rows: rows, rules: userRules, zone: userRules.flatMap { zone($0.timeZone) },
                tally: state.tallies[user] ?? .none, at: now, guardSeconds: guardSeconds,
                claimedBefore: state.attemptedKeys, firstDueAt: state.plannedAt)
            outcome.record.deferrals += decision.deferred
            outcome.record.expiredKeys += decision.expired
            if let merge = decision.merged { outcome.record.merges.append(merge) }
            if let tally = decision.tallyAfter { outcome.record.tallies[user] = tally }
            if let deadline = decision.sendBefore { outcome.sendBefore[user] = deadline }
            outcome.perform += decision.perform
        }
        outcome.perform.sort { ($0.dueAt, $0.key) < ($1.dueAt, $1.key) }
        outcome.record.performedKeys = outcome.perform.map(\.key)
        return outcome
    }

    /// A user's rows in the order they were planned: by due time, then by the instant a deferred
    /// row was first due, then key.
    static func planned(_ rows: [OutboxRow], state: ClaimState) -> [OutboxRow] {
        guard !state.plannedAt.isEmpty else { return rows.sorted { ($0.dueAt, $0.key) < ($1.dueAt, $1.key) } }
        return rows.sorted { a, b in
            (a.dueAt, state.plannedAt[a.key] ?? a.dueAt, a.key) < (b.dueAt, state.plannedAt[b.key] ?? b.dueAt, b.key)
        }
    }
}
