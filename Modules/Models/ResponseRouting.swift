/// Where each action and each kind leads: the engine writes the links, an app opens them.
public enum ResponseRouting {
    /// The deep link an action opens; nil for actions handled in the background (snooze, skip,
    /// complete, dismiss).
    public static func deepLink(for action: NotificationActionID, kind: NotificationKind) -> DeepLink? {
        switch action {
        case .logMood: .moodLog
        case .quickChat: .coachChat
        case .startWorkout, .startWorkoutAction: .workoutStart
        case .logMeal: .mealLog(nil)
        case .quickAdd: .quickAdd
        case .logEnergyAction: .energyLog
        case .logWorkout: .workoutLog
        case .startNow: .checkIn
        case .defaultTap: defaultLink(for: kind, meal: nil)
        case .snooze30, .snoozeReminder, .snooze, .skipTodayAction, .skipWorkout, .completeWorkout, .dismiss: nil
        }
    }

    /// Where tapping a notification of `kind` leads (the dashboard by default).
    public static func defaultLink(for kind: NotificationKind, meal: MealType?) -> DeepLink {
        switch kind {
        case .mealReminder: .mealLog(meal)
        case .workoutReminder, .preWorkout: .workoutStart
        case .postWorkoutCheckIn: .workoutLog
        case .weeklyReview: .weeklyReview
        case .achievement, .streakReminder: .achievements
        case .energyLog: .energyLog
        case .checkInReminder, .reflection: .checkIn
        case .reEngagement: .coachChat
        case .newFollower, .followRequest, .workoutKudos, .workoutComment, .mention, .challengeInvite,
            .leaderboardChange, .securityAlert, .privacyUpdate, .featureAnnouncement, .maintenanceNotice:
            .inbox
        case .morningGreeting, .hydration: .dashboard
        }
    }
}
