public import Models

// MARK: - Habits

/// The habitual workout time of one weekday, as pattern analysis found it.
public struct WorkoutHabit: Hashable, Sendable, Codable {
    public var weekday: Weekday
    /// The circular mean of the local start times.
    public var time: LocalTimeOfDay
    /// The circular standard deviation of the start times, in minutes (0 when all agree).
    public var spreadMinutes: Double
    /// How many workouts (at most one per local date) the habit was computed from.
    public var dataPoints: Int

    public init(weekday: Weekday, time: LocalTimeOfDay, spreadMinutes: Double, dataPoints: Int) {
        self.weekday = weekday
        self.time = time
        self.spreadMinutes = spreadMinutes
        self.dataPoints = dataPoints
    }
}

/// When a user actually trains, per weekday, learned from completed workouts.
///
/// Contract:
/// - A sample is the *local* start time of a completed workout, read in the zone the user was
///   in at that moment, so 07:00 stays 07:00 across a DST change or a move to another zone.
/// - One sample per local date: the earliest workout of the day, which is the one a
///   pre-workout reminder must precede. The weekday is the local date's.
/// - Memory is bounded: at most `maximumSamplesPerWeekday` samples per weekday, and none more
///   than `windowDays` days older than the newest sample recorded (or than the date given to
///   `forget(before:)`). Adding a sample never needs the history.
/// - `habit(for:)` answers only when the weekday has at least `minimumDataPoints` samples and
///   the times have a mean direction; otherwise nil, and the caller uses the stated schedule
///   or its defaults (`workoutTime(for:stated:)` does exactly that).
/// - Recording is order-independent: the same samples in any order give the same state, as
///   long as none falls out of the window or the per-weekday bound in between.
public struct WorkoutHabits: Hashable, Sendable, Codable {
    /// The minimum samples on a weekday for a habit.
    public var minimumDataPoints: Int
    /// Samples kept per weekday, newest first to stay.
    public let maximumSamplesPerWeekday: Int
    /// Samples older than this many days before the newest are dropped.
    public let windowDays: Int

    struct Sample: Hashable, Sendable, Codable {
        /// The local date, as days since 1970-01-01.
        var day: Int64
        /// Minutes after local midnight.
        var minute: Int16
    }

    /// Samples per weekday (index `Weekday.rawValue - 1`), ascending by day.
    private var samples: [[Sample]]
    /// The newest local date recorded, for the window.
    private var newestDay: Int64?

    public init(minimumDataPoints: Int = 3, maximumSamplesPerWeekday: Int = 8, windowDays: Int = 56) {
        precondition(minimumDataPoints >= 1, "minimumDataPoints must be at least 1")
        precondition(maximumSamplesPerWeekday >= 1, "maximumSamplesPerWeekday must be at least 1")
        precondition(windowDays >= 1, "windowDays must be at least 1")
        self.minimumDataPoints = minimumDataPoints
        self.maximumSamplesPerWeekday = maximumSamplesPerWeekday
        self.windowDays = windowDays
        samples = Array(repeating: [], count: 7)
    }

    /// Records a workout that started at the local wall time `start`.
    public mutating func record(workoutStart start: LocalDateTime) {
        let day = start.daysSinceEpoch
        let sample = Sample(day: day, minute: Int16(start.secondOfDay / 60))
        if let newestDay, day < newestDay - Int64(windowDays) { return }
        let index = start.weekday.rawValue - 1
        var list = samples[index]
        if let existing = list.firstIndex(where: { $0.day == day }) {
            if sample.minute < list[existing].minute { list[existing] = sample }
        } else {
            let position = list.firstIndex { $0.day > day } ?? list.count
            list.insert(sample, at: position)
            if list.count > maximumSamplesPerWeekday { list.removeFirst(list.count - maximumSamplesPerWeekday) }
        }
        samples[index] = list
        if newestDay.map({ day > $0 }) ?? true {
            newestDay = day
            forget(beforeDay: day - Int64(windowDays))
        }
    }

    /// Records a workout that started at `instant`, read in `zone` (the user's zone at the time).
    public mutating func record(workoutStartedAt instant: Instant, in zone: ZoneRules) {
        record(workoutStart: zone.localDateTime(at: instant))
    }

    /// Records a workout reported on completion: it started `durationMinutes` before `instant`.
    public mutating func record(workoutCompletedAt instant: Instant, durationMinutes: Int, in zone: ZoneRules) {
        record(workoutStartedAt: instant - Int64(max(0, durationMinutes)) * .secondsPerMinute, in: zone)
    }

    /// Drops every sample from before `date` (the daily analysis passes today minus the window).
    public mutating func forget(before date: LocalDate) { forget(beforeDay: date.daysSinceEpoch) }

    private mutating func forget(beforeDay day: Int64) {
        for index in samples.indices where samples[index].first.map({ $0.day < day }) ?? false {
            samples[index].removeAll { $0.day < day }
        }
    }

    /// How many samples the weekday holds.
    public func dataPoints(for weekday: Weekday) -> Int { samples[weekday.rawValue - 1].count }

    /// The habitual start time on `weekday`, or nil with fewer than `minimumDataPoints` samples
    /// or no mean direction.
    public func habit(for weekday: Weekday) -> WorkoutHabit? {
        let list = samples[weekday.rawValue - 1]
        guard list.count >= minimumDataPoints,
            let mean = CircularTime.mean(minutes: list.lazy.map { Int($0.minute) })
        else { return nil }
        return WorkoutHabit(
            weekday: weekday, time: LocalTimeOfDay(minutesSinceMidnight: mean.meanMinutes),
            spreadMinutes: mean.spreadMinutes, dataPoints: list.count)
    }

    /// Every weekday that has a habit, Sunday first.
    public var habits: [WorkoutHabit] { Weekday.allCases.compactMap { habit(for: $0) } }

    /// The time to plan around on `weekday`: the habit when there is one, else `stated` (the
    /// user's schedule or a default), else nil.
    public func workoutTime(for weekday: Weekday, stated: LocalTimeOfDay?) -> LocalTimeOfDay? {
        habit(for: weekday)?.time ?? stated
    }

    /// The wall time `leadMinutes` (default 45) before the habitual time on `weekday`, or nil
    /// without a habit. It wraps past midnight: a habit at 00:15 gives 23:30, on the evening
    /// before. For an exact instant across DST, use `preWorkoutReminder(on:in:stated:leadMinutes:)`.
    public func preWorkoutTime(for weekday: Weekday, leadMinutes: Int = 45) -> LocalTimeOfDay? {
        guard let habit = habit(for: weekday) else { return nil }
        let minutes = (habit.time.minutesSinceMidnight - leadMinutes) % CircularTime.minutesPerDay
        return LocalTimeOfDay(minutesSinceMidnight: (minutes + CircularTime.minutesPerDay) % CircularTime.minutesPerDay)
    }

    /// When the pre-workout reminder for the workout on `date` fires: `leadMinutes` of real
    /// time before the workout's instant (the habit on the date's weekday, else `stated`,
    /// resolved in `zone` by its gap and repeat rules). Nil when there is neither.
    public func preWorkoutReminder(
        on date: LocalDate, in zone: ZoneRules, stated: LocalTimeOfDay? = nil, leadMinutes: Int = 45
    ) -> Instant? {
        guard let time = workoutTime(for: date.weekday, stated: stated) else { return nil }
        return zone.instant(for: LocalDateTime(date: date, time: time)) - Int64(leadMinutes) * .secondsPerMinute
    }

    /// When the post-workout check-in fires: `delayMinutes` (default 120) after the workout
    /// ended. Real time, not wall time, so a DST change in between does not move it.
    public static func postWorkoutCheckInTime(workoutEndedAt end: Instant, delayMinutes: Int = 120) -> Instant {
        end + Int64(delayMinutes) * .secondsPerMinute
    }
}

extension WorkoutHabits {
    /// Writes the samples compactly (a snapshot part); the tunables are the engine's defaults.
    func write(to writer: inout CompactWriter) {
        writer.optional(newestDay) { $0.signed($1) }
        for list in samples {
            var previous: Int64 = newestDay ?? 0
            writer.list(list) { writer, sample in
                writer.signed(sample.day - previous)
                previous = sample.day
                writer.unsigned(UInt64(max(0, Int(sample.minute))))
            }
        }
    }

    /// Reads what `write(to:)` wrote, with the default tunables.
    init(reading reader: inout CompactReader) throws {
        self.init()
        newestDay = try reader.optional { reader in try reader.signed(limit: 100_000_000) }
        for index in 0..<7 {
            var previous: Int64 = newestDay ?? 0
            samples[index] = try reader.list(limit: 64) { reader in
                let day = previous + (try reader.signed(limit: 100_000_000))
                previous = day
                let minute = try reader.unsigned()
                guard minute < 1_440 else {
                    throw CompactBytesError(offset: reader.offset, problem: "habit minute \(minute) out of range")
                }
                return Sample(day: day, minute: Int16(minute))
            }
        }
    }
}
