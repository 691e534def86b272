public import Models
public import Storage

extension EngineRuntime {
    /// The claim-time rules over rows a store listed as they stand (`RuntimeStore.claimsWithRules`
    /// is false): what a backlog found at dispatch (the server was stopped, the loop fell
    /// behind) becomes, as a worker's claim decides it (`OutboxClaim`). The record is written
    /// before anything is performed, so a dispatch that stops half way claims afresh.
    /// A user whose stored profile cannot be read has their alerts held an hour; a store that
    /// cannot be reached fails the dispatch.
    func claim(_ due: [OutboxRow], at now: Instant) throws(RuntimeError) -> [OutboxRow] {
        let alerted = Set(due.filter { $0.channel == .push }.map(\.userID)).sorted()
        guard !alerted.isEmpty else { return due }
        var rules: [String: ClaimTimePolicy.UserRules] = [:]
        var unreadable: Set<String> = []
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
        return outcome.perform
    }
}
