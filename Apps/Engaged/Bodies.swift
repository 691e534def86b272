import EngagedAPI
import Engagement
import Foundation
import LiveActivity
import Models
import Runtime
import Scheduling

// The JSON shapes of the API (Modules/EngagedAPI/openapi.yaml describes the same). Requests refuse unknown keys;
// values the engine has types for decode through the engine's own Codable conformances, so the
// server validates exactly as the engine does and names the same fields.

/// `POST /v1/users/{id}/events`: `{"type": <engine input name>, "at"?: ISO 8601, ...fields of
/// that type}`. `at` is when an activity happened, for events the app sends late (logged
/// offline): the history records the activity at `at`; the engine takes the input when it
/// arrives. `Routes.postEvent` bounds it (`EventBody.atBounds`).
struct EventBody: Decodable {
    var input: EngineInput
    var occurredAt: Instant?

    /// `at` may lie at most this far ahead of the server's clock (devices' clocks drift) ...
    static let maxFutureSkewSeconds: Int64 = 300
    /// ... and at most this far behind it.
    static let maxAgeSeconds: Int64 = 7 * 86_400

    /// The fields each type takes besides `type`.
    static let fields: [String: Set<String>] = LiveActivityBody.fields.merging([
        "appOpened": ["sessionSeconds"],
        "workoutCompleted": ["durationMinutes"],
        "mealLogged": ["meal"],
        "moodLogged": [],
        "energyLogged": [],
        "coachChat": [],
        "checkInCompleted": [],
        "notificationResponse": ["requestID", "actionIdentifier"],
        "socialEvent": ["id", "kind", "actorName", "topic", "isMutualFriend"],
        "notificationPermission": ["allowed"],
    ]) { $1 }

    init(from decoder: any Decoder) throws {
        let path = decoder.codingPath
        let c = try decoder.container(keyedBy: AnyKey.self)
        let type: String = try c.decode("type")
        guard let fields = Self.fields[type] else {
            throw Problem.badRequest(
                "type: unknown event type \"\(type)\"; expected one of \(Self.fields.keys.sorted().joined(separator: ", "))",
                field: Problem.fieldPath(path + [AnyKey("type")]))
        }
        try c.rejectKeys(outside: fields.union(["type", "at"]), at: path)
        if let at: String = try c.decodeIfPresent("at") {
            guard let instant = Instant(iso8601: at) else {
                throw invalidValue(path, "at", "not an ISO 8601 instant such as 2027-03-01T06:00:00Z: \"\(at)\"")
            }
            occurredAt = instant
        }
        if let liveActivity = try LiveActivityBody.input(type: type, from: c, at: path) {
            input = liveActivity
            if occurredAt != nil {
                throw invalidValue(path, "at", "only activity events carry \"at\"; \(type) is taken when it arrives")
            }
            return
        }
        switch type {
        case "appOpened":
            let seconds = try c.integer("sessionSeconds", in: 0...86_400, at: path) ?? 0
            input = .activity(.appOpened(sessionSeconds: seconds))
        case "workoutCompleted":
            guard let minutes = try c.integer("durationMinutes", in: 0...1_440, at: path) else {
                throw DecodingError.keyNotFound(
                    AnyKey("durationMinutes"), DecodingError.Context(codingPath: path, debugDescription: "required"))
            }
            input = .activity(.workoutCompleted(durationMinutes: minutes))
        case "mealLogged": input = .activity(.mealLogged(try c.decode("meal")))
        case "moodLogged": input = .activity(.moodLogged)
        case "energyLogged": input = .activity(.energyLogged)
        case "coachChat": input = .activity(.coachChat)
        case "checkInCompleted": input = .activity(.checkInCompleted)
        case "notificationResponse":
            let requestID: String = try c.decode("requestID")
            let identifier: String = try c.decode("actionIdentifier")
            // The kind comes from the request identifier the engine made, as on a device.
            let occurrence: OccurrenceID
            do {
                occurrence = try OccurrenceID(parsing: requestID)
            } catch {
                throw invalidValue(path, "requestID", "not a request identifier of the engine: \(error.problem)")
            }
            if let action = NotificationActionID(rawValue: identifier) {
                input = .notificationResponse(requestID: requestID, kind: occurrence.kind, action: action)
            } else {
                input = .unrecognizedResponse(
                    requestID: requestID, kind: occurrence.kind, actionIdentifier: identifier)
            }
        case "notificationPermission":
            input = .notificationPermission(allowed: try c.decode("allowed"))
        default:  // socialEvent
            let kind: NotificationKind = try c.decode("kind")
            guard kind.isSocial else {
                throw invalidValue(path, "kind", "\(kind.rawValue) is not a social kind")
            }
            // The id names the engine's records of the event (the ledger, the outbox): never empty.
            let eventID: String = try c.decode("id")
            guard (1...128).contains(eventID.utf8.count) else {
                throw invalidValue(path, "id", "1 to 128 characters, got \(eventID.utf8.count)")
            }
            input = .socialEvent(
                SocialEvent(
                    id: eventID, kind: kind, actorName: try c.decode("actorName"),
                    topic: try c.decode("topic"), isMutualFriend: try c.decodeIfPresent("isMutualFriend") ?? false))
        }
        if occurredAt != nil, case .activity = input {
        } else if occurredAt != nil {
            throw invalidValue(path, "at", "only activity events carry \"at\"; \(type) is taken when it arrives")
        }
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
}

/// The answer of `POST /v1/users/{id}/events`.
struct EventAccepted: Encodable {
    var effects: Int
    /// The local plan's revision after the event (`UserEngine.localPlanRevision`): the plan's
    /// `version`, which an app compares with the one it holds.
    var planVersion: Int
    /// The step's Live Activity commands: an app starts the activity a `start` names and reports
    /// its push token under that name.
    var liveActivities: [LiveActivityChange]

    init(_ effects: [Effect], planVersion: Int) {
        self.effects = effects.count
        self.planVersion = planVersion
        liveActivities = effects.compactMap { effect in
            guard case .liveActivity(let command) = effect else { return nil }
            return LiveActivityChange(command)
        }
    }
}

extension Components.Schemas.Schedule {
    /// `GET /v1/users/{id}/schedule`: what the engine has planned, soonest first, in one page
    /// (at most the 64 pending requests): `nextCursor` is always null.
    init(_ engine: UserEngine) {
        let zone = engine.zone
        self.init(
            items: zip(engine.plannedRequestIDs, engine.plannedFireTimes).map { id, fireAt in
                let kind = OccurrenceID(requestID: id)?.kind
                return Components.Schemas.ScheduleItem(
                    id: id, kind: kind?.rawValue ?? "unknown",
                    // `local`: the app puts it in the device's pending list, the server only files it
                    // in the inbox when due; `remote`: the server pushes it when due (`ChannelPolicy`).
                    channel: kind.flatMap { .init(rawValue: ChannelPolicy.channel(for: $0).rawValue) } ?? .unknown,
                    fireAt: fireAt.date, localTime: zone.formatted(fireAt))
            },
            nextCursor: Nullable(nil), timeZone: zone.identifier)
    }
}
