public import Models
public import Scheduling

extension UserEngine {
    /// What the user may do on the phone that makes the planned request `id` moot
    /// (`Withdrawal`), by the rules this engine marks things done by and ends a lapse by:
    /// - a meal reminder: that meal logged on its local day (`recordActivity`);
    /// - a workout reminder, the workout's coaching before and after it, a streak reminder: a
    ///   workout completed, or a workout reminder answered with complete or skip, on its local
    ///   day (`markWorkoutsDone`);
    /// - a check-in reminder: a check-in completed on its local day;
    /// - a lapse nudge: anything the user does (the nudge is planned from the last activity,
    ///   and moves with the next).
    ///
    /// Each counts only after what this engine has heard of: an event it knows of is in the plan
    /// already, which may hold requests planned after it (a check-in after a workout). A meal or
    /// check-in reminder counts after the last such meal or check-in heard of (its day's start
    /// when none is later): the engine never holds a reminder of what was done that day
    /// (`PlanningContext.isDone`), so only a zone moved since (which moves the day's bounds) can
    /// put one heard of inside the day; and the withdrawal stays the same as the user's other
    /// events come in, so a plan's delta does not carry the day's reminders again at each.
    ///
    /// A snoozed copy is withdrawn as its original is; a daily series and every other kind by
    /// nothing (the server withdraws them when it hears). The agreement with `handle` is held
    /// by test: whatever these say withdraws a request, the engine cancels when told of it.
    public func withdrawals(of id: OccurrenceID) -> [Withdrawal] {
        Self.withdrawals(of: id, zone: zone, heard: heardActivity)
    }

    /// What the engine has heard of its user's activity, which its withdrawals count after.
    public var heardActivity: HeardActivity {
        HeardActivity(lastActiveAt: state.activity.lastActiveAt, done: state.activity.done)
    }

    /// `withdrawals(of:)` for a user in `zone` of whom the engine heard `heard`, without the
    /// engine.
    public static func withdrawals(of id: OccurrenceID, zone: ZoneRules, heard: HeardActivity) -> [Withdrawal] {
        guard !id.isDailySeries else { return [] }
        let lastActiveAt = heard.lastActiveAt
        func onItsDay(_ activity: Withdrawal.Activity, after last: Instant?) -> [Withdrawal] {
            let start = zone.instant(for: LocalDateTime(date: id.date, secondOfDay: 0))
            let end = zone.instant(for: LocalDateTime(date: id.date.adding(days: 1), secondOfDay: 0))
            // Past the day's end the engine has heard of the whole day.
            guard lastActiveAt + 1 < end else { return [] }
            return [Withdrawal(activity, from: last.map { max(start, $0 + 1) } ?? start, until: end)]
        }
        switch id.kind {
        case .mealReminder:
            guard let meal = id.meal else { return [] }
            return onItsDay(.mealLogged(meal), after: heard.lastDone { $0.kind == .mealReminder && $0.meal == meal })
        case .workoutReminder, .preWorkout, .postWorkoutCheckIn, .streakReminder:
            return onItsDay(.workoutDone, after: lastActiveAt)
        case .checkInReminder:
            return onItsDay(.checkInCompleted, after: heard.lastDone { $0.kind == .checkInReminder })
        case .reEngagement:
            return [Withdrawal(.anyActivity, from: lastActiveAt + 1)]
        default:
            return []
        }
    }

    /// `withdrawals(of:)` for a request identifier; none for one that names no occurrence of
    /// this engine.
    public func withdrawals(ofRequest identifier: RequestID) -> [Withdrawal] {
        Self.withdrawals(ofRequest: identifier, zone: zone, heard: heardActivity)
    }

    /// `withdrawals(ofRequest:)` without the engine (`withdrawals(of:zone:heard:)`).
    public static func withdrawals(ofRequest identifier: RequestID, zone: ZoneRules, heard: HeardActivity)
        -> [Withdrawal]
    {
        OccurrenceID(requestID: identifier).map { withdrawals(of: $0, zone: zone, heard: heard) } ?? []
    }
}

/// What the engine has heard of its user's activity: what a plan's withdrawals count after
/// (`UserEngine.withdrawals(of:)`).
public struct HeardActivity: Sendable {
    /// The last activity heard of.
    public var lastActiveAt: Instant
    /// When each thing was done (a meal logged, a check-in), by occurrence, as the engine heard
    /// of it; only those up to `lastActiveAt` count.
    public var done: OccurrenceMap<Instant>

    public init(lastActiveAt: Instant, done: OccurrenceMap<Instant> = OccurrenceMap()) {
        self.lastActiveAt = lastActiveAt
        self.done = done
    }

    /// The last instant up to `lastActiveAt` at which something `matching` was done.
    func lastDone(_ matching: (OccurrenceID) -> Bool) -> Instant? {
        var last: Instant?
        done.forEach { id, at in
            if at <= lastActiveAt, matching(id) { last = max(last ?? at, at) }
        }
        return last
    }
}
