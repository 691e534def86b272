public import Models

/// How a notification sounds and looks besides its words.
public enum NotificationStyling {
    /// Three sounds: achievements celebrate, security is urgent, the rest remind.
    public static func sound(for kind: NotificationKind) -> NotificationSound {
        switch kind {
        case .achievement, .streakReminder: .achievement
        case .securityAlert: .urgent
        default: .reminder
        }
    }

    /// The image a notification service extension attaches: the morning greeting's follows the
    /// weather; nil for kinds without one.
    public static func imageKey(for kind: NotificationKind, context: CopyContext) -> String? {
        switch kind {
        case .morningGreeting:
            switch context.weather {
            case .sunny: "morning_sunny"
            case .cloudy: "morning_cloudy"
            case .rainy: "morning_rainy"
            case .snowy: "morning_snowy"
            case nil: "morning_default"
            }
        case .achievement: "achievement"
        case .weeklyReview: "weekly_review"
        default: nil
        }
    }
}
