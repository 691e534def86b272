public import Engagement
public import Models
public import Scheduling
public import Storage

/// The notifications a user's phone schedules itself (the `local` channel: routine reminders,
/// coaching), as the server planned them: each request with everything the platform shows,
/// for an app to mirror into its pending list (`GET /v1/users/{id}/plan`).
///
/// It is read from the user's pending outbox: a local notification's `inbox` row holds the
/// request the phone fires and the server files in the inbox when it is due, with the copy the
/// engine wrote under the user's privacy level, as a push of it would carry.
public struct LocalPlan: Hashable, Sendable {
    /// One request of the plan, with the instant it fires next.
    public struct Entry: Hashable, Sendable {
        public var request: NotificationRequest
        /// The next firing: a one-off's instant, a daily series' next match in the user's zone.
        public var nextFireAt: Instant
        /// What the user may do on the phone that makes it moot, so the phone withdraws it at
        /// once (`UserEngine.withdrawals(of:)`).
        public var withdrawnBy: [Withdrawal]

        public init(request: NotificationRequest, nextFireAt: Instant, withdrawnBy: [Withdrawal] = []) {
            self.request = request
            self.nextFireAt = nextFireAt
            self.withdrawnBy = withdrawnBy
        }
    }

    /// The plan's revision (`UserEngine.localPlanRevision`): it changes exactly when a request
    /// is added, replaced or removed, not as time passes (what fired is gone from the phone too).
    public var version: Int
    /// The user's zone, in which calendar triggers match.
    public var zone: ZoneRules
    /// Where the engine's last planning pass stopped: nothing later is planned yet; nil before
    /// the first pass.
    public var horizonEnd: Instant?
    /// Soonest first (then by identifier). In a delta, only the requests added or replaced.
    public var entries: [Entry]
    /// Nil for the whole plan; set when `entries` are only what changed since a version the
    /// client holds (`ServedPlans.answer`).
    public var delta: Delta?
    /// The digest of the whole plan's requests (`PlanDigest`), whole or a delta; set on an
    /// answer (`ServedPlans.answer`), nil on a plan read from the rows.
    public var digest: String?

    /// What a delta answer changes of the plan its client holds: the client keeps each request
    /// of version `since` that the answer neither lists nor removes.
    public struct Delta: Hashable, Sendable {
        /// The version the client holds (its pull's `since`).
        public var since: Int
        /// The identifiers the plan no longer holds, sorted.
        public var removed: [RequestID]

        public init(since: Int, removed: [RequestID]) {
            self.since = since
            self.removed = removed
        }
    }

    public init(version: Int, zone: ZoneRules, horizonEnd: Instant?, entries: [Entry], delta: Delta? = nil) {
        self.version = version
        self.zone = zone
        self.horizonEnd = horizonEnd
        self.entries = entries
        self.delta = delta
    }

    /// The plan in `pending` (one user's pending outbox rows) at `now`: the `inbox` rows the
    /// phone shows itself (`shownBy` local), a one-off only while it is still ahead (a row due by
    /// `now` has fired on the phone, and the server files it at its next dispatch), a daily
    /// series always (its row is due again at each match; one due by `now` is listed at its next
    /// match). Rows this build cannot read, and remote ones (pushed when due), are not part of it.
    /// Each request names what withdraws it (`withdrawals`, the engine's `withdrawals(ofRequest:)`).
    public init(
        pending: [OutboxRow], version: Int, zone: ZoneRules, horizonEnd: Instant?,
        withdrawals: (RequestID) -> [Withdrawal], at now: Instant
    ) {
        var entries: [Entry] = []
        for row in pending where row.channel == .inbox {
            guard case .inboxItem(let request, shownBy: .local) = row.payload,
                request.trigger.repeats || row.dueAt > now
            else { continue }
            // A series' row due but not dispatched yet has fired on the phone: its next match.
            let next =
                row.dueAt > now ? row.dueAt : row.payload.repeatingMatch?.nextMatch(after: now, in: zone) ?? row.dueAt
            entries.append(
                Entry(request: request, nextFireAt: next, withdrawnBy: withdrawals(request.identifier)))
        }
        entries.sort { ($0.nextFireAt, $0.request.identifier) < ($1.nextFireAt, $1.request.identifier) }
        self.init(version: version, zone: zone, horizonEnd: horizonEnd, entries: entries)
    }
}

extension EngineRuntime {
    /// The user's local plan's version now (`LocalPlan.version`), without reading the plan or
    /// restoring the engine: the revision at the end of the committed snapshot
    /// (`EngineSnapshot.localPlanRevision`), which is what a client holding that version needs no
    /// more of. Throws `unknownUser` for a user never put.
    public func localPlanVersion(of userID: UserID) async throws(RuntimeError) -> Int {
        await group.settled(through: sequence)
        return try committedRevision(of: userID)
    }

    /// The user's local plan now (`LocalPlan`), after every step already answered is in the
    /// store. Throws `unknownUser` for a user never put.
    ///
    /// The version comes from the committed snapshot, not from the cached engine (which may hold
    /// a step still being written, or miss one another process committed), and it is read before
    /// the rows: a step committed in between leaves an older version beside newer rows, which the
    /// phone pulls once more, never a newer version beside older rows, which it would keep. The
    /// zone and the horizon come from the cached engine: a horizon a worker's step moved since is
    /// shown at the next pull.
    public func localPlan(of userID: UserID) async throws(RuntimeError) -> LocalPlan {
        await group.settled(through: sequence)
        let version = try committedRevision(of: userID)
        guard let engine = try engine(of: userID) else { throw .unknownUser(userID) }
        let pending: [OutboxRow]
        do { pending = try store.pendingOutbox(userID: userID) } catch { throw .store(error) }
        return LocalPlan(
            pending: pending, version: version, zone: engine.zone, horizonEnd: engine.planHorizonEnd,
            withdrawals: engine.withdrawals(ofRequest:), at: clock.now())
    }

    /// The answer to a pull of `plan` (the user's whole plan, `localPlan(of:)`) from a client
    /// holding version `since` (nil: none in full): only what changed since, when the runtime
    /// still keeps that version (`ServedPlans`), else `plan`; with the plan's digest. Keeps
    /// `plan` as answered.
    public func answer(_ plan: LocalPlan, of userID: UserID, since: Int?) -> LocalPlan {
        servedPlans[userID, default: ServedPlans()].answer(plan, since: since, at: clock.now())
    }

    /// Records that the user's phone was answered `plan` (`UserEngine.phoneApplied`), so that
    /// a step from anyone else plans around what the phone fires before it can hear of the
    /// step (`PhoneHearing`). Commits the engine only when what the phone holds changed. Throws
    /// `unknownUser` for a user never put (or deleted since the plan was read).
    public func phoneWasServed(_ plan: LocalPlan, userID: UserID) async throws(RuntimeError) {
        guard var engine = try loadEngine(userID)?.engine else { throw .unknownUser(userID) }
        let requests = plan.entries.lazy.map { (requestID: $0.request.identifier, fireAt: $0.nextFireAt) }
        guard engine.phoneApplied(requests, at: clock.now()) else { return }
        try await commit(RuntimeCommit(userID: userID, snapshot: engine.snapshot()), engine: engine)
    }

    /// The local plan's revision in the user's committed snapshot.
    private func committedRevision(of userID: UserID) throws(RuntimeError) -> Int {
        let bytes: [UInt8]?
        do { bytes = try store.snapshot(userID: userID) } catch { throw .store(error) }
        guard let bytes else { throw .unknownUser(userID) }
        do { return try EngineSnapshot.localPlanRevision(of: bytes) } catch { throw .snapshot(userID: userID, error) }
    }
}
