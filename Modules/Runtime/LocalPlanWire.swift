import Foundation
public import Models

extension PlanWire {
    /// `plan` as `GET /v1/users/{id}/plan` answers it: each request's content, its trigger, its
    /// next firing in UTC and in the plan's zone, and what withdraws it (an empty list for
    /// nothing, as the server writes it). The server writes the same JSON from the types
    /// generated from the API's document; a test holds the two together, byte for byte.
    public init(_ plan: LocalPlan) {
        let zone = plan.zone
        self.init(
            version: plan.version, timeZone: zone.identifier, horizonEnd: plan.horizonEnd?.iso8601,
            requests: plan.entries.map { entry in
                let content = entry.request.content
                return Request(
                    identifier: entry.request.identifier.rawValue, kind: content.kind.rawValue, title: content.title,
                    subtitle: content.subtitle, body: content.body, categoryIdentifier: content.category.rawValue,
                    threadIdentifier: content.threadID, interruptionLevel: content.interruptionLevel.rawValue,
                    relevanceScore: content.relevanceScore, sound: content.sound.map { "\($0.rawValue).caf" },
                    userInfo: ["link": content.deepLink.description, "kind": content.kind.rawValue],
                    trigger: Trigger(entry.request.trigger), nextFireAt: entry.nextFireAt.iso8601,
                    localTime: zone.formatted(entry.nextFireAt), withdrawnBy: entry.withdrawnBy.map(Withdrawal.init))
            })
    }

    /// The answer's body as the server sends it: compact JSON with sorted keys and slashes
    /// unescaped, as the API's generated code is configured (`Configuration.engaged`). Used to
    /// measure what a pull carries (the simulator's report), never to answer one.
    public func encodedAnswer() throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return Array(try encoder.encode(self))
    }
}
