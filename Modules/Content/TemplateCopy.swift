public import Models

/// What the engine knows that copy may mention. Only fields the user's privacy level allows
/// are filled in by the caller.
public struct CopyContext: Hashable, Sendable {
    public var firstName: String
    public var meal: MealType?
    public var workoutType: String?
    public var daysAway: Int?
    /// A stronger re-engagement tone (lapse_check_in_stronger) instead of the light one.
    public var stronger: Bool

    public init(
        firstName: String, meal: MealType? = nil, workoutType: String? = nil, daysAway: Int? = nil,
        stronger: Bool = false
    ) {
        self.firstName = firstName
        self.meal = meal
        self.workoutType = workoutType
        self.daysAway = daysAway
        self.stronger = stronger
    }
}

/// Title and body of a notification.
public struct Copy: Hashable, Sendable {
    public var title: String
    public var body: String
}

/// Built-in English template copy per kind and motivational style: the fallback that is
/// always available when the AI coach is not.
///
/// `variant` picks among the templates of a kind and style (callers pass a value from their
/// seeded generator or a stable hash); any integer is valid.
public enum TemplateCopy {
    public static func render(
        _ kind: NotificationKind, style: MotivationalStyle, context: CopyContext, variant: Int = 0
    ) -> Copy {
        let name = context.firstName.isEmpty ? "there" : context.firstName
        let options = templates(kind, style: style, context: context, name: name)
        let index = ((variant % options.count) + options.count) % options.count
        return options[index]
    }

    private static func templates(
        _ kind: NotificationKind, style: MotivationalStyle, context: CopyContext, name: String
    ) -> [Copy] {
        let meal = context.meal?.rawValue ?? "meal"
        let workout = context.workoutType ?? "workout"
        switch (kind, style) {
        case (.morningGreeting, .encouraging):
            return [
                Copy(title: "Good morning, \(name) ☀️", body: "A fresh day to move. How are you feeling?"),
                Copy(title: "Rise and shine, \(name) 🌅", body: "Small steps count. Log your mood to start the day."),
            ]
        case (.morningGreeting, .challenging):
            return [
                Copy(title: "Morning, \(name) 💪", body: "Yesterday is done. What will you beat today?"),
                Copy(title: "Up and at it, \(name) 🔥", body: "Set the tone: one strong choice before 9."),
            ]
        case (.morningGreeting, .supportive):
            return [
                Copy(title: "Good morning, \(name) 🌤️", body: "However you slept, today can be gentle. Check in?"),
                Copy(title: "Hi \(name) 🌱", body: "A calm start counts too. How's your energy?"),
            ]
        case (.mealReminder, _):
            return [
                Copy(title: "Time for \(meal) 🍽️", body: "Log your \(meal) to keep your day on track."),
                Copy(
                    title: "\(meal.capitalizedFirst) check 🥗", body: "What's on the plate, \(name)? A quick log helps."),
            ]
        case (.hydration, _):
            return [
                Copy(title: "Water break 💧", body: "A glass now keeps the afternoon slump away."),
                Copy(title: "Stay hydrated 💧", body: "Sip some water, \(name). Your body will thank you."),
            ]
        case (.workoutReminder, .challenging), (.preWorkout, .challenging):
            return [Copy(title: "\(workout.capitalizedFirst) time 🏋️", body: "No excuses today. Let's get it done.")]
        case (.workoutReminder, _), (.preWorkout, _):
            return [
                Copy(title: "\(workout.capitalizedFirst) coming up 🏃", body: "Your \(workout) starts soon. Ready?"),
                Copy(title: "Almost time 🏃", body: "Get your gear on, \(name): \(workout) soon."),
            ]
        case (.postWorkoutCheckIn, _):
            return [Copy(title: "How did it go? 🏁", body: "Log your \(workout) while it's fresh.")]
        case (.reEngagement, .challenging):
            return context.stronger
                ? [
                    Copy(
                        title: "We miss you, \(name) 🔥",
                        body: "It's been \(daysText(context.daysAway)). One workout resets the streak.")
                ]
                : [Copy(title: "Hey \(name) 👋", body: "Ready for a comeback? Ten minutes is enough today.")]
        case (.reEngagement, _):
            return context.stronger
                ? [
                    Copy(
                        title: "Checking in, \(name) 💙",
                        body: "It's been \(daysText(context.daysAway)). Want to talk it through with your coach?")
                ]
                : [Copy(title: "Thinking of you, \(name) 👋", body: "No pressure. Whenever you're ready, we're here.")]
        case (.weeklyReview, _):
            return [Copy(title: "Your week in review 📊", body: "See how this week went and plan the next one.")]
        case (.achievement, _):
            return [Copy(title: "Achievement unlocked 🏆", body: "Well earned, \(name)!")]
        case (.streakReminder, _):
            return [Copy(title: "Keep your streak alive 🔥", body: "One session today keeps it going.")]
        case (.energyLog, _):
            return [Copy(title: "How's your energy? ⚡", body: "A quick log helps your coach plan your week.")]
        case (.checkInReminder, _):
            return [Copy(title: "Time to check in ✅", body: "Your check-in is ready when you are.")]
        case (.reflection, _):
            return [Copy(title: "A moment to reflect 📝", body: "How have things been since your last check-in?")]
        case (.newFollower, _), (.followRequest, _), (.workoutKudos, _), (.workoutComment, _), (.mention, _),
            (.challengeInvite, _), (.leaderboardChange, _):
            return [Copy(title: "New activity 👥", body: "You have new social activity.")]
        case (.securityAlert, _):
            return [Copy(title: "Security alert 🔒", body: "A new sign-in to your account. Was it you?")]
        case (.privacyUpdate, _), (.featureAnnouncement, _), (.maintenanceNotice, _):
            return [Copy(title: "News from your coach 📣", body: "Open the app to see what's new.")]
        }
    }

    private static func daysText(_ days: Int?) -> String {
        guard let days else { return "a while" }
        return days == 1 ? "a day" : "\(days) days"
    }
}

extension String {
    var capitalizedFirst: String { prefix(1).uppercased() + dropFirst() }
}
