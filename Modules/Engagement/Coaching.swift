import Content
import Models
import Scheduling

/// Proactive coaching, from what the user actually does: a pre-workout reminder 45
/// minutes before the habitual time of that weekday (a circular mean of completed workouts, only
/// with enough data points), a check-in 2 hours after the workout unless one was logged, the
/// Sunday 19:00 weekly review with its completion tier, a streak reminder on a day that would
/// break a streak, and achievements at streak milestones. Responses feed back into timing
/// (`ResponseLearning.swift`).
extension UserEngine {
    /// Streak lengths that earn an achievement.
    static let streakMilestones: Set<Int> = [3, 7, 14, 30, 60, 100]

    /// Records a completed workout: habits, streak, the week's log, and a milestone achievement.
    mutating func recordWorkout(at now: Instant, durationMinutes: Int) {
        state.coaching.habits.record(workoutCompletedAt: now, durationMinutes: durationMinutes, in: zone)
        state.coaching.streak.record(workoutAt: now, in: zone)
        let start = zone.localDateTime(at: now - Int64(durationMinutes) * .secondsPerMinute)
        state.coaching.recentWorkouts.append(start)
        let recent = state.coaching.recentWorkouts.count
        if recent > 32 { state.coaching.recentWorkouts.removeFirst(recent - 32) }
        let today = zone.localDateTime(at: now).daysSinceEpoch
        let days = state.coaching.streak.currentDays(today: LocalDate(daysSinceEpoch: today))
        if UserEngine.streakMilestones.contains(days) { scheduleAchievement(streakDays: days, on: today, at: now) }
    }

    /// The local day at `now` when a streak of two days or more breaks without a workout that day
    /// (its streak reminder is proposed); nil when none is at risk. Whether tomorrow would break
    /// a streak depends on today, so only today is ever at risk.
    func streakAtRiskDay(at now: Instant) -> Int64? {
        let today = zone.localDateTime(at: now).daysSinceEpoch
        guard state.coaching.streak.currentDays(today: LocalDate(daysSinceEpoch: today)) >= 2,
            !state.coaching.recentWorkouts.contains(where: { $0.daysSinceEpoch == today })
        else { return nil }
        return today
    }

    /// Coaching candidates of the local day `day`, before `end`; the streak reminder when `day`
    /// is `streakAtRiskDay`.
    func coachingCandidates(day: Int64, streakAtRiskDay: Int64?, end: Instant, earliest: Instant) -> [Candidate] {
        let preferences = profile.preferences
        let weekday = Weekday(daysSinceEpoch: day)
        var result: [Candidate] = []
        func add(_ kind: NotificationKind, _ slot: OccurrenceSlot, minute: Int) {
            guard preferences.isEnabled(kind) else { return }
            let dayOffset = Int64(minute >= 0 ? minute / 1_440 : (minute - 1_439) / 1_440)
            let wrapped = minute - Int(dayOffset) * 1_440
            let at = zone.instant(
                for: LocalDateTime(daysSinceEpoch: day + dayOffset, time: LocalTimeOfDay(minutesSinceMidnight: wrapped))
            )
            guard at < end, at > earliest else { return }
            result.append(candidate(OccurrenceID(kind, daysSinceEpoch: day, slot), at: at))
        }
        // Habits need data: without enough workouts on this weekday, the stated schedule's
        // workout reminder (15 minutes before) is the only nudge.
        if let habit = state.coaching.habits.habit(for: weekday) {
            let minute = habit.time.minutesSinceMidnight
            add(.preWorkout, .minuteOfDay(minute), minute: minute - preferences.preWorkoutLeadMinutes)
            add(.postWorkoutCheckIn, .minuteOfDay(minute), minute: minute + preferences.postWorkoutDelayMinutes)
        }
        if weekday == .sunday { add(.weeklyReview, .day, minute: 19 * 60) }
        if day == streakAtRiskDay { add(.streakReminder, .day, minute: 18 * 60) }
        return result
    }

    /// The facts coaching copy may use (redacted later for the privacy level).
    func coachingFacts(_ context: inout CopyContext, for id: OccurrenceID, fireAt: Instant) {
        switch id.kind {
        case .weeklyReview:
            let review = WeeklyReview(
                asOf: zone.localDateTime(at: fireAt), workoutStarts: state.coaching.recentWorkouts,
                schedule: profile.preferences.workoutSchedule)
            context.workoutsCompleted = review.completed
            context.workoutsPlanned = review.planned
        case .streakReminder, .achievement:
            context.streakDays = state.coaching.streak.currentDays(today: zone.localDate(at: fireAt))
        case .preWorkout, .postWorkoutCheckIn:
            context.workoutType =
                profile.preferences.workoutSchedule.first { $0.weekday == id.date.weekday }?.type ?? "workout"
        default: break
        }
    }
}
