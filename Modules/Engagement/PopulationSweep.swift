public import Models

/// A whole population's engagement state as columns: one array per field, indexed by user.
///
/// The shape a server store hands out (one scan per column) and the one a sweep over a million
/// users can read at memory speed: plain `Int64` / `Int32` arrays, no per-user objects. Every
/// column but `lastActiveAtSeconds` is optional: pass an empty array when it is not known, and
/// the figures that need it are reported as zero (their rates as nil).
public struct PopulationColumns: Sendable {
    /// Each user's last activity, seconds since the epoch. A user who has done nothing yet has
    /// their enrolment time here, as the engine starts `lastActiveAt` at creation.
    public let lastActiveAtSeconds: [Int64]
    /// When each user joined, seconds since the epoch: the observation starts at the later of
    /// this and the window start. Empty: every user was there before the window.
    public let enrolledAtSeconds: [Int64]
    /// App sessions in the window.
    public let sessionCounts: [Int32]
    /// Their summed length in seconds.
    public let sessionSeconds: [Int64]
    /// The current workout streak in days (see `WorkoutStreak`).
    public let currentStreakDays: [Int32]
    /// Notifications sent, delivered, opened and acted on in the window, all kinds.
    public let sent: [Int32]
    public let delivered: [Int32]
    public let opened: [Int32]
    public let acted: [Int32]

    /// The number of users.
    public var count: Int { lastActiveAtSeconds.count }

    /// Fails when a non-empty column's length differs from `lastActiveAtSeconds`'s.
    public init(
        lastActiveAtSeconds: [Int64], enrolledAtSeconds: [Int64] = [], sessionCounts: [Int32] = [],
        sessionSeconds: [Int64] = [], currentStreakDays: [Int32] = [], sent: [Int32] = [], delivered: [Int32] = [],
        opened: [Int32] = [], acted: [Int32] = []
    ) throws(InvalidValue) {
        let count = lastActiveAtSeconds.count
        let lengths = [
            ("enrolledAtSeconds", enrolledAtSeconds.count), ("sessionCounts", sessionCounts.count),
            ("sessionSeconds", sessionSeconds.count), ("currentStreakDays", currentStreakDays.count),
            ("sent", sent.count), ("delivered", delivered.count), ("opened", opened.count), ("acted", acted.count),
        ]
        for (field, length) in lengths where length != 0 && length != count {
            throw InvalidValue(
                field: field, problem: "has \(length) entries for \(count) users; pass one per user or none")
        }
        self.lastActiveAtSeconds = lastActiveAtSeconds
        self.enrolledAtSeconds = enrolledAtSeconds
        self.sessionCounts = sessionCounts
        self.sessionSeconds = sessionSeconds
        self.currentStreakDays = currentStreakDays
        self.sent = sent
        self.delivered = delivered
        self.opened = opened
        self.acted = acted
    }
}

/// Server-side lapse detection and metrics over a whole population in one pass per column.
///
/// Contract:
/// - Stages are exactly `LapseThresholds.stage(idleSeconds: now - lastActiveAt)` per user.
/// - "Newly lapsed" lists the users who crossed the lapse threshold since the previous sweep:
///   not lapsed at `previousSweepAt`, lapsed (or at churn risk) at `now`, judged by their current
///   `lastActiveAt`. "Newly at churn risk" is the same for the churn-risk threshold, so a user who
///   crossed both between two sweeps is in both lists. Without a previous sweep, every lapsed
///   (churn-risk) user is new. Both lists are ascending user indices. The sweep keeps no state:
///   a missed sweep loses no one, because the next one covers the whole interval.
/// - Metrics: the stage counts, sessions, session seconds, observed user-seconds, streak totals
///   and the all-kinds delivery counts (`recipients` = users with something delivered). A sweep
///   has no per-kind breakdown and no opt-outs, and its `longestStreakDays` is the longest
///   *current* streak.
/// - Cost: O(users), no allocation per user, no Foundation call (`make bench` times it).
public enum PopulationSweep {
    /// What a sweep found.
    public struct Result: Hashable, Sendable, Codable {
        public var now: Instant
        public var metrics: EngagementMetrics
        /// Users who crossed the lapse threshold in `previousSweepAt ..< now`, ascending.
        public var newlyLapsed: [Int]
        /// Users who crossed the churn-risk threshold in `previousSweepAt ..< now`, ascending.
        public var newlyChurnRisk: [Int]
    }

    /// Sweeps `columns` at `now`. Sessions and deliveries in the columns are taken to cover
    /// `windowStart ..< now`, the denominator of sessions per week.
    public static func run(
        _ columns: PopulationColumns, now: Instant, previousSweepAt: Instant?, windowStart: Instant,
        thresholds: LapseThresholds = LapseThresholds()
    ) -> Result {
        let nowSeconds = now.secondsSinceEpoch
        let churnCut = nowSeconds - thresholds.churnRiskAfterSeconds  // churn risk iff last < churnCut
        let lapseCut = nowSeconds - thresholds.lapseAfterSeconds  // lapsed or worse iff last < lapseCut
        let activeCut = nowSeconds - thresholds.activeWithinSeconds  // active iff last >= activeCut
        let previousLapseCut = previousSweepAt.map { $0.secondsSinceEpoch - thresholds.lapseAfterSeconds } ?? .min
        let previousChurnCut = previousSweepAt.map { $0.secondsSinceEpoch - thresholds.churnRiskAfterSeconds } ?? .min

        var churn = 0
        var lapsed = 0
        var active = 0
        var newlyLapsed: [Int] = []
        var newlyChurnRisk: [Int] = []
        columns.lastActiveAtSeconds.withUnsafeBufferPointer { last in
            for index in 0..<last.count {
                let seconds = last[index]
                let isChurn = seconds < churnCut
                let isLapsed = !isChurn && seconds < lapseCut
                churn &+= isChurn ? 1 : 0
                lapsed &+= isLapsed ? 1 : 0
                active &+= !isChurn && !isLapsed && seconds >= activeCut ? 1 : 0
                // Crossed a threshold since the previous sweep: past it now, not then.
                if seconds < lapseCut && seconds >= previousLapseCut { newlyLapsed.append(index) }
                if isChurn && seconds >= previousChurnCut { newlyChurnRisk.append(index) }
            }
        }
        let users = columns.count
        let windowStartSeconds = windowStart.secondsSinceEpoch
        let observed: Int64
        if columns.enrolledAtSeconds.isEmpty {
            observed = Int64(users) * max(0, nowSeconds - windowStartSeconds)
        } else {
            observed = columns.enrolledAtSeconds.withUnsafeBufferPointer { enrolled in
                var total: Int64 = 0
                for seconds in enrolled { total &+= max(0, nowSeconds - max(seconds, windowStartSeconds)) }
                return total
            }
        }
        let streaks = columns.currentStreakDays.withUnsafeBufferPointer { days in
            var total: Int64 = 0
            var onStreak = 0
            var longest: Int32 = 0
            for value in days {
                total &+= Int64(value)
                onStreak &+= value > 0 ? 1 : 0
                longest = max(longest, value)
            }
            return (total: Int(total), onStreak: onStreak, longest: Int(longest))
        }
        var deliveries = DeliveryCounts()
        deliveries.sent = sum(columns.sent)
        deliveries.delivered = sum(columns.delivered)
        deliveries.opened = sum(columns.opened)
        deliveries.acted = sum(columns.acted)
        deliveries.recipients = columns.delivered.withUnsafeBufferPointer { values in
            var count = 0
            for value in values { count &+= value > 0 ? 1 : 0 }
            return count
        }
        let metrics = EngagementMetrics(
            stageCounts: (active, users - churn - lapsed - active, lapsed, churn), sessions: sum(columns.sessionCounts),
            sessionSeconds: sum(columns.sessionSeconds), observedUserSeconds: observed,
            currentStreakDaysTotal: streaks.total, usersOnStreak: streaks.onStreak, longestStreakDays: streaks.longest,
            allKinds: deliveries)
        return Result(now: now, metrics: metrics, newlyLapsed: newlyLapsed, newlyChurnRisk: newlyChurnRisk)
    }

    private static func sum(_ values: [Int32]) -> Int {
        values.withUnsafeBufferPointer { buffer in
            var total: Int64 = 0
            for value in buffer { total &+= Int64(value) }
            return Int(total)
        }
    }

    private static func sum(_ values: [Int64]) -> Int64 {
        values.withUnsafeBufferPointer { buffer in
            var total: Int64 = 0
            for value in buffer { total &+= value }
            return total
        }
    }

    // MARK: - Benchmark

    /// The instant the benchmark's synthetic population is swept at (2027-03-01T00:00:00Z).
    public static let benchmarkNow = Instant(secondsSinceEpoch: 1_803_859_200)

    /// A synthetic population of `users`, fixed by `seed`: 45 % active within a day, 20 % idle,
    /// 15 % lapsed, 20 % at churn risk (up to 60 days away), enrolled 7 to 120 days before
    /// `benchmarkNow`, with sessions, streaks and deliveries to match.
    public static func syntheticColumns(users: Int, seed: UInt64) -> PopulationColumns {
        var random = SeededGenerator(seed: seed)
        let now = benchmarkNow.secondsSinceEpoch
        let day = Int64.secondsPerDay
        var last = [Int64](repeating: 0, count: users)
        var enrolled = [Int64](repeating: 0, count: users)
        var sessions = [Int32](repeating: 0, count: users)
        var sessionSeconds = [Int64](repeating: 0, count: users)
        var streaks = [Int32](repeating: 0, count: users)
        var sent = [Int32](repeating: 0, count: users)
        var delivered = [Int32](repeating: 0, count: users)
        var opened = [Int32](repeating: 0, count: users)
        var acted = [Int32](repeating: 0, count: users)
        for index in 0..<users {
            let bucket = random.next() % 100
            let (low, high): (Int64, Int64) =
                switch bucket {
                case ..<45: (0, day)
                case ..<65: (day + 1, 3 * day)
                case ..<80: (3 * day + 1, 7 * day)
                default: (7 * day + 1, 60 * day)
                }
            let idle = low + Int64(random.next() % UInt64(high - low + 1))
            let joined = now - 7 * day - Int64(random.next() % UInt64(113 * day))
            last[index] = max(joined, now - idle)
            enrolled[index] = joined
            let count = Int32(random.next() % 41)
            sessions[index] = count
            sessionSeconds[index] = Int64(count) * Int64(30 + random.next() % 571)
            streaks[index] = idle <= 2 * day ? Int32(random.next() % 31) : 0
            let sentCount = Int32(random.next() % 61)
            let deliveredCount = sentCount - Int32(random.next() % UInt64(sentCount / 10 + 1))
            let openedCount = Int32(random.next() % UInt64(deliveredCount + 1))
            sent[index] = sentCount
            delivered[index] = deliveredCount
            opened[index] = openedCount
            acted[index] = Int32(random.next() % UInt64(openedCount + 1))
        }
        return try! PopulationColumns(
            lastActiveAtSeconds: last, enrolledAtSeconds: enrolled, sessionCounts: sessions,
            sessionSeconds: sessionSeconds, currentStreakDays: streaks, sent: sent, delivered: delivered,
            opened: opened, acted: acted)
    }

    /// Sweeps a synthetic population of `users` (see `syntheticColumns(users:seed:)`) at
    /// `benchmarkNow`, the previous sweep a day earlier, over a 28-day window: the workload
    /// `make bench` times.
    public static func sweepSynthetic(_ columns: PopulationColumns) -> Result {
        let now = benchmarkNow
        return run(columns, now: now, previousSweepAt: now - .secondsPerDay, windowStart: now - 28 * .secondsPerDay)
    }
}
