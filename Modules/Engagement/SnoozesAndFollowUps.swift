import Models
import Scheduling

/// Snoozed copies and one-off follow-ups, a candidate source: a snooze brings one occurrence
/// back later (its next snoozed copy); a check-in is followed by a reflection a day later; a
/// streak milestone by an achievement. Each stays a candidate until it fires or goes stale.
extension UserEngine {
    /// Puts `answered` off by `seconds`: its next snoozed copy replaces any earlier one.
    mutating func snooze(_ answered: OccurrenceID, for seconds: Int64, at now: Instant) {
        let id = answered.snoozedAgain
        state.reminders.snoozed.removeAll { $0.id.original == id.original }
        state.reminders.snoozed.append(candidate(id, at: now + seconds))
    }

    /// A reflection a day after a completed check-in, replacing any earlier one.
    mutating func scheduleReflection(after now: Instant) {
        let reflectAt = now + .secondsPerDay
        let local = zone.localDateTime(at: reflectAt)
        state.reminders.followUps.removeAll { $0.kind == .reflection }
        state.reminders.followUps.append(
            candidate(
                OccurrenceID(.reflection, daysSinceEpoch: local.daysSinceEpoch, .minuteOfDay(local.secondOfDay / 60)),
                at: reflectAt))
    }

    /// An achievement for a streak milestone, at once.
    mutating func scheduleAchievement(streakDays: Int, on day: Int64, at now: Instant) {
        state.reminders.followUps.append(
            candidate(OccurrenceID(.achievement, daysSinceEpoch: day, .streakDays(streakDays)), at: now + 1))
    }

    /// A snoozed copy or follow-up that fired is done.
    mutating func retireReminder(_ id: OccurrenceID) {
        if id.snooze > 0 { state.reminders.snoozed.removeAll { $0.id == id } }
        if id.kind == .reflection || id.kind == .achievement { state.reminders.followUps.removeAll { $0.id == id } }
    }

    /// Drops the ones past their staleness deadline.
    mutating func pruneStaleReminders(at now: Instant) {
        state.reminders.snoozed.removeAll { $0.plannedAt + $0.policy.stalenessSeconds < now }
        state.reminders.followUps.removeAll { $0.plannedAt + $0.policy.stalenessSeconds < now }
    }
}
