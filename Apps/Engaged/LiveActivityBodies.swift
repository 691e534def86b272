import Delivery
import Engagement
import Foundation
import LiveActivity
import Models

/// The event types of `POST /v1/users/{id}/events` that run Live Activities
/// (`LiveActivityTracker`): a workout or a meal window starting, changing and ending, and the
/// push token the system gave the app for an activity the engine named.
enum LiveActivityBody {
    /// The fields each type takes besides `type`.
    static let fields: [String: Set<String>] = [
        "workoutStarted": ["workoutType"],
        "workoutUpdated": workoutFields,
        "workoutEnded": workoutFields,
        "mealStarted": ["meal", "targetCalories", "targetProteinGrams"],
        "mealUpdated": ["itemsLogged", "totalCalories", "totalProteinGrams", "lastFoodItem"],
        "mealEnded": [],
        "liveActivityToken": ["activityID", "token"],
    ]
    /// The most UTF-8 bytes a display string may take (64 characters of up to 4 bytes each).
    static let maxTextBytes = 256
    static let workoutFields: Set<String> = ["elapsedSeconds", "heartRate", "activeCalories", "currentExercise"]

    /// The input of a Live Activity event `type` from `c`; nil for another type.
    static func input(
        type: String, from c: KeyedDecodingContainer<AnyKey>, at path: [any CodingKey]
    ) throws -> EngineInput? {
        let event: LiveActivityEvent
        switch type {
        case "workoutStarted":
            event = .workoutStarted(workoutType: try text(c, "workoutType", at: path, required: true) ?? "")
        case "workoutUpdated": event = .workoutUpdated(try workoutState(c, at: path))
        case "workoutEnded": event = .workoutEnded(try workoutState(c, at: path))
        case "mealStarted":
            event = .mealStarted(
                MealActivityAttributes(
                    meal: try c.decode("meal"), targetCalories: try required(c, "targetCalories", 0...20_000, path),
                    targetProteinGrams: try required(c, "targetProteinGrams", 0...2_000, path)))
        case "mealUpdated":
            event = .mealUpdated(
                MealActivityAttributes.ContentState(
                    itemsLogged: try c.integer("itemsLogged", in: 0...1_000, at: path) ?? 0,
                    totalCalories: try c.integer("totalCalories", in: 0...50_000, at: path) ?? 0,
                    totalProteinGrams: try c.integer("totalProteinGrams", in: 0...5_000, at: path) ?? 0,
                    lastFoodItem: try text(c, "lastFoodItem", at: path)))
        case "mealEnded": event = .mealEnded
        case "liveActivityToken":
            let activityID = try text(c, "activityID", at: path, required: true) ?? ""
            let token: String = try c.decode("token")
            guard PushRequest.isToken(token) else {
                throw invalidValue(path, "token", "lowercase hex of 32 to 100 bytes, as APNs issues it")
            }
            event = .pushTokenReceived(activityID: activityID, token: token)
        default: return nil
        }
        return .liveActivity(event)
    }

    private static func workoutState(
        _ c: KeyedDecodingContainer<AnyKey>, at path: [any CodingKey]
    ) throws -> WorkoutActivityAttributes.ContentState {
        WorkoutActivityAttributes.ContentState(
            elapsedSeconds: try required(c, "elapsedSeconds", 0...86_400, path),
            heartRate: try c.integer("heartRate", in: 20...250, at: path),
            activeCalories: try c.integer("activeCalories", in: 0...20_000, at: path) ?? 0,
            currentExercise: try text(c, "currentExercise", at: path))
    }

    private static func required(
        _ c: KeyedDecodingContainer<AnyKey>, _ name: String, _ range: ClosedRange<Int>, _ path: [any CodingKey]
    ) throws -> Int {
        guard let value = try c.integer(name, in: range, at: path) else {
            throw DecodingError.keyNotFound(
                AnyKey(name), DecodingError.Context(codingPath: path, debugDescription: "required"))
        }
        return value
    }

    /// A short display string: 1 to 64 characters and at most `maxTextBytes` of UTF-8 (the 4 KB
    /// payload holds the whole activity: a character may be many bytes, combining marks and all).
    private static func text(
        _ c: KeyedDecodingContainer<AnyKey>, _ name: String, at path: [any CodingKey], required: Bool = false
    ) throws -> String? {
        let value: String? = required ? try c.decode(name) : try c.decodeIfPresent(name)
        guard let value else { return nil }
        guard (1...64).contains(value.count) else {
            throw invalidValue(path, name, "1 to 64 characters, got \(value.count)")
        }
        guard value.utf8.count <= maxTextBytes else {
            throw invalidValue(path, name, "at most \(maxTextBytes) bytes of UTF-8, got \(value.utf8.count)")
        }
        return value
    }
}
