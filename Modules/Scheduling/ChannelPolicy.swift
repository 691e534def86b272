public import Models

/// How a notification reaches the person (docs/ARCHITECTURE.md). One occurrence is delivered on
/// one of `local` or `remote`, never both; the inbox records every user-visible one beside it.
public enum DeliveryChannel: String, Codable, CaseIterable, Sendable {
    /// Planned ahead in the device's pending list (64 slots) and fired by the device.
    case local
    /// An APNs alert sent by the server when it is due.
    case remote
    /// An APNs background push (`content-available: 1`): refreshes the inbox and the badge.
    case silent
    /// A Live Activity started, updated or ended on the device or by push.
    case liveActivity
    /// The in-app notification center: every user-visible notification, so a user who turned
    /// push off still finds it; the badge is its unread count.
    case inbox
}

/// Which channel carries a kind's notifications: the rule is where its trigger happens.
///
/// - **Local**: what the engine plans ahead from the user's own routine (reminders, check-ins,
///   the weekly review, achievements from the user's own activity). The device holds the plan
///   and fires it on time without a network, in airplane mode, with the server down.
/// - **Remote**: what is triggered on the server, away from the device: other people's actions
///   (social kinds, challenges, the leaderboard), system notices, and re-engagement, whose user
///   has by definition not opened the app for days, so a plan placed on the device when it
///   last ran would not reach that far (the horizon is 36 to 60 hours; a nudge comes after 3
///   days and later).
public enum ChannelPolicy {
    /// The channel of `kind`'s notifications: `.local` or `.remote`.
    public static func channel(for kind: NotificationKind) -> DeliveryChannel {
        switch kind {
        case .morningGreeting, .workoutReminder, .preWorkout, .postWorkoutCheckIn, .mealReminder, .hydration,
            .achievement, .weeklyReview, .streakReminder, .energyLog, .checkInReminder, .reflection:
            .local
        case .reEngagement, .newFollower, .followRequest, .workoutKudos, .workoutComment, .mention, .challengeInvite,
            .leaderboardChange, .securityAlert, .privacyUpdate, .featureAnnouncement, .maintenanceNotice:
            .remote
        }
    }

    /// `apns-expiration` of a push of `kind` due at `dueAt`: kept for an offline device until
    /// the kind's staleness deadline, past which the notification is noise (`KindPolicy`); a
    /// kind dropped rather than deferred is "now or never" (0: one attempt, never stored).
    public static func expiration(of kind: NotificationKind, dueAt: Instant) -> Instant? {
        let policy = KindPolicy.standard(for: kind)
        if policy.deferral == .drop { return nil }
        return dueAt + policy.stalenessSeconds
    }

    /// `apns-collapse-id` of a push: grouped social copy ("3 people cheered your run", the social
    /// kinds that fold into groups) is sent again as its group grows, under its group's request
    /// identifier, so the device shows the newest copy in place of the older one. Kinds sent one
    /// by one (a mention, a follow request) do not collapse (nil). At most 64 bytes, as APNs
    /// requires: a longer identifier is not used.
    public static func collapseID(of kind: NotificationKind, requestID: String) -> String? {
        guard kind.isSocial, KindPolicy.standard(for: kind).deferral == .foldIntoDigest, !requestID.isEmpty,
            requestID.utf8.count <= 64
        else { return nil }
        return requestID
    }
}
