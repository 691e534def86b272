import Content
import Delivery
import Engagement
import Models
import Runtime
import Scheduling

/// Everything the world keeps about one user.
struct UserState {
    var traits: SimulatedUserTraits
    var engine: UserEngine
    var center: SimulatedNotificationCenter
    var background: SimulatedBackgroundTaskScheduler
    var generator: SeededGenerator
    var zone: ZoneRules
    var checker = InvariantChecker()
    /// While in a lapse, the user does nothing until this time.
    var lapsedUntil: Int64 = 0
    var churned = false
    var digest = EventDigest.initial
    var fireEventAt: Int64?
    var launchEventAt: Int64?
    var deliveryDay: LocalDate?
    var deliveriesToday = 0
    /// The pending day-start event; an older one (before a time-zone change) is stale.
    var dayStartAt: Int64 = 0
    /// The last local date whose behaviour was drawn, so travel never draws a day twice.
    var lastPlannedDate: LocalDate?
    /// Requests the platform had dropped by the 64 limit at the last check.
    var droppedSeen = 0
    /// Numbers this user's social events.
    var socialSequence = 0
    /// Draws of the simulated coach for this user.
    var coachRandom: SeededGenerator
    /// Which of this user's steps' commits fail (`storeWriteFailure`): draws of their own, so the
    /// fault changes nothing else, and the same steps fail on any thread count and in `--explain`.
    var commitDraws: SeededGenerator
    /// When the current lapse began (nil when not lapsed), for the return-rate lift.
    var lapseStartedAt: Int64?
    /// This week's activity (plus the last one before it) and deliveries, for the weekly metrics.
    var weekActivity: [ActivityEvent] = []
    var weekDeliveries: [DeliveryRecord] = []
    var weekDeliveryIDs: [RequestID] = []
    /// The platform refused or silenced notifications at some point (permission denied or revoked):
    /// what the engine planned may never have been shown, so "never lost" cannot be judged.
    var notificationsBlocked = false
    /// A `schedule` was refused because notifications are off: the app tells the engine
    /// (`notificationPermission`) once the step's other effects are done.
    var refusalToReport = false

    /// The device refused `identifier` (notifications are off): the app withdraws the request it
    /// was meant to replace, so it never fires at its old time, and tells the engine.
    mutating func withdrawRefused(_ identifier: RequestID) {
        center.removePendingNotificationRequests(withIdentifiers: [identifier])
        refusalToReport = true
    }
    /// Recent notification load (`FatigueModel`) and the opt-outs it led to.
    var fatigue = FatigueState()
    var optOuts = OptOutRecord()
    /// The remote channel (the server's side, APNs and the device's push state) and its checks.
    var remote: RemoteChannel
    /// The phone's copy of the server's plan (`Deployment.server` only).
    var phone = PhonePlan()
    var channelChecker = ChannelChecker()
    /// The device's Live Activities.
    var liveActivities = LiveActivityDevice()
    /// The device's clock minus true time, in seconds (`DeviceClock`).
    var clockOffsetSeconds: Int64 = 0
    /// One-off requests a jump of the clock fired before their time, with the true time the
    /// engine planned them for: shown already (the app's delivered list has them), so never added
    /// again, and not on the device although the engine counts them pending until that time. (A
    /// series' occurrence goes to `seriesShown`.)
    var releasedEarly: [RequestID: Int64] = [:]
    /// When each daily series last fired, in true time (`UserState.addingTime`).
    var seriesShown: [RequestID: Int64] = [:]
    /// While the clock is off: the daily series the app holds one occurrence at a time, as the
    /// engine made them (`Shard.holdSeries`).
    var heldSeries: [RequestID: NotificationRequest] = [:]
    /// In the drain phase: the notifications waiting at the end that have not reached an end yet.
    var drainWatch: Set<String> = []

    func isAway(at now: Int64) -> Bool { churned || now < lapsedUntil }

    /// How the user is away, as the behaviour model sees it.
    func absence(at now: Int64) -> Absence {
        churned ? .churned : now < lapsedUntil ? .lapsed : .present
    }

    /// User `index` of the scenario, with the app installed at a random moment of the first day
    /// (returned too): traits, engine, simulated platform and generators, all derived from the
    /// seed and `index` alone.
    static func install(
        index: Int, scenario: Scenario, zones: [String: ZoneRules], configuration: EngineConfiguration,
        content: ContentGenerator, background model: BackgroundLaunchModel
    ) -> (UserState, installAt: Instant) {
        let traits = Population.traits(index: index, scenario: scenario)
        let zone = zones[traits.profile.timeZone]!
        var generator = SeededGenerator(seed: scenario.seed).derived(0xBE4A_0000 &+ UInt64(index))
        let roll = generator.nextUnit()
        let status: AuthorizationStatus = roll < 0.02 ? .denied : roll < 0.08 ? .provisional : .authorized
        // The world never reads the delivered list (the app only clears it, and the kit knows
        // what fired from what it placed, `PlanSyncState.oneOffs`), so the device keeps none: a
        // hundred requests with their copy, for every user, would only take memory.
        var center = SimulatedNotificationCenter(timeZone: zone, authorizationStatus: status, deliveredLimit: 0)
        center.setNotificationCategories(NotificationCategory.all)
        let background = SimulatedBackgroundTaskScheduler(
            permittedIdentifiers: Set(BackgroundJob.allCases.map(\.rawValue) + [Shard.planRefreshIdentifier]),
            model: model,
            generator: generator.derived(1))
        let installAt = scenario.startInstant + Int64(generator.int(in: 0...86_399))
        let user = UserState(
            traits: traits,
            engine: UserEngine(
                profile: traits.profile, zone: zone, now: installAt, configuration: configuration,
                contentSeed: EngineRuntime.contentSeed(traits.profile.id), content: content),
            center: center, background: background, generator: generator, zone: zone,
            coachRandom: generator.derived(3), commitDraws: generator.derived(5),
            remote: RemoteChannel(userID: traits.profile.id, registeredAt: installAt, draws: generator.derived(4)))
        return (user, installAt)
    }

    /// Counts a delivery on the local `date`; returns the number delivered on the previous
    /// delivery day when `date` starts a new one.
    mutating func countDelivery(on date: LocalDate) -> Int? {
        var finished: Int?
        if deliveryDay != date {
            finished = endDeliveryDay()
            deliveryDay = date
        }
        deliveriesToday += 1
        return finished
    }

    /// Ends the current delivery day; returns its count when anything was delivered.
    mutating func endDeliveryDay() -> Int? {
        defer { deliveriesToday = 0 }
        return deliveriesToday > 0 ? deliveriesToday : nil
    }

    /// The user's engagement figures for one simulated week (from `since` until `until`), from
    /// what they did and received; starts the next week's record, keeping the last activity
    /// ("days since last active" reaches back across weeks).
    mutating func closeWeek(since: Instant, until: Instant) -> UserEngagementSummary {
        let summary = UserEngagementSummary(
            activity: weekActivity, deliveries: weekDeliveries, optOuts: optOuts.kinds, since: since, now: until,
            zone: zone,
            thresholds: LapseThresholds(configuration: engine.configuration))
        weekActivity = weekActivity.suffix(1)
        weekDeliveries.removeAll()
        weekDeliveryIDs.removeAll()
        return summary
    }
}
