public import Models

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
    /// Each counts only after the last activity this engine knows of: an event it has heard of
    /// is in the plan already, which may hold requests planned after it.
    ///
    /// A snoozed copy is withdrawn as its original is; a daily series and every other kind by
    /// nothing (the server withdraws them when it hears). The agreement with `handle` is held
    /// by test: whatever these say withdraws a request, the engine cancels when told of it.
    public func withdrawals(of id: OccurrenceID) -> [Withdrawal] {
        Self.withdrawals(of: id, zone: zone, lastActiveAt: lastActiveAt)
    }

    /// `withdrawals(of:)` for a user in `zone` last active at `lastActiveAt`, without the engine.
    public static func withdrawals(of id: OccurrenceID, zone: ZoneRules, lastActiveAt: Instant) -> [Withdrawal] {
        guard !id.isDailySeries else { return [] }
        // Only what the engine has not heard of: what it knows of (up to the last activity) is
        // in the plan already, which may hold a request planned after it (a check-in after a
        // workout).
        let unheard = lastActiveAt + 1
        func onItsDay(_ activity: Withdrawal.Activity) -> [Withdrawal] {
            let start = zone.instant(for: LocalDateTime(date: id.date, secondOfDay: 0))
            let end = zone.instant(for: LocalDateTime(date: id.date.adding(days: 1), secondOfDay: 0))
            guard unheard < end else { return [] }
            return [Withdrawal(activity, from: max(start, unheard), until: end)]
        }
        switch id.kind {
        case .mealReminder:
            guard let meal = id.meal else { return [] }
            return onItsDay(.mealLogged(meal))
        case .workoutReminder, .preWorkout, .postWorkoutCheckIn, .streakReminder:
            return onItsDay(.workoutDone)
        case .checkInReminder:
            return onItsDay(.checkInCompleted)
        case .reEngagement:
            return [Withdrawal(.anyActivity, from: unheard)]
        default:
            return []
        }
    }

    /// `withdrawals(of:)` for a request identifier; none for one that names no occurrence of
    /// this engine.
    public func withdrawals(ofRequest identifier: RequestID) -> [Withdrawal] {
        Self.withdrawals(ofRequest: identifier, zone: zone, lastActiveAt: lastActiveAt)
    }

    /// `withdrawals(ofRequest:)` without the engine (`withdrawals(of:zone:lastActiveAt:)`).
    public static func withdrawals(ofRequest identifier: RequestID, zone: ZoneRules, lastActiveAt: Instant)
        -> [Withdrawal]
    {
        OccurrenceID(requestID: identifier).map { withdrawals(of: $0, zone: zone, lastActiveAt: lastActiveAt) } ?? []
    }
}
