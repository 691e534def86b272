import Models
import Scheduling

/// One routine reminder of a local day, from the user's preferences.
struct RoutineTime: Sendable {
    var kind: NotificationKind
    var slot: OccurrenceSlot
    var time: LocalTimeOfDay
    /// -1 when the reminder falls on the evening before the day it belongs to (a workout just
    /// after midnight with its lead time).
    var dayOffset: Int64 = 0

    /// Minutes after the start of the occurrence's day (negative for the evening before).
    var minuteOfDay: Int { time.minutesSinceMidnight + Int(dayOffset) * 1_440 }
}

/// The routine schedule, enumerated in one place for the routine candidates and the daily series.
extension NotificationPreferences {
    /// The hydration times of a day (from wake to sleep at the chosen interval), or none.
    var hydrationTimes: [LocalTimeOfDay] {
        guard isEnabled(.hydration), let hydration else { return [] }
        return stride(
            from: wakeTime.minutesSinceMidnight, to: sleepTime.minutesSinceMidnight, by: hydration.intervalMinutes
        ).map { LocalTimeOfDay(minutesSinceMidnight: $0) }
    }

    /// Morning greeting, meals, hydration (unless a daily series carries it) and the stated
    /// workouts of `weekday`.
    func routineTimes(on weekday: Weekday, hydration: Bool) -> [RoutineTime] {
        dailyRoutineTimes(hydration: hydration) + workoutRoutineTimes(on: weekday)
    }

    /// The routine of every day: morning greeting, meals, hydration (unless a daily series
    /// carries it).
    func dailyRoutineTimes(hydration: Bool) -> [RoutineTime] {
        var result: [RoutineTime] = []
        if isEnabled(.morningGreeting) {
            result.append(RoutineTime(kind: .morningGreeting, slot: .day, time: morningTime))
        }
        if isEnabled(.mealReminder) {
            for meal in MealType.allCases {
                result.append(RoutineTime(kind: .mealReminder, slot: .meal(meal), time: meal.defaultTime))
            }
        }
        if hydration {
            for time in hydrationTimes {
                result.append(RoutineTime(kind: .hydration, slot: .minuteOfDay(time.minutesSinceMidnight), time: time))
            }
        }
        return result
    }

    /// The reminders of the workouts stated for `weekday`, each its lead time before.
    func workoutRoutineTimes(on weekday: Weekday) -> [RoutineTime] {
        var result: [RoutineTime] = []
        if isEnabled(.workoutReminder) {
            for workout in workoutSchedule where workout.weekday == weekday {
                let minute = workout.time.minutesSinceMidnight - workoutReminderLeadMinutes
                result.append(
                    RoutineTime(
                        kind: .workoutReminder, slot: .minuteOfDay(workout.time.minutesSinceMidnight),
                        time: LocalTimeOfDay(minutesSinceMidnight: minute >= 0 ? minute : minute + 1_440),
                        dayOffset: minute >= 0 ? 0 : -1))
            }
        }
        return result
    }
}

/// Routine reminders and the user's recurring reminders: candidate sources of the planning pass.
extension UserEngine {
    /// Routine reminders and coaching from a little before `now` until `end`, in the user's zone,
    /// each with its slot's window and its learned timing; the occurrences learning backs off
    /// go to `skipped` with their reason.
    func routineCandidates(
        at now: Instant, until end: Instant, skipHydration: Bool, skipped: inout [(Candidate, ReasonCode)]
    ) -> [Candidate] {
        let preferences = profile.preferences
        let earliest = now - 4 * .secondsPerHour
        guard end > earliest else { return [] }
        var result: [Candidate] = []
        result.reserveCapacity(64)
        // The level of each routine kind, looked up once per pass rather than once per occurrence.
        let levels = RoutineLevels(preferences)
        var day = zone.localDateTime(at: earliest).daysSinceEpoch
        let streakDay = streakAtRiskDay(at: now)
        let lastDay = zone.localDateTime(at: end).daysSinceEpoch
        // The same every day; only the workouts depend on the weekday (in `routineTimes`' order).
        let daily = preferences.dailyRoutineTimes(hydration: !skipHydration)
        // One zone reading per local day for all its routine times, away from transitions: the
        // day's UTC offset in seconds (nil near a transition, where each time is resolved).
        var offsetReadForDay = Int64.min
        var utcOffsetOfDay: Int64?
        func add(_ routine: RoutineTime, on day: Int64) {
            let localDay = day + routine.dayOffset
            if localDay != offsetReadForDay {
                offsetReadForDay = localDay
                utcOffsetOfDay = zone.uniformOffset(onLocalDay: localDay)
            }
            let wall = LocalDateTime(daysSinceEpoch: localDay, time: routine.time)
            let at =
                utcOffsetOfDay.map { Instant(secondsSinceEpoch: wall.localSeconds - $0) } ?? zone.instant(for: wall)
            guard at < end, at > earliest else { return }
            result.append(
                Candidate(
                    id: OccurrenceID(routine.kind, daysSinceEpoch: day, routine.slot), kind: routine.kind,
                    plannedAt: at, level: levels[routine.kind], policy: .standard(for: routine.kind),
                    windowEnd: SlotWindow.of(routine.kind)?.end(nominal: at)))
        }
        while day <= lastDay {
            for routine in daily { add(routine, on: day) }
            for routine in preferences.workoutRoutineTimes(on: Weekday(daysSinceEpoch: day)) { add(routine, on: day) }
            result += coachingCandidates(day: day, streakAtRiskDay: streakDay, end: end, earliest: earliest)
            day += 1
        }
        guard !state.coaching.timing.isEmpty else { return result }
        return result.compactMap { candidate in
            switch learned(candidate) {
            case .send(let candidate): return candidate
            case .skip(let candidate):
                skipped.append((candidate, .learnedBackOff))
                return nil
            }
        }
    }

    /// Occurrences of the user's recurring reminders (RRULE) from a little before `now` until `end`.
    func reminderCandidates(at now: Instant, until end: Instant) -> [Candidate] {
        let preferences = profile.preferences
        let earliest = now - 4 * .secondsPerHour
        guard preferences.isEnabled(.checkInReminder), end > earliest else { return [] }
        var result: [Candidate] = []
        let from = zone.localDateTime(at: earliest)
        let level = preferences.interruptionLevel(for: .checkInReminder)
        for reminder in preferences.reminders {
            for occurrence in reminder.occurrences(from: from, limit: 64) {
                let at = zone.instant(for: occurrence)
                guard at < end else { break }
                guard at > earliest else { continue }
                let slot = OccurrenceSlot.reminder(number: reminder.number, minuteOfDay: occurrence.secondOfDay / 60)
                result.append(
                    Candidate(
                        id: OccurrenceID(.checkInReminder, daysSinceEpoch: occurrence.daysSinceEpoch, slot),
                        kind: .checkInReminder, plannedAt: at, level: level, policy: .standard(for: .checkInReminder),
                        windowEnd: SlotWindow.of(.checkInReminder)?.end(nominal: at)))
            }
        }
        return result
    }
}

/// Interruption levels of the routine kinds, resolved once per planning pass.
struct RoutineLevels {
    let morning, meal, hydration, workout: InterruptionLevel

    init(_ preferences: NotificationPreferences) {
        morning = preferences.interruptionLevel(for: .morningGreeting)
        meal = preferences.interruptionLevel(for: .mealReminder)
        hydration = preferences.interruptionLevel(for: .hydration)
        workout = preferences.interruptionLevel(for: .workoutReminder)
    }

    subscript(kind: NotificationKind) -> InterruptionLevel {
        switch kind {
        case .morningGreeting: morning
        case .mealReminder: meal
        case .hydration: hydration
        default: workout
        }
    }
}
