public import Content
public import LiveActivity
public import Models
public import Scheduling

/// Tunables of the engine, with their defaults.
public struct EngineConfiguration: Hashable, Sendable {
    /// Inactive longer than this: lapsed (default 3 days).
    public var lapseAfterSeconds: Int64 = 3 * .secondsPerDay
    /// Inactive longer than this: at churn risk (default 7 days).
    public var churnRiskAfterSeconds: Int64 = 7 * .secondsPerDay
    /// How far ahead routine reminders are planned, at least: planning runs on to the local
    /// midnight after `now + horizonSeconds`, so the horizon moves once a day (36 to 60 hours).
    public var horizonSeconds: Int64 = 36 * .secondsPerHour
    /// iOS keeps at most this many pending requests.
    public var pendingLimit: Int = 64
    /// Pending slots the planner leaves free for urgent arrivals (snoozes, transactional kinds).
    public var reservedSlots: Int = 4
    /// Local time for re-engagement nudges when the user named no preferred time.
    public var nudgeTime: LocalTimeOfDay = LocalTimeOfDay(minutesSinceMidnight: 10 * 60)
    /// Days after the last activity at which light_nudge users get a (light) check-in.
    public var lightNudgeAttemptDays: [Int] = [3]
    /// Days after the last activity for check_in_on_me users; from `strongerFromDay` on the tone is stronger.
    public var checkInOnMeAttemptDays: [Int] = [3, 7, 14]
    public var strongerFromDay: Int = 7
    /// Share of users (chosen deterministically from their id) who get no re-engagement at all,
    /// so the lift of nudges can be measured (Braze's global control group). 0 turns it off.
    public var holdoutShare: Double = 0
    /// Salt of the holdout draw: change it to draw a different control group.
    public var holdoutSalt: UInt64 = 0x486F_6C64
    /// The daily attention budget of every user who sets none of their own
    /// (`AttentionBudget`, 8 interruptions a local day by default); nil: no budget.
    public var attentionBudget: AttentionBudget? = AttentionBudget()
    /// Share of users (chosen from their id, like `holdoutShare` but with its own salt) planned
    /// without the attention budget, so its lift can be measured. 0 turns it off.
    public var budgetHoldoutShare: Double = 0
    /// Salt of the budget's holdout draw, independent of the re-engagement holdout's.
    public var budgetHoldoutSalt: UInt64 = 0x4275_6467_6574
    /// Kinds whose copy is asked of the AI coach (template copy is scheduled at once and replaced
    /// when the coach answers in time with valid copy).
    public var coachKinds: Set<NotificationKind> = [.morningGreeting, .reEngagement, .weeklyReview, .achievement]
    /// Plan hydration as repeating daily requests (one pending slot per time of day) where the
    /// rules allow it.
    public var useDailySeries = true
    /// How many social items one user may have waiting in batches and digests, kept one by one.
    /// Beyond it an item is only counted in its kind's digest ("40 people cheered"): a flood of
    /// events to one user cannot grow the state saved after every input (`waitingItemsFull`).
    public var waitingSocialItemLimit = 200

    public init() {}
}

/// Something that happened to one user, stamped by the caller with the time it happened.
public enum EngineInput: Hashable, Sendable {
    /// The app started (first launch or a cold start): register background jobs and plan.
    case appLaunched
    /// The user did something in the app, at `occurredAt` when the app reports it late (it
    /// was offline; nil: now). The kit withdrew at once what it made moot (`withdrawnBy`): what
    /// the engine took as fired since then never showed (`UserEngine.unfireWithdrawn`).
    case activity(ActivityKind, occurredAt: Instant? = nil)
    /// The user answered a notification.
    case notificationResponse(requestID: RequestID, kind: NotificationKind, action: NotificationActionID)
    /// The system reported an action identifier no category declares (a stale category, a
    /// newer app version) on a notification of `kind`: traced, never crashed on.
    case unrecognizedResponse(requestID: RequestID, kind: NotificationKind, actionIdentifier: String)
    /// The system launched a background job.
    case backgroundTaskLaunched(BackgroundJob)
    /// The user changed their notification preferences.
    case preferencesChanged(NotificationPreferences)
    /// The user's profile changed beyond preferences and zone (name, privacy level, absence
    /// response, motivational style): the engine takes it whole, with the preferences in it.
    /// A change of zone comes as `timeZoneChanged`; the profile's `timeZone` is ignored here.
    case profileChanged(UserProfile)
    /// The device moved to another time zone, at `movedAt` when the app reports the move late
    /// (it was offline; nil: now). Meanwhile the phone fired what it held at its wall time in
    /// the new zone: the engine counts those as sent, so it neither sends them again nor lets
    /// the caps forget them.
    case timeZoneChanged(ZoneRules, movedAt: Instant? = nil)
    /// Another user did something that concerns this user (from the server).
    case socialEvent(SocialEvent)
    /// The coach's answer (or failure, or timeout) for a `generateContent` effect.
    case contentGenerated(requestID: RequestID, outcome: CoachOutcome)
    /// A workout or a meal window began, changed or ended, or an activity's push token arrived
    /// (`LiveActivityTracker`).
    case liveActivity(LiveActivityEvent)
    /// Whether the device lets this app show notifications, as the app learned it: a `schedule`
    /// refused with notificationsNotAllowed (the user turned them off in Settings), or the
    /// settings it reads when it comes to the foreground. While not allowed, nothing is scheduled
    /// on the device (traced `notificationsNotAllowed`) and what the engine had planned there is
    /// cancelled, so its belief stays what the device holds; when allowed again, the plan is
    /// scheduled afresh from that moment (a stale request never fires days late).
    case notificationPermission(allowed: Bool)
    /// The sync that was to tell the user's phone of a change it has not pulled failed, was
    /// withheld or was refused (the server knows from the send's report): the phone hears only
    /// when it pulls. The plan is made again at once with everything the phone holds committed,
    /// and stays so until its next pull. A shell applies it only while the phone has a change to
    /// hear of (`UserEngine.phoneHasNotHeard`): a phone that pulled every change holds the plan.
    case syncMissed
}

/// What the engine asks its shell to do. Effects are values; the shell executes them in order.
public enum Effect: Hashable, Sendable {
    /// Deliver a notification at `fireAt` on `channel`, `.local` or `.remote`, decided once by
    /// the planning pass (`ChannelPolicy`): a local one is added to (or replaces, by identifier)
    /// the device's pending requests; a remote one is sent by the server when due.
    case schedule(NotificationRequest, fireAt: Instant, channel: DeliveryChannel)
    /// Remove pending requests.
    case cancel(requestIDs: [RequestID])
    case setBadge(Int)
    /// Clear the app's delivered notifications from Notification Center (the user has seen the app).
    case clearDeliveredNotifications
    case submitBackgroundTask(BackgroundTaskRequest)
    /// Navigate the app.
    case openDeepLink(DeepLink)
    /// Ask the AI coach for the copy of a scheduled request, within the content deadline (2 s);
    /// the answer comes back as `contentGenerated`. The request already carries template copy.
    case generateContent(requestID: RequestID, request: CoachRequest)
    /// Record a decision.
    case trace(TraceEntry)
    /// Start, update or end a Live Activity (on the device, or by push from the server).
    case liveActivity(LiveActivityCommand)
}

extension Effect {
    /// A schedule or a cancellation: what changes the platform's pending list, traces left out.
    public var changesThePlan: Bool {
        switch self {
        case .schedule, .cancel: true
        default: false
        }
    }
}

extension Effect {
    /// The channel of an effect that reaches the person: a scheduled notification's is its
    /// kind's (`ChannelPolicy`), a badge's is the inbox's; nil for the effects that do not reach
    /// anyone (background work, copy requests, traces, clearing, navigation).
    public var channel: DeliveryChannel? {
        switch self {
        case .schedule(_, _, let channel): channel
        case .setBadge: .inbox
        case .liveActivity: .liveActivity
        case .cancel, .clearDeliveredNotifications, .submitBackgroundTask, .openDeepLink, .generateContent, .trace:
            nil
        }
    }
}

/// Where a user stands in the lapse model.
public enum LapseStage: String, Codable, Sendable, CaseIterable {
    case active, lapsed, churnRisk
}
