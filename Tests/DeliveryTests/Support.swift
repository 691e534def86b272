import Models

@testable import Delivery

/// A zone from the tz database; the test fails loudly if it is unknown.
func zone(_ identifier: String) -> ZoneRules {
    guard let rules = ZoneRules(identifier: identifier) else { fatalError("unknown zone \(identifier)") }
    return rules
}

/// An instant from ISO 8601 text (`2027-03-14T03:00:00-04:00`, `2027-03-14T07:00:00Z`).
func at(_ text: String) -> Instant {
    guard let instant = Instant(iso8601: text) else { fatalError("bad instant \(text)") }
    return instant
}

func request(
    _ identifier: RequestID, _ trigger: NotificationTrigger, badge: Int? = nil, title: String = "Title"
) -> NotificationRequest {
    NotificationRequest(
        identifier: identifier,
        content: NotificationContent(kind: .mealReminder, title: title, body: "Body", badge: badge),
        trigger: trigger)
}

func daily(_ hour: Int, _ minute: Int) -> NotificationTrigger {
    .calendar(CalendarMatch(hour: hour, minute: minute), repeats: true)
}

extension SimulatedNotificationCenter {
    var pendingIdentifiers: [RequestID] { pendingNotificationRequests.map(\.request.identifier) }
    var deliveredIdentifiers: [RequestID] { deliveredNotifications.map(\.request.identifier) }

    /// The pending order invariant: strictly ascending by (next fire, identifier), at most 64.
    var pendingIsSorted: Bool {
        let list = pendingNotificationRequests
        guard list.count <= Self.pendingLimit else { return false }
        return zip(list, list.dropFirst()).allSatisfy { a, b in
            a.nextFire < b.nextFire || (a.nextFire == b.nextFire && a.request.identifier < b.request.identifier)
        }
    }
}

let base = at("2027-03-01T12:00:00Z")
