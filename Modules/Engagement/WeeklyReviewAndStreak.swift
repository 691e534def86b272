public import Models

// MARK: - Weekly review

/// The Sunday review of one local week: "completed / planned" and its tier.
///
/// The week runs Monday 00:00 to Sunday 24:00 local. A review made before the week ends (the
/// review's Sunday 19:00) counts what is due so far: workouts done before `asOf`, and planned
/// sessions whose scheduled local time is before `asOf`, so an evening session still ahead is
/// not counted as missed.
public struct WeeklyReview: Hashable, Sendable, Codable {
    /// The review's tiers, by completion rate.
    public enum Tier: String, Hashable, Sendable, Codable, CaseIterable {
        /// Rate at least 0.8.
        case greatConsistency
        /// Rate at least 0.6.
        case goodEffort
        /// Rate under 0.6.
        case letsImproveNextWeek

        /// The headline for the tier.
        public var headline: String {
            switch self {
            case .greatConsistency: "Great consistency!"
            case .goodEffort: "Good effort this week"
            case .letsImproveNextWeek: "Let's improve next week"
            }
        }

        /// The tier of a completion rate.
        public init(rate: Double) {
            self = rate >= 0.8 ? .greatConsistency : rate >= 0.6 ? .goodEffort : .letsImproveNextWeek
        }
    }

    /// The Monday the week starts on.
    public var weekStart: LocalDate
    /// Workouts completed in the week (every workout counts, also unplanned ones).
    public var completed: Int
    /// Planned sessions due in the week.
    public var planned: Int

    public init(weekStart: LocalDate, completed: Int, planned: Int) {
        self.weekStart = weekStart
        self.completed = max(0, completed)
        self.planned = max(0, planned)
    }

    /// `min(completed, planned) / planned`; nil when nothing was planned (no rate, no tier: the
    /// review then states the count alone).
    public var completionRate: Double? {
        planned > 0 ? Double(min(completed, planned)) / Double(planned) : nil
    }

    /// The tier of `completionRate`; nil when nothing was planned.
    public var tier: Tier? { completionRate.map(Tier.init(rate:)) }

    /// The review of the week containing `asOf`, from the local start times of the user's
    /// completed workouts and the weekly schedule.
    public init(asOf: LocalDateTime, workoutStarts: some Sequence<LocalDateTime>, schedule: [ScheduledWorkout]) {
        let weekStartDay = WeeklyReview.mondayDay(of: asOf.daysSinceEpoch)
        let weekStartSeconds = weekStartDay * .secondsPerDay
        var completed = 0
        for start in workoutStarts where start.localSeconds >= weekStartSeconds && start < asOf { completed += 1 }
        var planned = 0
        for session in schedule {
            let offset = Int64((session.weekday.rawValue + 5) % 7)
            if LocalDateTime(daysSinceEpoch: weekStartDay + offset, time: session.time) < asOf { planned += 1 }
        }
        self.init(weekStart: LocalDate(daysSinceEpoch: weekStartDay), completed: completed, planned: planned)
    }

    /// The Monday on or before a day (days since 1970-01-01).
    static func mondayDay(of day: Int64) -> Int64 {
        day - Int64((Weekday(daysSinceEpoch: day).rawValue + 5) % 7)
    }
}

// MARK: - Streaks

/// Consecutive local days with a workout, kept incrementally in constant memory.
///
/// Days are local calendar dates, each read in the zone the user was in at the time, so a
/// 23-hour DST day or a flight to another zone neither breaks nor doubles a streak. The
/// current streak counts when its last day is today or yesterday (the user can still keep it
/// alive today); otherwise it is 0. Record days in non-decreasing order: a day before the last
/// one recorded is ignored (use `currentDays(workoutDays:today:)` for unordered history).
public struct WorkoutStreak: Hashable, Sendable, Codable {
    /// The last local date with a workout, as days since 1970-01-01.
    public private(set) var lastDay: Int64?
    /// The length of the run of consecutive days ending on `lastDay`.
    public private(set) var runDays: Int = 0
    /// The longest run seen.
    public private(set) var longestDays: Int = 0

    public init() {}

    /// Records a workout on the local date `date`.
    public mutating func record(workoutOn date: LocalDate) {
        let day = date.daysSinceEpoch
        if let lastDay {
            guard day > lastDay else { return }
            runDays = day == lastDay + 1 ? runDays + 1 : 1
        } else {
            runDays = 1
        }
        lastDay = day
        longestDays = max(longestDays, runDays)
    }

    /// Records a workout at `instant`, read in `zone` (the user's zone at the time).
    public mutating func record(workoutAt instant: Instant, in zone: ZoneRules) {
        record(workoutOn: zone.localDate(at: instant))
    }

    /// The current streak on the local date `today`: the run if it ends today or yesterday, else 0.
    public func currentDays(today: LocalDate) -> Int {
        guard let lastDay else { return 0 }
        let gap = today.daysSinceEpoch - lastDay
        return (0...1).contains(gap) ? runDays : 0
    }

    /// The current streak from unordered workout dates (duplicates allowed); dates after
    /// `today` are ignored.
    public static func currentDays(workoutDays: some Sequence<LocalDate>, today: LocalDate) -> Int {
        let days = Set(workoutDays.lazy.map(\.daysSinceEpoch))
        var day = today.daysSinceEpoch
        if !days.contains(day) { day -= 1 }
        var count = 0
        while days.contains(day) {
            count += 1
            day -= 1
        }
        return count
    }

    /// The longest run of consecutive dates in unordered workout dates.
    public static func longestDays(workoutDays: some Sequence<LocalDate>) -> Int {
        var streak = WorkoutStreak()
        for day in Set(workoutDays.lazy.map(\.daysSinceEpoch)).sorted() {
            streak.record(workoutOn: LocalDate(daysSinceEpoch: day))
        }
        return streak.longestDays
    }
}

extension WorkoutStreak {
    /// Writes the streak compactly (a snapshot part).
    func write(to writer: inout CompactWriter) {
        writer.optional(lastDay) { $0.signed($1) }
        writer.count(runDays)
        writer.count(longestDays)
    }

    /// Reads what `write(to:)` wrote.
    init(reading reader: inout CompactReader) throws {
        self.init()
        lastDay = try reader.optional { reader in try reader.signed(limit: 100_000_000) }
        runDays = try reader.count(limit: 1_000_000)
        longestDays = try reader.count(limit: 1_000_000)
    }
}
