/// What a notification is about. Every rule of the engine (setting, level, category, cap
/// exemption) is keyed by kind.
public enum NotificationKind: String, Codable, CaseIterable, Sendable, CodingKeyRepresentable, Comparable {
    // Coaching (seeds 000, 001, 002, 004)
    case morningGreeting, workoutReminder, preWorkout, postWorkoutCheckIn, mealReminder, hydration
    case achievement, reEngagement, weeklyReview, streakReminder, energyLog, checkInReminder, reflection
    // Social (seed 003)
    case newFollower, followRequest, workoutKudos, workoutComment, mention, challengeInvite, leaderboardChange
    // System (seed 003)
    case securityAlert, privacyUpdate, featureAnnouncement, maintenanceNotice

    public static func < (a: NotificationKind, b: NotificationKind) -> Bool { a.rawValue < b.rawValue }

    /// The category whose actions the notification offers.
    public var category: NotificationCategoryID {
        switch self {
        case .morningGreeting: .dailyCheck
        case .workoutReminder, .streakReminder: .workoutReminder
        case .preWorkout: .preWorkout
        case .postWorkoutCheckIn: .postWorkout
        case .mealReminder: .meal
        case .hydration: .hydration
        case .achievement: .achievement
        case .reEngagement: .reEngagement
        case .weeklyReview: .workout
        case .energyLog: .energyLogReminder
        case .checkInReminder: .checkInReminder
        case .reflection: .reflection
        case .newFollower, .followRequest, .workoutKudos, .workoutComment, .mention, .challengeInvite,
            .leaderboardChange:
            .social
        case .securityAlert, .privacyUpdate, .featureAnnouncement, .maintenanceNotice: .system
        }
    }

    /// The default interruption level (configurable per user through preferences).
    public var defaultInterruptionLevel: InterruptionLevel {
        switch self {
        case .achievement, .leaderboardChange, .featureAnnouncement, .privacyUpdate, .maintenanceNotice: .passive
        case .reEngagement: .timeSensitive
        case .securityAlert: .critical
        default: .active
        }
    }

    /// The default setting (seed 003's defaults where it names one).
    public var defaultSetting: NotificationSetting {
        switch self {
        case .workoutKudos: .batched
        case .followRequest, .workoutComment, .mention, .securityAlert: .immediate
        case .leaderboardChange: .weekly
        default: .enabled
        }
    }

    /// Transactional kinds answer something the user did or must know now; they are exempt
    /// from frequency caps (as Iterable and Novu exempt transactional messages).
    public var isTransactional: Bool {
        switch self {
        case .securityAlert, .followRequest, .mention: true
        default: false
        }
    }
}

/// How a user wants a kind delivered (seed 003).
public enum NotificationSetting: String, Codable, CaseIterable, Sendable {
    /// Never notify.
    case disabled
    /// Notify, subject to batching and caps.
    case enabled
    /// Group into a batch over the batching window.
    case batched
    /// Always deliver at once, never batched.
    case immediate
    /// Fold into a daily summary.
    case daily
    /// Fold into a weekly summary.
    case weekly
}

/// How strongly a notification may interrupt (UNNotificationInterruptionLevel).
public enum InterruptionLevel: String, Codable, CaseIterable, Sendable, Comparable {
    /// No sound, no screen wake.
    case passive
    /// The default.
    case active
    /// Breaks through Focus and the scheduled summary.
    case timeSensitive
    /// Always presented, bypasses mute and quiet hours; needs Apple's entitlement.
    case critical

    public static func < (a: InterruptionLevel, b: InterruptionLevel) -> Bool {
        allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)!
    }

    /// Only critical notifications break through the user's quiet hours.
    public var breaksThroughQuietHours: Bool { self == .critical }
}
