public import Foundation
public import Models

/// Something the app reports to the server (`POST /v1/users/{id}/events`): what its user did,
/// how they answered a notification, whether the device allows notifications. What others did
/// (social events) comes from the backend, never from the app.
public enum AppEvent: Hashable, Sendable {
    /// What the user did in the app (a meal logged, a workout completed, the app opened).
    case activity(ActivityKind)
    /// The user acted on a delivered notification: its request identifier and the action's
    /// identifier as the platform reports it (`com.apple.UNNotificationDefaultActionIdentifier`
    /// for a tap, `SNOOZE`, `LOG_MEAL`, ...).
    case notificationResponse(requestID: String, actionIdentifier: String)
    /// The device's notification permission, at launch and on coming to the foreground
    /// (`DeviceReporter` says when it changed).
    case notificationPermission(allowed: Bool)
    /// The push token ActivityKit gave a Live Activity the server named (`activityID`), in
    /// lowercase hex (`DeviceReporter.hex`): the server updates that activity through it.
    case liveActivityToken(activityID: String, token: String)

    /// Whether the server records it at the instant it happened (`at`): what the user did is
    /// history; a response or a permission is taken when it arrives.
    public var carriesInstant: Bool {
        if case .activity = self { true } else { false }
    }

    /// The request body, with `at` for an event that carries its instant. Keys are sorted, so
    /// one event always has the same bytes (an idempotency key's retry sends the same body).
    public func body(at instant: Instant) -> Data {
        var fields: [String: JSONValue] = [:]
        switch self {
        case .activity(let kind):
            fields = ["type": .text(kind.name)]
            switch kind {
            case .appOpened(let seconds): fields["sessionSeconds"] = .number(seconds)
            case .workoutCompleted(let minutes): fields["durationMinutes"] = .number(minutes)
            case .mealLogged(let meal): fields["meal"] = .text(meal.rawValue)
            case .moodLogged, .energyLogged, .coachChat, .checkInCompleted: break
            }
        case .notificationResponse(let requestID, let action):
            fields = [
                "type": .text("notificationResponse"), "requestID": .text(requestID),
                "actionIdentifier": .text(action),
            ]
        case .notificationPermission(let allowed):
            fields = ["type": .text("notificationPermission"), "allowed": .flag(allowed)]
        case .liveActivityToken(let activityID, let token):
            fields = ["type": .text("liveActivityToken"), "activityID": .text(activityID), "token": .text(token)]
        }
        if carriesInstant { fields["at"] = .text(instant.iso8601) }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Strings, integers and booleans only: encoding cannot fail.
        return (try? encoder.encode(fields)) ?? Data()
    }
}

/// The values an event's body holds.
enum JSONValue: Encodable, Hashable {
    case text(String)
    case number(Int)
    case flag(Bool)

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .text(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .flag(let value): try container.encode(value)
        }
    }
}
