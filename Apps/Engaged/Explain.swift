import Engagement
import Foundation
import Hummingbird
import HummingbirdCore
import Models
import Runtime
import Storage

// `GET /v1/users/{id}/explain?since=&cursor=&limit=`: "why didn't I get my reminder?" over HTTP.
// The user's traced decisions, oldest first, with the reason codes `simulate --explain` prints.

extension Routes {
    @Sendable func explain(_ request: Request, context: EngagedRequestContext) async throws -> Response {
        let id = try Self.userID(context)
        let query = try ExplainQuery(request.uri.queryParameters, now: runtime.now())
        guard let engine = try await perform({ try await runtime.engine(of: id) }) else {
            throw Problem.notFound("no user \"\(id)\"")
        }
        // One more than the page: whether it exists says if there is a next page.
        let records = try await perform {
            try runtime.traceRecords(of: id, after: query.position, limit: query.limit + 1)
        }
        return JSONBody.response(.ok, ExplainView(records, query: query, zone: engine.zone))
    }
}

/// The query of an explain request, validated: a bad value is a 400 naming its parameter.
struct ExplainQuery: Equatable {
    static let defaultLimit = 100
    static let limits = 1...500
    /// Without `since`: the last week.
    static let defaultWindowSeconds: Int64 = 7 * 86_400

    var since: Instant
    var limit: Int
    /// Where the page starts: after the cursor's record, and never before `since`.
    var position: TracePosition

    init(_ parameters: FlatDictionary<Substring, Substring>, now: Instant) throws(Problem) {
        for name in ["since", "limit", "cursor"] where parameters[values: name[...]].count > 1 {
            throw Problem.badRequest("\(name) is given more than once", field: name)
        }
        if let text = parameters["since"] {
            guard let since = Instant(iso8601: String(text)) else {
                throw Problem.badRequest(
                    "since must be an ISO 8601 instant such as 2027-03-01T06:00:00Z, got \"\(text.prefix(64))\"",
                    field: "since")
            }
            self.since = since
        } else {
            since = now - Self.defaultWindowSeconds
        }
        if let text = parameters["limit"] {
            guard let limit = Int(text), Self.limits.contains(limit) else {
                throw Problem.badRequest(
                    "limit must be a whole number in \(Self.limits.lowerBound)...\(Self.limits.upperBound), "
                        + "got \"\(text.prefix(64))\"", field: "limit")
            }
            self.limit = limit
        } else {
            limit = Self.defaultLimit
        }
        position = TracePosition(at: since, id: 0)
        if let text = parameters["cursor"] {
            guard let cursor = TraceCursor.decode(String(text)) else {
                throw Problem.badRequest(
                    "cursor is not one this server gave (pass nextCursor as it came)", field: "cursor")
            }
            position = max(position, cursor)
        }
    }
}

/// The opaque cursor of an explain page: the position of its last record, `t` and the
/// base64url of `<seconds since the epoch>:<record id>`.
enum TraceCursor {
    static func encode(_ position: TracePosition) -> String {
        "t"
            + Data("\(position.at.secondsSinceEpoch):\(position.id)".utf8).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    static func decode(_ text: String) -> TracePosition? {
        guard text.hasPrefix("t"), text.count <= 64 else { return nil }
        var base64 = String(text.dropFirst()).replacingOccurrences(of: "-", with: "+")
            .replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        guard let data = Data(base64Encoded: base64), let plain = String(data: data, encoding: .utf8) else {
            return nil
        }
        let parts = plain.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, let seconds = Int64(parts[0]), let id = Int64(parts[1]), id > 0 else { return nil }
        return TracePosition(at: Instant(secondsSinceEpoch: seconds), id: id)
    }
}

/// The answer of explain: a page of decisions, oldest first.
struct ExplainView: Encodable {
    struct Item: Encodable {
        /// The record's id (a decimal string; ids grow in the order decisions were committed).
        var id: String
        /// When the decision was made: ISO 8601 UTC, and in the user's zone with its offset.
        var at: String
        var localTime: String
        /// scheduled, deferred, dropped, suppressed, cancelled or folded.
        var decision: String
        var requestID: String
        var kind: String
        /// The engine's reason code (`ReasonCode`), as `simulate --explain` prints it.
        var reason: String
        /// When it fires (scheduled and deferred), UTC and local.
        var fireAt: String?
        var fireAtLocalTime: String?
        /// The values that decided ("quiet 22:00-07:00"); absent when the reason says it all.
        var detail: String?
        /// For a folded item: the batch or digest it joined.
        var groupID: String?
        /// What the user did (or what ran) that led to the decision.
        var input: String
    }

    var items: [Item]
    var nextCursor: String?
    var since: String
    var timeZone: String

    init(_ records: [TraceRecord], query: ExplainQuery, zone: ZoneRules) {
        let page = records.prefix(query.limit)
        items = page.map { record in
            Item(
                id: String(record.id), at: record.at.iso8601, localTime: zone.formatted(record.at),
                decision: record.decision.rawValue, requestID: record.requestID.rawValue, kind: record.kind.rawValue,
                reason: record.reason.rawValue, fireAt: record.fireAt?.iso8601,
                fireAtLocalTime: record.fireAt.map(zone.formatted), detail: record.detail.isEmpty ? nil : record.detail,
                groupID: record.groupID, input: record.input)
        }
        nextCursor = records.count > query.limit ? page.last.map { TraceCursor.encode($0.position) } : nil
        since = query.since.iso8601
        timeZone = zone.identifier
    }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: AnyKey.self)
        try c.encode(items, forKey: AnyKey("items"))
        try c.encode(nextCursor, forKey: AnyKey("nextCursor"))  // null, not absent
        try c.encode(since, forKey: AnyKey("since"))
        try c.encode(timeZone, forKey: AnyKey("timeZone"))
    }
}
