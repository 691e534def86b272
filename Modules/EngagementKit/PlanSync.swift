public import Delivery
public import Models

/// What a pull of the plan answered.
public enum PlanAnswer: Hashable, Sendable {
    /// 304: the device holds the version it named.
    case notModified
    /// 200: the plan.
    case plan(ServerPlan)
}

/// What the device holds of the server's plan, kept by the app between launches (it is
/// `Codable`; a fresh install starts from `init()`, holding nothing).
public struct PlanSyncState: Codable, Hashable, Sendable {
    /// The version of the plan the device holds in full; nil when it holds none, or only part
    /// of one (a request the center refused is tried again at the next pull).
    public var version: Int?
    /// The identifiers of the pending requests the kit placed: the only ones it ever removes
    /// or replaces.
    public var owned: Set<RequestID>
    /// The version of the last plan applied, in full or in part: what a later answer is older
    /// than (`PlanPull`).
    public var lastApplied: Int?
    /// The one-off requests the kit placed, with the instant each fires, for two days after it:
    /// one no longer pending after its instant has fired, and is never placed again
    /// (`PlanReconciliation`), whether or not the delivered list still shows it.
    public var oneOffs: [RequestID: Instant]
    /// What withdraws each request the kit placed (`ServerPlan.Entry.withdrawnBy`), for those
    /// with anything: what `PlanSync.withdraw` matches an event against.
    public var withdrawals: [RequestID: [Withdrawal]]
    /// The user's recent events that withdraw requests (`PlanSync.withdraw`), oldest first (the
    /// kit forgets the oldest as a prefix; events made, read or set in another order are put in
    /// that order, those of one instant as given): a plan the
    /// server made before it heard of one still lists what it withdrew, and the kit keeps that
    /// withdrawn. Kept for `PlanSync.eventRetentionSeconds`, at most `PlanSync.eventLimit`.
    public var events: [WithdrawingEvent] {
        didSet { if !Self.isOldestFirst(events) { events = Self.oldestFirst(events) } }
    }
    /// The plan of `version` as the server answered it (each request, the kit's to place or
    /// not, with its next firing and what withdraws it): what a delta answer changes
    /// (`ServerPlan.since`). Nil when no version is held in full, and in a state an earlier
    /// build kept: the next pull then asks for the whole plan.
    public var plan: [ServerPlan.Entry]?

    public init(
        version: Int? = nil, owned: Set<RequestID> = [], lastApplied: Int? = nil, oneOffs: [RequestID: Instant] = [:],
        withdrawals: [RequestID: [Withdrawal]] = [:], events: [WithdrawingEvent] = [], plan: [ServerPlan.Entry]? = nil
    ) {
        self.version = version
        self.owned = owned
        self.lastApplied = lastApplied ?? version
        self.oneOffs = oneOffs
        self.withdrawals = withdrawals
        self.events = Self.oldestFirst(events)
        self.plan = plan
    }

    private enum CodingKeys: String, CodingKey {
        case version, owned, lastApplied, oneOffs, withdrawals, events, plan
    }

    private static func isOldestFirst(_ events: [WithdrawingEvent]) -> Bool {
        events.indices.dropFirst().allSatisfy { events[$0 - 1].at <= events[$0].at }
    }

    /// `events` by their instant, those of one instant in the order given.
    private static func oldestFirst(_ events: [WithdrawingEvent]) -> [WithdrawingEvent] {
        events.enumerated().sorted { ($0.element.at, $0.offset) < ($1.element.at, $1.offset) }.map(\.element)
    }

    /// Reads a state written by this build or an earlier one (which kept only `version` and
    /// `owned`, then no withdrawals, then no plan). A plan kept that this build cannot read
    /// back is dropped: the next pull asks for the whole plan.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        version = try container.decodeIfPresent(Int.self, forKey: .version)
        owned = try container.decode(Set<RequestID>.self, forKey: .owned)
        lastApplied = try container.decodeIfPresent(Int.self, forKey: .lastApplied) ?? version
        oneOffs = Self.keyed(try container.decodeIfPresent([String: Instant].self, forKey: .oneOffs))
        withdrawals = Self.keyed(try container.decodeIfPresent([String: [Withdrawal]].self, forKey: .withdrawals))
        events = Self.oldestFirst(try container.decodeIfPresent([WithdrawingEvent].self, forKey: .events) ?? [])
        plan = (try? container.decodeIfPresent([PlanWire.Request].self, forKey: .plan)).flatMap(ServerPlan.entries)
    }

    /// Writes the identifiers as the text keys of a `[String: _]`, which an encoder's
    /// `keyEncodingStrategy` leaves alone (it would convert the keys of a `[RequestID: _]`), so
    /// an app's own encoder settings never change what it reads back.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(version, forKey: .version)
        try container.encode(owned, forKey: .owned)
        try container.encodeIfPresent(lastApplied, forKey: .lastApplied)
        try container.encode(Self.texted(oneOffs), forKey: .oneOffs)
        try container.encode(Self.texted(withdrawals), forKey: .withdrawals)
        try container.encode(events, forKey: .events)
        try container.encodeIfPresent(plan.map(ServerPlan.wire), forKey: .plan)
    }

    private static func keyed<Value>(_ text: [String: Value]?) -> [RequestID: Value] {
        Dictionary(uniqueKeysWithValues: (text ?? [:]).map { (RequestID($0), $1) })
    }

    private static func texted<Value>(_ keyed: [RequestID: Value]) -> [String: Value] {
        Dictionary(uniqueKeysWithValues: keyed.map { ($0.rawValue, $1) })
    }
}

/// What applying an answer did.
public enum PlanSyncOutcome: Equatable, Sendable {
    /// The device already held the plan: nothing done.
    case unchanged
    /// The plan was applied: the operations made, the requests the center refused (by
    /// identifier), which the next pull tries again, and the plan's requests left out because
    /// the user already did what withdraws them (`PlanSync.withdraw`), soonest first.
    case applied(PlanReconciliation, refused: [RequestID: NotificationCenterError], withdrawn: [RequestID])
    /// The answer is older than the plan the device holds and was overtaken: another answer was
    /// applied after it was asked for (or it came without its `PlanPull`). It never replaces it.
    case refusedOlder(held: Int, offered: Int)
    /// The answer is a delta of a version the device does not hold in full, or not the one its
    /// pull named (another answer was applied after it left), or one whose merge is not the
    /// plan its digest names (then the next pull asks for the whole plan): nothing changed.
    /// Pull again.
    case refusedDelta(held: Int?, since: Int)
}

/// A pull on its way: the version the device held when it asked (`PlanSync.startPull`). Handed
/// back with the answer, it tells a slow answer overtaken by a newer one (the device's plan
/// changed after the request left) from a server that went back (restored from a backup, its
/// data migrated), whose answer to a request made while holding the current plan is what it
/// holds now.
public struct PlanPull: Hashable, Sendable {
    /// The version held in full when the request left; nil when none was.
    public let heldVersion: Int?
    /// The version of the last plan applied when the request left (`PlanSyncState.lastApplied`).
    public let lastApplied: Int?
    /// The version a delta may change (`?since=`): the one held in full, when the kit keeps its
    /// plan (`PlanSyncState.plan`); nil asks for the whole plan.
    public let since: Int?

    public init(heldVersion: Int?, lastApplied: Int?, since: Int? = nil) {
        self.heldVersion = heldVersion
        self.lastApplied = lastApplied
        self.since = since
    }

    /// The request's `If-None-Match` header (`W/"7"`), nil when the device held no plan in full.
    public var ifNoneMatch: String? { heldVersion.map { "W/\"\($0)\"" } }
}

/// Keeps the device's pending notifications equal to the server's plan, through the
/// `LocalNotificationCenter` port: pull with `ifNoneMatch`, hand the answer to `apply`. Signals
/// that the plan changed (an event's answer, the background sync push) say whether to pull
/// (`needsPull`). Every rule of what is touched is `PlanReconciliation`'s.
public struct PlanSync: Sendable {
    public private(set) var state: PlanSyncState
    /// At most this many requests pending on the device (the platform's limit).
    public var pendingLimit: Int
    /// The rules of the plan's zone, kept from one delta to the next (`merging`).
    var zoneRules: ZoneRules?

    public init(state: PlanSyncState = PlanSyncState(), pendingLimit: Int = 64) {
        self.state = state
        self.pendingLimit = pendingLimit
    }

    /// The `If-None-Match` header of the next pull (`W/"7"`), nil when the device holds no plan
    /// in full.
    public var ifNoneMatch: String? { state.version.map { "W/\"\($0)\"" } }

    /// Whether the plan's version `signalled` (an event's `planVersion`, a sync push's) differs
    /// from the one the device holds in full, so a pull would change something. Any difference
    /// counts: an older signal (a push overtaken by an event's answer) costs a 304 at most, and a
    /// server restored from a backup answers versions it gave before.
    public func needsPull(signalled version: Int) -> Bool {
        guard let held = state.version else { return true }
        return version != held
    }

    /// Starts a pull: send its `ifNoneMatch`, and hand it back to `apply` with the answer.
    public func startPull() -> PlanPull {
        PlanPull(
            heldVersion: state.version, lastApplied: state.lastApplied,
            since: state.plan == nil ? nil : state.version)
    }

    /// Applies a pull's answer to `center` at `now`: registers the categories the plan's actions
    /// need, then removes and adds what `PlanReconciliation` says. A plan older than the last one
    /// applied replaces it only when it answers `pull` and nothing was applied since that pull
    /// left (the server went back); otherwise it was overtaken and is refused. A delta
    /// (`ServerPlan.since`) is first merged into the plan the kit keeps (`PlanSyncState.plan`),
    /// and applied as that whole plan; one of a version not held in full, or not the one `pull`
    /// named, is refused (`refusedDelta`). The version is taken only when
    /// the device then holds the whole plan: a request the center refused (permission denied, a
    /// malformed trigger), one left out for want of a slot, or one this build cannot read leaves
    /// it untaken, so the next pull gets the whole plan again. A refused replacement leaves the
    /// earlier request pending, still the kit's to replace or remove.
    public mutating func apply<Center: LocalNotificationCenter>(
        _ answer: PlanAnswer, to center: inout Center, at now: Instant, answering pull: PlanPull? = nil
    ) -> PlanSyncOutcome {
        guard case .plan(var plan) = answer else { return .unchanged }
        if let last = state.lastApplied, plan.version < last, pull?.lastApplied != last {
            return .refusedOlder(held: last, offered: plan.version)
        }
        let isDelta = plan.since != nil
        if let since = plan.since {
            // Another pull that named the same version was answered first: held already, when
            // it is the same plan (another process may hold the version's other copy).
            if let held = state.version, held == plan.version {
                if plan.digest == nil || state.plan.map(Self.digest) == plan.digest { return .unchanged }
                forgetVersion()
                return .refusedDelta(held: held, since: since)
            }
            guard let held = state.plan, state.version == since, pull.map({ $0.since == since }) ?? true else {
                return .refusedDelta(held: state.version, since: since)
            }
            let merged = merging(plan, into: held, at: now)
            // Made against another copy of `since` than the one held (another server process
            // answered it): take nothing, and ask for the whole plan next.
            if let digest = plan.digest, merged.unreadable.isEmpty, merged.unreadableWithdrawals.isEmpty,
                merged.requestsDigest != digest
            {
                state.plan = nil
                return .refusedDelta(held: state.version, since: since)
            }
            plan = merged
        }
        Self.registerCategories(in: &center)
        forgetEvents(before: now - Self.eventRetentionSeconds)
        // Read in place; the plan's array is shared, not copied, when an event kept withdraws
        // none of it.
        var withdrawn: [RequestID] = []
        for index in plan.requests.indices where isWithdrawn(plan.requests[index].withdrawnBy) {
            withdrawn.append(plan.requests[index].request.identifier)
        }
        let entries = withdrawn.isEmpty ? plan.requests : plan.requests.filter { !isWithdrawn($0.withdrawnBy) }
        let pending = center.pendingNotificationRequests
        let pendingIDs = Set(pending.lazy.map(\.request.identifier))
        // What fired: a one-off placed for an instant now past and pending no more, and what the
        // delivered list still shows.
        var shown = Set(center.deliveredNotifications.lazy.map(\.request.identifier))
        for (id, at) in state.oneOffs where at <= now && !pendingIDs.contains(id) { shown.insert(id) }
        let reconciliation = PlanReconciliation(
            entries: entries, pending: pending, owned: state.owned, shown: shown, pendingLimit: pendingLimit)
        if !reconciliation.remove.isEmpty {
            center.removePendingNotificationRequests(withIdentifiers: reconciliation.remove)
        }
        var refused: [RequestID: NotificationCenterError] = [:]
        for request in reconciliation.add {
            do throws(NotificationCenterError) { try center.add(request, at: now) } catch {
                refused[request.identifier] = error
            }
        }
        state.owned = reconciliation.owned
        if !refused.isEmpty {
            let pendingNow = Set(center.pendingNotificationRequests.map(\.request.identifier))
            state.owned = state.owned.filter { refused[$0] == nil || pendingNow.contains($0) }
        }
        let whole = refused.isEmpty && reconciliation.leftOut.isEmpty && plan.unreadable.isEmpty
        state.version = whole ? plan.version : nil
        // Kept to merge deltas into only when it is the plan its digest names (a withdrawal
        // this build cannot read leaves it unchecked): else every delta would miss it.
        // A merged delta came to its digest above (or holds what this build cannot read).
        let checked =
            plan.unreadableWithdrawals.isEmpty && (isDelta || plan.digest.map { $0 == plan.requestsDigest } ?? true)
        state.plan = whole && checked ? plan.requests : nil
        state.lastApplied = plan.version
        // Kept: what fired (two days), and the one-offs the kit now holds, at their instants.
        let forgetBefore = now - 2 * 86_400
        state.oneOffs = state.oneOffs.filter { id, at in shown.contains(id) && at > forgetBefore }
        state.oneOffs.reserveCapacity(state.oneOffs.count + entries.count)
        var withdrawals: [RequestID: [Withdrawal]] = [:]
        for index in entries.indices {
            let id = entries[index].request.identifier
            guard state.owned.contains(id) else { continue }
            if !entries[index].request.trigger.repeats, !shown.contains(id) {
                state.oneOffs[id] = entries[index].nextFireAt
            }
            if !entries[index].withdrawnBy.isEmpty {
                if withdrawals.isEmpty { withdrawals.reserveCapacity(entries.count) }
                withdrawals[id] = entries[index].withdrawnBy
            }
        }
        state.withdrawals = withdrawals
        if reconciliation.isEmpty && refused.isEmpty && withdrawn.isEmpty { return .unchanged }
        return .applied(reconciliation, refused: refused, withdrawn: withdrawn)
    }

    /// How long the kit keeps an event that withdraws requests: as long as the server takes
    /// an event's `at` (7 days). An event older than that never reaches the server, which then
    /// withdraws nothing for it.
    public static let eventRetentionSeconds: Int64 = EventQueue.maximumAgeSeconds
    /// At most this many such events are kept, the newest.
    public static let eventLimit = 256

    /// The user did something at `event.at` that may make planned requests moot: withdraws at
    /// once, from `center`, every request the kit placed that it withdraws
    /// (`ServerPlan.Entry.withdrawnBy`), and keeps the event, so a plan the server made before
    /// it heard of it does not place them again. Call it as the app queues the event
    /// (`EventQueue.enqueue`), online or not. Returns the identifiers withdrawn, sorted. The
    /// plan's version stays held: the phone holds what the plan wants it to hold, and the server
    /// names a new version once it hears of the event.
    @discardableResult
    public mutating func withdraw<Center: LocalNotificationCenter>(
        after event: WithdrawingEvent, from center: inout Center
    ) -> [RequestID] {
        let moot = withdraw(after: event)
        if !moot.isEmpty { center.removePendingNotificationRequests(withIdentifiers: moot) }
        return moot
    }

    /// `withdraw(after:from:)` without a center: keeps the event and returns the identifiers
    /// to remove from the center's pending requests, which the kit no longer holds.
    public mutating func withdraw(after event: WithdrawingEvent) -> [RequestID] {
        // After every event kept at or before its instant: the order a stable sort would give.
        let place = state.events.lastIndex { $0.at <= event.at }.map { $0 + 1 } ?? 0
        state.events.insert(event, at: place)
        forgetEvents(before: event.at - Self.eventRetentionSeconds)
        var moot: [RequestID] = []
        for (id, withdrawals) in state.withdrawals
        where state.owned.contains(id) && withdrawals.contains(where: { $0.isMet(by: event) }) {
            moot.append(id)
        }
        moot.sort()
        forgetWithdrawn(moot)
        return moot
    }

    /// The kit no longer holds `identifiers`: withdrawn, they are no longer its to remove.
    mutating func forgetWithdrawn(_ identifiers: [RequestID]) {
        for id in identifiers {
            state.withdrawals[id] = nil
            state.owned.remove(id)
            state.oneOffs[id] = nil
        }
    }

    /// Whether an event kept meets any of `withdrawals`.
    private func isWithdrawn(_ withdrawals: [Withdrawal]) -> Bool {
        !withdrawals.isEmpty && state.events.contains { event in withdrawals.contains { $0.isMet(by: event) } }
    }

    /// Events are kept in time order, so those before `cutoff` are a prefix.
    private mutating func forgetEvents(before cutoff: Instant) {
        let old = state.events.firstIndex { $0.at >= cutoff } ?? state.events.count
        if old > 0 { state.events.removeFirst(old) }
        if state.events.count > Self.eventLimit { state.events.removeFirst(state.events.count - Self.eventLimit) }
    }

    /// The digest of `entries` (`PlanDigest`).
    static func digest(_ entries: [ServerPlan.Entry]) -> String {
        PlanDigest.of(
            entries.lazy.map { PlanDigest.hash($0.request, nextFireAt: $0.nextFireAt, withdrawnBy: $0.withdrawnBy) })
    }

    /// Forgets the version held: the platform refused a change after the plan was made (an
    /// asynchronous center, `RecordingCenter`), so the next pull brings the whole plan again.
    mutating func forgetVersion() {
        state.version = nil
        state.plan = nil
    }

    /// The categories of every kind, as the server's copy names them (`NotificationCategory.all`),
    /// registered when the center's differ.
    static func registerCategories<Center: LocalNotificationCenter>(in center: inout Center) {
        let wanted = NotificationCategory.all
        // What the kit registered last time, as it registered it: nothing to compare by id.
        if center.notificationCategories == wanted { return }
        let byID = { (categories: [NotificationCategory]) in
            Dictionary(categories.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        }
        if byID(center.notificationCategories) != byID(wanted) { center.setNotificationCategories(wanted) }
    }
}
