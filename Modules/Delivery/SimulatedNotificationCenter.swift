public import Models

/// A local notification center in virtual time, enforcing the real framework's limits
/// (as Apple documents them): the simulator's and the tests' stand-in for
/// UNUserNotificationCenter.
///
/// It is the one simulated part that ships in a production module, on purpose: EngagementKit's
/// `RecordingCenter` stands on it in the app, to keep the kit's own record of what it placed in
/// the system's center (the other doubles live in `SimulatedPlatform`).
///
/// It follows the `LocalNotificationCenter` contract, and in addition:
/// - Time only comes in as parameters. `fireDue(through:)` delivers what is due; nothing
///   fires by itself.
/// - Triggers are evaluated in `timeZone`, the device's zone: calendar triggers follow it
///   when it changes (`setTimeZone(_:at:)`), date and time-interval triggers keep their
///   instant. Gaps and repeats follow `ZoneRules`: a wall time in the spring-forward gap fires
///   at the end of the gap, one that occurs twice fires once, at its first occurrence.
/// - A trigger fires at the first instant strictly after the request was added: a date
///   trigger at or before `now` never fires, so the request is not kept (not an error, and not
///   counted as dropped).
/// - Requests due while the status is `notDetermined` or `denied` (permission revoked after
///   scheduling) are consumed as if delivered (removed, or re-armed when repeating) but not
///   shown; `suppressedByAuthorizationCount` counts them.
/// - `provisional` delivers with presentation `.quiet`, `authorized` and `ephemeral` with
///   `.banner`.
/// - The delivered list keeps the most recent `deliveredLimit` notifications (100 unless the
///   creator sets another); older ones are removed as if the user cleared them.
/// - The badge changes only with badge permission (`.badge` granted and a status that allows
///   notifications): through `setBadgeCount`, or when a notification with a non-nil content
///   badge is delivered. Negative values clamp to 0.
///
/// Pending requests are kept in an array sorted by (next fire, identifier) with binary-search
/// insertion; no Foundation calendar is used on any path.
public struct SimulatedNotificationCenter: LocalNotificationCenter, Sendable, Equatable {
    /// The framework's limit on pending requests.
    public static let pendingLimit = 64
    /// How many delivered notifications the simulated Notification Center keeps unless told
    /// otherwise (an assumption: Apple documents no limit; the oldest go first).
    public static let defaultDeliveredLimit = 100

    /// How many delivered notifications this center keeps. A caller that never reads the list
    /// (the simulator's world only clears it) keeps fewer, or none: a hundred requests with their
    /// copy for every simulated device would only take memory.
    public let deliveredLimit: Int

    public private(set) var authorizationStatus: AuthorizationStatus
    /// The options the user granted; they take effect only while `authorizationStatus` allows
    /// notifications.
    public private(set) var grantedOptions: AuthorizationOptions
    /// The device's time zone, in which calendar triggers are matched.
    public private(set) var timeZone: ZoneRules
    public private(set) var notificationCategories: [NotificationCategory] = []
    public private(set) var pendingNotificationRequests: [PendingNotification] = []
    public private(set) var deliveredNotifications: [DeliveredNotification] = []
    public private(set) var badgeCount: Int = 0

    /// Requests the 64 limit dropped silently, since creation (the simulator reports it; the goal is 0).
    public private(set) var droppedByLimitCount: Int = 0
    /// Requests that fired while authorization did not allow notifications, since creation.
    public private(set) var suppressedByAuthorizationCount: Int = 0
    /// Notifications delivered (presented or quiet), since creation.
    public private(set) var deliveredCount: Int = 0

    public init(
        timeZone: ZoneRules, authorizationStatus: AuthorizationStatus = .authorized,
        grantedOptions: AuthorizationOptions = [.alert, .sound, .badge],
        deliveredLimit: Int = Self.defaultDeliveredLimit
    ) {
        precondition(deliveredLimit >= 0, "a delivered list cannot keep \(deliveredLimit) notifications")
        self.deliveredLimit = deliveredLimit
        self.timeZone = timeZone
        self.authorizationStatus = authorizationStatus
        self.grantedOptions = grantedOptions
    }

    // MARK: - Authorization

    /// Simulates the user's answer to the permission prompt: returns the new status.
    ///
    /// - From `notDetermined`, asking with `.provisional` grants `provisional` at once, without
    ///   a prompt (`userAllows` is ignored); otherwise the prompt appears and the user's answer
    ///   gives `authorized` (with `options`) or `denied`.
    /// - From `provisional`, asking without `.provisional` shows the prompt: `authorized` or
    ///   `denied` (an assumption: Apple does not document declining from provisional).
    /// - Otherwise the system shows no prompt and nothing changes, as the real framework does
    ///   once the user has answered.
    public mutating func requestAuthorization(options: AuthorizationOptions, userAllows: Bool) -> AuthorizationStatus {
        let wanted = options.subtracting(.provisional)
        switch authorizationStatus {
        case .notDetermined where options.contains(.provisional):
            authorizationStatus = .provisional
            grantedOptions = wanted
        case .notDetermined:
            authorizationStatus = userAllows ? .authorized : .denied
            grantedOptions = userAllows ? wanted : []
        case .provisional where !options.contains(.provisional):
            authorizationStatus = userAllows ? .authorized : .denied
            grantedOptions = userAllows ? wanted : []
        case .provisional, .denied, .authorized, .ephemeral:
            break
        }
        return authorizationStatus
    }

    /// The user changes permission in Settings (revocation / grant). Pending requests stay
    /// pending; while the status does not allow notifications they fire unseen. When
    /// `grantedOptions` is nil the granted options stay, except that turning notifications on
    /// with none granted grants the system's defaults (alert, sound, badge).
    public mutating func setAuthorizationStatus(
        _ status: AuthorizationStatus, grantedOptions: AuthorizationOptions? = nil
    ) {
        authorizationStatus = status
        if let grantedOptions {
            self.grantedOptions = grantedOptions
        } else if status.allowsNotifications && self.grantedOptions.isEmpty {
            self.grantedOptions = [.alert, .sound, .badge]
        }
    }

    private var badgePermitted: Bool { authorizationStatus.allowsNotifications && grantedOptions.contains(.badge) }

    // MARK: - Categories

    /// Replaces the registered categories; for a repeated identifier the last one given wins,
    /// at the position of the first.
    public mutating func setNotificationCategories(_ categories: [NotificationCategory]) {
        var result: [NotificationCategory] = []
        result.reserveCapacity(categories.count)
        for category in categories {
            if let index = result.firstIndex(where: { $0.id == category.id }) {
                result[index] = category
            } else {
                result.append(category)
            }
        }
        notificationCategories = result
    }

    // MARK: - Pending requests

    public mutating func add(_ request: NotificationRequest, at now: Instant) throws(NotificationCenterError) {
        guard !request.identifier.isEmpty else { throw .emptyIdentifier }
        if let reason = request.trigger.invalidReason { throw .invalidTrigger(reason) }
        guard authorizationStatus.allowsNotifications else { throw .notificationsNotAllowed }

        removePending(identifier: request.identifier)
        guard let nextFire = request.trigger.nextFire(after: now, scheduledAt: now, in: timeZone) else { return }
        insertPending(PendingNotification(request: request, scheduledAt: now, nextFire: nextFire))
        if pendingNotificationRequests.count > Self.pendingLimit {
            let excess = pendingNotificationRequests.count - Self.pendingLimit
            pendingNotificationRequests.removeLast(excess)
            droppedByLimitCount += excess
        }
    }

    public mutating func removePendingNotificationRequests(withIdentifiers identifiers: [RequestID]) {
        if identifiers.count == 1 {
            removePending(identifier: identifiers[0])
        } else if !identifiers.isEmpty {
            let doomed = Set(identifiers)
            pendingNotificationRequests.removeAll { doomed.contains($0.request.identifier) }
        }
    }

    public mutating func removeAllPendingNotificationRequests() {
        pendingNotificationRequests.removeAll()
    }

    /// Soonest nextFire among pending, or nil.
    public var nextFireInstant: Instant? {
        pendingNotificationRequests.isEmpty ? nil : pendingNotificationRequests[0].nextFire  // no copy of the request
    }

    /// Device zone changes (travel): calendar triggers re-evaluate next fire in the new zone;
    /// date and interval triggers keep their instant.
    ///
    /// Calendar requests are re-matched strictly after `now`; one already due at `now` keeps its
    /// instant (it fires at the next `fireDue`), and one whose match no longer occurs in the new
    /// zone is removed. Call `fireDue(through: now)` first to deliver what was due before the
    /// change.
    public mutating func setTimeZone(_ zone: ZoneRules, at now: Instant) {
        timeZone = zone
        var changed = false
        var updated: [PendingNotification] = []
        updated.reserveCapacity(pendingNotificationRequests.count)
        for var pending in pendingNotificationRequests {
            if case .calendar = pending.request.trigger, pending.nextFire > now {
                let trigger = pending.request.trigger
                guard let next = trigger.nextFire(after: now, scheduledAt: pending.scheduledAt, in: zone) else {
                    changed = true
                    continue
                }
                if next != pending.nextFire {
                    pending.nextFire = next
                    changed = true
                }
            }
            updated.append(pending)
        }
        guard changed else { return }
        updated.sort(by: Self.precedes)
        pendingNotificationRequests = updated
    }

    // MARK: - Firing

    /// Fires every pending request due at or before `now`, in (fire time, identifier) order;
    /// repeating ones re-arm (and fire again if their next match is also due), non-repeating
    /// are removed from pending. Returns what was delivered (presented or quiet), in firing
    /// order, each stamped with its fire instant. Requests firing while authorization is
    /// `notDetermined` or `denied` are consumed but not delivered (counted in
    /// `suppressedByAuthorizationCount`).
    public mutating func fireDue(through now: Instant) -> [DeliveredNotification] {
        var delivered: [DeliveredNotification] = []
        while let first = pendingNotificationRequests.first, first.nextFire <= now {
            pendingNotificationRequests.removeFirst()
            if first.request.trigger.repeats,
                let next = first.request.trigger.nextFire(
                    after: first.nextFire, scheduledAt: first.scheduledAt, in: timeZone)
            {
                var rearmed = first
                rearmed.nextFire = next
                insertPending(rearmed)
            }
            if let notification = deliver(first.request, at: first.nextFire) {
                delivered.append(notification)
            }
        }
        return delivered
    }

    /// Presents a remote notification that reached the device at `instant`, as a fired local
    /// one is presented (the same authorization, badge and delivered-list rules); nil when the
    /// user's settings suppress it.
    public mutating func present(_ request: NotificationRequest, at instant: Instant) -> DeliveredNotification? {
        deliver(request, at: instant)
    }

    /// Delivers one fired request, or counts it as suppressed.
    private mutating func deliver(_ request: NotificationRequest, at instant: Instant) -> DeliveredNotification? {
        let presentation: Presentation
        switch authorizationStatus {
        case .notDetermined, .denied:
            suppressedByAuthorizationCount += 1
            return nil
        case .provisional: presentation = .quiet
        case .authorized, .ephemeral: presentation = .banner
        }
        let notification = DeliveredNotification(request: request, deliveredAt: instant, presentation: presentation)
        if deliveredLimit > 0 {
            if let index = deliveredNotifications.firstIndex(where: { $0.request.identifier == request.identifier }) {
                deliveredNotifications.remove(at: index)
            }
            deliveredNotifications.append(notification)
            if deliveredNotifications.count > deliveredLimit {
                deliveredNotifications.removeFirst(deliveredNotifications.count - deliveredLimit)
            }
        }
        deliveredCount += 1
        if let badge = request.content.badge, badgePermitted { badgeCount = max(0, badge) }
        return notification
    }

    // MARK: - Delivered notifications and badge

    public mutating func removeDeliveredNotifications(withIdentifiers identifiers: [RequestID]) {
        guard !identifiers.isEmpty else { return }
        let doomed = Set(identifiers)
        deliveredNotifications.removeAll { doomed.contains($0.request.identifier) }
    }

    public mutating func removeAllDeliveredNotifications() {
        deliveredNotifications.removeAll()
    }

    public mutating func setBadgeCount(_ count: Int) {
        guard badgePermitted else { return }
        badgeCount = max(0, count)
    }

    // MARK: - Sorted pending array

    /// The pending order: next fire, then identifier.
    @inline(__always)
    private static func precedes(_ a: PendingNotification, _ b: PendingNotification) -> Bool {
        a.nextFire != b.nextFire ? a.nextFire < b.nextFire : a.request.identifier < b.request.identifier
    }

    /// Inserts at the position that keeps the order (identifiers are unique among pending).
    private mutating func insertPending(_ pending: PendingNotification) {
        var low = 0
        var high = pendingNotificationRequests.count
        while low < high {
            let middle = (low + high) >> 1
            if Self.precedes(pendingNotificationRequests[middle], pending) { low = middle + 1 } else { high = middle }
        }
        pendingNotificationRequests.insert(pending, at: low)
    }

    private mutating func removePending(identifier: RequestID) {
        if let index = pendingNotificationRequests.firstIndex(where: { $0.request.identifier == identifier }) {
            pendingNotificationRequests.remove(at: index)
        }
    }
}
