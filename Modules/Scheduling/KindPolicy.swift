public import Models

/// What to do with a notification when a rule (quiet hours, a cap, the user being in the app)
/// blocks its planned time.
public enum DeferralPolicy: String, Codable, Sendable, CaseIterable {
    /// Wait until the rules allow it, up to the staleness deadline; then drop it.
    case deferUntilAllowed = "defer"
    /// Drop it at once: a late copy is worth nothing (the next one comes soon).
    case drop
    /// Fold it into the kind's daily digest.
    case foldIntoDigest = "fold"
}

/// The delivery policy of one kind: how it is grouped, how it is ranked next to the app's other
/// notifications, and what happens when a rule blocks it. Preferences choose the setting and
/// the interruption level; the rest is the kind's nature.
public struct KindPolicy: Hashable, Sendable {
    /// Latest acceptable delay after the planned time, in seconds; past it the occurrence is dropped.
    /// A pre-workout reminder after the workout, or a lunch reminder at tea time, is noise.
    public var stalenessSeconds: Int64
    public var deferral: DeferralPolicy
    /// The kind whose lock-screen thread these notifications join (`threadID`). A kind rather
    /// than the thread's text, so a policy, and the planner's candidates that carry one, hold no
    /// reference-counted field: the planner copies and sorts candidates on every pass.
    public var threadKind: NotificationKind
    /// 0...1: how much the kind matters next to the app's others in the notification summary.
    public var relevance: Double

    /// Groups the kind's notifications on the lock screen (UNNotificationContent.threadIdentifier).
    public var threadID: String { threadKind.threadID }

    public init(
        stalenessSeconds: Int64, deferral: DeferralPolicy = .deferUntilAllowed, threadOf threadKind: NotificationKind,
        relevance: Double = 0.5
    ) {
        self.stalenessSeconds = stalenessSeconds
        self.deferral = deferral
        self.threadKind = threadKind
        self.relevance = min(1, max(0, relevance))
    }

    /// The kind's policy.
    public static func standard(for kind: NotificationKind) -> KindPolicy {
        let minute = Int64.secondsPerMinute
        let hour = Int64.secondsPerHour
        switch kind {
        case .morningGreeting: return KindPolicy(stalenessSeconds: 3 * hour, threadOf: kind, relevance: 0.6)
        case .mealReminder: return KindPolicy(stalenessSeconds: 60 * minute, threadOf: kind, relevance: 0.6)
        case .hydration:
            return KindPolicy(stalenessSeconds: 30 * minute, deferral: .drop, threadOf: kind, relevance: 0.4)
        case .workoutReminder, .preWorkout:
            return KindPolicy(stalenessSeconds: 10 * minute, threadOf: kind, relevance: 0.8)
        case .postWorkoutCheckIn, .energyLog, .checkInReminder:
            return KindPolicy(stalenessSeconds: 3 * hour, threadOf: kind, relevance: 0.6)
        case .reEngagement: return KindPolicy(stalenessSeconds: 18 * hour, threadOf: kind, relevance: 0.8)
        case .weeklyReview, .reflection:
            return KindPolicy(stalenessSeconds: 18 * hour, threadOf: kind, relevance: 0.5)
        case .securityAlert: return KindPolicy(stalenessSeconds: .secondsPerDay, threadOf: kind, relevance: 1)
        case .achievement, .streakReminder:
            return KindPolicy(stalenessSeconds: 6 * hour, threadOf: kind, relevance: 0.5)
        case .workoutKudos, .workoutComment, .newFollower, .leaderboardChange, .challengeInvite:
            return KindPolicy(stalenessSeconds: 6 * hour, deferral: .foldIntoDigest, threadOf: kind, relevance: 0.3)
        case .followRequest, .mention: return KindPolicy(stalenessSeconds: 6 * hour, threadOf: kind, relevance: 0.6)
        case .privacyUpdate, .featureAnnouncement, .maintenanceNotice:
            return KindPolicy(stalenessSeconds: .secondsPerDay, threadOf: kind, relevance: 0.2)
        }
    }
}

extension NotificationKind {
    /// The lock-screen thread of a kind: coaching kinds share threads by topic, social kinds by kind.
    public var threadID: String {
        switch self {
        case .morningGreeting, .weeklyReview, .reflection, .checkInReminder, .energyLog: "coach"
        case .workoutReminder, .preWorkout, .postWorkoutCheckIn, .streakReminder, .achievement: "workout"
        case .mealReminder, .hydration: "nutrition"
        case .reEngagement: "check-in"
        case .securityAlert, .privacyUpdate, .featureAnnouncement, .maintenanceNotice: "system"
        default: rawValue
        }
    }
}
