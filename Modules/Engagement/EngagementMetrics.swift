public import Models

// MARK: - Recency

/// Where a user stands by time since their last activity. The stages are exclusive and cover
/// every user, so their counts add up to the total.
public enum EngagementStage: String, Hashable, Sendable, Codable, CaseIterable {
    /// Active within `activeWithinSeconds` (default 1 day).
    case active
    /// Neither active nor lapsed: between 1 and 3 days away by default.
    case idle
    /// Away longer than `lapseAfterSeconds` (3 days), at most `churnRiskAfterSeconds` (7 days).
    case lapsed
    /// Away longer than `churnRiskAfterSeconds`.
    case churnRisk
}

/// The recency thresholds (active within 1 day, lapsed after 3, churn risk after 7).
/// The lapsed and churn-risk boundaries agree with `UserEngine.lapseStage(at:)`.
public struct LapseThresholds: Hashable, Sendable, Codable {
    public var activeWithinSeconds: Int64
    public var lapseAfterSeconds: Int64
    public var churnRiskAfterSeconds: Int64

    public init(
        activeWithinSeconds: Int64 = .secondsPerDay, lapseAfterSeconds: Int64 = 3 * .secondsPerDay,
        churnRiskAfterSeconds: Int64 = 7 * .secondsPerDay
    ) {
        self.activeWithinSeconds = activeWithinSeconds
        self.lapseAfterSeconds = lapseAfterSeconds
        self.churnRiskAfterSeconds = churnRiskAfterSeconds
    }

    /// The engine's lapse and churn-risk thresholds, with `activeWithinSeconds` of 1 day.
    public init(configuration: EngineConfiguration) {
        self.init(
            lapseAfterSeconds: configuration.lapseAfterSeconds,
            churnRiskAfterSeconds: configuration.churnRiskAfterSeconds)
    }

    /// The stage after `idleSeconds` without activity (negative, for a last activity stamped
    /// after `now`, counts as active).
    @inlinable public func stage(idleSeconds: Int64) -> EngagementStage {
        if idleSeconds > churnRiskAfterSeconds { return .churnRisk }
        if idleSeconds > lapseAfterSeconds { return .lapsed }
        if idleSeconds <= activeWithinSeconds { return .active }
        return .idle
    }
}

// MARK: - One user

/// One user's engagement over an observation window, computed from their logs alone.
public struct UserEngagementSummary: Hashable, Sendable, Codable {
    public var stage: EngagementStage
    /// The newest activity at or before `now`, or nil when the log has none.
    public var lastActiveAt: Instant?
    /// Seconds from the last activity (or the window start, without any) to `now`.
    public var idleSeconds: Int64
    /// App sessions (`appOpened` events) in the window.
    public var sessions: Int
    /// Their summed `sessionSeconds`.
    public var sessionSeconds: Int64
    /// The length of the window: `now - since`.
    public var observedSeconds: Int64
    /// Completed workouts in the window.
    public var workouts: Int
    /// Consecutive local days with a workout ending today or yesterday.
    public var currentStreakDays: Int
    /// The longest run of consecutive workout days in the window.
    public var longestStreakDays: Int
    /// Counts per kind; `recipients` is 1 where the user received the kind, `optOuts` 1 where
    /// the user then disabled it.
    public var deliveries: [NotificationKind: DeliveryCounts]
    /// Kinds the user disabled after receiving at least one, ascending.
    public var optedOutKinds: [NotificationKind]

    /// Sessions per 7 days of the window; nil for an empty window.
    public var sessionsPerWeek: Double? {
        observedSeconds > 0 ? Double(sessions) * Double(7 * Int64.secondsPerDay) / Double(observedSeconds) : nil
    }

    /// Mean session length in seconds; nil without sessions.
    public var meanSessionSeconds: Double? { ratio(sessionSeconds, sessions) }

    /// Summarises one user's logs over the window `since ... now`.
    ///
    /// - Recency uses every activity at or before `now`, also before `since`; a user with none is
    ///   measured from `since` (enrolment), as the engine measures a new user from creation.
    /// - Sessions, workouts and deliveries count only what happened in `since ..< now` (a
    ///   delivery by `sentAt`). Streaks use the workouts at or before `now`, by local date in
    ///   `zone` (pass the zone the user was in; for travellers, prefer a `WorkoutStreak` kept
    ///   as they go).
    /// - An opt-out counts when `disabledAt` is in the window and the kind was delivered at or
    ///   before it, possibly before the window.
    public init(
        activity: [ActivityEvent], deliveries records: [DeliveryRecord], optOuts: [OptOut], since: Instant,
        now: Instant, zone: ZoneRules, thresholds: LapseThresholds = LapseThresholds()
    ) {
        var lastActive: Instant?
        var sessions = 0
        var sessionSeconds: Int64 = 0
        var workouts = 0
        var workoutDays: [LocalDate] = []
        for event in activity where event.at <= now {
            lastActive = max(lastActive ?? event.at, event.at)
            if case .workoutCompleted = event.kind { workoutDays.append(zone.localDate(at: event.at)) }
            guard event.at >= since, event.at < now else { continue }
            switch event.kind {
            case .appOpened(let seconds):
                sessions += 1
                sessionSeconds += Int64(max(0, seconds))
            case .workoutCompleted: workouts += 1
            default: break
            }
        }
        idleSeconds = now - (lastActive ?? since)
        lastActiveAt = lastActive
        stage = thresholds.stage(idleSeconds: idleSeconds)
        self.sessions = sessions
        self.sessionSeconds = sessionSeconds
        observedSeconds = max(0, now - since)
        self.workouts = workouts
        let today = zone.localDate(at: now)
        currentStreakDays = WorkoutStreak.currentDays(workoutDays: workoutDays, today: today)
        longestStreakDays = WorkoutStreak.longestDays(workoutDays: workoutDays.filter { $0 <= today })

        var counts: [NotificationKind: DeliveryCounts] = [:]
        var firstDelivered: [NotificationKind: Instant] = [:]
        for record in records {
            if let at = record.deliveredAt, at <= now {
                firstDelivered[record.kind] = min(firstDelivered[record.kind] ?? at, at)
            }
            guard record.sentAt >= since, record.sentAt < now else { continue }
            var entry = counts[record.kind, default: DeliveryCounts()]
            entry.sent += 1
            if record.deliveredAt != nil {
                entry.delivered += 1
                if record.opened { entry.opened += 1 }
                if record.acted { entry.acted += 1 }
            }
            counts[record.kind] = entry
        }
        for kind in counts.keys where counts[kind]!.delivered > 0 { counts[kind]!.recipients = 1 }
        var optedOut = Set<NotificationKind>()
        for optOut in optOuts where optOut.disabledAt >= since && optOut.disabledAt <= now {
            if let first = firstDelivered[optOut.kind], first <= optOut.disabledAt { optedOut.insert(optOut.kind) }
        }
        for kind in optedOut {
            counts[kind, default: DeliveryCounts()].optOuts = 1
            counts[kind]!.recipients = 1
        }
        self.deliveries = counts
        optedOutKinds = optedOut.sorted()
    }
}

// MARK: - Many users

/// Engagement over many users: a mergeable accumulator of exact integer counts, with every
/// figure derived from them (nothing estimated or made up).
///
/// Contract: `add(_:)` and `merge(_:)` only add integers (and take a maximum), so merging shard
/// accumulators in any order gives the same value, and the same output, as one accumulator over
/// all users. Rates are nil, encoded as null, when their denominator is 0. The JSON output holds
/// the counts and the derived figures, per kind keyed by the kind's name. Foundation's
/// `JSONEncoder` does not keep key order: use `.sortedKeys` for byte-identical reports.
public struct EngagementMetrics: Hashable, Sendable, Codable {
    public private(set) var totalUsers = 0
    public private(set) var activeUsers = 0
    public private(set) var idleUsers = 0
    public private(set) var lapsedUsers = 0
    public private(set) var churnRiskUsers = 0
    public private(set) var sessions = 0
    public private(set) var sessionSeconds: Int64 = 0
    /// The summed observation windows of all users, in seconds (the denominator of sessions per week).
    public private(set) var observedUserSeconds: Int64 = 0
    public private(set) var workouts = 0
    /// The sum of the users' current streaks, in days.
    public private(set) var currentStreakDaysTotal = 0
    /// Users whose current streak is at least 1 day.
    public private(set) var usersOnStreak = 0
    /// The longest streak of any user, in days.
    public private(set) var longestStreakDays = 0
    /// Delivery counts per kind.
    public private(set) var perKind: [NotificationKind: DeliveryCounts] = [:]
    /// Delivery counts over all kinds (`recipients` and `optOuts` count user-kind pairs).
    public private(set) var allKinds = DeliveryCounts()

    public init() {}

    /// The metrics of a population sweep, which has no per-kind breakdown.
    init(
        stageCounts: (active: Int, idle: Int, lapsed: Int, churnRisk: Int), sessions: Int, sessionSeconds: Int64,
        observedUserSeconds: Int64, currentStreakDaysTotal: Int, usersOnStreak: Int, longestStreakDays: Int,
        allKinds: DeliveryCounts
    ) {
        activeUsers = stageCounts.active
        idleUsers = stageCounts.idle
        lapsedUsers = stageCounts.lapsed
        churnRiskUsers = stageCounts.churnRisk
        totalUsers = activeUsers + idleUsers + lapsedUsers + churnRiskUsers
        self.sessions = sessions
        self.sessionSeconds = sessionSeconds
        self.observedUserSeconds = observedUserSeconds
        self.currentStreakDaysTotal = currentStreakDaysTotal
        self.usersOnStreak = usersOnStreak
        self.longestStreakDays = longestStreakDays
        self.allKinds = allKinds
    }

    /// Adds one user.
    public mutating func add(_ user: UserEngagementSummary) {
        totalUsers += 1
        switch user.stage {
        case .active: activeUsers += 1
        case .idle: idleUsers += 1
        case .lapsed: lapsedUsers += 1
        case .churnRisk: churnRiskUsers += 1
        }
        sessions += user.sessions
        sessionSeconds += user.sessionSeconds
        observedUserSeconds += user.observedSeconds
        workouts += user.workouts
        currentStreakDaysTotal += user.currentStreakDays
        if user.currentStreakDays > 0 { usersOnStreak += 1 }
        longestStreakDays = max(longestStreakDays, user.longestStreakDays)
        for (kind, counts) in user.deliveries {
            perKind[kind, default: DeliveryCounts()].merge(counts)
            allKinds.merge(counts)
        }
    }

    /// Adds another accumulator (another shard, persona or week).
    public mutating func merge(_ other: EngagementMetrics) {
        totalUsers += other.totalUsers
        activeUsers += other.activeUsers
        idleUsers += other.idleUsers
        lapsedUsers += other.lapsedUsers
        churnRiskUsers += other.churnRiskUsers
        sessions += other.sessions
        sessionSeconds += other.sessionSeconds
        observedUserSeconds += other.observedUserSeconds
        workouts += other.workouts
        currentStreakDaysTotal += other.currentStreakDaysTotal
        usersOnStreak += other.usersOnStreak
        longestStreakDays = max(longestStreakDays, other.longestStreakDays)
        for (kind, counts) in other.perKind { perKind[kind, default: DeliveryCounts()].merge(counts) }
        allKinds.merge(other.allKinds)
    }

    /// The accumulators merged into one.
    public static func merged(_ parts: some Sequence<EngagementMetrics>) -> EngagementMetrics {
        var total = EngagementMetrics()
        for part in parts { total.merge(part) }
        return total
    }

    /// active / total; nil without users.
    public var engagementRate: Double? { ratio(activeUsers, totalUsers) }

    /// Sessions per user per 7 days, pooled: all sessions over all observed user-weeks.
    public var sessionsPerWeek: Double? {
        observedUserSeconds > 0
            ? Double(sessions) * Double(7 * Int64.secondsPerDay) / Double(observedUserSeconds) : nil
    }

    /// Mean session length in seconds; nil without sessions.
    public var meanSessionSeconds: Double? { ratio(sessionSeconds, sessions) }

    /// The mean current streak over all users (0 for users without one), in days.
    public var meanCurrentStreakDays: Double? { ratio(currentStreakDaysTotal, totalUsers) }

    enum CodingKeys: String, CodingKey {
        case totalUsers, activeUsers, idleUsers, lapsedUsers, churnRiskUsers, sessions, sessionSeconds
        case observedUserSeconds, workouts, currentStreakDaysTotal, usersOnStreak, longestStreakDays
        case perKind, allKinds
        case engagementRate, sessionsPerWeek, meanSessionSeconds, meanCurrentStreakDays
    }

    struct KindKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        totalUsers = try c.decode(Int.self, forKey: .totalUsers)
        activeUsers = try c.decode(Int.self, forKey: .activeUsers)
        idleUsers = try c.decode(Int.self, forKey: .idleUsers)
        lapsedUsers = try c.decode(Int.self, forKey: .lapsedUsers)
        churnRiskUsers = try c.decode(Int.self, forKey: .churnRiskUsers)
        sessions = try c.decode(Int.self, forKey: .sessions)
        sessionSeconds = try c.decode(Int64.self, forKey: .sessionSeconds)
        observedUserSeconds = try c.decode(Int64.self, forKey: .observedUserSeconds)
        workouts = try c.decode(Int.self, forKey: .workouts)
        currentStreakDaysTotal = try c.decode(Int.self, forKey: .currentStreakDaysTotal)
        usersOnStreak = try c.decode(Int.self, forKey: .usersOnStreak)
        longestStreakDays = try c.decode(Int.self, forKey: .longestStreakDays)
        allKinds = try c.decode(DeliveryCounts.self, forKey: .allKinds)
        let kinds = try c.nestedContainer(keyedBy: KindKey.self, forKey: .perKind)
        for key in kinds.allKeys {
            guard let kind = NotificationKind(rawValue: key.stringValue) else {
                throw DecodingError.dataCorruptedError(
                    forKey: key, in: kinds, debugDescription: "unknown notification kind \"\(key.stringValue)\"")
            }
            perKind[kind] = try kinds.decode(DeliveryCounts.self, forKey: key)
        }
    }

    /// The counts and the derived figures (see the type's contract on key order).
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(totalUsers, forKey: .totalUsers)
        try c.encode(activeUsers, forKey: .activeUsers)
        try c.encode(idleUsers, forKey: .idleUsers)
        try c.encode(lapsedUsers, forKey: .lapsedUsers)
        try c.encode(churnRiskUsers, forKey: .churnRiskUsers)
        try c.encode(engagementRate, forKey: .engagementRate)
        try c.encode(sessions, forKey: .sessions)
        try c.encode(sessionSeconds, forKey: .sessionSeconds)
        try c.encode(observedUserSeconds, forKey: .observedUserSeconds)
        try c.encode(sessionsPerWeek, forKey: .sessionsPerWeek)
        try c.encode(meanSessionSeconds, forKey: .meanSessionSeconds)
        try c.encode(workouts, forKey: .workouts)
        try c.encode(currentStreakDaysTotal, forKey: .currentStreakDaysTotal)
        try c.encode(usersOnStreak, forKey: .usersOnStreak)
        try c.encode(meanCurrentStreakDays, forKey: .meanCurrentStreakDays)
        try c.encode(longestStreakDays, forKey: .longestStreakDays)
        try c.encode(allKinds, forKey: .allKinds)
        var kinds = c.nestedContainer(keyedBy: KindKey.self, forKey: .perKind)
        for kind in perKind.keys.sorted() {  // for encoders that keep insertion order
            try kinds.encode(perKind[kind]!, forKey: KindKey(stringValue: kind.rawValue))
        }
    }
}
