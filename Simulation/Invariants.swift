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
}

/// One delivery as the checker sees it.
public struct ObservedDelivery: Sendable {
    public var id: String
    public var kind: NotificationKind
    public var level: InterruptionLevel
    public var at: Instant

    public init(id: String, kind: NotificationKind, level: InterruptionLevel, at: Instant) {
        self.id = id
        self.kind = kind
        self.level = level
        self.at = at
    }
}

/// Per-user invariant state: rebuilt from what was delivered, independently of the engine's
/// own bookkeeping, so an engine bug cannot hide itself.
public struct InvariantChecker: Sendable {
    private var capped: [Int64] = []
    /// Request identifiers delivered, with when; identifiers carry their local date and nothing
    /// is sent more than a day late, so a week of memory catches every duplicate.
    private var deliveredIDs: [String: Int64] = [:]
    private var morningDates: Set<LocalDate> = []

    public init() {}

    /// Checks one delivery against the user's current preferences and zone.
    public mutating func observe(
        _ delivery: ObservedDelivery, profile: UserProfile, zone: ZoneRules
    ) -> [Invariant] {
        var broken: [Invariant] = []
        let preferences = profile.preferences
        let local = zone.localDateTime(at: delivery.at)
        if let quiet = preferences.quietHours, !delivery.level.breaksThroughQuietHours, quiet.contains(local) {
            broken.append(.noDeliveryInQuietHours)
        }
        if delivery.kind == .reEngagement && profile.communication.absenceResponse == .giveMeSpace {
            broken.append(.noReEngagementForGiveMeSpace)
        }
        if !preferences.isEnabled(delivery.kind) { broken.append(.disabledKindNeverDelivered) }
        if deliveredIDs.updateValue(delivery.at.secondsSinceEpoch, forKey: delivery.id) != nil {
            broken.append(.noDuplicateDelivery)
        }
        if deliveredIDs.count > 512 {
            let keepFrom = delivery.at.secondsSinceEpoch - 7 * .secondsPerDay
            deliveredIDs = deliveredIDs.filter { $0.value >= keepFrom }
        }
        if delivery.kind == .morningGreeting && !morningDates.insert(local.date).inserted {
            broken.append(.morningGreetingOncePerLocalDay)
        }
        if !delivery.kind.isTransactional {
            let t = delivery.at.secondsSinceEpoch
            capped.append(t)
            if let first = capped.firstIndex(where: { $0 >= t - .secondsPerDay - .secondsPerHour }), first > 0 {
                capped.removeFirst(first)
            }
            let inHour = capped.reduce(0) { $0 + ($1 > t - .secondsPerHour && $1 <= t ? 1 : 0) }
            if inHour > preferences.maxPerHour { broken.append(.perHourCapHeld) }
            if let dayCap = preferences.maxPerDay {
                let dayStart = zone.instant(for: LocalDateTime(date: local.date, secondOfDay: 0)).secondsSinceEpoch
                let onDay = capped.reduce(0) { $0 + ($1 >= dayStart && $1 <= t ? 1 : 0) }
                if onDay > dayCap { broken.append(.perDayCapHeld) }
            }
        }
        return broken
    }

    /// Checks the platform's pending count.
    public func observePending(count: Int) -> [Invariant] { count > 64 ? [.atMost64Pending] : [] }
}
