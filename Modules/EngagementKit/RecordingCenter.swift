public import Delivery
public import Models

/// A notification center for a platform whose own is asynchronous (UNUserNotificationCenter):
/// it starts from what the real center holds (its pending requests, categories and permission,
/// read first), answers as the real one would (`SimulatedNotificationCenter`'s contract), and
/// records every change, which the app then performs on the real center in order. `PlanSync`
/// plans against it like any center; nothing of the plan's rules lives in the platform's code.
public struct RecordingCenter: LocalNotificationCenter, Sendable {
    /// One change to perform on the real center.
    public enum Operation: Hashable, Sendable {
        case setCategories([NotificationCategory])
        case add(NotificationRequest)
        case removePending([RequestID])
        case removeAllPending
        case removeDelivered([RequestID])
        case removeAllDelivered
        case setBadge(Int)
    }

    /// The changes made, in order.
    public private(set) var operations: [Operation] = []
    private var model: SimulatedNotificationCenter

    /// What the real center has delivered, as read (`deliveredNotifications`).
    private let delivered: [DeliveredNotification]

    /// A center holding `pending` (with the instant each fires next), `categories` and the
    /// `delivered` notifications still shown, with `authorizationStatus`, on a device in `zone`.
    public init(
        zone: ZoneRules, authorizationStatus: AuthorizationStatus, pending: [NotificationRequest],
        categories: [NotificationCategory], delivered: [DeliveredNotification] = [], at now: Instant
    ) {
        self.delivered = delivered
        model = SimulatedNotificationCenter(timeZone: zone, authorizationStatus: .authorized)
        for request in pending {
            // Held as the real center holds it: a request whose trigger fires no more is gone
            // there too, and one the model finds malformed is the app's, never the kit's to touch.
            try? model.add(request, at: now)
        }
        model.setNotificationCategories(categories)
        model.setAuthorizationStatus(authorizationStatus)
    }

    public var authorizationStatus: AuthorizationStatus { model.authorizationStatus }
    public var notificationCategories: [NotificationCategory] { model.notificationCategories }
    public var pendingNotificationRequests: [PendingNotification] { model.pendingNotificationRequests }
    /// What the real center showed, as read; the removals recorded since are not applied to it.
    public var deliveredNotifications: [DeliveredNotification] { delivered }
    public var badgeCount: Int { model.badgeCount }

    public mutating func setNotificationCategories(_ categories: [NotificationCategory]) {
        record(.setCategories(categories)) { $0.setNotificationCategories(categories) }
    }

    public mutating func add(_ request: NotificationRequest, at now: Instant) throws(NotificationCenterError) {
        try model.add(request, at: now)  // a refused request is not recorded
        operations.append(.add(request))
    }

    public mutating func removePendingNotificationRequests(withIdentifiers identifiers: [RequestID]) {
        record(.removePending(identifiers)) { $0.removePendingNotificationRequests(withIdentifiers: identifiers) }
    }

    public mutating func removeAllPendingNotificationRequests() {
        record(.removeAllPending) { $0.removeAllPendingNotificationRequests() }
    }

    public mutating func removeDeliveredNotifications(withIdentifiers identifiers: [RequestID]) {
        record(.removeDelivered(identifiers)) { $0.removeDeliveredNotifications(withIdentifiers: identifiers) }
    }

    public mutating func removeAllDeliveredNotifications() {
        record(.removeAllDelivered) { $0.removeAllDeliveredNotifications() }
    }

    public mutating func setBadgeCount(_ count: Int) {
        record(.setBadge(max(0, count))) { $0.setBadgeCount(count) }
    }

    /// Makes `change` on the model and records `operation` for the real center.
    private mutating func record(_ operation: Operation, _ change: (inout SimulatedNotificationCenter) -> Void) {
        change(&model)
        operations.append(operation)
    }
}
