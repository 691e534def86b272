public import Models

/// What the app reports about a workout or a meal window, for the engine to start, update and
/// end their Live Activities (`LiveActivityTracker`).
public enum LiveActivityEvent: Codable, Hashable, Sendable {
    /// A workout began in the app.
    case workoutStarted(workoutType: String)
    /// The running workout's state (elapsed time, heart rate, calories, exercise).
    case workoutUpdated(WorkoutActivityAttributes.ContentState)
    /// The workout finished, with its final state.
    case workoutEnded(WorkoutActivityAttributes.ContentState)
    /// A meal or fasting window opened, with its targets.
    case mealStarted(MealActivityAttributes)
    /// What has been logged in the open window so far.
    case mealUpdated(MealActivityAttributes.ContentState)
    /// The window closed.
    case mealEnded
    /// The system handed the app the push token of the activity the engine named `activityID`;
    /// updates and ends are pushed to it from then on (it may change: the newest wins).
    case pushTokenReceived(activityID: String, token: String)

    /// A stable name for logs and traces.
    public var name: String {
        switch self {
        case .workoutStarted: "workoutStarted"
        case .workoutUpdated: "workoutUpdated"
        case .workoutEnded: "workoutEnded"
        case .mealStarted: "mealStarted"
        case .mealUpdated: "mealUpdated"
        case .mealEnded: "mealEnded"
        case .pushTokenReceived: "pushTokenReceived"
        }
    }
}

/// One start, update or end of a Live Activity, as the engine decided it: the device shell runs
/// it on its `LiveActivityCenter`, the server shell pushes it (`LiveActivityPush`).
public struct LiveActivityCommand: Codable, Hashable, Sendable {
    /// APNs' `event` key.
    public enum Event: String, Codable, CaseIterable, Sendable {
        case start, update, end
    }

    /// The engine's name of the activity: `workout-1`, `meal-2`, ... (a counter per user).
    public var activityID: String
    public var event: Event
    /// The activity's static attributes (sent on `start`; kept on the others for the payload's
    /// size check).
    public var attributes: LiveActivityAttributes
    public var content: LiveActivityContent
    /// 10 draws on the activity's hourly budget; 5 does not (`LiveActivityRules`).
    public var priority: PushPriority
    /// How an ended activity leaves the Lock Screen; set on `end` only.
    public var dismissal: DismissalPolicy?
    /// When the engine decided it (APNs' `timestamp`: the device ignores older content).
    public var at: Instant
    /// The activity's push token as the app last reported it; nil before it has.
    public var pushToken: String?
    /// 1 for the start, then one more per command of this activity: with `activityID`, the
    /// command's identity (an outbox row per command).
    public var sequence: Int

    public init(
        activityID: String, event: Event, attributes: LiveActivityAttributes, content: LiveActivityContent,
        priority: PushPriority, dismissal: DismissalPolicy? = nil, at: Instant, pushToken: String? = nil,
        sequence: Int
    ) {
        self.activityID = activityID
        self.event = event
        self.attributes = attributes
        self.content = content
        self.priority = priority
        self.dismissal = dismissal
        self.at = at
        self.pushToken = pushToken
        self.sequence = sequence
    }

    /// `activityID.sequence`: unique per command of a user.
    public var requestID: String { "liveActivity.\(activityID).\(sequence)" }
}

/// A Live Activity an event's step started, updated or ended, as the answer to the event says
/// (`liveActivities`): the server writes it, EngagementKit reads it. The app starts an activity
/// the server names with `start` (ActivityKit) and reports its push token under `activityID`.
public struct LiveActivityChange: Codable, Hashable, Sendable {
    /// The engine's name of the activity (`workout-1`).
    public var activityID: String
    public var event: LiveActivityCommand.Event

    public init(activityID: String, event: LiveActivityCommand.Event) {
        self.activityID = activityID
        self.event = event
    }

    /// The change `command` makes.
    public init(_ command: LiveActivityCommand) {
        self.init(activityID: command.activityID, event: command.event)
    }
}
