import Foundation
public import Models

// MARK: - Circular statistics on the clock

/// Means and spreads of times of day, taken on the 24-hour circle.
///
/// The rowing coach's seed averaged minutes after midnight arithmetically, so 23:30 and 00:30
/// came out as 12:00. Here every time is an angle on the clock face and the mean is the
/// direction of the summed unit vectors: 23:30 and 00:30 average to 00:00.
public enum CircularTime {
    /// Minutes in a day: the circumference of the clock face.
    public static let minutesPerDay = 1_440

    /// The circular mean of `minutes` (each in 0 ..< 1440, minutes after local midnight) with
    /// its circular standard deviation in minutes, `sqrt(-2 ln R)` scaled to the clock, where
    /// `R` is the length of the mean resultant vector (1 when all times agree).
    ///
    /// Returns nil for no times, and when the times have no mean direction (`R` within 1e-9 of
    /// 0, as for 06:00 and 18:00 exactly): no habitual time exists then, however many points.
    /// The mean is rounded to the nearest minute.
    public static func mean(minutes: some Sequence<Int>) -> (meanMinutes: Int, spreadMinutes: Double)? {
        var sumCos = 0.0
        var sumSin = 0.0
        var count = 0
        let radiansPerMinute = 2 * Double.pi / Double(minutesPerDay)
        for minute in minutes {
            let angle = Double(minute) * radiansPerMinute
            sumCos += cos(angle)
            sumSin += sin(angle)
            count += 1
        }
        guard count > 0 else { return nil }
        let resultant = (sumCos * sumCos + sumSin * sumSin).squareRoot() / Double(count)
        guard resultant > 1e-9 else { return nil }
        let meanAngle = atan2(sumSin, sumCos)
        let rounded = Int((meanAngle / radiansPerMinute).rounded())
        let meanMinutes = ((rounded % minutesPerDay) + minutesPerDay) % minutesPerDay
        // R can exceed 1 by a rounding error; the spread of identical times is exactly 0.
        let spreadRadians = (-2 * log(min(1, resultant))).squareRoot()
        return (meanMinutes, spreadRadians / radiansPerMinute)
    }

    /// The circular mean and spread of `times`; see `mean(minutes:)`.
    public static func mean(of times: some Sequence<LocalTimeOfDay>) -> (
        mean: LocalTimeOfDay, spreadMinutes: Double
    )? {
        guard let result = mean(minutes: times.lazy.map(\.minutesSinceMidnight)) else { return nil }
        return (LocalTimeOfDay(minutesSinceMidnight: result.meanMinutes), result.spreadMinutes)
    }
}

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

/// When a user actually trains, per weekday (seed 002's pattern analysis, done right).
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
    /// The minimum samples on a weekday for a habit (seed 002's `minimumDataPoints`).
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

    /// The wall time `leadMinutes` (seed 002: 45) before the habitual time on `weekday`, or nil
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

    /// When the post-workout check-in fires: `delayMinutes` (seed 002: 120) after the workout
    /// ended. Real time, not wall time, so a DST change in between does not move it.
    public static func postWorkoutCheckInTime(workoutEndedAt end: Instant, delayMinutes: Int = 120) -> Instant {
        end + Int64(delayMinutes) * .secondsPerMinute
    }
}

// MARK: - Weekly review

/// The Sunday review of one local week (seed 002): "completed / planned" and its tier.
///
/// The week runs Monday 00:00 to Sunday 24:00 local. A review made before the week ends (the
/// seed's Sunday 19:00) counts what is due so far: workouts done before `asOf`, and planned
/// sessions whose scheduled local time is before `asOf`, so an evening session still ahead is
/// not counted as missed.
public struct WeeklyReview: Hashable, Sendable, Codable {
    /// The seed's tiers, by completion rate.
    public enum Tier: String, Hashable, Sendable, Codable, CaseIterable {
        /// Rate at least 0.8.
        case greatConsistency
        /// Rate at least 0.6.
        case goodEffort
        /// Rate under 0.6.
        case letsImproveNextWeek

        /// The seed's line for the tier.
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

// MARK: - Response feedback

/// What the user did with a delivered notification, as timing feedback sees it.
public enum ResponseOutcome: String, Hashable, Sendable, Codable, CaseIterable {
    /// Tapped it or used an action other than snooze and dismiss (a skip is an answer too:
    /// the timing reached the user).
    case acted
    /// Asked for it later.
    case snoozed
    /// Swiped it away (the custom dismiss action).
    case dismissed
    /// No response before it went stale; the shell decides when that is.
    case ignored

    /// The outcome of an action identifier.
    public init(action: NotificationActionID) {
        switch action {
        case .snooze30, .snoozeReminder, .snooze: self = .snoozed
        case .dismiss: self = .dismissed
        case .logMood, .quickChat, .startWorkout, .logMeal, .quickAdd, .startWorkoutAction, .skipTodayAction,
            .logEnergyAction, .completeWorkout, .logWorkout, .skipWorkout, .startNow, .defaultTap:
            self = .acted
        }
    }
}

/// How a kind's send time at one local hour should change, from the user's responses there.
public enum TimingAdjustment: Hashable, Sendable, Codable {
    /// Send as planned.
    case keep
    /// Move the send time by this many minutes (negative is earlier), same local day.
    case shift(minutes: Int)
    /// Send only every `factor`-th occurrence (or stretch the interval by `factor`): 2, 4 or 8.
    case backOff(factor: Int)
}

/// Responses per notification kind per local hour of delivery, and the timing rule they drive
/// (seed 002: quick actions feed back into future timing).
///
/// The rule for `(kind, hour)`, first match wins (defaults in `Thresholds`):
/// 1. Fewer than `minimumResponses` responses recorded there: `.keep` (too little evidence).
/// 2. A run of at least `backOffAfterNegatives` (6) dismissals or ignores with no act or snooze
///    in between: `.backOff(factor:)`, 2 at 6, doubling every further `shiftAfterNegatives`
///    (4 at 9, 8 at 12), at most `maximumBackOffFactor` (8).
/// 3. A run of at least `shiftAfterNegatives` (3): `.shift` to the same kind's best other hour,
///    the one with the highest action rate (at least `reinforcingActionRate`, 0.5, over at least
///    `minimumResponses` responses; ties go to the nearer hour, then the earlier); with no such
///    hour, `defaultShiftMinutes` (60) later, or earlier from `latestHourToShiftLater` (21:00) on.
/// 4. A run of at least `snoozesToShift` (2) snoozes with no act in between: `.shift` later by
///    `snoozeShiftMinutes` (30), the delay the user keeps asking for.
/// 5. Otherwise `.keep`.
///
/// Acting reinforces: it ends both runs at once (the hour goes back to `.keep`) and raises the
/// hour's action rate, making it a target for other hours' shifts. A snooze ends a negative run
/// (the user engaged). Memory is bounded (at most one small cell per kind and hour), and when a
/// cell's counts reach `halveAtTotal` (64) they are halved, so old behaviour fades.
public struct ResponseStats: Hashable, Sendable, Codable {
    /// The rule's thresholds; the defaults are documented on `ResponseStats`.
    public struct Thresholds: Hashable, Sendable, Codable {
        public var minimumResponses = 3
        public var shiftAfterNegatives = 3
        public var backOffAfterNegatives = 6
        public var maximumBackOffFactor = 8
        public var snoozesToShift = 2
        public var snoozeShiftMinutes = 30
        public var defaultShiftMinutes = 60
        public var latestHourToShiftLater = 21
        public var reinforcingActionRate = 0.5
        public var halveAtTotal = 64

        public init() {}
    }

    /// The responses at one kind and local hour.
    public struct Counts: Hashable, Sendable, Codable {
        public var acted: Int32 = 0
        public var snoozed: Int32 = 0
        public var dismissed: Int32 = 0
        public var ignored: Int32 = 0
        /// Dismissals and ignores since the last act or snooze.
        public var negativeRun: Int32 = 0
        /// Snoozes since the last act.
        public var snoozeRun: Int32 = 0

        public init() {}

        public var total: Int { Int(acted) + Int(snoozed) + Int(dismissed) + Int(ignored) }

        /// acted / total; nil without responses.
        public var actionRate: Double? { total > 0 ? Double(acted) / Double(total) : nil }
    }

    struct Cell: Hashable, Sendable, Codable {
        /// `kind.ordinal * 24 + hour`: cells sort by kind, then hour.
        var key: Int
        var counts: Counts
    }

    public var thresholds: Thresholds
    /// Sorted by key; at most one per kind and hour.
    private var cells: [Cell] = []

    public init(thresholds: Thresholds = Thresholds()) { self.thresholds = thresholds }

    private static func key(_ kind: NotificationKind, _ hour: Int) -> Int {
        precondition((0..<24).contains(hour), "hour out of range: \(hour)")
        return kind.ordinal * 24 + hour
    }

    private func position(of key: Int) -> (index: Int, found: Bool) {
        var low = 0
        var high = cells.count
        while low < high {
            let middle = (low + high) / 2
            if cells[middle].key < key { low = middle + 1 } else { high = middle }
        }
        return (low, low < cells.count && cells[low].key == key)
    }

    /// Records a response to a `kind` notification delivered at local hour `hour` (0 ..< 24).
    public mutating func record(_ outcome: ResponseOutcome, kind: NotificationKind, hour: Int) {
        let key = ResponseStats.key(kind, hour)
        let (index, found) = position(of: key)
        if !found { cells.insert(Cell(key: key, counts: Counts()), at: index) }
        var counts = cells[index].counts
        switch outcome {
        case .acted:
            counts.acted += 1
            counts.negativeRun = 0
            counts.snoozeRun = 0
        case .snoozed:
            counts.snoozed += 1
            counts.negativeRun = 0
            counts.snoozeRun += 1
        case .dismissed:
            counts.dismissed += 1
            counts.negativeRun += 1
        case .ignored:
            counts.ignored += 1
            counts.negativeRun += 1
        }
        if counts.total >= thresholds.halveAtTotal {
            counts.acted /= 2
            counts.snoozed /= 2
            counts.dismissed /= 2
            counts.ignored /= 2
        }
        cells[index].counts = counts
    }

    /// Records a response to a `kind` notification delivered at `deliveredAt`; the hour is
    /// the local hour in `zone` (the user's zone at delivery).
    public mutating func record(
        _ outcome: ResponseOutcome, kind: NotificationKind, deliveredAt: Instant, in zone: ZoneRules
    ) {
        record(outcome, kind: kind, hour: zone.localDateTime(at: deliveredAt).hour)
    }

    /// The counts at `kind` and `hour` (all zero when none were recorded).
    public func counts(kind: NotificationKind, hour: Int) -> Counts {
        let (index, found) = position(of: ResponseStats.key(kind, hour))
        return found ? cells[index].counts : Counts()
    }

    /// The counts of `kind` over all hours (runs are summed too).
    public func counts(kind: NotificationKind) -> Counts {
        var sum = Counts()
        for cell in cells where cell.key / 24 == kind.ordinal {
            sum.acted += cell.counts.acted
            sum.snoozed += cell.counts.snoozed
            sum.dismissed += cell.counts.dismissed
            sum.ignored += cell.counts.ignored
            sum.negativeRun += cell.counts.negativeRun
            sum.snoozeRun += cell.counts.snoozeRun
        }
        return sum
    }

    /// The timing rule for `kind` at local hour `hour`; see `ResponseStats`.
    public func adjustment(kind: NotificationKind, hour: Int) -> TimingAdjustment {
        let counts = counts(kind: kind, hour: hour)
        let negativeRun = Int(counts.negativeRun)
        guard counts.total >= thresholds.minimumResponses else { return .keep }
        if negativeRun >= thresholds.backOffAfterNegatives {
            let doublings = (negativeRun - thresholds.backOffAfterNegatives) / max(1, thresholds.shiftAfterNegatives)
            let factor = 2 << min(doublings, 16)
            return .backOff(factor: min(factor, max(2, thresholds.maximumBackOffFactor)))
        }
        if negativeRun >= thresholds.shiftAfterNegatives {
            if let target = bestHour(of: kind, besides: hour) { return .shift(minutes: (target - hour) * 60) }
            let minutes = thresholds.defaultShiftMinutes
            return .shift(minutes: hour < thresholds.latestHourToShiftLater ? minutes : -minutes)
        }
        if Int(counts.snoozeRun) >= thresholds.snoozesToShift { return .shift(minutes: thresholds.snoozeShiftMinutes) }
        return .keep
    }

    /// The hours of `kinds` whose timing rule is not `.keep` (only hours with responses can
    /// have one), by kind, then hour.
    func timingRules(for kinds: Set<NotificationKind>) -> [TimingRule] {
        var rules: [TimingRule] = []
        for cell in cells where cell.counts.total >= thresholds.minimumResponses {
            guard let kind = NotificationKind(ordinal: cell.key / 24), kinds.contains(kind) else { continue }
            let hour = cell.key % 24
            let adjustment = adjustment(kind: kind, hour: hour)
            if adjustment != .keep { rules.append(TimingRule(kind: kind, hour: hour, adjustment: adjustment)) }
        }
        return rules
    }

    /// The kind's other hour with the best action rate that qualifies as a shift target.
    private func bestHour(of kind: NotificationKind, besides hour: Int) -> Int? {
        var best: (hour: Int, rate: Double)?
        for cell in cells where cell.key / 24 == kind.ordinal {
            let candidate = cell.key % 24
            let counts = cell.counts
            guard candidate != hour, counts.total >= thresholds.minimumResponses,
                Int(counts.negativeRun) < thresholds.shiftAfterNegatives, let rate = counts.actionRate,
                rate >= thresholds.reinforcingActionRate
            else { continue }
            if let current = best {
                let nearer = abs(candidate - hour) < abs(current.hour - hour)
                // Cells come in ascending hour order, so an equally near later hour never wins.
                guard rate > current.rate || (rate == current.rate && nearer) else { continue }
            }
            best = (candidate, rate)
        }
        return best?.hour
    }
}
