import Models
import Scheduling

/// The lapse campaign, a candidate source: nudges planned ahead at the days after the last
/// activity (3, and 7 and 14 for check_in_on_me), at the user's habitual active time, so they
/// fire even if the app never runs again, and are cancelled the moment the user returns.
/// give_me_space means silence; the holdout gets nothing, so the lift can be measured.
extension UserEngine {
    /// When the user usually opens the app (circular mean of recent opens, from five of them),
    /// rounded to 15 minutes: nudges go out then, not at the moment a lapse is detected.
    static func habitualActiveTime(opens: [Int]) -> LocalTimeOfDay? {
        guard opens.count >= 5, let mean = CircularTime.mean(minutes: opens) else { return nil }
        return LocalTimeOfDay(minutesSinceMidnight: (mean.meanMinutes / 15 * 15) % 1_440)
    }

    var habitualActiveTime: LocalTimeOfDay? { state.activity.habitualActiveTime }

    /// The nudge times of the current campaign (and the day of the last activity, which names
    /// it), recomputed only when something they depend on changed (most inputs change none of
    /// it: a delivery, a coach answer, a background run).
    mutating func currentReEngagementTimes() -> [Int64] {
        let inputs = ReEngagementInputs(
            lastActiveAt: lastActiveAt, zone: zone.identifier, habitualTime: habitualActiveTime,
            enabled: profile.preferences.isEnabled(.reEngagement), communication: profile.communication)
        if let cached = state.lapse.cache, cached.inputs == inputs { return cached.times }
        var candidates: [Candidate] = []
        var suppressed: [(Candidate, ReasonCode)] = []
        appendReEngagement(to: &candidates, suppressed: &suppressed, at: lastActiveAt)
        let times =
            candidates.map { $0.plannedAt.secondsSinceEpoch } + [Int64(zone.localDate(at: lastActiveAt).daysSinceEpoch)]
        state.lapse.cache = (inputs, times)
        return times
    }

    /// Appends the campaign's nudges; a silenced campaign appends its first nudge to
    /// `suppressed` with the reason, once the user is actually away at `now`.
    func appendReEngagement(
        to candidates: inout [Candidate], suppressed: inout [(Candidate, ReasonCode)], at now: Instant
    ) {
        let preferences = profile.preferences
        guard preferences.isEnabled(.reEngagement) else { return }
        let response = profile.communication.absenceResponse
        let days: [Int] =
            switch response {
            case .giveMeSpace: [Int(configuration.lapseAfterSeconds / .secondsPerDay)]
            case .lightNudge: configuration.lightNudgeAttemptDays
            case .checkInOnMe: configuration.checkInOnMeAttemptDays
            }
        let time = profile.communication.preferredTimes.first ?? habitualActiveTime ?? configuration.nudgeTime
        let lapseDate = zone.localDate(at: lastActiveAt)
        for (index, day) in days.enumerated() {
            let due = lastActiveAt + Int64(day) * .secondsPerDay
            var date = zone.localDate(at: due)
            if zone.instant(for: LocalDateTime(date: date, time: time)) < due { date = date.adding(days: 1) }
            let candidate = candidate(
                OccurrenceID(.reEngagement, date: lapseDate, .attempt(index + 1)),
                at: zone.instant(for: LocalDateTime(date: date, time: time)))
            if response == .giveMeSpace {
                // Silence, and the trace says so, once the user is actually away.
                if due <= now { suppressed.append((candidate, .absenceGiveMeSpace)) }
                return
            }
            if isHeldOut {
                // The control group: no nudge, so the lift of nudges can be measured.
                if due <= now { suppressed.append((candidate, .holdout)) }
                return
            }
            candidates.append(candidate)
        }
    }
}
