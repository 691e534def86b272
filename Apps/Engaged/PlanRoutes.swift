import EngagedAPI
import Foundation
import HTTPTypes
import Models
import Runtime
import Scheduling

/// `GET /v1/users/{id}/plan`: the local notifications the server planned for the user
/// (`LocalPlan`), each with everything the platform needs to show it, for the app to mirror
/// into the device's pending list. Open to the API key and to the user's own token, as the
/// inbox is. The answer's `version` is its weak `ETag` (`W/"7"`): the revision of the plan's
/// requests, which a phone holding them need not pull again, though the answer's times move on
/// as requests fire (`LocalPlan.version`). A request whose `If-None-Match` names it gets 304 and
/// no body, so an app can ask often and cheaply. One whose `?since=` names a version the runtime
/// kept is answered with only what changed since (`ServedPlans`).
extension Routes {
    func getPlan(_ input: Operations.GetPlan.Input) async throws -> Operations.GetPlan.Output {
        let id = try Self.userID(input.path.id)
        // `PlanQuery` checked the query before the generated code read it (`preflightChecks`).
        let since = input.query.since
        // A client that holds the current version costs the version only, not the plan. Every
        // `If-None-Match` line counts (RFC 9110: they form one list).
        let header = RequestScope.headerFields[values: .ifNoneMatch].joined(separator: ",")
        if !header.isEmpty {
            let version = try await perform { try await runtime.localPlanVersion(of: id) }
            if PlanTag.matches(header, tag: PlanTag.of(version)) {
                return .notModified(.init(headers: .init(eTag: PlanTag.of(version), cacheControl: "no-cache")))
            }
        }
        let plan = try await perform { try await runtime.localPlan(of: id) }
        // Asked with the user's token, the phone mirrors this plan: the engine counts what it
        // holds (the backend reading it with the API key changes nothing).
        if EventKey.source(of: RequestScope.caller) == .device {
            try await perform { try await runtime.phoneWasServed(plan, userID: id) }
        }
        let answer = await runtime.answer(plan, of: id, since: since)
        return .ok(
            .init(
                headers: .init(eTag: PlanTag.of(plan.version), cacheControl: "no-cache"),
                body: .json(try Components.Schemas.LocalPlan(answer))))
    }
}

/// `?since=` of `GET /v1/users/{id}/plan`, checked before the generated code reads it: the
/// version the client holds in full, a whole number of at least 0; absent, the whole plan. Any
/// other parameter, or one given twice, is refused, naming it.
struct PlanQuery: Equatable {
    var since: Int?

    init(_ parameters: some Collection<(key: Substring, value: Substring)>) throws(Problem) {
        since = nil
        var seen = false
        for (name, value) in parameters {
            guard name == "since" else {
                throw Problem.badRequest("unknown query parameter \"\(name)\"; expected since", field: String(name))
            }
            guard !seen else {
                throw Problem.badRequest("the query parameter since is given more than once", field: "since")
            }
            seen = true
            guard let version = Int(value), version >= 0 else {
                throw Problem.badRequest(
                    "since is the version of the plan held, a whole number of at least 0, got \"\(value)\"",
                    field: "since")
            }
            since = version
        }
    }
}

/// The plan's entity tags.
enum PlanTag {
    /// The weak entity tag of `version`: `W/"7"`.
    static func of(_ version: Int) -> String { "W/\"\(version)\"" }

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

extension Components.Schemas.LocalPlan {
    /// The plan's answer: each request's content under the plan's privacy, its trigger, and its
    /// next firing in UTC and in the user's zone; for a delta, what it changes.
    init(_ plan: LocalPlan) throws {
        let zone = plan.zone
        self.init(
            version: plan.version, timeZone: zone.identifier, horizonEnd: Nullable(plan.horizonEnd?.date),
            requests: try plan.entries.map { entry in
                let request = entry.request
                let content = request.content
                guard
                    let level = Components.Schemas.LocalRequest.InterruptionLevelPayload(
                        rawValue: content.interruptionLevel.rawValue)
                else { throw APIAnswerError(detail: "interruption level \(content.interruptionLevel.rawValue)") }
                return Components.Schemas.LocalRequest(
                    identifier: request.identifier.rawValue, kind: content.kind.rawValue, title: content.title,
                    subtitle: Nullable(content.subtitle), body: content.body,
                    categoryIdentifier: content.category.rawValue, threadIdentifier: content.threadID,
                    interruptionLevel: level, relevanceScore: content.relevanceScore,
                    sound: Nullable(content.sound.map { "\($0.rawValue).caf" }),
                    userInfo: .init(link: content.deepLink.description, kind: content.kind.rawValue),
                    trigger: Components.Schemas.LocalTrigger(request.trigger), nextFireAt: entry.nextFireAt.date,
                    localTime: zone.formatted(entry.nextFireAt),
                    withdrawnBy: entry.withdrawnBy.map(Components.Schemas.PlanWithdrawal.init))
            }, since: plan.delta?.since, removed: plan.delta?.removed.map(\.rawValue),
            digest: plan.digest)
    }
}

extension Components.Schemas.PlanWithdrawal {
    /// What withdraws a request on the phone, as the plan names it.
    init(_ withdrawal: Withdrawal) {
        self.init(
            activity: withdrawal.activity.name, meal: withdrawal.activity.meal?.rawValue, from: withdrawal.from.date,
            until: Nullable(withdrawal.until?.date))
    }
}

extension Components.Schemas.LocalTrigger {
    /// `date` fires once at `fireAt`; `calendar` when the device's wall clock matches the fields
    /// given (`repeats`: every time); `timeInterval` `seconds` after it was added.
    init(_ trigger: NotificationTrigger) {
        switch trigger {
        case .date(let instant):
            self.init(_type: .date, fireAt: instant.date)
        case .calendar(let match, let repeats):
            self.init(
                _type: .calendar, repeats: repeats, year: match.year, month: match.month, day: match.day,
                weekday: match.weekday?.rawValue, hour: match.hour, minute: match.minute)
        case .timeInterval(let seconds, let repeats):
            self.init(_type: .timeInterval, repeats: repeats, seconds: Int(seconds))
        }
    }
}
