import Models
import Scheduling

/// Daily series: a reminder that fires at the same local time every day can hold one pending
/// slot with a repeating calendar trigger instead of one slot per day, which is what lets an
/// hourly-hydration user keep days of reminders inside iOS's 64 pending requests.
///
/// A repeating request fires whatever happens, so a series is used only where no rule could
/// ever block one of its occurrences: none of its times falls in quiet hours on any weekday,
/// there is no daily cap, and with every other routine reminder of any weekday the rolling
/// hourly cap holds. Otherwise the occurrences are planned one by one, each through the rules.
extension UserEngine {
    /// The local times of the hydration series, or nil when the rules do not allow a series.
    func hydrationSeriesTimes() -> [LocalTimeOfDay]? {
        let preferences = profile.preferences
        guard configuration.useDailySeries, preferences.isEnabled(.hydration), let frequency = preferences.hydration,
            preferences.maxPerDay == nil
        else { return nil }
        var times: [LocalTimeOfDay] = []
        var minute = preferences.wakeTime.minutesSinceMidnight
        while minute < preferences.sleepTime.minutesSinceMidnight {
            times.append(LocalTimeOfDay(minutesSinceMidnight: minute))
            minute += frequency.intervalMinutes
        }
        guard !times.isEmpty else { return nil }
        if let quiet = preferences.quietHours {
            // A week of days covers every weekday.
            for day in Int64(0)..<7 {
                for time in times where quiet.contains(LocalDateTime(daysSinceEpoch: day, time: time)) { return nil }
            }
        }
        // Every routine time of every weekday, in minutes of a week; any 60 minutes must hold at most the cap.
        var week: [Int] = []
        for weekdayIndex in 0..<7 {
            let base = weekdayIndex * 1_440
            week += times.map { base + $0.minutesSinceMidnight }
            if preferences.isEnabled(.morningGreeting) {
                week.append(base + preferences.morningTime.minutesSinceMidnight)
            }
            if preferences.isEnabled(.mealReminder) {
                week += MealType.allCases.map { base + $0.defaultTime.minutesSinceMidnight }
            }
            let weekday = Weekday(rawValue: weekdayIndex + 1)!
            if preferences.isEnabled(.workoutReminder) {
                for workout in preferences.workoutSchedule where workout.weekday == weekday {
                    week.append(base + workout.time.minutesSinceMidnight - preferences.workoutReminderLeadMinutes)
                }
            }
        }
        week.sort()
        let cap = preferences.maxPerHour
        for (index, start) in week.enumerated() where index + cap < week.count {
            if week[index + cap] - start < 60 { return nil }
        }
        return times
    }

    /// Whether the series' next day of firings fits the hourly cap with what already fired: after a
    /// flight west its times come round again soon after others fired, and then the occurrences
    /// are planned one by one until the series fits again.
    func seriesFitsRecentHistory(_ times: [LocalTimeOfDay], at now: Instant) -> Bool {
        var ledger = self.ledger
        let cap = profile.preferences.maxPerHour
        for at in times.flatMap({ seriesFireTimes($0, from: now + 1, to: now + .secondsPerDay) }).sorted() {
            guard ledger.earliestWithinHourlyCap(from: at, cap: cap, limit: at) == at else { return false }
            ledger.insert(at)
        }
        return true
    }

    /// The fire times of a series in `from ..< to`, in the user's zone.
    func seriesFireTimes(_ time: LocalTimeOfDay, from: Instant, to: Instant) -> [Instant] {
        var result: [Instant] = []
        var day = zone.localDateTime(at: from).daysSinceEpoch - 1
        let lastDay = zone.localDateTime(at: to).daysSinceEpoch
        while day <= lastDay {
            let at = zone.instant(for: LocalDateTime(daysSinceEpoch: day, time: time))
            if at >= from && at < to { result.append(at) }
            day += 1
        }
        return result
    }

    /// The next fire time of a series after `now`.
    func nextSeriesFire(_ time: LocalTimeOfDay, after now: Instant) -> Instant {
        CalendarMatch.daily(at: time).nextMatch(after: now, in: zone) ?? now + .secondsPerDay
    }
}
