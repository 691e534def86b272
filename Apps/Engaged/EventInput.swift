import Delivery
import EngagedAPI
import Engagement
import LiveActivity
import Models
import Runtime

/// An event of `POST /v1/users/{id}/events`, checked and turned into the engine's input.
///
/// The generated decoder has read the body's shape: its `type` picked the case, unknown keys and
/// wrong types were refused. What the document states and the generator does not check is
/// checked here, 422 naming the field: ranges, text lengths, a request identifier the engine
/// made, a social kind, an APNs token, and which fields a Live Activity event of each type takes
/// (the types share one schema). `at` is when an activity happened, for events the app sends
/// late (logged offline): the history records the activity at `at`; the engine takes the input
/// when it arrives, and `check(now:from:)` bounds it.
struct EventInput {
    var input: EngineInput
    var occurredAt: Instant?

    /// `at` may lie at most this far ahead of the server's clock (devices' clocks drift) ...
    static let maxFutureSkewSeconds: Int64 = 300
    /// ... and at most this far behind it.
    static let maxAgeSeconds: Int64 = 7 * 86_400

    init(_ event: Components.Schemas.Event) throws(Problem) {
        switch event {
        case .appOpened(let body):
            let seconds = try Self.integer(body.sessionSeconds, "sessionSeconds", in: 0...86_400) ?? 0
            self.init(.activity(.appOpened(sessionSeconds: seconds), occurredAt: body.at), at: body.at)
        case .workoutCompleted(let body):
            let minutes = try Self.integer(body.durationMinutes, "durationMinutes", in: 0...1_440) ?? 0
            self.init(.activity(.workoutCompleted(durationMinutes: minutes), occurredAt: body.at), at: body.at)
        case .mealLogged(let body):
            self.init(.activity(.mealLogged(try Self.meal(body.meal.rawValue)), occurredAt: body.at), at: body.at)
        case .moodLogged(let body): self.init(.activity(.moodLogged, occurredAt: body.at), at: body.at)
        case .energyLogged(let body): self.init(.activity(.energyLogged, occurredAt: body.at), at: body.at)
        case .coachChat(let body): self.init(.activity(.coachChat, occurredAt: body.at), at: body.at)
        case .checkInCompleted(let body): self.init(.activity(.checkInCompleted, occurredAt: body.at), at: body.at)
        case .notificationResponse(let body):
            // The kind comes from the request identifier the engine made, as on a device.
            let occurrence: OccurrenceID
            do {
                occurrence = try OccurrenceID(parsing: body.requestID)
            } catch {
                throw Problem.invalidField("requestID", "not a request identifier of the engine: \(error.problem)")
            }
            if let action = NotificationActionID(rawValue: body.actionIdentifier) {
                self.init(
                    .notificationResponse(requestID: RequestID(body.requestID), kind: occurrence.kind, action: action))
            } else {
                self.init(
                    .unrecognizedResponse(
                        requestID: RequestID(body.requestID), kind: occurrence.kind,
                        actionIdentifier: body.actionIdentifier))
            }
        case .notificationPermission(let body):
            self.init(.notificationPermission(allowed: body.allowed))
        case .timeZoneChanged(let body):
            guard let zone = ZoneRules(identifier: body.timeZone) else {
                throw Problem.invalidField("timeZone", "unknown time zone \"\(body.timeZone.prefix(64))\"")
            }
            self.init(.timeZoneChanged(zone, movedAt: body.at), at: body.at)
        case .socialEvent(let body):
            guard let kind = NotificationKind(rawValue: body.kind.rawValue), kind.isSocial else {
                throw Problem.invalidField("kind", "\(body.kind.rawValue) is not a social kind")
            }
            // The id names the engine's records of the event (the ledger, the outbox): never empty.
            guard (1...128).contains(body.id.utf8.count) else {
                throw Problem.invalidField("id", "1 to 128 characters, got \(body.id.utf8.count)")
            }
            self.init(
                .socialEvent(
                    SocialEvent(
                        id: body.id, kind: kind, actorName: body.actorName, topic: body.topic,
                        isMutualFriend: body.isMutualFriend ?? false)))
        case .workoutStarted(let body), .workoutUpdated(let body), .workoutEnded(let body),
            .mealStarted(let body), .mealUpdated(let body), .mealEnded(let body), .liveActivityToken(let body):
            self.init(.liveActivity(try Self.liveActivityEvent(body)))
        }
    }

    private init(_ input: EngineInput, at occurredAt: Instant? = nil) {
        self.input = input
        self.occurredAt = occurredAt
    }

    /// Refuses what `source` may not send (a social event from the user's own app: 403, it is
    /// what others did, and the backend knows it) and an `at` out of range (`checkOccurredAt`).
    func check(now: Instant, from source: InputSource) throws(Problem) {
        if source == .device, case .socialEvent = input {
            throw Problem.forbidden("a social event comes from the backend (the API key), not from the user's token")
        }
        try checkOccurredAt(now: now)
    }

    /// Refuses an `at` outside `maxFutureSkewSeconds` ahead of and `maxAgeSeconds` behind `now`.
    func checkOccurredAt(now: Instant) throws(Problem) {
        guard let occurredAt else { return }
        if occurredAt - now > Self.maxFutureSkewSeconds {
            throw Problem.invalidField(
                "at", "\(occurredAt.iso8601) is in the future (the server's time is \(now.iso8601))")
        }
        if now - occurredAt > Self.maxAgeSeconds {
            throw Problem.invalidField(
                "at", "\(occurredAt.iso8601) is more than 7 days before the server's time \(now.iso8601)")
        }
    }

    // MARK: - Values

    /// A whole number in `range`, or nil when absent; 422 naming the field otherwise.
    static func integer(_ value: Int?, _ name: String, in range: ClosedRange<Int>) throws(Problem) -> Int? {
        guard let value else { return nil }
        guard range.contains(value) else {
            throw Problem.invalidField(name, "must be in \(range.lowerBound)...\(range.upperBound), got \(value)")
        }
        return value
    }

    /// The meal of the document's enum, which is the engine's.
    static func meal(_ name: String) throws(Problem) -> MealType {
        guard let meal = MealType(rawValue: name) else {
            throw Problem.invalidField("meal", "expected one of \(MealType.allCases.map(\.rawValue))")
        }
        return meal
    }
}

// MARK: - Live Activity events

extension EventInput {
    /// The fields each Live Activity type takes besides `type` (its schema is shared by all).
    static let liveActivityFields: [Components.Schemas.LiveActivityEventBody._TypePayload: Set<String>] = [
        .workoutStarted: ["workoutType"],
        .workoutUpdated: workoutFields,
        .workoutEnded: workoutFields,
        .mealStarted: ["meal", "targetCalories", "targetProteinGrams"],
        .mealUpdated: ["itemsLogged", "totalCalories", "totalProteinGrams", "lastFoodItem"],
        .mealEnded: [],
        .liveActivityToken: ["activityID", "token"],
    ]
    static let workoutFields: Set<String> = ["elapsedSeconds", "heartRate", "activeCalories", "currentExercise"]
    /// The most UTF-8 bytes a display string may take (64 characters of up to 4 bytes each).
    static let maxTextBytes = 256

    /// The Live Activity event of `body`: a workout or a meal window starting, changing and
    /// ending, and the push token the system gave the app for an activity the engine named.
    static func liveActivityEvent(_ body: Components.Schemas.LiveActivityEventBody) throws(Problem) -> LiveActivityEvent
    {
        let allowed = liveActivityFields[body._type] ?? []
        if let unknown = body.presentFields.sorted().first(where: { !allowed.contains($0) }) {
            throw Problem.invalidField(
                unknown, "unknown key for \(body._type.rawValue); expected one of \(allowed.union(["type"]).sorted())")
        }
        switch body._type {
        case .workoutStarted:
            return .workoutStarted(workoutType: try text(required(body.workoutType, "workoutType"), "workoutType"))
        case .workoutUpdated: return .workoutUpdated(try workoutState(body))
        case .workoutEnded: return .workoutEnded(try workoutState(body))
        case .mealStarted:
            return .mealStarted(
                MealActivityAttributes(
                    meal: try meal(required(body.meal, "meal").rawValue),
                    targetCalories: try required(
                        integer(body.targetCalories, "targetCalories", in: 0...20_000), "targetCalories"),
                    targetProteinGrams: try required(
                        integer(body.targetProteinGrams, "targetProteinGrams", in: 0...2_000), "targetProteinGrams")))
        case .mealUpdated:
            return .mealUpdated(
                MealActivityAttributes.ContentState(
                    itemsLogged: try integer(body.itemsLogged, "itemsLogged", in: 0...1_000) ?? 0,
                    totalCalories: try integer(body.totalCalories, "totalCalories", in: 0...50_000) ?? 0,
                    totalProteinGrams: try integer(body.totalProteinGrams, "totalProteinGrams", in: 0...5_000) ?? 0,
                    lastFoodItem: try optionalText(body.lastFoodItem, "lastFoodItem")))
        case .mealEnded: return .mealEnded
        case .liveActivityToken:
            let activityID = try text(required(body.activityID, "activityID"), "activityID")
            let token = try required(body.token, "token")
            guard PushRequest.isToken(token) else {
                throw Problem.invalidField("token", "lowercase hex of 32 to 100 bytes, as APNs issues it")
            }
            return .pushTokenReceived(activityID: activityID, token: token)
        }
    }

    private static func workoutState(
        _ body: Components.Schemas.LiveActivityEventBody
    ) throws(Problem) -> WorkoutActivityAttributes.ContentState {
        WorkoutActivityAttributes.ContentState(
            elapsedSeconds: try required(
                integer(body.elapsedSeconds, "elapsedSeconds", in: 0...86_400), "elapsedSeconds"),
            heartRate: try integer(body.heartRate, "heartRate", in: 20...250),
            activeCalories: try integer(body.activeCalories, "activeCalories", in: 0...20_000) ?? 0,
            currentExercise: try optionalText(body.currentExercise, "currentExercise"))
    }

    /// A field this type requires, or 400 naming it (as a missing key of the document's own).
    private static func required<T>(_ value: T?, _ name: String) throws(Problem) -> T {
        guard let value else { throw Problem.badRequest("\(name) is required", field: name) }
        return value
    }

    private static func optionalText(_ value: String?, _ name: String) throws(Problem) -> String? {
        guard let value else { return nil }
        return try text(value, name)
    }

    /// A short display string: 1 to 64 characters and at most `maxTextBytes` of UTF-8 (the 4 KB
    /// payload holds the whole activity: a character may be many bytes, combining marks and all).
    private static func text(_ value: String, _ name: String) throws(Problem) -> String {
        guard (1...64).contains(value.count) else {
            throw Problem.invalidField(name, "1 to 64 characters, got \(value.count)")
        }
        guard value.utf8.count <= maxTextBytes else {
            throw Problem.invalidField(name, "at most \(maxTextBytes) bytes of UTF-8, got \(value.utf8.count)")
        }
        return value
    }
}

extension Components.Schemas.LiveActivityEventBody {
    /// The names of the fields the body has, besides `type`.
    var presentFields: [String] {
        let fields: [(String, Bool)] = [
            ("workoutType", workoutType != nil), ("elapsedSeconds", elapsedSeconds != nil),
            ("heartRate", heartRate != nil), ("activeCalories", activeCalories != nil),
            ("currentExercise", currentExercise != nil), ("meal", meal != nil),
            ("targetCalories", targetCalories != nil), ("targetProteinGrams", targetProteinGrams != nil),
            ("itemsLogged", itemsLogged != nil), ("totalCalories", totalCalories != nil),
            ("totalProteinGrams", totalProteinGrams != nil), ("lastFoodItem", lastFoodItem != nil),
            ("activityID", activityID != nil), ("token", token != nil),
        ]
        return fields.compactMap { $0.1 ? $0.0 : nil }
    }
}
