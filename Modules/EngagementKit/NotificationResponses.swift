public import Models

/// What an app does when its user acts on a delivered notification: the event to report (the
/// engine learns from it, and a snooze, a skip or a completion is decided there) and the screen
/// to open, if any.
public struct NotificationResponse: Hashable, Sendable {
    /// The event to enqueue (`EventQueue.enqueue`).
    public var event: AppEvent
    /// Where the app goes: nil for an action handled in the background (snooze, skip, complete,
    /// dismiss) or an action this build does not know.
    public var deepLink: DeepLink?

    /// The response to `actionIdentifier` on the request `requestID`, whose user info named
    /// `link` (`userInfo["link"]`, the copy's own link: a meal reminder's names its meal); nil
    /// when `requestID` is not a request of the engine (one of the app's own notifications,
    /// which the server would refuse: the app handles it itself). The kind is the identifier's,
    /// as the server reads it. The action's identifier goes to the server as the platform gave
    /// it, known or not: the server records an unknown one as such.
    public init?(requestID: String, actionIdentifier: String, link: String?) {
        guard let occurrence = OccurrenceID(requestID: requestID) else { return nil }
        let kind = occurrence.kind
        event = .notificationResponse(requestID: requestID, actionIdentifier: actionIdentifier)
        let ownLink = link.flatMap(DeepLink.init(url:))
        guard let action = NotificationActionID(rawValue: actionIdentifier) else {
            deepLink = nil
            return
        }
        switch action {
        case .defaultTap:
            deepLink = ownLink ?? ResponseRouting.defaultLink(for: kind, meal: nil)
        case .logMeal:
            // The reminder's own link names its meal; the action's generic one does not.
            if case .mealLog? = ownLink { deepLink = ownLink } else { deepLink = .mealLog(nil) }
        default:
            // The kind matters to the default tap only, handled above.
            deepLink = ResponseRouting.deepLink(for: action, kind: kind)
        }
    }
}
