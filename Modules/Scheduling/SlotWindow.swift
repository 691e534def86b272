public import Models

/// Where an occurrence may fire, around its slot's nominal local time: a breakfast reminder is
/// a morning reminder, a hydration reminder named for 13:00 is about 13:00.
///
/// The window is `[nominal + earliestMinutes, nominal + latestMinutes)`, in real minutes from
/// the instant of the nominal wall time (`ZoneRules.resolve`: a time in a spring-forward gap is
/// the end of the gap, a repeated time its first occurrence). Per kind:
///
/// | kind | nominal local time (slot) | window |
/// |---|---|---|
/// | `morningGreeting` | the preferences' `morningTime` | -60 ..< +180 min |
/// | `mealReminder` | the meal's time: breakfast 08:00, lunch 12:30, snack 15:00, dinner 18:30 | -60 ..< +90 min |
/// | `hydration` | the slot's time (`hydration.2027-03-03.1300`: 13:00; a daily series: its time every day) | -30 ..< +30 min |
/// | `workoutReminder` | the workout's time less `workoutReminderLeadMinutes` | -30 ..< +10 min |
/// | `preWorkout` | the habitual workout time less `preWorkoutLeadMinutes` | -30 ..< +10 min |
/// | `postWorkoutCheckIn` | the habitual workout time plus `postWorkoutDelayMinutes` | -60 ..< +180 min |
/// | `weeklyReview` | Sunday 19:00 | -120 ..< +300 min (the same Sunday) |
/// | `streakReminder` | 18:00 | -60 ..< +300 min |
/// | `checkInReminder` | the reminder's time (`r3-2000`: 20:00) | -30 ..< +180 min |
///
/// Meal and hydration windows do not overlap, so a time names one slot. Other kinds have no
/// wall-clock slot (social and system items arrive from events, a reflection follows a check-in
/// by a day, an achievement a workout) and are bounded by their staleness only; a
/// re-engagement nudge has its own bound, the user's local night (`LapseCampaign.swift`).
///
/// What may move a time keeps it inside the window: response learning (a shift is clamped to
/// the window, `clampedShift`), deferral by quiet hours, caps or an app session (the deadline is
/// the window's end, `Candidate.windowEnd`) and a change of zone (wall-clock requests keep their
/// wall time; one whose window has passed in the new zone is dropped). Past the window an
/// occurrence is dropped with its reason (`slotWindowPassed`, or the rule that held it), never
/// sent as something else. A snoozed copy is exempt: the user asked for it later.
public struct SlotWindow: Hashable, Sendable {
    /// Minutes from the nominal time to the window's start (0 or negative).
    public var earliestMinutes: Int
    /// Minutes from the nominal time to the window's end, which is not part of it (positive).
    public var latestMinutes: Int

    public init(earliestMinutes: Int, latestMinutes: Int) {
        precondition(earliestMinutes <= 0 && latestMinutes > 0, "a window holds its nominal time")
        self.earliestMinutes = earliestMinutes
        self.latestMinutes = latestMinutes
    }

    /// The window of `kind`'s slots, or nil for a kind without a wall-clock slot (see the table).
    public static func of(_ kind: NotificationKind) -> SlotWindow? {
        switch kind {
        case .morningGreeting: SlotWindow(earliestMinutes: -60, latestMinutes: 180)
        case .mealReminder: SlotWindow(earliestMinutes: -60, latestMinutes: 90)
        case .hydration: SlotWindow(earliestMinutes: -30, latestMinutes: 30)
        case .workoutReminder, .preWorkout: SlotWindow(earliestMinutes: -30, latestMinutes: 10)
        case .postWorkoutCheckIn: SlotWindow(earliestMinutes: -60, latestMinutes: 180)
        case .weeklyReview: SlotWindow(earliestMinutes: -120, latestMinutes: 300)
        case .streakReminder: SlotWindow(earliestMinutes: -60, latestMinutes: 300)
        case .checkInReminder: SlotWindow(earliestMinutes: -30, latestMinutes: 180)
        default: nil
        }
    }

    /// The nominal local minute of day of `id`'s slot under `preferences` (the table above), the
    /// one reading of it for the engine and the simulator's checker; nil for a kind without a
    /// wall-clock slot. The day is the identifier's (a daily series': the day it fires).
    public static func nominalMinute(of id: OccurrenceID, preferences: NotificationPreferences) -> Int? {
        let minute: Int
        switch (id.kind, id.slot) {
        case (.morningGreeting, _): minute = preferences.morningTime.minutesSinceMidnight
        case (.mealReminder, .meal(let meal)): minute = meal.defaultTime.minutesSinceMidnight
        case (.hydration, .minuteOfDay(let time)): minute = time
        case (.workoutReminder, .minuteOfDay(let time)): minute = time - preferences.workoutReminderLeadMinutes
        case (.preWorkout, .minuteOfDay(let time)): minute = time - preferences.preWorkoutLeadMinutes
        case (.postWorkoutCheckIn, .minuteOfDay(let time)): minute = time + preferences.postWorkoutDelayMinutes
        case (.weeklyReview, _): minute = 19 * 60
        case (.streakReminder, _): minute = 18 * 60
        case (.checkInReminder, .reminder(_, let time)): minute = time
        default: return nil
        }
        return minute
    }

    /// Whether a time `minutes` after the nominal time (negative: before) is inside the window.
    public func contains(offsetMinutes minutes: Int) -> Bool { minutes >= earliestMinutes && minutes < latestMinutes }

    /// Whether `instant` is inside the window of an occurrence whose nominal time is `nominal`.
    public func contains(_ instant: Instant, nominal: Instant) -> Bool {
        instant >= start(nominal: nominal) && instant < end(nominal: nominal)
    }

    /// The window's first instant for an occurrence whose nominal time is `nominal`.
    public func start(nominal: Instant) -> Instant { nominal + Int64(earliestMinutes) * .secondsPerMinute }

    /// The window's end (not part of it) for an occurrence whose nominal time is `nominal`.
    public func end(nominal: Instant) -> Instant { nominal + Int64(latestMinutes) * .secondsPerMinute }

    /// A shift of `minutes` kept inside the window: itself when it fits, else the largest
    /// multiple of `step` minutes in the same direction that fits (0 when none does).
    public func clampedShift(_ minutes: Int, step: Int = 15) -> Int {
        if contains(offsetMinutes: minutes) { return minutes }
        let limit = minutes > 0 ? latestMinutes - 1 : earliestMinutes
        let steps = abs(limit) / step
        return (minutes > 0 ? 1 : -1) * steps * step
    }
}
