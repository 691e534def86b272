public import Models

/// Whether the app may post notifications (UNAuthorizationStatus).
///
/// - `notDetermined`: the user has not been asked; adding a request fails.
/// - `denied`: the user refused or revoked permission; adding a request fails and requests
///   already pending are consumed without being shown.
/// - `authorized`: notifications are presented as the granted options allow.
/// - `provisional`: granted without a prompt; notifications go quietly to Notification Center
///   only (no banner, no sound).
/// - `ephemeral`: App Clips; presented like `authorized` for a limited time.
public enum AuthorizationStatus: String, Codable, Sendable, CaseIterable {
    case notDetermined, denied, authorized, provisional, ephemeral

    /// True when requests may be added and delivered (`authorized`, `provisional`, `ephemeral`).
    public var allowsNotifications: Bool {
        switch self {
        case .notDetermined, .denied: false
        case .authorized, .provisional, .ephemeral: true
        }
    }
}

/// What the app asks the user for (UNAuthorizationOptions); raw values match Apple's bits.
public struct AuthorizationOptions: OptionSet, Codable, Hashable, Sendable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    public static let badge = AuthorizationOptions(rawValue: 1 << 0)
    public static let sound = AuthorizationOptions(rawValue: 1 << 1)
    public static let alert = AuthorizationOptions(rawValue: 1 << 2)
    public static let carPlay = AuthorizationOptions(rawValue: 1 << 3)
    /// Needs Apple's entitlement.
    public static let criticalAlert = AuthorizationOptions(rawValue: 1 << 4)
    public static let providesAppNotificationSettings = AuthorizationOptions(rawValue: 1 << 5)
    /// Ask for provisional authorization: granted at once without a prompt, delivers quietly.
    public static let provisional = AuthorizationOptions(rawValue: 1 << 6)
}

/// Why `LocalNotificationCenter.add(_:at:)` refused a request (UNError and the framework's
/// exceptions for malformed requests).
public enum NotificationCenterError: Error, Equatable, Sendable {
    /// The authorization status is `notDetermined` or `denied` (UNError.notificationsNotAllowed).
    case notificationsNotAllowed
    /// The trigger is malformed; the payload is `NotificationTrigger.invalidReason`.
    case invalidTrigger(String)
    /// The request's identifier is empty.
    case emptyIdentifier
}

/// How a delivered notification reached the user.
public enum Presentation: String, Codable, Sendable {
    /// Shown as an alert (banner / Lock Screen) with its sound: `authorized` and `ephemeral`.
    case banner
    /// Provisional: placed in Notification Center only, with no banner and no sound.
    case quiet
}

/// A notification the center has delivered (UNNotification). `request.identifier` is unique
/// within `LocalNotificationCenter.deliveredNotifications`.
public struct DeliveredNotification: Hashable, Sendable {
    public var request: NotificationRequest
    /// The instant the trigger fired.
    public var deliveredAt: Instant
    public var presentation: Presentation

    public init(request: NotificationRequest, deliveredAt: Instant, presentation: Presentation) {
        self.request = request
        self.deliveredAt = deliveredAt
        self.presentation = presentation
    }
}

/// A request waiting for its trigger, with the instant it fires next
/// (UNNotificationRequest plus its trigger's next trigger date).
public struct PendingNotification: Hashable, Sendable {
    public var request: NotificationRequest
    /// When the request was added; time-interval triggers count from here.
    public var scheduledAt: Instant
    /// The next instant the trigger fires; always later than `scheduledAt`.
    public var nextFire: Instant

    public init(request: NotificationRequest, scheduledAt: Instant, nextFire: Instant) {
        self.request = request
        self.scheduledAt = scheduledAt
        self.nextFire = nextFire
    }
}

/// The app's local notification center (UNUserNotificationCenter), as the engine drives it.
///
/// Contract, matching the real framework as Apple documents it:
/// - At most 64 requests are pending. After an `add` that makes more, the 64 that fire
///   soonest are kept (ties broken by identifier) and the rest are dropped silently, with no
///   error. A repeating request counts as one.
/// - Adding a request whose identifier is pending replaces it (it is not a drop). When a
///   request fires whose identifier matches a delivered notification, the new delivery
///   replaces the old one in the delivered list.
/// - `add` validates the request: an empty identifier throws `emptyIdentifier`, a malformed
///   trigger (`NotificationTrigger.invalidReason`) throws `invalidTrigger`; then, with status
///   `notDetermined` or `denied`, it throws `notificationsNotAllowed`. A failed `add` changes
///   nothing.
/// - A request whose trigger never fires after `now` (a date in the past, a calendar match
///   that no longer occurs) is accepted without error but not kept; it still replaces a
///   pending request with the same identifier.
/// - Categories are replaced as a whole by `setNotificationCategories`.
/// - Badge: `setBadgeCount` is ignored without badge permission; negative counts clamp to 0.
///
/// Implementations are value types driven by explicit instants: time never comes from a clock.
public protocol LocalNotificationCenter {
    /// The current authorization status.
    var authorizationStatus: AuthorizationStatus { get }

    /// Replaces the registered categories (the framework takes a set: one per identifier).
    mutating func setNotificationCategories(_ categories: [NotificationCategory])
    /// The registered categories, one per identifier.
    var notificationCategories: [NotificationCategory] { get }

    /// Schedules `request` at `now`, replacing any pending request with its identifier.
    mutating func add(_ request: NotificationRequest, at now: Instant) throws(NotificationCenterError)
    /// Removes the pending requests with these identifiers; unknown identifiers are ignored.
    mutating func removePendingNotificationRequests(withIdentifiers identifiers: [RequestID])
    /// Removes every pending request.
    mutating func removeAllPendingNotificationRequests()
    /// The pending requests, ordered by `nextFire`, then identifier; at most 64.
    var pendingNotificationRequests: [PendingNotification] { get }

    /// The delivered notifications still in Notification Center, most recent last.
    var deliveredNotifications: [DeliveredNotification] { get }
    /// Removes the delivered notifications with these identifiers; unknown identifiers are ignored.
    mutating func removeDeliveredNotifications(withIdentifiers identifiers: [RequestID])
    /// Removes every delivered notification of the app from Notification Center.
    mutating func removeAllDeliveredNotifications()

    /// Sets the app icon badge; 0 clears it, negative values clamp to 0; ignored without
    /// badge permission.
    mutating func setBadgeCount(_ count: Int)
    /// The app icon badge.
    var badgeCount: Int { get }
}
