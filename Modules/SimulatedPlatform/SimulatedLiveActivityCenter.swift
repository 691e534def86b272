public import LiveActivity
public import Models

/// A change the system made to a Live Activity as time passed: stale content, the 8 h end, or
/// removal from the Lock Screen (also after an end by the app, as its dismissal policy says).
public struct LiveActivityTransition: Hashable, Sendable {
    public enum Change: String, Hashable, Sendable {
        /// The content's stale date passed.
        case becameStale
        /// The activity reached its 8 h limit and the system ended it.
        case endedBySystem
        /// The activity left the Lock Screen.
        case removed
    }

    public var id: String
    public var change: Change
    /// When the change took effect (not when `advance` noticed it).
    public var at: Instant

    public init(id: String, change: Change, at: Instant) {
        self.id = id
        self.change = change
        self.at = at
    }
}

/// What became of an ActivityKit push update.
public enum PushUpdateResult: String, Hashable, Sendable {
    /// The activity shows the new content.
    case applied
    /// The activity's hourly budget for priority-10 updates is used up; the update was dropped.
    case throttled
}

/// ActivityKit in virtual time, enforcing the real framework's limits and errors: the
/// simulator's and the tests' stand-in for `Activity` and `ActivityAuthorizationInfo`.
///
/// It follows the `LiveActivityCenter` contract, and in addition:
/// - `advance(to:)` applies what the system does as time passes: content going stale, the 8 h
///   end (dismissal `.default`, so removal 12 h after the start) and removal from the Lock
///   Screen. Every other call first catches up to its own time the same way. `advance` returns
///   every transition since its previous call (also those other calls caught up on), ordered by
///   the instant they took effect, then by start order. Content whose stale date has already
///   passed when it is set makes the activity stale at once, without a transition.
/// - Limits Apple does not publish are configuration, with community figures as defaults:
///   `maxConcurrentActivities` (about 5), `pushUpdatesPerHour` (about 15) and the device-wide
///   `deviceMaximum` (none by default; `otherAppsActivityCount` stands in for other apps).
/// - Push updates (`receivePushUpdate`) of priority 10 draw on a rolling 60-minute budget per
///   activity; over it they are dropped (`throttled`) as APNs does, silently for the app.
///   Priority-5 updates are applied at once and never counted (a simplification: the real
///   system may deliver them later).
/// - Push tokens arrive `pushTokenDelaySeconds` after the start and change on
///   `changePushToken(id:at:)`; they are derived from the identifier, so runs are reproducible.
public struct SimulatedLiveActivityCenter: LiveActivityCenter, Sendable, Equatable {
    /// Limits without a published number.
    public struct Configuration: Codable, Hashable, Sendable {
        /// Concurrent (not yet ended) activities per app. Apple publishes no number; the
        /// community reports about 5 (unconfirmed).
        public var maxConcurrentActivities: Int
        /// Running activities on the device from all apps; nil for no limit.
        public var deviceMaximum: Int?
        /// Priority-10 push updates per activity in any 60 minutes; about 15 (community).
        public var pushUpdatesPerHour: Int
        /// Seconds from the start until the activity's push token arrives.
        public var pushTokenDelaySeconds: Int64

        public init(
            maxConcurrentActivities: Int = 5, deviceMaximum: Int? = nil, pushUpdatesPerHour: Int = 15,
            pushTokenDelaySeconds: Int64 = 1
        ) {
            self.maxConcurrentActivities = maxConcurrentActivities
            self.deviceMaximum = deviceMaximum
            self.pushUpdatesPerHour = pushUpdatesPerHour
            self.pushTokenDelaySeconds = pushTokenDelaySeconds
        }
    }

    private struct Record: Hashable, Sendable {
        var snapshot: LiveActivitySnapshot
        var sequence: Int
        /// When the current content was set; content cannot be stale before it existed.
        var contentSetAt: Instant
        var tokenArrivesAt: Instant?
        var tokenGeneration = 0
        /// Instants of applied priority-10 push updates within the last hour.
        var recentHighPriorityPushes: [Instant] = []
    }

    public let configuration: Configuration
    /// Prefix of activity identifiers (one center per device; a per-user prefix keeps them
    /// distinct in a simulation's logs).
    public let idPrefix: String

    /// The user's switch for the app's Live Activities; off makes `start` throw `denied`.
    /// Activities already running are left alone.
    public var areActivitiesEnabled: Bool = true
    /// False on devices without Live Activities; `start` throws `unsupported`.
    public var isSupported: Bool = true
    /// Starting requires the app in the foreground; `start` throws `visibility` otherwise.
    public var isAppInForeground: Bool = true
    /// Running activities of other apps, counted against `deviceMaximum`.
    public var otherAppsActivityCount: Int = 0

    /// The latest time seen; nil before the first call.
    public private(set) var currentTime: Instant?
    /// Activities started since creation.
    public private(set) var startedCount = 0
    /// Activities the system ended at the 8 h limit, since creation.
    public private(set) var systemEndedCount = 0
    /// Push updates dropped for the hourly budget, since creation.
    public private(set) var throttledPushCount = 0

    private var records: [Record] = []
    /// Transitions since the last `advance(to:)`, including those other calls caught up on.
    private var unreported: [LiveActivityTransition] = []
    /// Bound on `unreported` for callers that never call `advance(to:)`; the oldest go first.
    static let unreportedLimit = 1_024

    public init(configuration: Configuration = Configuration(), idPrefix: String = "activity") {
        self.configuration = configuration
        self.idPrefix = idPrefix
    }

    public var activities: [LiveActivitySnapshot] { records.map(\.snapshot) }

    /// The activity `id`, while the center lists it.
    public func activity(id: String) -> LiveActivitySnapshot? { records.first { $0.snapshot.id == id }?.snapshot }

    /// Activities that have not ended (active or stale): the ones the concurrency limits count.
    public var runningCount: Int { records.count { $0.snapshot.endedAt == nil } }

    // MARK: - LiveActivityCenter

    public mutating func start(
        _ attributes: LiveActivityAttributes, content: LiveActivityContent, at now: Instant
    ) throws(LiveActivityError) -> String {
        let now = catchUp(to: now)
        guard isSupported else { throw .unsupported }
        guard areActivitiesEnabled else { throw .denied }
        guard isAppInForeground else { throw .visibility }
        guard attributes.kind == content.state.kind else { throw .mismatchedContent }
        let bytes = LiveActivityLimits.payloadBytes(attributes: attributes, state: content.state)
        guard bytes <= LiveActivityLimits.maxPayloadBytes else { throw .attributesTooLarge(bytes: bytes) }
        let running = runningCount
        if let deviceMaximum = configuration.deviceMaximum, otherAppsActivityCount + running >= deviceMaximum {
            throw .globalMaximumExceeded
        }
        guard running < configuration.maxConcurrentActivities else { throw .targetMaximumExceeded }

        startedCount += 1
        let id = "\(idPrefix)-\(startedCount)"
        var record = Record(
            snapshot: LiveActivitySnapshot(
                id: id, attributes: attributes, content: content, state: .active, startedAt: now, payloadBytes: bytes),
            sequence: startedCount, contentSetAt: now, tokenArrivesAt: now + configuration.pushTokenDelaySeconds)
        Self.markStaleIfDue(&record, at: now)
        records.append(record)
        refresh()
        return id
    }

    public mutating func update(id: String, content: LiveActivityContent, at now: Instant) throws(LiveActivityError) {
        let now = catchUp(to: now)
        let index = try runningIndex(of: id)
        try setContent(content, of: index, at: now)
    }

    public mutating func end(
        id: String, content: LiveActivityContent?, dismissal: DismissalPolicy, at now: Instant
    ) throws(LiveActivityError) {
        let now = catchUp(to: now)
        let index = try runningIndex(of: id)
        if let content { try setContent(content, of: index, at: now) }
        records[index].snapshot.state = .ended
        records[index].snapshot.endedAt = now
        records[index].snapshot.removalAt = dismissal.removalInstant(endedAt: now)
        refresh()
    }

    // MARK: - The system

    /// Applies what the system does by `now`: stale dates, the 8 h end, removals and push
    /// tokens arriving. Returns the transitions since the previous call, ordered by the instant
    /// they took effect.
    @discardableResult
    public mutating func advance(to now: Instant) -> [LiveActivityTransition] {
        catchUp(to: now)
        defer { unreported.removeAll() }
        return unreported
    }

    /// Delivers an ActivityKit push update from the app's server (APNs `liveactivity` push).
    ///
    /// Throws like `update` (`notFound`, `ended`, `mismatchedContent`, `attributesTooLarge`).
    /// A priority-10 update over the activity's hourly budget is dropped and returns `throttled`.
    public mutating func receivePushUpdate(
        id: String, content: LiveActivityContent, priority: PushPriority, at now: Instant
    ) throws(LiveActivityError) -> PushUpdateResult {
        let now = catchUp(to: now)
        let index = try runningIndex(of: id)
        try check(content, for: records[index].snapshot.attributes)
        if priority == .high {
            let windowStart = now - .secondsPerHour
            records[index].recentHighPriorityPushes.removeAll { $0 <= windowStart }
            guard records[index].recentHighPriorityPushes.count < configuration.pushUpdatesPerHour else {
                throttledPushCount += 1
                return .throttled
            }
            records[index].recentHighPriorityPushes.append(now)
        }
        try setContent(content, of: index, at: now)
        return .applied
    }

    /// Simulates the system replacing the push token of the running activity `id` (it "can
    /// change" at any time); the app must send the new one to its server.
    public mutating func changePushToken(id: String, at now: Instant) throws(LiveActivityError) {
        catchUp(to: now)
        let index = try runningIndex(of: id)
        records[index].tokenGeneration += 1
        records[index].tokenArrivesAt = nil
        records[index].snapshot.pushToken = Self.pushToken(id: id, generation: records[index].tokenGeneration)
    }

    // MARK: - Internals

    /// Moves the clock to `time` (never backwards), applies what the system did meanwhile and
    /// returns the effective time.
    @discardableResult
    private mutating func catchUp(to time: Instant) -> Instant {
        let now = max(currentTime ?? time, time)
        currentTime = now
        refresh()
        return now
    }

    /// Brings every activity to `currentTime`, queueing the transitions for `advance(to:)`.
    private mutating func refresh() {
        guard let now = currentTime else { return }
        var changes: [(transition: LiveActivityTransition, sequence: Int)] = []
        for index in records.indices {
            var record = records[index]
            let id = record.snapshot.id
            if record.snapshot.endedAt == nil {
                let deadline = record.snapshot.startedAt + LiveActivityLimits.maxActiveSeconds
                if let arrival = record.tokenArrivesAt, arrival <= min(now, deadline) {
                    record.tokenArrivesAt = nil
                    record.snapshot.pushToken = Self.pushToken(id: id, generation: record.tokenGeneration)
                }
                if record.snapshot.state == .active, let staleDate = record.snapshot.content.staleDate {
                    let staleAt = max(staleDate, record.contentSetAt)
                    if staleAt <= min(now, deadline) {
                        record.snapshot.state = .stale
                        changes.append(
                            (LiveActivityTransition(id: id, change: .becameStale, at: staleAt), record.sequence))
                    }
                }
                if deadline <= now {
                    record.snapshot.state = .ended
                    record.snapshot.endedAt = deadline
                    record.snapshot.removalAt = DismissalPolicy.default.removalInstant(endedAt: deadline)
                    systemEndedCount += 1
                    changes.append(
                        (LiveActivityTransition(id: id, change: .endedBySystem, at: deadline), record.sequence))
                }
            }
            if let removalAt = record.snapshot.removalAt, removalAt <= now {
                record.snapshot.state = .dismissed
                changes.append((LiveActivityTransition(id: id, change: .removed, at: removalAt), record.sequence))
            }
            records[index] = record
        }
        records.removeAll { $0.snapshot.state == .dismissed }
        guard !changes.isEmpty else { return }
        unreported += changes.sorted { ($0.transition.at, $0.sequence) < ($1.transition.at, $1.sequence) }
            .map(\.transition)
        if unreported.count > Self.unreportedLimit { unreported.removeFirst(unreported.count - Self.unreportedLimit) }
    }

    /// The index of the listed activity `id`, which must not have ended.
    private func runningIndex(of id: String) throws(LiveActivityError) -> Int {
        guard let index = records.firstIndex(where: { $0.snapshot.id == id }) else { throw .notFound }
        guard records[index].snapshot.endedAt == nil else { throw .ended }
        return index
    }

    private func check(_ content: LiveActivityContent, for attributes: LiveActivityAttributes) throws(LiveActivityError)
    {
        guard attributes.kind == content.state.kind else { throw .mismatchedContent }
        let bytes = LiveActivityLimits.payloadBytes(attributes: attributes, state: content.state)
        guard bytes <= LiveActivityLimits.maxPayloadBytes else { throw .attributesTooLarge(bytes: bytes) }
    }

    private mutating func setContent(
        _ content: LiveActivityContent, of index: Int, at now: Instant
    ) throws(LiveActivityError) {
        let attributes = records[index].snapshot.attributes
        try check(content, for: attributes)
        records[index].snapshot.content = content
        records[index].snapshot.payloadBytes = LiveActivityLimits.payloadBytes(
            attributes: attributes, state: content.state)
        records[index].contentSetAt = now
        records[index].snapshot.state = .active
        Self.markStaleIfDue(&records[index], at: now)
    }

    private static func markStaleIfDue(_ record: inout Record, at now: Instant) {
        if let staleDate = record.snapshot.content.staleDate, staleDate <= now { record.snapshot.state = .stale }
    }

    /// A 32-byte token as 64 hex digits, drawn from a generator seeded with a hash (FNV-1a) of the
    /// identifier and the generation, so the same run always hands out the same tokens.
    static func pushToken(id: String, generation: Int) -> String {
        var generator = SeededGenerator(seed: FNV1a.hash("\(id)#\(generation)"))
        return (0..<4).map { _ in
            let hex = String(generator.next(), radix: 16)
            return String(repeating: "0", count: 16 - hex.count) + hex
        }.joined()
    }
}
