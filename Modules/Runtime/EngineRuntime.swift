public import Content
public import Engagement
import Foundation
public import Models
import Scheduling
public import Storage

/// Sends one outbox row on its channel (an alert, a badge sync, a Live Activity push) and
/// reports how it went; the runtime decides what follows (`OutboxSteps.afterSend`).
///
/// Contract: `perform` may be called more than once for the same row (a crash between the
/// send and the store's completion re-sends it), always with the same `row.key`; a transport
/// hands the key downstream (`apns-id`) so the receiver can drop the repeat. It throws when the
/// row was not performed and should be tried again as it stands (the store failed, or a
/// worker's claim no longer allows the send); the row then stays pending. It is called for
/// several rows at once (`EngineRuntime.maxConcurrentSends`), never for one row twice at once.
public protocol ChannelTransport: Sendable {
    func perform(_ row: OutboxRow) async throws -> SendReport
}

/// Why the runtime refused an input. Nothing of a refused input was committed.
public enum RuntimeError: Error, Hashable, Sendable, CustomStringConvertible {
    case unknownUser(UserID)
    case unknownTimeZone(String)
    case store(StoreError)
    case snapshot(userID: UserID, SnapshotError)
    /// A value of the request is refused (`field` names it); nothing was committed.
    case invalidInput(field: String, problem: String)
    /// The request conflicts with what another user holds (a push token their device
    /// registered); nothing was committed.
    case heldByAnotherUser(String)

    public var description: String {
        switch self {
        case .unknownUser(let id): "unknown user \"\(id)\""
        case .unknownTimeZone(let zone): "unknown time zone \"\(zone)\""
        case .store(let error): "\(error)"
        case .snapshot(let userID, let error): "user \"\(userID)\": \(error)"
        case .invalidInput(let field, let problem): "\(field): \(problem)"
        case .heldByAnotherUser(let what): "\(what) is held by another user"
        }
    }
}

/// The live shell of the engine: applies each input to the user's engine on the runtime's
/// clock and commits, in one transaction, the new snapshot, the step's history and the outbox
/// rows its effects make (`OutboxPlan`). `dispatchDue` performs due rows and completes them.
///
/// The store is the truth: a call returns only after its step was committed, and a runtime
/// started over the same store continues exactly where the last one committed. Concurrent
/// inputs are committed together (`GroupCommit`): the engine works on the next input while the
/// store writes the previous ones. The cache holds each user's newest computed engine; when a
/// commit fails, the engines built on it are dropped and the next input loads the committed one.
public actor EngineRuntime {
    let store: any RuntimeStore
    /// The runtime's time: every step is taken at its `now()`.
    public nonisolated let clock: any RuntimeClock
    let content: ContentGenerator
    let configuration: EngineConfiguration
    /// When badge and inbox syncs go out (at most two background pushes an hour by default).
    public nonisolated let silentPushes: SilentPushPlan
    /// How long a social event's id is remembered after it was taken in: a repeat within it is
    /// not handed to the engine again (`SocialIntake`).
    public nonisolated let socialIDRetentionSeconds: Int64
    /// Writes copy for the engine's `generateContent` effects (`EngineRuntime+Coach`); without
    /// one, notifications keep the template copy they were planned with.
    nonisolated let coach: (any CoachEngine)?
    nonisolated let coachCalls = CoachCalls()
    nonisolated let group: GroupCommit
    /// One write at a time per user's profile, and per idempotency key (`EngineRuntime+Users`).
    nonisolated let writeGate = KeyedGate()
    private var engines: [UserID: CachedEngine] = [:]
    /// The plans each user was answered lately (`ServedPlans`), for delta answers; forgotten
    /// with the cache (a delta's base is then answered in full).
    var servedPlans: [UserID: ServedPlans] = [:]
    private var zones: [String: ZoneRules] = [:]
    /// Numbers steps and engine loads in the order they happen (`GroupCommit.Entry`).
    var sequence: UInt64 = 0

    struct CachedEngine {
        var engine: UserEngine
        /// The sequence number at which it was loaded from the store.
        var loadedAt: UInt64
    }

    /// Told of every commit's trace records once committed.
    public nonisolated let committedTrace = TraceObserverSlot()

    public init(
        store: any RuntimeStore, clock: any RuntimeClock, content: ContentGenerator,
        configuration: EngineConfiguration = .init(), silentPushes: SilentPushPlan = .init(),
        coach: (any CoachEngine)? = nil, socialIDRetentionSeconds: Int64 = SocialEventRecord.defaultRetentionSeconds
    ) {
        self.coach = coach
        self.socialIDRetentionSeconds = socialIDRetentionSeconds
        self.store = store
        self.clock = clock
        self.content = content
        self.configuration = configuration
        self.silentPushes = silentPushes
        group = GroupCommit(store: store)
    }

    /// Creates the user (their engine starts as an app launch would start it) or applies a
    /// change of preferences and time zone to an existing one. Returns whether it was created.
    @discardableResult
    public func putUser(_ profile: UserProfile) async throws(RuntimeError) -> Bool {
        try await putProfile(profile, versions: nil)
    }

    /// `putUser(_:)`, committing `versions` (the field groups written) with the engine.
    func putProfile(_ profile: UserProfile, versions: UserVersions?) async throws(RuntimeError) -> Bool {
        let zone = try zoneRules(profile.timeZone)
        if let cached = try loadEngine(profile.id), cached.engine.profile.timeZone != profile.timeZone {
            // Moving rows reads the user's pending rows from the store: let earlier steps land.
            await group.settled(through: sequence)
        }
        if var engine = try loadEngine(profile.id)?.engine {
            var effects: [Effect] = []
            let now = clock.now()
            // Written by the backend: the phone hears of it with the next sync.
            let backend = PhoneHearing.of(.backend, silentPushes: silentPushes, at: now)
            if engine.profile.timeZone != profile.timeZone {
                effects += engine.handle(.timeZoneChanged(zone), at: now, phone: backend)
            }
            if engine.profile.preferences != profile.preferences {
                effects += engine.handle(.preferencesChanged(profile.preferences), at: now, phone: backend)
            }
            if engine.profile != profile {
                effects += engine.handle(.profileChanged(profile), at: now, phone: backend)
            }
            try await commit(
                engine, input: nil, source: .backend, effects: effects, profile: profile, at: now,
                userVersions: versions)
            return false
        }
        let now = clock.now()
        var engine = UserEngine(
            profile: profile, zone: zone, now: now, configuration: configuration,
            contentSeed: Self.contentSeed(profile.id), content: content)
        let effects = engine.handle(.appLaunched, at: now)
        try await commit(
            engine, input: .appLaunched, source: .backend, effects: effects, profile: profile, at: now,
            userVersions: versions)
        return true
    }

    /// Applies `input` to the user's engine at the clock's time; returns the engine's effects and
    /// the local plan's revision after them.
    /// `occurredAt` is when an activity happened, when the app reports it late: the history
    /// records the activity then; the engine takes the input now (its time never goes back).
    /// An input from anyone but the user's phone that changes the local plan signals it
    /// (`PlanSignal`). A change of zone (`timeZoneChanged`, the phone's report of where it is)
    /// also stamps the user's `timeZone` field group with the clock, as `putUser` would.
    @discardableResult
    public func apply(
        _ input: EngineInput, to userID: UserID, occurredAt: Instant? = nil, from source: InputSource = .backend
    ) async throws(RuntimeError) -> AppliedInput {
        try await applyStep(input, to: userID, occurredAt: occurredAt, from: source)
    }

    /// `apply(_:to:occurredAt:from:)`; `idempotency` makes the step's idempotency record from its effects, the revision and the
    /// time, committed in the step's transaction.
    func applyStep(
        _ input: EngineInput, to userID: UserID, occurredAt: Instant? = nil, from source: InputSource,
        idempotency: (_ effects: [Effect], _ planRevision: Int, _ now: Instant) -> IdempotencyRecord? = { _, _, _ in
            nil
        }
    ) async throws(RuntimeError) -> AppliedInput {
        // A social event's id is looked up, and its gate held, before the engine is loaded: the
        // engine read after the wait is the newest.
        let social = try await beginSocialIntake(input, of: userID)
        defer { if let social { writeGate.release(social.gateKey) } }
        // A change of zone is a write of the user's `timeZone` group: one at a time with `putUser`.
        let userGate: String? = if case .timeZoneChanged = input { "user\u{1F}" + userID.rawValue } else { nil }
        if let userGate { await writeGate.acquire(userGate) }
        defer { if let userGate { writeGate.release(userGate) } }
        guard var engine = try loadEngine(userID)?.engine else { throw .unknownUser(userID) }
        let now = clock.now()
        let before = engine.profile
        let phone = PhoneHearing.of(source, silentPushes: silentPushes, at: now)
        let effects = social?.handle(&engine, at: now, phone: phone) ?? engine.handle(input, at: now, phone: phone)
        // Stamped with the clock, as a write without `updatedAt`: a backend write stamped earlier
        // is then stale for the group (`UserMerge`).
        let versions: UserVersions? =
            engine.profile.timeZone != before.timeZone
            ? UserVersions([.timeZone: now.secondsSinceEpoch * 1_000]) : nil
        try await commit(
            engine, input: input, source: source, effects: effects,
            profile: engine.profile != before ? engine.profile : nil, at: now, occurredAt: occurredAt,
            userVersions: versions, idempotency: idempotency(effects, engine.localPlanRevision, now),
            socialEvent: social?.record(userID: userID, at: now, retentionSeconds: socialIDRetentionSeconds))
        return AppliedInput(effects: effects, localPlanRevision: engine.localPlanRevision)
    }

    /// The user's newest engine, or nil for an unknown user: the last committed one, or one whose
    /// step is being committed right now (its caller has had no answer yet).
    public func engine(of userID: UserID) throws(RuntimeError) -> UserEngine? { try loadEngine(userID)?.engine }

    // MARK: - Plumbing

    /// Whether the user has more than one device registered (the signal then reaches the others).
    private func hasSeveralDevices(_ userID: UserID) throws(RuntimeError) -> Bool {
        do { return try store.devices(userID: userID).count > 1 } catch { throw .store(error) }
    }

    /// What an early sync's budget reads of `userID`'s syncs (`SilentPushPlan.earlyRows`): their
    /// pending rows with those of their steps not yet written, and which of `keys` were completed.
    private func syncHistory(of userID: UserID, keys: [OutboxKey]) throws(RuntimeError) -> SilentPushPlan.SyncHistory {
        do throws(StoreError) {
            return SilentPushPlan.SyncHistory(
                pending: try store.pendingOutbox(userID: userID) + group.unwrittenRows(of: userID),
                completed: try store.completedOutboxKeys(among: keys))
        } catch { throw .store(error) }
    }

    /// Asks for a badge sync of `userID`'s devices after a change of their inbox's counts.
    func requestInboxSync(of userID: UserID) async throws(RuntimeError) {
        try await commitRows([silentPushes.row(for: userID, changedAt: clock.now())], for: userID)
    }

    /// Adds rows for a user outside an input (the engine's state is unchanged).
    func commitRows(_ rows: [OutboxRow], for userID: UserID) async throws(RuntimeError) {
        guard let engine = try loadEngine(userID)?.engine else { return }
        try await commit(RuntimeCommit(userID: userID, snapshot: engine.snapshot(), outbox: rows), engine: engine)
    }

    private func commit(
        _ engine: UserEngine, input: EngineInput?, source: InputSource, effects: [Effect], profile: UserProfile?,
        at now: Instant, occurredAt: Instant? = nil, userVersions: UserVersions? = nil,
        idempotency: IdempotencyRecord? = nil, socialEvent: SocialEventRecord? = nil
    ) async throws(RuntimeError) {
        var batch = StepRecords.batch(for: input, effects: effects, engine: engine, at: now, occurredAt: occurredAt)
        if let profile { batch.profiles.append(profile) }
        // The cached engine is still the state before this step (`commit` replaces it).
        let previous = engines[engine.profile.id]?.engine
        let outbox = try StepOutbox.rows(
            for: effects, engine: engine, revisionBefore: previous?.localPlanRevision,
            signals: { () throws(RuntimeError) in
                try PlanSignal.asksForSync(
                    source: source,
                    otherDevices: { () throws(RuntimeError) in try hasSeveralDevices(engine.profile.id) })
            },
            phone: PhoneHearing.of(source, silentPushes: silentPushes, at: now),
            syncHistory: { (keys) throws(RuntimeError) in try syncHistory(of: engine.profile.id, keys: keys) },
            zoneChanged: previous.map { $0.zone.identifier != engine.zone.identifier } ?? false,
            pending: { () throws(RuntimeError) in
                do throws(StoreError) { return try store.pendingOutbox(userID: engine.profile.id) } catch {
                    throw .store(error)
                }
            }, silentPushes: silentPushes, at: now)
        let trace = StepRecords.traceRecords(for: input, effects: effects, userID: engine.profile.id)
        try await commit(
            RuntimeCommit(
                userID: engine.profile.id, snapshot: engine.snapshot(), batch: batch,
                cancelledRequestIDs: outbox.cancelled, outbox: outbox.rows, userVersions: userVersions,
                idempotency: idempotency, trace: trace, socialEvent: socialEvent),
            engine: engine)
        committedTrace.report(trace)
        askCoach(for: effects, of: engine.profile.id)
    }

    /// Caches `engine` as the user's newest and waits for `commit` to be written. Runs without a
    /// suspension up to the queueing, so the user's steps are queued in the order they happened.
    func commit(_ commit: RuntimeCommit, engine: UserEngine) async throws(RuntimeError) {
        let userID = commit.userID
        let loadedAt = engines[userID]?.loadedAt ?? sequence
        sequence += 1
        let step = sequence
        engines[userID] = CachedEngine(engine: engine, loadedAt: loadedAt)
        do {
            try await group.commit(GroupCommit.Entry(commit: commit, sequence: step, basedOn: loadedAt))
        } catch {
            // The cached engine carries this step unless it was loaded again since.
            if let cached = engines[userID], cached.loadedAt < step { engines[userID] = nil }
            throw .store(error)
        }
    }

    func loadEngine(_ userID: UserID) throws(RuntimeError) -> CachedEngine? {
        if let cached = engines[userID] { return cached }
        guard let engine = try storedEngine(userID) else { return nil }
        sequence += 1
        let cached = CachedEngine(engine: engine, loadedAt: sequence)
        engines[userID] = cached
        return cached
    }

    /// The user's engine as the store holds it (the last committed step, whichever process
    /// committed it), not cached; nil for an unknown user.
    private func storedEngine(_ userID: UserID) throws(RuntimeError) -> UserEngine? {
        let profile: UserProfile?
        let bytes: [UInt8]?
        do {
            profile = try store.profile(id: userID)
            bytes = try store.snapshot(userID: userID)
        } catch {
            throw .store(error)
        }
        guard let profile, let bytes else { return nil }
        let zone = try zoneRules(profile.timeZone)
        do {
            return try UserEngine(
                restoring: bytes, profile: profile, zone: zone, configuration: configuration, content: content)
        } catch {
            throw .snapshot(userID: userID, error)
        }
    }

    func zoneRules(_ identifier: String) throws(RuntimeError) -> ZoneRules {
        if let zone = zones[identifier] { return zone }
        guard let zone = ZoneRules(identifier: identifier) else { throw .unknownTimeZone(identifier) }
        zones[identifier] = zone
        return zone
    }

    /// The seed of a user's template choices, from the id: the same user gets the same variety
    /// whichever process runs them.
    public static func contentSeed(_ userID: UserID) -> UInt64 { FNV1a.hash(userID.rawValue) }

    /// Forgets the cached engines: the next input restores each from the store (what a
    /// restarted process does).
    public func evictCache() async {
        await group.settled(through: sequence)
        engines.removeAll()
        servedPlans.removeAll()
    }
}
