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

/// A title and body with `{field}` placeholders, filled from a `CopyContext`.
public struct CopyTemplate: Hashable, Sendable {
    public var title: String
    public var body: String

    public init(_ title: String, _ body: String) {
        self.title = title
        self.body = body
    }

    /// The placeholders a template may use.
    public static let fields: Set<String> = ["name", "meal", "Meal", "workout", "Workout", "daysAway"]
}

/// Built-in English template copy per kind and motivational style: the fallback that is
/// always available when the AI coach is not.
///
/// `variant` picks among the templates of a kind and style (callers pass a value from their
/// seeded generator or a stable hash); any integer is valid. Only the chosen template is
/// rendered.
public enum TemplateCopy {
    public static func render(
        _ kind: NotificationKind, style: MotivationalStyle, context: CopyContext, variant: Int = 0
    ) -> Copy {
        let options = templates(kind, style: style, stronger: context.stronger)
        let index = ((variant % options.count) + options.count) % options.count
        let template = options[index]
        return Copy(title: fill(template.title, context), body: fill(template.body, context))
    }

    /// Replaces each `{field}` with its value from `context` (a byte scan: this runs for every
    /// notification the engine schedules).
    static func fill(_ pattern: String, _ context: CopyContext) -> String {
        let bytes = Array(pattern.utf8)
        guard bytes.contains(123) else { return pattern }  // no "{"
        var result: [UInt8] = []
        result.reserveCapacity(bytes.count + 24)
        var index = 0
        while index < bytes.count {
            if bytes[index] == 123, let close = bytes[index...].firstIndex(of: 125) {
                let field = String(decoding: bytes[(index + 1)..<close], as: UTF8.self)
                result.append(contentsOf: value(of: Substring(field), context).utf8)
                index = close + 1
            } else {
                result.append(bytes[index])
                index += 1
            }
        }
        return String(decoding: result, as: UTF8.self)
    }

    private static func value(of field: Substring, _ context: CopyContext) -> String {
        switch field {
        case "name": return context.firstName.trimmedOrNil ?? "there"
        case "meal": return context.meal?.rawValue ?? "meal"
        case "Meal": return (context.meal?.rawValue ?? "meal").capitalizedFirst
        case "workout": return context.workoutType?.trimmedOrNil?.lowercased() ?? "workout"
        case "Workout": return (context.workoutType?.trimmedOrNil ?? "workout").capitalizedFirst
        case "daysAway":
            guard let days = context.daysAway else { return "a while" }
            return days == 1 ? "a day" : "\(days) days"
        default: return ""
        }
    }

    /// The templates of a kind and style. Every kind has at least one for every style.
    static func templates(_ kind: NotificationKind, style: MotivationalStyle, stronger: Bool) -> [CopyTemplate] {
        switch (kind, style) {
        case (.morningGreeting, .encouraging):
            return [
                CopyTemplate("Good morning, {name} ☀️", "A fresh day to move. How are you feeling?"),
                CopyTemplate("Rise and shine, {name} 🌅", "Small steps count. Log your mood to start the day."),
            ]
        case (.morningGreeting, .challenging):
            return [
                CopyTemplate("Morning, {name} 💪", "Yesterday is done. What will you beat today?"),
                CopyTemplate("Up and at it, {name} 🔥", "Set the tone: one strong choice before 9."),
            ]
        case (.morningGreeting, .supportive):
            return [
                CopyTemplate("Good morning, {name} 🌤️", "However you slept, today can be gentle. Check in?"),
                CopyTemplate("Hi {name} 🌱", "A calm start counts too. How's your energy?"),
            ]
        case (.mealReminder, _):
            return [
                CopyTemplate("Time for {meal} 🍽️", "Log your {meal} to keep your day on track."),
                CopyTemplate("{Meal} check 🥗", "What's on the plate, {name}? A quick log helps."),
            ]
        case (.hydration, _):
            return [
                CopyTemplate("Water break 💧", "A glass now keeps the afternoon slump away."),
                CopyTemplate("Stay hydrated 💧", "Sip some water, {name}. Your body will thank you."),
            ]
        case (.workoutReminder, .challenging), (.preWorkout, .challenging):
            return [CopyTemplate("{Workout} time 🏋️", "No excuses today. Let's get it done.")]
        case (.workoutReminder, _), (.preWorkout, _):
            return [
                CopyTemplate("{Workout} coming up 🏃", "Your {workout} starts soon. Ready?"),
                CopyTemplate("Almost time 🏃", "Get your gear on, {name}: {workout} soon."),
            ]
        case (.postWorkoutCheckIn, _):
            return [CopyTemplate("How did it go? 🏁", "Log your {workout} while it's fresh.")]
        case (.reEngagement, .challenging):
            return stronger
                ? [CopyTemplate("We miss you, {name} 🔥", "It's been {daysAway}. One workout resets the streak.")]
                : [CopyTemplate("Hey {name} 👋", "Ready for a comeback? Ten minutes is enough today.")]
        case (.reEngagement, _):
            return stronger
                ? [
                    CopyTemplate(
                        "Checking in, {name} 💙", "It's been {daysAway}. Want to talk it through with your coach?")
                ]
                : [CopyTemplate("Thinking of you, {name} 👋", "No pressure. Whenever you're ready, we're here.")]
        case (.weeklyReview, _):
            return [CopyTemplate("Your week in review 📊", "See how this week went and plan the next one.")]
        case (.achievement, _):
            return [CopyTemplate("Achievement unlocked 🏆", "Well earned, {name}!")]
        case (.streakReminder, _):
            return [CopyTemplate("Keep your streak alive 🔥", "One session today keeps it going.")]
        case (.energyLog, _):
            return [CopyTemplate("How's your energy? ⚡", "A quick log helps your coach plan your week.")]
        case (.checkInReminder, _):
            return [CopyTemplate("Time to check in ✅", "Your check-in is ready when you are.")]
        case (.reflection, _):
            return [CopyTemplate("A moment to reflect 📝", "How have things been since your last check-in?")]
        case (.newFollower, _), (.followRequest, _), (.workoutKudos, _), (.workoutComment, _), (.mention, _),
            (.challengeInvite, _), (.leaderboardChange, _):
            return [CopyTemplate("New activity 👥", "You have new social activity.")]
        case (.securityAlert, _):
            return [CopyTemplate("Security alert 🔒", "A new sign-in to your account. Was it you?")]
        case (.privacyUpdate, _), (.featureAnnouncement, _), (.maintenanceNotice, _):
            return [CopyTemplate("News from your coach 📣", "Open the app to see what's new.")]
        }
    }
}

extension String {
    var capitalizedFirst: String { prefix(1).uppercased() + dropFirst() }

    /// The text without surrounding white space, or nil when nothing is left (free text from
    /// users can be blank; copy must never read "Your  starts soon").
    var trimmedOrNil: String? {
        guard let first = firstIndex(where: { !$0.isWhitespace }), let last = lastIndex(where: { !$0.isWhitespace })
        else { return nil }
        return String(self[first...last])
    }
}
