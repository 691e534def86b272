/// Notification category identifiers, spelled exactly as the apps that use them register them:
/// the raw values must not change.
public enum NotificationCategoryID: String, Codable, CaseIterable, Sendable {
    case dailyCheck = "DAILY_CHECK"
    case workout = "WORKOUT"
    case meal = "MEAL"
    case hydration = "HYDRATION"
    case achievement = "ACHIEVEMENT"
    case reEngagement = "RE_ENGAGEMENT"
    case workoutReminder = "WORKOUT_REMINDER"
    case energyLogReminder = "ENERGY_LOG_REMINDER"
    case preWorkout = "PRE_WORKOUT"
    case postWorkout = "POST_WORKOUT"
    case checkInReminder = "CHECK_IN_REMINDER"
    case reflection = "REFLECTION"
    case social = "SOCIAL"
    case system = "SYSTEM"
}

/// Action identifiers, spelled exactly as the apps that use them register them, plus the
/// system's default tap and custom dismiss.
public enum NotificationActionID: String, Codable, CaseIterable, Sendable {
    case logMood = "LOG_MOOD"
    case quickChat = "QUICK_CHAT"
    case startWorkout = "START_WORKOUT"
    case snooze30 = "SNOOZE_30"
    case logMeal = "LOG_MEAL"
    case quickAdd = "QUICK_ADD"
    case startWorkoutAction = "START_WORKOUT_ACTION"
    case skipTodayAction = "SKIP_TODAY_ACTION"
    case logEnergyAction = "LOG_ENERGY_ACTION"
    case completeWorkout = "COMPLETE_WORKOUT"
    case snoozeReminder = "SNOOZE_REMINDER"
    case logWorkout = "LOG_WORKOUT"
    case skipWorkout = "SKIP_WORKOUT"
    case startNow = "START_NOW"
    case snooze = "SNOOZE"
    /// The user tapped the notification itself (UNNotificationDefaultActionIdentifier).
    case defaultTap = "com.apple.UNNotificationDefaultActionIdentifier"
    /// The user dismissed it explicitly; reported only for categories with `customDismissAction`.
    case dismiss = "com.apple.UNNotificationDismissActionIdentifier"
}

extension NotificationActionID {
    /// How long a snooze action puts the notification off; nil for other actions.
    public var snoozeSeconds: Int64? {
        switch self {
        case .snooze30, .snoozeReminder: 30 * .secondsPerMinute
        case .snooze: .secondsPerHour
        default: nil
        }
    }
}

/// UNNotificationActionOptions.
public struct NotificationActionOptions: OptionSet, Codable, Hashable, Sendable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }
    public static let authenticationRequired = NotificationActionOptions(rawValue: 1 << 0)
    public static let destructive = NotificationActionOptions(rawValue: 1 << 1)
    /// Opens the app.
    public static let foreground = NotificationActionOptions(rawValue: 1 << 2)
}

public struct NotificationAction: Codable, Hashable, Sendable {
    public var id: NotificationActionID
    public var title: String
    public var options: NotificationActionOptions

    public init(_ id: NotificationActionID, title: String, options: NotificationActionOptions = []) {
        self.id = id
        self.title = title
        self.options = options
    }
}

/// A category: its actions and whether explicit dismissals are reported.
public struct NotificationCategory: Codable, Hashable, Sendable {
    public var id: NotificationCategoryID
    public var actions: [NotificationAction]
    /// UNNotificationCategoryOptions.customDismissAction.
    public var reportsDismissal: Bool

    public init(_ id: NotificationCategoryID, actions: [NotificationAction], reportsDismissal: Bool = false) {
        self.id = id
        self.actions = actions
        self.reportsDismissal = reportsDismissal
    }

    /// Every category with its actions, as an app registers them at launch.
    public static let all: [NotificationCategory] = [
        NotificationCategory(
            .dailyCheck,
            actions: [
                NotificationAction(.logMood, title: "Log Mood", options: .foreground),
                NotificationAction(.quickChat, title: "Chat with Coach", options: .foreground),
            ]),
        NotificationCategory(
            .workout,
            actions: [
                NotificationAction(.startWorkout, title: "Start Workout", options: .foreground),
                NotificationAction(.snooze30, title: "Snooze 30 min"),
            ]),
        NotificationCategory(
            .meal,
            actions: [
                NotificationAction(.logMeal, title: "Log Meal", options: .foreground),
                NotificationAction(.quickAdd, title: "Quick Add"),
            ]),
        NotificationCategory(.hydration, actions: []),
        NotificationCategory(.achievement, actions: []),
        NotificationCategory(.reEngagement, actions: [], reportsDismissal: true),
        NotificationCategory(
            .workoutReminder,
            actions: [
                NotificationAction(.startWorkoutAction, title: "Start Workout", options: .foreground),
                NotificationAction(.skipTodayAction, title: "Skip Today"),
            ], reportsDismissal: true),
        NotificationCategory(
            .energyLogReminder,
            actions: [NotificationAction(.logEnergyAction, title: "Log Energy", options: .foreground)],
            reportsDismissal: true),
        NotificationCategory(
            .preWorkout,
            actions: [
                NotificationAction(.completeWorkout, title: "Mark Complete"),
                NotificationAction(.snoozeReminder, title: "Snooze 30 min"),
            ]),
        NotificationCategory(
            .postWorkout,
            actions: [
                NotificationAction(.logWorkout, title: "Log Workout", options: .foreground),
                NotificationAction(.skipWorkout, title: "Skipped It", options: .destructive),
            ]),
        NotificationCategory(
            .checkInReminder,
            actions: [
                NotificationAction(.startNow, title: "Start Now", options: .foreground),
                NotificationAction(.snooze, title: "Remind Me in 1 Hour"),
            ]),
        NotificationCategory(.reflection, actions: []),
        NotificationCategory(.social, actions: []),
        NotificationCategory(.system, actions: []),
    ]
}
