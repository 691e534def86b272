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
        var response = JSONBody.response(.ok, PlanWire(plan))
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

extension PlanWire {
    /// The plan's JSON: each request's content under the plan's privacy, its trigger, and its
    /// next firing in UTC and in the user's zone.
    init(_ plan: LocalPlan) {
        let zone = plan.zone
        self.init(
            version: plan.version, timeZone: zone.identifier, horizonEnd: plan.horizonEnd?.iso8601,
            requests: plan.entries.map { entry in
                let request = entry.request
                let content = request.content
                return Request(
                    identifier: request.identifier, kind: content.kind.rawValue, title: content.title,
                    subtitle: content.subtitle, body: content.body, categoryIdentifier: content.category.rawValue,
                    threadIdentifier: content.threadID, interruptionLevel: content.interruptionLevel.rawValue,
                    relevanceScore: content.relevanceScore, sound: content.sound.map { "\($0.rawValue).caf" },
                    userInfo: ["link": content.deepLink.description, "kind": content.kind.rawValue],
                    trigger: Trigger(request.trigger), nextFireAt: entry.nextFireAt.iso8601,
                    localTime: zone.formatted(entry.nextFireAt))
            })
    }
}

extension String {
    fileprivate var nilIfEmpty: String? { isEmpty ? nil : self }

}
