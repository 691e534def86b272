/// Something the user does on the phone that makes a planned request moot: a meal logged makes
/// that meal's reminder moot, a workout the day's workout reminders, a check-in its reminder,
/// any use of the app a lapse nudge. A plan names these with each request, so the phone
/// withdraws a request the moment its user does such a thing, offline or not, without waiting
/// for the server to hear of it and plan again.
///
/// The engine decides which requests each one withdraws, by the same rules it marks things
/// done by (`UserEngine.withdrawals(of:)`); the phone only matches them.
public struct Withdrawal: Hashable, Sendable {
    /// What the user does.
    public enum Activity: Hashable, Sendable {
        /// That meal logged.
        case mealLogged(MealType)
        /// A workout completed, or a workout reminder answered with complete or skip.
        case workoutDone
        /// A check-in completed.
        case checkInCompleted
        /// Anything the user does in the app: an activity, or a notification answered other
        /// than by dismissing it.
        case anyActivity
    }

    public var activity: Activity
    /// The first instant at which it counts (inclusive).
    public var from: Instant
    /// The instant from which it counts no more (exclusive); nil: no end.
    public var until: Instant?

    public init(_ activity: Activity, from: Instant, until: Instant? = nil) {
        self.activity = activity
        self.from = from
        self.until = until
    }

    /// Whether `event` meets this withdrawal: it counts as its activity, inside its span.
    public func isMet(by event: WithdrawingEvent) -> Bool {
        guard event.at >= from, until.map({ event.at < $0 }) ?? true else { return false }
        switch activity {
        case .mealLogged(let meal): return event.kinds.contains(.mealLogged(meal))
        case .workoutDone: return event.kinds.contains(.workoutDone)
        case .checkInCompleted: return event.kinds.contains(.checkInCompleted)
        case .anyActivity: return event.kinds.contains(.anyActivity)
        }
    }
}

extension Withdrawal.Activity {
    /// The name on the wire (`LocalRequest.withdrawnBy[].activity`).
    public var name: String {
        switch self {
        case .mealLogged: "mealLogged"
        case .workoutDone: "workoutDone"
        case .checkInCompleted: "checkInCompleted"
        case .anyActivity: "anyActivity"
        }
    }

    /// The activity `name` names, with its meal for `mealLogged`; nil for a name this build does
    /// not know (a newer server's), or `mealLogged` without a meal it knows.
    public init?(name: String, meal: String?) {
        switch name {
        case "mealLogged":
            guard let meal = meal.flatMap(MealType.init(rawValue:)) else { return nil }
            self = .mealLogged(meal)
        case "workoutDone": self = .workoutDone
        case "checkInCompleted": self = .checkInCompleted
        case "anyActivity": self = .anyActivity
        default: return nil
        }
    }

    /// The meal of `mealLogged`, nil otherwise.
    public var meal: MealType? {
        if case .mealLogged(let meal) = self { meal } else { nil }
    }
}

/// What an event the app reports does, as withdrawals match it: the activities it counts as
/// (a meal logged is also use of the app), at its instant.
public struct WithdrawingEvent: Codable, Hashable, Sendable {
    /// What the event counts as.
    public var kinds: [Withdrawal.Activity]
    public var at: Instant

    /// What `activity` at `instant` counts as.
    public init(_ activity: ActivityKind, at instant: Instant) {
        var kinds: [Withdrawal.Activity] = [.anyActivity]
        switch activity {
        case .mealLogged(let meal): kinds.append(.mealLogged(meal))
        case .workoutCompleted: kinds.append(.workoutDone)
        case .checkInCompleted: kinds.append(.checkInCompleted)
        case .appOpened, .moodLogged, .energyLogged, .coachChat: break
        }
        self.kinds = kinds
        self.at = instant
    }

    /// What answering a notification with `action` at `instant` counts as, nil when nothing
    /// (a snooze or a dismissal is not use of the app).
    public init?(answering action: NotificationActionID, at instant: Instant) {
        guard action != .dismiss, action.snoozeSeconds == nil else { return nil }
        var kinds: [Withdrawal.Activity] = [.anyActivity]
        switch action {
        case .completeWorkout, .skipTodayAction, .skipWorkout: kinds.append(.workoutDone)
        default: break
        }
        self.kinds = kinds
        self.at = instant
    }
}

extension Withdrawal.Activity: Codable {
    private enum CodingKeys: String, CodingKey { case name, meal }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let name = try container.decode(String.self, forKey: .name)
        let meal = try container.decodeIfPresent(String.self, forKey: .meal)
        guard let activity = Self(name: name, meal: meal) else {
            throw DecodingError.dataCorruptedError(
                forKey: .name, in: container, debugDescription: "unknown activity \"\(name)\" (meal \(meal ?? "none"))")
        }
        self = activity
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(name, forKey: .name)
        try container.encodeIfPresent(meal?.rawValue, forKey: .meal)
    }
}

extension Withdrawal: Codable {}

/// A withdrawal a plan names that this build cannot read (an activity from a newer server, an
/// instant that is not ISO 8601): it withdraws nothing.
public struct WithdrawalReadError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Which field, and what it held.
    public var reason: String

    public init(_ reason: String) { self.reason = reason }

    public var description: String { reason }
}
