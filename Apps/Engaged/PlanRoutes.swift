import Foundation
import Hummingbird
import Models
import Runtime
import Scheduling

/// `GET /v1/users/{id}/plan`: the local notifications the server planned for the user
/// (`LocalPlan`), each with everything the platform needs to show it, for the app to mirror
/// into the device's pending list. Open to the API key and to the user's own token, as the
/// inbox is. The answer's `version` is its weak `ETag` (`W/"7"`): the revision of the plan's
/// requests, which a phone holding them need not pull again, though the answer's times move on
/// as requests fire (`LocalPlan.version`). A request whose `If-None-Match` names it gets 304 and
/// no body, so an app can ask often and cheaply.
struct PlanRoutes: Sendable {
    let routes: Routes

    func register(on router: Router<EngagedRequestContext>) {
        router.group("v1/users/:id/plan").add(middleware: InboxAuthMiddleware(routes.environment)).get(use: plan)
    }

    @Sendable func plan(_ request: Request, context: EngagedRequestContext) async throws -> Response {
        let id = try Routes.userID(context)
        // A client that holds the current version costs the version only, not the plan.
        if let header = request.headers[values: .ifNoneMatch].joined(separator: ",").nilIfEmpty {
            let version = try await routes.perform { try await routes.runtime.localPlanVersion(of: id) }
            if Self.matches(header, tag: Self.tag(version)) {
                return Response(status: .notModified, headers: [.eTag: Self.tag(version), .cacheControl: "no-cache"])
            }
        }
        let plan = try await routes.perform { try await routes.runtime.localPlan(of: id) }
        var response = JSONBody.response(.ok, PlanView(plan))
        response.headers[.eTag] = Self.tag(plan.version)
        response.headers[.cacheControl] = "no-cache"
        return response
    }

    /// The weak entity tag of `version`: `W/"7"`.
    static func tag(_ version: Int) -> String { "W/\"\(version)\"" }

    /// Whether `If-None-Match: header` names `tag` (RFC 9110: `*` alone, or a list of entity
    /// tags compared weakly, so `W/"x"` matches `"x"`).
    static func matches(_ header: String, tag: String) -> Bool {
        if header.trimmingCharacters(in: .whitespaces) == "*" { return true }
        let opaque = tag.hasPrefix("W/") ? tag.dropFirst(2) : Substring(tag)
        return header.split(separator: ",").contains { candidate in
            var candidate = candidate.trimmingCharacters(in: .whitespaces)
            if candidate.hasPrefix("W/") { candidate.removeFirst(2) }
            return candidate == opaque
        }
    }
}

/// The plan as JSON.
struct PlanView: Encodable {
    struct Trigger: Encodable {
        /// `date` (fires once at `fireAt`) or `calendar` (fires when the device's wall clock
        /// matches the fields given, in the device's zone; `repeats`: every time it matches).
        var type: String
        var fireAt: String?
        var repeats: Bool?
        var year: Int?
        var month: Int?
        var day: Int?
        /// 1 (Sunday) to 7 (Saturday), as the platform numbers weekdays.
        var weekday: Int?
        var hour: Int?
        var minute: Int?
        /// `timeInterval` only.
        var seconds: Int64?
    }

    struct Item: Encodable {
        var identifier: String
        var kind: String
        var title: String
        var subtitle: String?
        var body: String
        var categoryIdentifier: String
        var threadIdentifier: String
        var interruptionLevel: String
        var relevanceScore: Double
        /// The sound file (`reminder.caf`), or null for none.
        var sound: String?
        /// What a push of it would carry beside `aps`: the deep link and the kind.
        var userInfo: [String: String]
        var trigger: Trigger
        /// The next firing, ISO 8601 UTC, and the same in the user's zone with its offset.
        var nextFireAt: String
        var localTime: String

        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: AnyKey.self)
            for (key, value) in [
                ("identifier", identifier), ("kind", kind), ("title", title), ("body", body),
                ("categoryIdentifier", categoryIdentifier), ("threadIdentifier", threadIdentifier),
                ("interruptionLevel", interruptionLevel), ("nextFireAt", nextFireAt), ("localTime", localTime),
            ] {
                try c.encode(value, forKey: AnyKey(key))
            }
            try c.encode(subtitle, forKey: AnyKey("subtitle"))  // null, not absent
            try c.encode(sound, forKey: AnyKey("sound"))
            try c.encode(relevanceScore, forKey: AnyKey("relevanceScore"))
            try c.encode(userInfo, forKey: AnyKey("userInfo"))
            try c.encode(trigger, forKey: AnyKey("trigger"))
        }
    }

    var version: Int
    var timeZone: String
    var horizonEnd: String?
    var requests: [Item]

    init(_ plan: LocalPlan) {
        let zone = plan.zone
        version = plan.version
        timeZone = zone.identifier
        horizonEnd = plan.horizonEnd?.iso8601
        requests = plan.entries.map { entry in
            let request = entry.request
            let content = request.content
            return Item(
                identifier: request.identifier, kind: content.kind.rawValue, title: content.title,
                subtitle: content.subtitle, body: content.body, categoryIdentifier: content.category.rawValue,
                threadIdentifier: content.threadID, interruptionLevel: content.interruptionLevel.rawValue,
                relevanceScore: content.relevanceScore, sound: content.sound.map { "\($0.rawValue).caf" },
                userInfo: ["link": content.deepLink.description, "kind": content.kind.rawValue],
                trigger: Self.trigger(request.trigger), nextFireAt: entry.nextFireAt.iso8601,
                localTime: zone.formatted(entry.nextFireAt))
        }
    }

    static func trigger(_ trigger: NotificationTrigger) -> Trigger {
        switch trigger {
        case .date(let instant): Trigger(type: "date", fireAt: instant.iso8601)
        case .calendar(let match, let repeats):
            Trigger(
                type: "calendar", repeats: repeats, year: match.year, month: match.month, day: match.day,
                weekday: match.weekday?.rawValue, hour: match.hour, minute: match.minute)
        case .timeInterval(let seconds, let repeats): Trigger(type: "timeInterval", repeats: repeats, seconds: seconds)
        }
    }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: AnyKey.self)
        try c.encode(version, forKey: AnyKey("version"))
        try c.encode(timeZone, forKey: AnyKey("timeZone"))
        try c.encode(horizonEnd, forKey: AnyKey("horizonEnd"))  // null before the first pass
        try c.encode(requests, forKey: AnyKey("requests"))
    }
}

extension String {
    fileprivate var nilIfEmpty: String? { isEmpty ? nil : self }

}
