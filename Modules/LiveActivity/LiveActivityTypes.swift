import Foundation
public import Models

/// The static data of a workout Live Activity, fixed when it starts.
public struct WorkoutActivityAttributes: Codable, Hashable, Sendable {
    /// Free text such as "Run" or "Strength"; shown only to the user.
    public var workoutType: String
    public var startedAt: Instant

    public init(workoutType: String, startedAt: Instant) {
        self.workoutType = workoutType
        self.startedAt = startedAt
    }

    /// What a workout Live Activity shows and updates.
    public struct ContentState: Codable, Hashable, Sendable {
        public var elapsedSeconds: Int
        /// Beats per minute; nil while no reading is available.
        public var heartRate: Int?
        public var activeCalories: Int
        public var currentExercise: String?

        public init(elapsedSeconds: Int, heartRate: Int? = nil, activeCalories: Int = 0, currentExercise: String? = nil)
        {
            self.elapsedSeconds = elapsedSeconds
            self.heartRate = heartRate
            self.activeCalories = activeCalories
            self.currentExercise = currentExercise
        }
    }
}

/// The static data of a meal-tracking Live Activity, fixed when it starts.
public struct MealActivityAttributes: Codable, Hashable, Sendable {
    public var meal: MealType
    public var targetCalories: Int
    public var targetProteinGrams: Int

    public init(meal: MealType, targetCalories: Int, targetProteinGrams: Int) {
        self.meal = meal
        self.targetCalories = targetCalories
        self.targetProteinGrams = targetProteinGrams
    }

    /// What a meal Live Activity shows and updates.
    public struct ContentState: Codable, Hashable, Sendable {
        public var itemsLogged: Int
        public var totalCalories: Int
        public var totalProteinGrams: Int
        public var lastFoodItem: String?

        public init(
            itemsLogged: Int = 0, totalCalories: Int = 0, totalProteinGrams: Int = 0, lastFoodItem: String? = nil
        ) {
            self.itemsLogged = itemsLogged
            self.totalCalories = totalCalories
            self.totalProteinGrams = totalProteinGrams
            self.lastFoodItem = lastFoodItem
        }
    }
}

/// Which Live Activity the app shows.
public enum LiveActivityKind: String, Codable, CaseIterable, Sendable {
    case workout, meal
}

/// The static attributes of any Live Activity of the app (ActivityKit's `ActivityAttributes`).
/// Encodes as `{"workout": {...}}` or `{"meal": {...}}`.
public enum LiveActivityAttributes: Hashable, Sendable {
    case workout(WorkoutActivityAttributes)
    case meal(MealActivityAttributes)

    public var kind: LiveActivityKind {
        switch self {
        case .workout: .workout
        case .meal: .meal
        }
    }
}

/// The dynamic state of any Live Activity (ActivityKit's `ContentState`); its kind must match
/// the activity's attributes. Encodes as `{"workout": {...}}` or `{"meal": {...}}`.
public enum LiveActivityContentState: Hashable, Sendable {
    case workout(WorkoutActivityAttributes.ContentState)
    case meal(MealActivityAttributes.ContentState)

    public var kind: LiveActivityKind {
        switch self {
        case .workout: .workout
        case .meal: .meal
        }
    }
}

/// A content update (ActivityKit's `ActivityContent`): the state and when it goes stale.
public struct LiveActivityContent: Codable, Hashable, Sendable {
    public var state: LiveActivityContentState
    /// From this instant the system shows the activity as out of date (`stale`); it is not
    /// removed. nil: never stale.
    public var staleDate: Instant?

    public init(state: LiveActivityContentState, staleDate: Instant? = nil) {
        self.state = state
        self.staleDate = staleDate
    }
}

/// What happens to an ended Live Activity on the Lock Screen (ActivityUIDismissalPolicy).
public enum DismissalPolicy: Codable, Hashable, Sendable {
    /// The system keeps it visible for up to 4 h after the end.
    case `default`
    /// Removed at once.
    case immediate
    /// Removed at the given instant, clamped to the window from the end to 4 h after it.
    case after(Instant)

    /// When an activity that ended at `endedAt` leaves the Lock Screen.
    public func removalInstant(endedAt: Instant) -> Instant {
        let latest = endedAt + LiveActivityLimits.visibleAfterEndSeconds
        switch self {
        case .default: return latest
        case .immediate: return endedAt
        case .after(let instant): return min(max(instant, endedAt), latest)
        }
    }
}

/// Why ActivityKit refused a call (ActivityAuthorizationError and the activity's own errors).
public enum LiveActivityError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Attributes plus content state exceed 4 KB; `bytes` is their measured size.
    case attributesTooLarge(bytes: Int)
    /// The user switched Live Activities off for the app (`areActivitiesEnabled` is false).
    case denied
    /// The device shows as many Live Activities, from all apps, as it allows.
    case globalMaximumExceeded
    /// The app already runs as many concurrent Live Activities as it may.
    case targetMaximumExceeded
    /// The app tried to start an activity while not in the foreground.
    case visibility
    /// The device does not support Live Activities.
    case unsupported
    /// The content state is of another kind than the activity's attributes (a workout activity
    /// takes workout content). ActivityKit's generics rule this out at compile time.
    case mismatchedContent
    /// No current activity has that identifier (never started, or already removed).
    case notFound
    /// The activity has ended (by the app or by the system) and takes no more content.
    case ended

    public var description: String {
        switch self {
        case .attributesTooLarge(let bytes):
            "attributes and content state are \(bytes) bytes; the limit is \(LiveActivityLimits.maxPayloadBytes)"
        case .denied: "Live Activities are switched off for the app"
        case .globalMaximumExceeded: "the device shows the maximum number of Live Activities"
        case .targetMaximumExceeded: "the app runs the maximum number of concurrent Live Activities"
        case .visibility: "a Live Activity can only be started while the app is in the foreground"
        case .unsupported: "the device does not support Live Activities"
        case .mismatchedContent: "the content state does not match the activity's kind"
        case .notFound: "no such Live Activity"
        case .ended: "the Live Activity has ended"
        }
    }
}

/// Where a Live Activity is in its life (ActivityState).
public enum LiveActivityState: String, Codable, CaseIterable, Sendable {
    /// Running and up to date.
    case active
    /// Running, but its content's stale date has passed; still shown.
    case stale
    /// Ended by the app or the system; still on the Lock Screen until its removal instant.
    case ended
    /// Removed from the Lock Screen; the center no longer lists it.
    case dismissed
}

/// The priority of an ActivityKit push update (`apns-priority`).
public enum PushPriority: Int, Codable, CaseIterable, Sendable {
    /// Delivered opportunistically; does not draw on the hourly budget.
    case low = 5
    /// Delivered at once; draws on the activity's hourly budget.
    case high = 10
}

/// One Live Activity as the app sees it (ActivityKit's `Activity`).
public struct LiveActivitySnapshot: Hashable, Sendable {
    /// Derived from a counter: `<prefix>-1`, `<prefix>-2`, ...
    public var id: String
    public var attributes: LiveActivityAttributes
    public var content: LiveActivityContent
    public var state: LiveActivityState
    public var startedAt: Instant
    /// When the app or the system ended it; at most 8 h after `startedAt`.
    public var endedAt: Instant?
    /// When it leaves the Lock Screen; set once it has ended, at most 4 h after `endedAt`.
    public var removalAt: Instant?
    /// The activity's push token as lowercase hex; nil until the system hands it over, and it
    /// may change.
    public var pushToken: String?
    /// Bytes of the attributes plus the current content state (see `LiveActivityLimits.payloadBytes`).
    public var payloadBytes: Int

    public init(
        id: String, attributes: LiveActivityAttributes, content: LiveActivityContent, state: LiveActivityState,
        startedAt: Instant, endedAt: Instant? = nil, removalAt: Instant? = nil, pushToken: String? = nil,
        payloadBytes: Int
    ) {
        self.id = id
        self.attributes = attributes
        self.content = content
        self.state = state
        self.startedAt = startedAt
        self.endedAt = endedAt
        self.removalAt = removalAt
        self.pushToken = pushToken
        self.payloadBytes = payloadBytes
    }
}

/// The limits Apple documents for Live Activities.
public enum LiveActivityLimits {
    /// An activity is active at most 8 h; then the system ends it.
    public static let maxActiveSeconds: Int64 = 8 * .secondsPerHour
    /// An ended activity stays on the Lock Screen at most 4 h more (12 h in all).
    public static let visibleAfterEndSeconds: Int64 = 4 * .secondsPerHour
    /// Attributes plus content state, encoded, at most 4 KB (also for push updates).
    public static let maxPayloadBytes = 4_096

    /// The size the 4 KB limit applies to: the JSON encoding (sorted keys) of the attributes
    /// plus that of the content state, in UTF-8 bytes. The stale date is metadata and not counted.
    public static func payloadBytes(attributes: LiveActivityAttributes, state: LiveActivityContentState) -> Int {
        LiveActivityJSON.size { $0.write(attributes) } &+ LiveActivityJSON.size { $0.write(state) }
    }
}

// MARK: - Codable

private enum KindKey: String, CodingKey {
    case workout, meal
}

extension LiveActivityAttributes: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: KindKey.self)
        guard container.allKeys.count == 1, let key = container.allKeys.first else {
            throw DecodingError.dataCorrupted(
                DecodingError.Context(
                    codingPath: decoder.codingPath, debugDescription: "expected exactly one key: workout or meal"))
        }
        switch key {
        case .workout: self = .workout(try container.decode(WorkoutActivityAttributes.self, forKey: .workout))
        case .meal: self = .meal(try container.decode(MealActivityAttributes.self, forKey: .meal))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: KindKey.self)
        switch self {
        case .workout(let value): try container.encode(value, forKey: .workout)
        case .meal(let value): try container.encode(value, forKey: .meal)
        }
    }
}

extension LiveActivityContentState: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: KindKey.self)
        guard container.allKeys.count == 1, let key = container.allKeys.first else {
            throw DecodingError.dataCorrupted(
                DecodingError.Context(
                    codingPath: decoder.codingPath, debugDescription: "expected exactly one key: workout or meal"))
        }
        switch key {
        case .workout:
            self = .workout(try container.decode(WorkoutActivityAttributes.ContentState.self, forKey: .workout))
        case .meal: self = .meal(try container.decode(MealActivityAttributes.ContentState.self, forKey: .meal))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: KindKey.self)
        switch self {
        case .workout(let value): try container.encode(value, forKey: .workout)
        case .meal(let value): try container.encode(value, forKey: .meal)
        }
    }
}
