public import Models

/// What the engine knows that copy may mention.
///
/// Fill in everything known; `PrivacyPolicy.redact(_:)` removes what the user's privacy level
/// does not allow before templates or the coach see it (`ContentGenerator` does this for you).
/// Fields left nil make the templates that need them ineligible, so copy never reads
/// "Your  starts soon" or "nil-day streak".
public struct CopyContext: Hashable, Sendable {
    public var firstName: String
    public var meal: MealType?
    /// The planned or habitual workout type (free text the user typed, e.g. "Run").
    public var workoutType: String?
    public var daysAway: Int?
    /// A stronger re-engagement tone (lapse_check_in_stronger) instead of the light one.
    public var stronger: Bool
    /// Consecutive active days, computed from the activity log.
    public var streakDays: Int?
    /// Last night's sleep, when known (morning greeting).
    public var sleepQuality: SleepQuality?
    /// The weather where the user is, when known (morning greeting).
    public var weather: WeatherCondition?
    /// Workouts done and planned this week (weekly review); both computed from real data.
    public var workoutsCompleted: Int?
    public var workoutsPlanned: Int?
    /// The achievement just unlocked, e.g. "First 5K".
    public var achievementName: String?
    /// The other user a social notification is about.
    public var sender: SocialSender?
    /// What a social notification is about, e.g. "morning run".
    public var topic: String?
    /// How many people a batched social notification sums up (2 or more; nil for a single one).
    public var groupCount: Int?

    public init(
        firstName: String, meal: MealType? = nil, workoutType: String? = nil, daysAway: Int? = nil,
        stronger: Bool = false, streakDays: Int? = nil, sleepQuality: SleepQuality? = nil,
        weather: WeatherCondition? = nil, workoutsCompleted: Int? = nil, workoutsPlanned: Int? = nil,
        achievementName: String? = nil, sender: SocialSender? = nil, topic: String? = nil, groupCount: Int? = nil
    ) {
        self.firstName = firstName
        self.meal = meal
        self.workoutType = workoutType
        self.daysAway = daysAway
        self.stronger = stronger
        self.streakDays = streakDays
        self.sleepQuality = sleepQuality
        self.weather = weather
        self.workoutsCompleted = workoutsCompleted
        self.workoutsPlanned = workoutsPlanned
        self.achievementName = achievementName
        self.sender = sender
        self.topic = topic
        self.groupCount = groupCount
    }

    /// Share of planned workouts done, 0... (above 1 when the user did more than planned); nil
    /// when nothing was planned.
    public var completionRate: Double? {
        guard let done = workoutsCompleted, let planned = workoutsPlanned, planned > 0, done >= 0 else { return nil }
        return Double(done) / Double(planned)
    }
}

/// How last night went.
public enum SleepQuality: String, Codable, CaseIterable, Sendable {
    case poor, fair, good, excellent

    var isRested: Bool { self == .good || self == .excellent }
}

/// The weather the morning greeting may mention and pick its image by.
public enum WeatherCondition: String, Codable, CaseIterable, Sendable {
    case sunny, cloudy, rainy, snowy
}

/// Another user a notification is about: who they are to the recipient and what they wrote.
public struct SocialSender: Hashable, Sendable {
    /// Their display name as they chose it.
    public var name: String
    /// Whether they and the recipient follow each other (friendsOnly shows names to mutual friends only).
    public var isMutualFriend: Bool
    /// Free text they wrote (a comment, a mention), if the notification is about one.
    public var text: String?

    public init(name: String, isMutualFriend: Bool, text: String? = nil) {
        self.name = name
        self.isMutualFriend = isMutualFriend
        self.text = text
    }

    /// The actor of a social event.
    public init(_ event: SocialEvent, text: String? = nil) {
        self.init(name: event.actorName, isMutualFriend: event.isMutualFriend, text: text)
    }
}

/// Title and body of a notification.
public struct Copy: Hashable, Sendable {
    public var title: String
    public var body: String

    public init(title: String, body: String) {
        self.title = title
        self.body = body
    }
}

/// Lock-screen and payload limits every piece of copy must fit.
public struct CopyLimits: Hashable, Sendable {
    /// About two lines of title on an iPhone lock screen.
    public var maxTitleCharacters: Int
    /// About four lines of body.
    public var maxBodyCharacters: Int
    /// APNs rejects larger payloads (413 PayloadTooLarge).
    public var maxPayloadBytes: Int

    public init(maxTitleCharacters: Int = 60, maxBodyCharacters: Int = 178, maxPayloadBytes: Int = 4_096) {
        self.maxTitleCharacters = maxTitleCharacters
        self.maxBodyCharacters = maxBodyCharacters
        self.maxPayloadBytes = maxPayloadBytes
    }

    public static let lockScreen = CopyLimits()
}

extension String {
    var capitalizedFirst: String { prefix(1).uppercased() + dropFirst() }

    /// At most `limit` characters, cut with an ellipsis; line breaks become spaces.
    func clipped(to limit: Int) -> String {
        let flat = contains(where: \.isNewline) ? String(map { $0.isNewline ? " " : $0 }) : self
        guard flat.count > limit else { return flat }
        return String(flat.prefix(limit - 1)).trimmedOrNil.map { $0 + "…" } ?? "…"
    }
}
