public import Foundation
public import LiveActivity
public import Models

/// Something the app reports to the server (`POST /v1/users/{id}/events`): what its user did,
/// how they answered a notification, whether the device allows notifications, the device's
/// time zone. What others did
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
    /// A workout or a meal window starting, changing or ending, for the engine's Live Activity
    /// (an event's answer names the activity it started: `EventAnswer.liveActivities`), and the
    /// push token ActivityKit gave that activity (`pushTokenReceived`, the token in lowercase
    /// hex, `DeviceReporter.hex`), through which the server pushes its updates. Taken when it
    /// arrives, like a response.
    case liveActivity(LiveActivityEvent)
    /// The device's time zone (an IANA identifier, `TimeZone.current.identifier`) when it differs
    /// from the one last told (`DeviceReporter`): the phone re-matches its calendar triggers at
    /// once, so the engine hears of the move as the phone's own change. Taken when it arrives.
    case timeZoneChanged(String)

    /// Whether it carries the instant it happened (`at`): what the user did is history, and a
    /// move tells the server what the phone fired in the new zone before it heard; a response
    /// or a permission is taken when it arrives.
    public var carriesInstant: Bool {
        switch self {
        case .activity, .timeZoneChanged: true
        case .notificationResponse, .notificationPermission, .liveActivity: false
        }
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
        case .liveActivity(let event): fields = Self.fields(of: event)
        case .timeZoneChanged(let identifier):
            fields = ["type": .text("timeZoneChanged"), "timeZone": .text(identifier)]
        }
        if carriesInstant { fields["at"] = .text(instant.iso8601) }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Strings, integers and booleans only: encoding cannot fail.
        return (try? encoder.encode(fields)) ?? Data()
    }
}

extension AppEvent {
    /// A Live Activity event's fields, as the server's event types name them (the token event
    /// is `liveActivityToken`).
    static func fields(of event: LiveActivityEvent) -> [String: JSONValue] {
        var fields: [String: JSONValue] = ["type": .text(event.name)]
        func workout(_ state: WorkoutActivityAttributes.ContentState) {
            fields["elapsedSeconds"] = .number(state.elapsedSeconds)
            fields["activeCalories"] = .number(state.activeCalories)
            if let heartRate = state.heartRate { fields["heartRate"] = .number(heartRate) }
            if let exercise = state.currentExercise { fields["currentExercise"] = .text(exercise) }
        }
        switch event {
        case .workoutStarted(let workoutType): fields["workoutType"] = .text(workoutType)
        case .workoutUpdated(let state), .workoutEnded(let state): workout(state)
        case .mealStarted(let attributes):
            fields["meal"] = .text(attributes.meal.rawValue)
            fields["targetCalories"] = .number(attributes.targetCalories)
            fields["targetProteinGrams"] = .number(attributes.targetProteinGrams)
        case .mealUpdated(let state):
            fields["itemsLogged"] = .number(state.itemsLogged)
            fields["totalCalories"] = .number(state.totalCalories)
            fields["totalProteinGrams"] = .number(state.totalProteinGrams)
            if let item = state.lastFoodItem { fields["lastFoodItem"] = .text(item) }
        case .mealEnded: break
        case .pushTokenReceived(let activityID, let token):
            fields = ["type": .text("liveActivityToken"), "activityID": .text(activityID), "token": .text(token)]
        }
        return fields
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
