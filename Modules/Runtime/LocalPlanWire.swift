import Foundation
public import Models

extension PlanWire {
    /// `plan` as `GET /v1/users/{id}/plan` answers it: each request's content, its trigger, its
    /// next firing in UTC and in the plan's zone, and what withdraws it (an empty list for
    /// nothing, as the server writes it); for a delta, what it changes (`since`, `removed`); the
    /// digest. The server writes the same JSON from the types generated from the API's document;
    /// a test holds the two together, byte for byte.
    public init(_ plan: LocalPlan) {
        let zone = plan.zone
        self.init(
            version: plan.version, timeZone: zone.identifier, horizonEnd: plan.horizonEnd?.iso8601,
            requests: plan.entries.map { entry in
                Request(
                    entry.request, nextFireAt: entry.nextFireAt, localTime: zone.formatted(entry.nextFireAt),
                    withdrawnBy: entry.withdrawnBy)
            }, since: plan.delta?.since, removed: plan.delta?.removed.map(\.rawValue),
            digest: plan.digest)
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
