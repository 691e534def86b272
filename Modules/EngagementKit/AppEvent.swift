public import Foundation
public import Models

/// Something the app reports to the server (`POST /v1/users/{id}/events`): what its user did,
/// how they answered a notification, whether the device allows notifications. What others did
/// (social events) comes from the backend, never from the app.
public enum AppEvent: Hashable, Sendable {
    case appOpened(sessionSeconds: Int)
    case workoutCompleted(durationMinutes: Int)
    case mealLogged(MealType)
    case moodLogged
    case energyLogged
    case coachChat
    case checkInCompleted
    /// The user acted on a delivered notification: its request identifier and the action's
    /// identifier as the platform reports it (`com.apple.UNNotificationDefaultActionIdentifier`
    /// for a tap, `SNOOZE`, `LOG_MEAL`, ...).
    case notificationResponse(requestID: String, actionIdentifier: String)
    /// The device's notification permission, at launch and on coming to the foreground.
    case notificationPermission(allowed: Bool)

    /// Whether the server records it at the instant it happened (`at`): what the user did is
    /// history; a response or a permission is taken when it arrives.
    public var carriesInstant: Bool {
        switch self {
        case .notificationResponse, .notificationPermission: false
        default: true
        }
    }

    /// The request body, with `at` for an event that carries its instant. Keys are sorted, so
    /// one event always has the same bytes (an idempotency key's retry sends the same body).
    public func body(at instant: Instant) -> Data {
        var fields: [String: JSONValue] = [:]
        switch self {
        case .appOpened(let seconds):
            fields = ["type": .text("appOpened"), "sessionSeconds": .number(seconds)]
        case .workoutCompleted(let minutes):
            fields = ["type": .text("workoutCompleted"), "durationMinutes": .number(minutes)]
        case .mealLogged(let meal): fields = ["type": .text("mealLogged"), "meal": .text(meal.rawValue)]
        case .moodLogged: fields = ["type": .text("moodLogged")]
        case .energyLogged: fields = ["type": .text("energyLogged")]
        case .coachChat: fields = ["type": .text("coachChat")]
        case .checkInCompleted: fields = ["type": .text("checkInCompleted")]
        case .notificationResponse(let requestID, let action):
            fields = [
                "type": .text("notificationResponse"), "requestID": .text(requestID),
                "actionIdentifier": .text(action),
            ]
        case .notificationPermission(let allowed):
            fields = ["type": .text("notificationPermission"), "allowed": .flag(allowed)]
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
