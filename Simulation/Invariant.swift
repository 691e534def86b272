public import Models

/// The promises the simulator checks after every event.
public enum Invariant: String, CaseIterable, Sendable, Codable {
    /// Nothing is delivered in the user's quiet hours, except critical notifications.
    case noDeliveryInQuietHours
    /// A give_me_space user never receives a re-engagement nudge.
    case noReEngagementForGiveMeSpace
    /// No more than maxPerHour non-transactional deliveries in any 60 minutes.
    case perHourCapHeld
    /// No more than maxPerDay non-transactional deliveries on a local day.
    case perDayCapHeld
    /// No request identifier is delivered twice.
    case noDuplicateDelivery
    /// The platform never holds more than 64 pending requests.
    case atMost64Pending
    /// A kind the user disabled is never delivered.
    case disabledKindNeverDelivered
    /// At most one morning greeting per local day, DST fall-back included.
    case morningGreetingOncePerLocalDay
    /// Nothing is delivered after its staleness deadline (planned time + the kind's staleness).
    case noDeliveryAfterDeadline
    /// A batch or digest holds items of one key (kind and topic, or kind and period) only.
    case groupNeverMixesKeys
    /// Every folded item is delivered in exactly one batch or digest: never two, never lost.
    case foldedItemInExactlyOneGroup
    /// No pending request is silently dropped by the platform's 64 limit.
    case noRequestDroppedByPendingLimit
    /// No reminder for something the user already did (a meal logged, a workout done that day).
    case noReminderForDoneThing
    /// Every delivered payload fits APNs' 4 KB.
    case payloadWithin4KB
    /// No delivered payload carries personal data the user's privacy level does not allow.
    case noPersonalDataInPayload
    /// Every delivery of a kind with a slot window (`SlotWindow`) fires inside its slot's window,
    /// the nominal time rebuilt from the request identifier and the preferences (snoozed copies
    /// excepted): a dinner reminder never fires at breakfast.
    case deliveryInsideSlotWindow
    /// Two notifications of one kind never fire at the same instant for one user.
    case noSameInstantDuplicateOfKind
    /// At most the campaign's cap of re-engagement nudges (its attempt days) between two
    /// activities of the user.
    case nudgesWithinCampaignCap
    /// No attempt of a campaign is delivered twice in one absence.
    case noNudgeAttemptTwice
    /// No nudge in the user's local night (outside the preferences' waking hours) unless two app
    /// opens in that zone fell within 90 minutes of that local time.
    case noNudgeInLocalNight
    /// Nothing is sent to a device token after a 410 retired it (`ChannelChecker`).
    case noPushToRetiredToken
    /// The device was last sent the inbox's unread count (by an alert's badge or a badge sync),
    /// or a sync that will carry it is pending: the badge is right within one silent push.
    case badgeEqualsUnread
    /// At most two background pushes accepted in any hour per device (`SilentPushPlan`).
    case silentWithinBudget
    /// Every notification shown was in the user's inbox when it was shown.
    case inboxHoldsEveryVisibleNotification
    /// An occurrence is shown on one channel only, never both locally and by push.
    case noOccurrenceOnTwoChannels
    /// Every Live Activity start, update and end the engine decides is taken by the device's
    /// ActivityKit center (8 h, 4 KB, the priority-10 budget, a running activity to update).
    case liveActivityWithinLimits
    /// A killed app's engine restores from the snapshot it wrote (`appKilledPerUserDay`).
    case engineRestoresFromSnapshot
    /// What the engine believes pending on the device is what the device holds
    /// (`PlatformAgreement`), after every step that schedules or cancels, changes the zone or the
    /// permission, or relaunches the app: as many one-off requests firing at the same instants
    /// and as many daily series, and every identifier the step scheduled held at its fire time,
    /// every one it cancelled gone. A schedule the device refuses (notifications off) withdraws
    /// the request it was meant to replace.
    case planMatchesPlatform
}

/// One delivery as the checker sees it.
public struct ObservedDelivery: Sendable {
    public var id: String
    public var kind: NotificationKind
    public var level: InterruptionLevel
    public var at: Instant
    /// From a repeating request: the same identifier fires once per occurrence.
    public var repeats: Bool
    /// Fired ahead of its time by a jump of the device's clock (`DeviceClock`), not by the
    /// engine's plan: judged for what it is (a duplicate, a disabled kind, give_me_space, the
    /// campaign's cap, a done thing), not for when (quiet hours, caps, slot windows, deadlines,
    /// the local night, the same instant), and left out of the caps' count. `at` is the time the
    /// engine planned it for.
    public var releasedEarly: Bool

    public init(
        id: String, kind: NotificationKind, level: InterruptionLevel, at: Instant, repeats: Bool = false,
        releasedEarly: Bool = false
    ) {
        self.id = id
        self.kind = kind
        self.level = level
        self.at = at
        self.repeats = repeats
        self.releasedEarly = releasedEarly
    }
}
