/// The sound a notification plays: achievement, reminder or urgent.
public enum NotificationSound: String, Codable, CaseIterable, Sendable {
    case achievement, reminder, urgent
}

/// The four meals the engine reminds of, each at its default local time.
public enum MealType: String, Codable, CaseIterable, Sendable, Comparable {
    case breakfast, lunch, snack, dinner

    public var defaultTime: LocalTimeOfDay {
        switch self {
        case .breakfast: LocalTimeOfDay(minutesSinceMidnight: 8 * 60)
        case .lunch: LocalTimeOfDay(minutesSinceMidnight: 12 * 60 + 30)
        case .snack: LocalTimeOfDay(minutesSinceMidnight: 15 * 60)
        case .dinner: LocalTimeOfDay(minutesSinceMidnight: 18 * 60 + 30)
        }
    }

    public static func < (a: MealType, b: MealType) -> Bool { a.defaultTime < b.defaultTime }
}

/// Where tapping a notification or one of its actions takes the user.
public enum DeepLink: Hashable, Sendable, CustomStringConvertible {
    case dashboard
    case moodLog
    case coachChat
    case workoutStart
    case workoutLog
    case mealLog(MealType?)
    case quickAdd
    case energyLog
    case checkIn
    case weeklyReview
    case achievements
    case inbox

    /// The URL form, `engage://<path>`.
    public var description: String {
        switch self {
        case .dashboard: "engage://dashboard"
        case .moodLog: "engage://mood"
        case .coachChat: "engage://chat"
        case .workoutStart: "engage://workout/start"
        case .workoutLog: "engage://workout/log"
        case .mealLog(let meal): "engage://meal/log" + (meal.map { "/\($0.rawValue)" } ?? "")
        case .quickAdd: "engage://meal/quick-add"
        case .energyLog: "engage://energy"
        case .checkIn: "engage://check-in"
        case .weeklyReview: "engage://review/weekly"
        case .achievements: "engage://achievements"
        case .inbox: "engage://inbox"
        }
    }

    /// Parses the URL form; nil for anything else.
    public init?(url: String) {
        let all: [DeepLink] =
            [
                .dashboard, .moodLog, .coachChat, .workoutStart, .workoutLog, .mealLog(nil), .quickAdd, .energyLog,
                .checkIn, .weeklyReview, .achievements, .inbox,
            ] + MealType.allCases.map { .mealLog($0) }
        guard let link = all.first(where: { $0.description == url }) else { return nil }
        self = link
    }
}

extension DeepLink: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let link = DeepLink(url: text) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "unknown deep link \"\(text)\"")
        }
        self = link
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}

/// What a notification shows and how it behaves (UNNotificationContent).
public struct NotificationContent: Codable, Hashable, Sendable {
    public var kind: NotificationKind
    public var title: String
    public var subtitle: String?
    public var body: String
    public var category: NotificationCategoryID
    /// Groups related notifications (UNNotificationContent.threadIdentifier).
    public var threadID: String
    public var interruptionLevel: InterruptionLevel
    /// 0...1; orders the app's notifications in the summary.
    public var relevanceScore: Double
    public var sound: NotificationSound?
    /// nil leaves the badge unchanged; 0 clears it.
    public var badge: Int?
    /// Where the default tap leads.
    public var deepLink: DeepLink

    public init(
        kind: NotificationKind, title: String, subtitle: String? = nil, body: String,
        category: NotificationCategoryID? = nil, threadID: String? = nil, interruptionLevel: InterruptionLevel? = nil,
        relevanceScore: Double = 0.5, sound: NotificationSound? = .reminder, badge: Int? = nil,
        deepLink: DeepLink = .dashboard
    ) {
        self.kind = kind
        self.title = title
        self.subtitle = subtitle
        self.body = body
        self.category = category ?? kind.category
        self.threadID = threadID ?? kind.rawValue
        self.interruptionLevel = interruptionLevel ?? kind.defaultInterruptionLevel
        self.relevanceScore = min(1, max(0, relevanceScore))
        self.sound = sound
        self.badge = badge
        self.deepLink = deepLink
    }
}

/// A local notification request (UNNotificationRequest): scheduling one whose identifier is
/// already pending replaces it.
public struct NotificationRequest: Codable, Hashable, Sendable {
    /// The request's identity: the key of its outbox slot, of the phone's pending request and of
    /// the trace's decisions. Text only where it leaves the process (`rawValue`).
    public var identifier: RequestID
    public var content: NotificationContent
    public var trigger: NotificationTrigger

    public init(identifier: RequestID, content: NotificationContent, trigger: NotificationTrigger) {
        self.identifier = identifier
        self.content = content
        self.trigger = trigger
    }
}

/// Something the user did in the app; every case counts as activity for lapse detection.
public enum ActivityKind: Codable, Hashable, Sendable {
    case appOpened(sessionSeconds: Int)
    case workoutCompleted(durationMinutes: Int)
    case mealLogged(MealType)
    case moodLogged
    case energyLogged
    case coachChat
    case checkInCompleted

    /// A stable name for logs and reports.
    public var name: String {
        switch self {
        case .appOpened: "appOpened"
        case .workoutCompleted: "workoutCompleted"
        case .mealLogged: "mealLogged"
        case .moodLogged: "moodLogged"
        case .energyLogged: "energyLogged"
        case .coachChat: "coachChat"
        case .checkInCompleted: "checkInCompleted"
        }
    }
}

/// A timestamped activity of one user.
public struct ActivityEvent: Codable, Hashable, Sendable {
    public var userID: UserID
    public var at: Instant
    public var kind: ActivityKind

    public init(userID: UserID, at: Instant, kind: ActivityKind) {
        self.userID = userID
        self.at = at
        self.kind = kind
    }
}

/// Something another user did that concerns this user (a social notification),
/// arriving from the server.
public struct SocialEvent: Codable, Hashable, Sendable {
    /// The server's identifier of the event; unique.
    public var id: String
    /// newFollower, followRequest, workoutKudos, workoutComment, mention, challengeInvite or leaderboardChange.
    public var kind: NotificationKind
    /// The other user's display name; shown only where the privacy level allows.
    public var actorName: String
    /// What it is about, e.g. "morning run"; events are grouped by kind and topic.
    public var topic: String
    /// Whether the actor and the user follow each other (friendsOnly shows names to mutual friends only).
    public var isMutualFriend: Bool

    public init(id: String, kind: NotificationKind, actorName: String, topic: String, isMutualFriend: Bool) {
        self.id = id
        self.kind = kind
        self.actorName = actorName
        self.topic = topic
        self.isMutualFriend = isMutualFriend
    }
}
