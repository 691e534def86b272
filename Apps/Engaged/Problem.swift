import Foundation
import Hummingbird
import Logging
import Models
import OpenAPIRuntime

/// An RFC 9457 problem: every error the server answers is one of these, sent as
/// `application/problem+json` with `type`, `title`, `status`, `detail` and, where one field of the
/// request is at fault, `field` (its dotted path, as the engine's own validation names it).
struct Problem: Error, HTTPResponseError, Equatable, Encodable {
    /// The last part of the problem's type URI (`urn:engaged:problem:<slug>`); one slug per kind
    /// of problem, so a client can branch on it without reading the text.
    var slug: String
    var title: String
    var status: HTTPResponse.Status
    var detail: String
    var field: String?
    /// Sent as `Retry-After` (429), not in the body.
    var retryAfterSeconds: Int?
    /// Sent as `Allow` (405): the methods the path takes.
    var allow: String?

    var type: String { "urn:engaged:problem:\(slug)" }

    static let mediaType = "application/problem+json"

    func response(from request: Request, context: some RequestContext) throws -> Response {
        var response = JSONBody.response(status, self, contentType: Self.mediaType)
        // RFC 6750: a 401 says which scheme to use.
        if status == .unauthorized { response.headers[.wwwAuthenticate] = "Bearer" }
        if let retryAfterSeconds { response.headers[.retryAfter] = String(retryAfterSeconds) }
        if let allow { response.headers[.allow] = allow }
        return response
    }

    enum CodingKeys: String, CodingKey { case type, title, status, detail, field }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(type, forKey: .type)
        try container.encode(title, forKey: .title)
        try container.encode(status.code, forKey: .status)
        try container.encode(detail, forKey: .detail)
        try container.encodeIfPresent(field, forKey: .field)
    }

    // MARK: - The kinds of problem

    static func unauthorized(_ detail: String) -> Problem {
        Problem(slug: "unauthorized", title: "Unauthorized", status: .unauthorized, detail: detail)
    }

    /// The request is not what the route reads: not JSON, a field of the wrong type or missing,
    /// an unknown event type, a bad path parameter or header.
    static func badRequest(_ detail: String, field: String? = nil) -> Problem {
        Problem(slug: "bad-request", title: "Bad request", status: .badRequest, detail: detail, field: field)
    }

    /// The request has the right shape but a value is refused (an unknown time zone, a preference
    /// out of range, an unknown key).
    static func invalidField(_ field: String, _ detail: String) -> Problem {
        Problem(
            slug: "invalid-field", title: "Invalid field", status: .unprocessableContent, detail: detail, field: field)
    }

    static func notFound(_ detail: String) -> Problem {
        Problem(slug: "not-found", title: "Not found", status: .notFound, detail: detail)
    }

    static func conflict(_ detail: String) -> Problem {
        Problem(slug: "idempotency-conflict", title: "Conflict", status: .conflict, detail: detail)
    }

    /// 409: what the request would take (a device token) is another user's.
    static func heldByAnotherUser(_ detail: String) -> Problem {
        Problem(slug: "held-by-another-user", title: "Conflict", status: .conflict, detail: detail)
    }

    static func bodyTooLarge(limitBytes: Int) -> Problem {
        Problem(
            slug: "body-too-large", title: "Content too large", status: .contentTooLarge,
            detail: "the request body is larger than \(limitBytes) bytes")
    }

    /// The server cannot serve now (its store does not answer, or its schema is not this build's).
    static func notReady(_ detail: String) -> Problem {
        Problem(slug: "not-ready", title: "Not ready", status: .serviceUnavailable, detail: detail)
    }

    static func internalError(_ detail: String) -> Problem {
        Problem(slug: "internal", title: "Internal server error", status: .internalServerError, detail: detail)
    }

    /// The problem of an error that escaped a route: Hummingbird's own (no route: 404), a refused
    /// body, or anything else (500, logged; the client never sees its text).
    static func from(_ error: any Error, logger: Logger) -> Problem {
        switch error {
        case let problem as Problem:
            return problem
        case let error as ServerError:
            return from(error, logger: logger)
        case let error as any HTTPResponseError where error.status == .contentTooLarge:
            return .bodyTooLarge(limitBytes: JSONBody.maxBytes)
        case let error as any HTTPResponseError where error.status.code < 500:
            let status = error.status
            return Problem(
                slug: status == .notFound ? "not-found" : "http-\(status.code)", title: status.reasonPhrase,
                status: status, detail: status == .notFound ? "no such route" : status.reasonPhrase.lowercased())
        default:
            logger.error("unhandled error", metadata: ["error": "\(error)"])
            return .internalError("the server failed to answer; the request may be retried")
        }
    }

    /// The problem of a body that did not decode: a value the engine refused (`dataCorrupted` at a
    /// field) is 422; anything else (not JSON, wrong type, missing key) is 400. Both name the field.
    static func from(decoding error: any Error) -> Problem {
        guard let error = error as? DecodingError else { return .badRequest("the body is not valid JSON") }
        switch error {
        // The generated decoders' own wording, made to say what is wrong: a key the object's
        // schema does not list, and a `oneOf` member's discriminator no member has (which they
        // report as the key missing).
        case .dataCorrupted(let context)
        where context.debugDescription.hasPrefix("Additional properties are disabled") && !context.codingPath.isEmpty:
            let field = fieldPath(context.codingPath)
            return .invalidField(field, "\(field): unknown key; the document does not list it for this object")
        case .keyNotFound(let key, let context) where context.debugDescription.contains("discriminator value"):
            // The value is the client's, of any length: quoted clipped, and kept out of the path.
            let value = discriminatorValue(context.debugDescription)
            let field = fieldPath(context.codingPath.filter { $0.stringValue != value } + [key])
            return .badRequest(
                "\(field): \(quoted(value ?? "")) is not one of the values the document lists", field: field)
        case .dataCorrupted(let context) where !context.codingPath.isEmpty:
            return .invalidField(fieldPath(context.codingPath), error.fieldMessage)
        case .dataCorrupted:
            return .badRequest("the body is not valid JSON")
        case .keyNotFound(let key, let context):
            return .badRequest(error.fieldMessage, field: fieldPath(context.codingPath + [key]))
        case .typeMismatch(_, let context), .valueNotFound(_, let context):
            return .badRequest(error.fieldMessage, field: fieldPath(context.codingPath))
        @unknown default:
            return .badRequest("\(error)")
        }
    }

    /// The value of the generated decoders' "...discriminator value '<value>'." message.
    static func discriminatorValue(_ message: String) -> String? {
        guard let start = message.range(of: "discriminator value '"), message.hasSuffix("'.") else { return nil }
        return String(message[start.upperBound..<message.index(message.endIndex, offsetBy: -2)])
    }

    /// A client's text in a detail: quoted, and clipped to `limit` characters (with `...`), so
    /// that an answer never echoes a long input back in full.
    static func quoted(_ text: String, limit: Int = 64) -> String {
        text.count <= limit ? "\"\(text)\"" : "\"\(text.prefix(limit))...\" (\(text.utf8.count) bytes)"
    }

    /// `preferences.quietHours.start`, `preferences.reminders[0].rule`.
    static func fieldPath(_ codingPath: [any CodingKey]) -> String {
        var text = ""
        for key in codingPath {
            if let index = key.intValue {
                text += "[\(index)]"
            } else {
                text += (text.isEmpty ? "" : ".") + key.stringValue
            }
        }
        return text
    }
}

/// Turns every error that escapes a route (or the router: no such route) into a problem body.
struct ProblemMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        do {
            return try await next(request, context)
        } catch {
            return try Problem.from(error, logger: context.logger).response(from: request, context: context)
        }
    }
}
