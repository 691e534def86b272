public import Models
public import Storage

/// What one `EngineRuntime.dispatchDueBatch` did, for a loop deciding whether to ask again.
public struct DispatchedBatch: Sendable {
    /// Rows the store listed: fewer than the limit, nothing more was due.
    public var listed: Int
    public var completed: [OutboxRow]
    /// Rows performed and left pending (a transport or a commit failed): asking again at once
    /// would only repeat the failure.
    public var leftPending: Int
    /// Alerts the claim left due for the next claim, behind one sent alone (a re-send, a
    /// critical or a repeating alert): asking again sends them.
    public var heldBack: Int
    /// Rows completed unperformed (`DueStep.discard`), each with why, for the log.
    public var discarded: [(key: OutboxKey, reason: String)] = []
}

extension EngineRuntime {
    /// The claim-time rules over rows a store listed as they stand (`RuntimeStore.claimsWithRules`
    /// is false): what a backlog found at dispatch (the server was stopped, the loop fell
    /// behind) becomes, as a worker's claim decides it (`OutboxClaim`). The record is written
    /// before anything is performed, so a dispatch that stops half way claims afresh.
    /// A user whose stored profile cannot be read has their alerts held an hour; a store that
    /// cannot be reached fails the dispatch.
    /// Returns the rows to perform and how many alerts were left due for the next claim.
    func claim(_ due: [OutboxRow], at now: Instant) throws(RuntimeError) -> (perform: [OutboxRow], heldBack: Int) {
        let alerted = Set(due.filter { $0.channel == .push }.map(\.userID)).sorted()
        guard !alerted.isEmpty else { return (due, 0) }
        var rules: [UserID: ClaimTimePolicy.UserRules] = [:]
        var unreadable: Set<UserID> = []
        let state: ClaimState
        do {
            for user in alerted {
                do {
                    if let profile = try store.profile(id: user) { rules[user] = ClaimTimePolicy.UserRules(profile) }
                } catch .corrupt {
                    unreadable.insert(user)
                }
            }
            state = try store.claimState(userIDs: alerted)
        } catch { throw .store(error) }
        let outcome = OutboxClaim.decide(
            due, rules: rules, unreadable: unreadable, zone: { try? self.zoneRules($0) }, state: state, at: now)
        do { try store.recordClaim(outcome.record, at: now) } catch { throw .store(error) }
        let merges = outcome.record.merges
        let accounted =
            outcome.perform.count - merges.count + merges.reduce(0) { $0 + $1.replacedKeys.count }
            + outcome.record.deferrals.count + outcome.record.expiredKeys.count
        return (outcome.perform, due.count - accounted)
    }
}
