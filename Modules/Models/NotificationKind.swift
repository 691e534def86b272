/// What a notification is about. Every rule of the engine (setting, level, category, cap
/// exemption) is keyed by kind.
public enum NotificationKind: String, Codable, CaseIterable, Sendable, CodingKeyRepresentable, Comparable {
    // Coaching
    case morningGreeting, workoutReminder, preWorkout, postWorkoutCheckIn, mealReminder, hydration
    case achievement, reEngagement, weeklyReview, streakReminder, energyLog, checkInReminder, reflection
    // Social: what other users did
    case newFollower, followRequest, workoutKudos, workoutComment, mention, challengeInvite, leaderboardChange
    // System
    case securityAlert, privacyUpdate, featureAnnouncement, maintenanceNotice

    public static func < (a: NotificationKind, b: NotificationKind) -> Bool { a.ordinal < b.ordinal }

    /// Position in declaration order. Hashing and comparing by it avoids the String raw value,
    /// which `RawRepresentable`'s default `Hashable` would hash on every dictionary access.
    @inlinable public var ordinal: Int {
        switch self {
        case .morningGreeting: 0
        case .workoutReminder: 1
        case .preWorkout: 2
        case .postWorkoutCheckIn: 3
        case .mealReminder: 4
        case .hydration: 5
        case .achievement: 6
        case .reEngagement: 7
        case .weeklyReview: 8
        case .streakReminder: 9
        case .energyLog: 10
        case .checkInReminder: 11
        case .reflection: 12
        case .newFollower: 13
        case .followRequest: 14
        case .workoutKudos: 15
        case .workoutComment: 16
        case .mention: 17
        case .challengeInvite: 18
        case .leaderboardChange: 19
        case .securityAlert: 20
        case .privacyUpdate: 21
        case .featureAnnouncement: 22
        case .maintenanceNotice: 23
        }
    }

    public func hash(into hasher: inout Hasher) { hasher.combine(UInt8(truncatingIfNeeded: ordinal)) }

    public static func == (a: NotificationKind, b: NotificationKind) -> Bool { a.ordinal == b.ordinal }

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

    /// The setting of a kind the user has not set.
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

/// How a user wants a kind delivered.
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

    public static func < (a: InterruptionLevel, b: InterruptionLevel) -> Bool { a.rank < b.rank }

    /// The level's place in the order of the cases (the planner compares levels for every
    /// candidate: `allCases.firstIndex` built the array of cases each time).
    private var rank: Int {
        switch self {
        case .passive: 0
        case .active: 1
        case .timeSensitive: 2
        case .critical: 3
        }
    }

    /// Only critical notifications break through the user's quiet hours.
    public var breaksThroughQuietHours: Bool { self == .critical }
}

extension NotificationKind {
    /// Kinds that arrive from other users (social notifications).
    public var isSocial: Bool {
        switch self {
        case .newFollower, .followRequest, .workoutKudos, .workoutComment, .mention, .challengeInvite,
            .leaderboardChange:
            true
        default: false
        }
    }
}

extension NotificationKind {
    /// The kind whose `ordinal` this is, if any.
    public init?(ordinal: Int) {
        guard let kind = NotificationKind.allCases.first(where: { $0.ordinal == ordinal }) else { return nil }
        self = kind
    }
}

/// A set of kinds as bits by ordinal: membership is a shift and a mask, where a
/// `Set<NotificationKind>` hashes the kind on every question (the planner asks once per routine
/// candidate per pass). Kinds number fewer than 64 (a test holds it).
public struct NotificationKindSet: Hashable, Sendable, ExpressibleByArrayLiteral {
    @usableFromInline var bits: UInt64 = 0

    public init(_ kinds: some Sequence<NotificationKind>) {
        for kind in kinds { bits |= 1 << UInt64(kind.ordinal) }
    }

    public init(arrayLiteral kinds: NotificationKind...) { self.init(kinds) }

    @inlinable public func contains(_ kind: NotificationKind) -> Bool { bits >> UInt64(kind.ordinal) & 1 == 1 }
}
