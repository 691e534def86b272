public import Models

/// The plans one user's clients were answered lately, so a pull naming the version it holds
/// (`GET /v1/users/{id}/plan?since=7`) is answered with only what changed since
/// (`LocalPlan.Delta`): most pulls follow a change of a request or two, and a whole plan
/// carries every request's copy again.
///
/// Each version answered is kept as a hash per request (`PlanDigest.hash`: its content, trigger,
/// what withdraws it, a one-off's next firing), never the copy itself. The bound: the last `versionLimit` versions, each of
/// at most the plan's requests (64 on a phone). A version not kept is answered in full, and
/// the answer says which it is, so a server that forgot (a restart, another process answering)
/// costs bytes, never a wrong plan.
///
/// A version answered twice with different requests is not answered with a delta again: the
/// plan is read after its version (`EngineRuntime.localPlan`), so a step committed in between
/// gives one number two plans, and a client holding either might be wrong about the other.
/// Answered again with what it held less the one-offs that fired since, it is the same plan.
/// Another process may have answered the other plan: every answer carries the whole plan's
/// digest (`LocalPlan.digest`), and a client whose merged plan differs from it takes nothing.
public struct ServedPlans: Sendable {
    /// How many versions are kept per user: a phone's, and another device's or the backend's
    /// read between two of its pulls.
    public static let versionLimit = 3

    /// A request of a kept version: its hash, and the instant a one-off fires (nil for a series).
    struct Served: Equatable {
        var hash: UInt64
        var oneOffAt: Instant?
    }

    /// Oldest first, each request by identifier; `requests` is nil for a version answered with
    /// two different plans.
    private var served: [(version: Int, requests: [RequestID: Served]?)] = []

    public init() {}

    /// The answer to a pull of `plan` (the whole plan at `now`) from a client holding version
    /// `since` (nil: none, or none in full): only what changed when `since` is kept, else `plan`
    /// itself; either way with the whole plan's digest. Keeps `plan` as answered.
    ///
    /// The delta lists every request whose hash differs from `since`'s or is new, in the plan's
    /// order, and removes every request of `since` the plan no longer holds, a one-off that fired
    /// since too: the client's copy of the plan then stays the server's, request for request
    /// (`PlanSync.apply`).
    public mutating func answer(_ plan: LocalPlan, since: Int?, at now: Instant) -> LocalPlan {
        let current = Dictionary(
            plan.entries.map { ($0.request.identifier, Self.served($0)) }, uniquingKeysWith: { first, _ in first })
        let base = since.flatMap { since in served.last { $0.version == since }?.requests }
        keep(plan.version, current, at: now)
        var answer = plan
        answer.digest = PlanDigest.of(current.values.lazy.map(\.hash))
        guard let since, let base else { return answer }
        answer.entries = plan.entries.filter { base[$0.request.identifier] != current[$0.request.identifier] }
        let removed = base.keys.filter { current[$0] == nil }.sorted()
        answer.delta = LocalPlan.Delta(since: since, removed: removed)
        return answer
    }

    /// The versions kept, oldest first (for tests and the report).
    public var versions: [Int] { served.map(\.version) }

    /// Keeps `requests` as version `version`, answered at `now`. Answered before, it is the same
    /// plan when it holds the same requests less one-offs whose instant passed by `now`;
    /// otherwise the version is never a base again.
    private mutating func keep(_ version: Int, _ requests: [RequestID: Served], at now: Instant) {
        if let index = served.firstIndex(where: { $0.version == version }) {
            guard let kept = served[index].requests else { return }
            let same =
                requests.allSatisfy { kept[$0.key] == $0.value }
                && kept.allSatisfy { id, request in
                    requests[id] != nil || request.oneOffAt.map { $0 <= now } == true
                }
            // The same plan, less what fired since: keep what the first answer held, which a
            // client that took it may still hold.
            if !same { served[index].requests = nil }
            return
        }
        served.append((version, requests))
        if served.count > Self.versionLimit { served.removeFirst(served.count - Self.versionLimit) }
    }

    private static func served(_ entry: LocalPlan.Entry) -> Served {
        Served(
            hash: PlanDigest.hash(entry.request, nextFireAt: entry.nextFireAt, withdrawnBy: entry.withdrawnBy),
            oneOffAt: entry.request.trigger.repeats ? nil : entry.nextFireAt)
    }
}
