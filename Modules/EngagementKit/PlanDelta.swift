import Models

/// Delta answers (`GET /v1/users/{id}/plan?since=7`): the kit keeps the plan it holds in full
/// (`PlanSyncState.plan`) and merges a delta into it, so a delta is applied as the whole plan
/// it stands for, with the same rules.
extension PlanSync {
    /// The whole plan `delta` stands for, from `held` (the plan of `delta.since`) at `now`:
    /// `held`'s requests that `delta` neither lists, removes nor names as unreadable, then
    /// `delta`'s, soonest first (then by identifier), as the server orders a whole plan. The
    /// server removes what fired too, so this is its plan request for request; a daily series of
    /// `held` whose instant passed is ordered at its next match in the plan's zone, as the server
    /// lists it.
    mutating func merging(_ delta: ServerPlan, into held: [ServerPlan.Entry], at now: Instant) -> ServerPlan {
        var replaced = Set(delta.removed)
        for entry in delta.requests { replaced.insert(entry.request.identifier) }
        for problem in delta.unreadable { replaced.insert(RequestID(problem.identifier)) }
        var entries = delta.requests
        for var entry in held where !replaced.contains(entry.request.identifier) {
            if entry.nextFireAt <= now, case .calendar(let match, repeats: true) = entry.request.trigger,
                let zone = rules(of: delta.timeZone), let next = match.nextMatch(after: now, in: zone)
            {
                entry.nextFireAt = next
            }
            entries.append(entry)
        }
        entries.sort { ($0.nextFireAt, $0.request.identifier) < ($1.nextFireAt, $1.request.identifier) }
        var plan = delta
        plan.requests = entries
        plan.since = nil
        plan.removed = []
        return plan
    }

    /// The rules of `identifier`, kept while the plan's zone stays the same.
    private mutating func rules(of identifier: String) -> ZoneRules? {
        if let zoneRules, zoneRules.identifier == identifier { return zoneRules }
        zoneRules = ZoneRules(identifier: identifier)
        return zoneRules
    }
}

extension ServerPlan {
    /// `entries` as the kit keeps them between launches (`PlanSyncState.plan`): in the plan's
    /// own wire form, without the local times.
    static func wire(_ entries: [Entry]) -> [PlanWire.Request] {
        entries.map {
            PlanWire.Request($0.request, nextFireAt: $0.nextFireAt, localTime: nil, withdrawnBy: $0.withdrawnBy)
        }
    }

    /// The entries `wire` wrote, or nil when any cannot be read back (a build that no longer
    /// knows a kind): the kit then holds no plan to merge a delta into.
    static func entries(_ requests: [PlanWire.Request]) -> [Entry]? {
        var entries: [Entry] = []
        entries.reserveCapacity(requests.count)
        for request in requests {
            guard case .success(var entry) = request.entry() else { return nil }
            for withdrawal in request.withdrawnBy ?? [] {
                guard case .success(let known) = withdrawal.withdrawal() else { return nil }
                entry.withdrawnBy.append(known)
            }
            entries.append(entry)
        }
        return entries
    }
}
