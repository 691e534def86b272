import Content
import Models
import Scheduling

/// Seed 002's proactive coaching, from what the user actually does: a pre-workout reminder 45
/// minutes before the habitual time of that weekday (a circular mean of completed workouts, only
/// with enough data points), a check-in 2 hours after the workout unless one was logged, the
/// Sunday 19:00 weekly review with its completion tier, a streak reminder on a day that would
/// break a streak, and achievements at streak milestones. Responses feed back into timing.
extension UserEngine {
    /// Streak lengths that earn an achievement.
    static let streakMilestones: Set<Int> = [3, 7, 14, 30, 60, 100]

    /// Records a completed workout: habits, streak, the week's log, and a milestone achievement.
    mutating func recordWorkout(at now: Instant, durationMinutes: Int) {
        habits.record(workoutCompletedAt: now, durationMinutes: durationMinutes, in: zone)
        streak.record(workoutAt: now, in: zone)
        let start = zone.localDateTime(at: now - Int64(durationMinutes) * .secondsPerMinute)
        recentWorkouts.append(start)
        if recentWorkouts.count > 32 { recentWorkouts.removeFirst(recentWorkouts.count - 32) }
        let today = zone.localDateTime(at: now).daysSinceEpoch
        let days = streak.currentDays(today: LocalDate(daysSinceEpoch: today))
        if UserEngine.streakMilestones.contains(days) {
            followUps.append(
                candidate(OccurrenceID(kind: .achievement, daysSinceEpoch: today, slot: days), at: now + 1))
        }
    }

    /// Coaching candidates of the local day `day`, before `end`.
    func coachingCandidates(day: Int64, today: Int64, end: Instant, earliest: Instant) -> [Candidate] {
        let preferences = profile.preferences
        let weekday = Weekday(daysSinceEpoch: day)
        var result: [Candidate] = []
        func add(_ kind: NotificationKind, slot: Int, minute: Int) {
            guard preferences.isEnabled(kind) else { return }
            let dayOffset = Int64(minute >= 0 ? minute / 1_440 : (minute - 1_439) / 1_440)
            let wrapped = minute - Int(dayOffset) * 1_440
            let at = zone.instant(
                for: LocalDateTime(daysSinceEpoch: day + dayOffset, time: LocalTimeOfDay(minutesSinceMidnight: wrapped))
            )
            guard at < end, at > earliest else { return }
            result.append(candidate(OccurrenceID(kind: kind, daysSinceEpoch: day, slot: slot), at: at))
        }
        // Habits need data: without enough workouts on this weekday, the stated schedule's
        // workout reminder (15 minutes before) is the only nudge.
        if let habit = habits.habit(for: weekday) {
            let minute = habit.time.minutesSinceMidnight
            add(.preWorkout, slot: minute, minute: minute - preferences.preWorkoutLeadMinutes)
            add(.postWorkoutCheckIn, slot: minute, minute: minute + preferences.postWorkoutDelayMinutes)
        }
        if weekday == .sunday { add(.weeklyReview, slot: 0, minute: 19 * 60) }
        // Only today: whether tomorrow would break a streak depends on today.
        if day == today, streak.currentDays(today: LocalDate(daysSinceEpoch: today)) >= 2,
            !recentWorkouts.contains(where: { $0.daysSinceEpoch == today })
        {
            add(.streakReminder, slot: 0, minute: 18 * 60)
        }
        return result
    }

    /// The facts coaching copy may use (redacted later for the privacy level).
    func coachingFacts(_ context: inout CopyContext, for id: OccurrenceID, fireAt: Instant) {
        switch id.kind {
        case .weeklyReview:
            let review = WeeklyReview(
                asOf: zone.localDateTime(at: fireAt), workoutStarts: recentWorkouts,
                schedule: profile.preferences.workoutSchedule)
            context.workoutsCompleted = review.completed
            context.workoutsPlanned = review.planned
        case .streakReminder, .achievement:
            context.streakDays = streak.currentDays(today: zone.localDate(at: fireAt))
        case .preWorkout, .postWorkoutCheckIn:
            context.workoutType =
                profile.preferences.workoutSchedule.first { $0.weekday == id.date.weekday }?.type ?? "workout"
        default: break
        }
    }

    // MARK: - Response feedback

    /// Remembers a notification that fired, to learn whether the user answers it.
    mutating func awaitResponse(_ id: OccurrenceID, firedAt: Instant) {
        guard UserEngine.adjustableKinds.contains(id.kind) else { return }
        unanswered.append((id, firedAt))
        if unanswered.count > 64 { unanswered.removeFirst(unanswered.count - 64) }
    }

    /// Records the user's answer to a notification of `kind`.
    mutating func learnResponse(_ outcome: ResponseOutcome, requestID: String, kind: NotificationKind, at now: Instant)
    {
        guard let id = OccurrenceID(requestID: requestID), let index = unanswered.firstIndex(where: { $0.id == id })
        else { return }
        let firedAt = unanswered.remove(at: index).firedAt
        learn(outcome, kind: kind, hour: zone.localDateTime(at: firedAt).hour)
    }

    /// Records a response; the plan changes only when the timing rule for that hour changes.
    private mutating func learn(_ outcome: ResponseOutcome, kind: NotificationKind, hour: Int) {
        let before = responses.adjustment(kind: kind, hour: hour)
        responses.record(outcome, kind: kind, hour: hour)
        if responses.adjustment(kind: kind, hour: hour) != before { planInputsVersion += 1 }
    }

    /// Notifications nobody answered within three hours count as ignored.
    mutating func expireUnanswered(at now: Instant) {
        while let first = unanswered.first, first.firedAt + 3 * .secondsPerHour < now {
            unanswered.removeFirst()
            learn(.ignored, kind: first.id.kind, hour: zone.localDateTime(at: first.firedAt).hour)
        }
    }

    /// Kinds whose timing responses adjust.
    static let adjustableKinds: Set<NotificationKind> = [.morningGreeting, .hydration, .mealReminder]

    /// Applies the learned timing to a routine candidate: shift it, or (backing off) keep only
    /// every n-th day of it. Returns nil when the day is skipped.
    func adjusted(_ candidate: Candidate) -> Candidate? {
        guard UserEngine.adjustableKinds.contains(candidate.kind) else { return candidate }
        let hour = zone.localDateTime(at: candidate.plannedAt).hour
        switch responses.adjustment(kind: candidate.kind, hour: hour) {
        case .keep: return candidate
        case .shift(let minutes):
            var moved = candidate
            moved.plannedAt = candidate.plannedAt + Int64(minutes) * .secondsPerMinute
            return moved
        case .backOff(let factor):
            return Int64(candidate.id.day) % Int64(max(1, factor)) == 0 ? candidate : nil
        }
    }
}

extension ResponseStats {
    /// No answer of an adjustable kind recorded yet: nothing to adjust.
    var isEmpty: Bool { UserEngine.adjustableKinds.allSatisfy { counts(kind: $0).total == 0 } }

    /// Whether any hour of `kind` is shifted or backed off.
    func adjusts(_ kind: NotificationKind) -> Bool {
        counts(kind: kind).total > 0 && (0..<24).contains { adjustment(kind: kind, hour: $0) != .keep }
    }
}
