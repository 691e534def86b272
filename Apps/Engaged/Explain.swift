import EngagedAPI
import Engagement
import Foundation
import Models
import Runtime
import Storage

// `GET /v1/users/{id}/explain?since=&cursor=&limit=`: "why didn't I get my reminder?" over HTTP.
// The user's traced decisions, oldest first, with the reason codes `simulate --explain` prints.

extension Routes {
    func explain(_ input: Operations.Explain.Input) async throws -> Operations.Explain.Output {
        let id = try Self.userID(input.path.id)
        let query = try ExplainQuery(RequestScope.queryItems, now: runtime.now())
        guard let engine = try await perform({ try await runtime.engine(of: id) }) else {
            throw Problem.notFound("no user \"\(id)\"")
        }
        // One more than the page: whether it exists says if there is a next page.
        let records = try await perform {
            try runtime.traceRecords(of: id, after: query.position, limit: query.limit + 1)
        }
        return .ok(.init(body: .json(try Components.Schemas.Explain(records, query: query, zone: engine.zone))))
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

    init(_ pairs: [(key: Substring, value: Substring)], now: Instant) throws(Problem) {
        var parameters: [Substring: Substring] = [:]
        for (name, value) in pairs where ["since", "limit", "cursor"].contains(name) {
            guard parameters.updateValue(value, forKey: name) == nil else {
                throw Problem.badRequest("\(name) is given more than once", field: String(name))
            }
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

extension Components.Schemas.Explain {
    /// A page of decisions, oldest first, and the cursor of the next (null on the last).
    init(_ records: [TraceRecord], query: ExplainQuery, zone: ZoneRules) throws {
        let page = records.prefix(query.limit)
        self.init(
            items: try page.map { record in
                guard let decision = Components.Schemas.ExplainItem.DecisionPayload(rawValue: record.decision.rawValue),
                    let kind = Components.Schemas.NotificationKind(rawValue: record.kind.rawValue),
                    let reason = Components.Schemas.ExplainItem.ReasonPayload(rawValue: record.reason.rawValue)
                else {
                    throw APIAnswerError(
                        detail: "decision \(record.decision.rawValue), kind \(record.kind.rawValue) or "
                            + "reason \(record.reason.rawValue)")
                }
                return Components.Schemas.ExplainItem(
                    id: String(record.id), at: record.at.date, localTime: zone.formatted(record.at),
                    decision: decision, requestID: record.requestID.rawValue, kind: kind, reason: reason,
                    fireAt: record.fireAt?.date, fireAtLocalTime: record.fireAt.map(zone.formatted),
                    detail: record.detail.isEmpty ? nil : record.detail, groupID: record.groupID, input: record.input)
            },
            nextCursor: Nullable(records.count > query.limit ? page.last.map { TraceCursor.encode($0.position) } : nil),
            since: query.since.date, timeZone: zone.identifier)
    }
}
