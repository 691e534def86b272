import Models
import Scheduling

/// Daily series: a reminder that fires at the same local time every day can hold one pending
/// slot with a repeating calendar trigger instead of one slot per day, which is what lets an
/// hourly-hydration user keep days of reminders inside iOS's 64 pending requests.
///
/// A repeating request fires whatever happens, so a series is used only where no rule could
/// ever block one of its occurrences: none of its times falls in quiet hours on any weekday,
/// there is no daily cap nor attention budget, and with every other routine reminder of any weekday the rolling
/// hourly cap holds. Otherwise the occurrences are planned one by one, each through the rules.
extension UserEngine {
    /// The local times of the hydration series, or nil when the rules do not allow a series.
    func hydrationSeriesTimes() -> [LocalTimeOfDay]? {
        let preferences = profile.preferences
        let times = preferences.hydrationTimes
        guard configuration.useDailySeries, preferences.maxPerDay == nil, attentionBudget == nil, !times.isEmpty
        else { return nil }
        if let quiet = preferences.quietHours {
            // A week of days covers every weekday.
            for day in Int64(0)..<7 {
                for time in times where quiet.contains(LocalDateTime(daysSinceEpoch: day, time: time)) { return nil }
            }
        }
        // Every routine time of every weekday, in minutes of a week; any 60 minutes must hold at most the cap.
        var week: [Int] = []
        for weekday in Weekday.allCases {
            let base = (weekday.rawValue - 1) * 1_440
            week += preferences.routineTimes(on: weekday, hydration: true).map { base + $0.minuteOfDay }
        }
        week.sort()
        let cap = preferences.maxPerHour
        for (index, start) in week.enumerated() where index + cap < week.count {
            if week[index + cap] - start < 60 { return nil }
        }
        return times
    }

    /// The series times to plan in this pass: none while the user is away or hydration's timing
    /// is adjusted, nor right after a change of zone when its times would come round too soon.
    func activeSeriesTimes(at now: Instant) -> [LocalTimeOfDay]? {
        guard lapseStage(at: now) == .active, !state.coaching.timing.contains(where: { $0.slot.kind == .hydration }),
            let times = state.plan.seriesTimes
        else { return nil }
        if let moved = state.user.zoneChangedAt, now - moved < .secondsPerDay + .secondsPerHour,
            !seriesFitsRecentHistory(times, at: now)
        {
            return nil
        }
        return times
    }

    /// Whether the series' next day of firings fits the hourly cap with what already fired: after a
    /// flight west its times come round again soon after others fired, and then the occurrences
    /// are planned one by one until the series fits again.
    func seriesFitsRecentHistory(_ times: [LocalTimeOfDay], at now: Instant) -> Bool {
        var ledger = state.plan.ledger
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
