import EngagedAPI
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import Models
import OpenAPIRuntime
import Storage

// The generated routing (`registerHandlers`, Generated/Server.swift) hands each operation's
// typed input to `Routes` (`APIProtocol`). What the generator does not check runs here, in front
// of it, as OpenAPI middlewares that know the operation: who may call it (`OperationAccess`),
// the path's, query's and headers' strict form (`RawRequestMiddleware`), and the body's
// (`JSONBodyMiddleware`). What a handler
// needs beyond its typed input (the caller, the body as it came) travels in `RequestScope`.

/// What a handler needs that its generated input does not carry, set by the middlewares for the
/// request's task.
enum RequestScope {
    /// Who sent the request: the backend (the API key) or a user's app (`AuthenticationMiddleware`);
    /// nil on the open routes.
    @TaskLocal static var caller: Caller?
    /// The body's bytes as they came (`JSONBodyMiddleware`): an idempotent event is recognised by
    /// their hash, not by how they decode.
    @TaskLocal static var bodyBytes: [UInt8] = []
    /// The request's query pairs as sent, in order, repeats included (`RawRequestMiddleware`):
    /// the generated input keeps one value of each name.
    @TaskLocal static var queryItems: [(key: Substring, value: Substring)] = []
    /// The request's header lines as sent: the generated input joins the lines of a name, and
    /// percent-decodes the value (an `Idempotency-Key` of `a%41` would become `aA`).
    @TaskLocal static var headerFields: HTTPFields = [:]
}

/// The credentials an operation takes: its `security` in the document.
enum OperationAccess: Equatable, Sendable {
    /// None: the probes and the metrics (`security: []`).
    case open
    /// The API key only (the document's default).
    case apiKey
    /// The API key, or a token of the path's user (`apiKey` or `userToken`).
    case apiKeyOrUserToken

    /// Each operation's access. An operation missing here takes the API key: a route added to the
    /// document and forgotten here is closed, never open (a test holds the table to the document).
    static let byOperation: [String: OperationAccess] = [
        "health": .open, "ready": .open, "metrics": .open,
        "getUser": .apiKey, "putUser": .apiKey, "getSchedule": .apiKey, "explain": .apiKey,
        "mintUserToken": .apiKey, "revokeUserTokens": .apiKey, "advanceClock": .apiKey,
        "postEvent": .apiKeyOrUserToken, "getPlan": .apiKeyOrUserToken, "registerDevice": .apiKeyOrUserToken,
        "listDevices": .apiKeyOrUserToken, "removeDevice": .apiKeyOrUserToken, "getInbox": .apiKeyOrUserToken,
        "readAllInbox": .apiKeyOrUserToken, "setInboxItemState": .apiKeyOrUserToken,
    ]

    static func of(_ operationID: String) -> OperationAccess { byOperation[operationID] ?? .apiKey }

    /// The operations open to a user's token that change something a deprecated legacy token may
    /// not change (it reads the inbox, the plan and the devices), with what they do.
    static let writes: [String: String] = [
        "postEvent": "send events", "registerDevice": "register a device", "removeDevice": "remove a device",
    ]
}

/// Checks the operation's credential (`OperationAccess`) before anything of the request is read,
/// so a bad body without a credential is 401, and charges the caller's rate limit. The API key
/// is compared in constant time (`APIKey`); a user token is judged as on every user
/// route (`UserCredentials.verdict`): 401 missing or invalid, 403 another user's.
struct AuthenticationMiddleware: ServerMiddleware {
    let users: UserCredentials

    func intercept(
        _ request: HTTPRequest, body: HTTPBody?, metadata: ServerRequestMetadata, operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        let header = request.headerFields[.authorization]
        let caller: Caller?
        switch OperationAccess.of(operationID) {
        case .open:
            caller = nil
        case .apiKey:
            guard let header else {
                throw Problem.unauthorized("missing Authorization header; send Authorization: Bearer <api key>")
            }
            guard let credential = APIKey.bearerCredential(header),
                APIKey.isAPIKey(credential, users.apiKey)
            else { throw Problem.unauthorized("the API key is not valid") }
            try users.limiter.charge(.apiKey, "", metrics: users.metrics)
            caller = .backend
        case .apiKeyOrUserToken:
            let pathUserID = UserID(String(metadata.pathParameters["id"] ?? ""))
            switch try await users.verdict(header, pathUserID: pathUserID) {
            case .apiKey:
                try users.limiter.charge(.apiKey, "", metrics: users.metrics)
                caller = .backend
            case .user(let userID):
                try users.limiter.charge(.user, userID.rawValue, metrics: users.metrics)
                caller = .user(userID)
            case .legacyUser(let userID):
                try users.limiter.charge(.user, userID.rawValue, metrics: users.metrics)
                // A deprecated HMAC user token never expires and cannot be revoked: it reads only.
                if let what = OperationAccess.writes[operationID] {
                    throw Problem.forbidden(
                        "a legacy user token reads only; \(what) with a signed user token or the API key")
                }
                caller = .legacyUser(userID)
            case .unauthorized(let detail): throw Problem.unauthorized(detail)
            case .forbidden(let detail): throw Problem.forbidden(detail)
            }
        }
        return try await RequestScope.$caller.withValue(caller) { try await next(request, body, metadata) }
    }
}

/// What the generated code loses of a request and of an answer, kept and restored, and the
/// checks that must come before the body is read:
/// - the query's pairs and the header lines as sent, for the handlers (`RequestScope`);
/// - the path's parameters as sent, checked before anything else of the request (the generated
///   input percent-decodes them: `al%69ce` would be `alice`): a user id, an inbox item, a device
///   token that is not one is 400 naming it;
/// - the operation's own preflight (`Routes.preflightChecks`): the query rules the generated
///   decoder does not keep (a parameter given twice, a value's form, and for the inbox and
///   revocation an unknown one: `ExplainQuery`, `InboxQuery`, `RevokeQuery`), the
///   `Idempotency-Key` header's, and the clock route's `--manual-clock`, each with the problem
///   that names it;
/// - `Accept` is not checked: every answer has one media type, and the generated code would check
///   it only after the handler has committed its change;
/// - the answer's header values as the handler wrote them: the generated code writes a header
///   as a URI component, so `ETag: W/"7"` would leave as `W%2F%227%22` and never match.
struct RawRequestMiddleware: ServerMiddleware {
    /// What a preflight check reads: the query's pairs, the header lines, the server's time.
    struct Preflight: Sendable {
        var queryItems: [(key: Substring, value: Substring)]
        var headerFields: HTTPFields
        var now: Instant
    }

    /// An operation's check before its body is read.
    typealias Check = @Sendable (Preflight) throws -> Void

    let checks: [String: Check]
    let now: @Sendable () -> Instant

    /// The answers' header parameters of the document whose values hold characters a URI
    /// component escapes.
    static let answerHeadersAsWritten: [HTTPField.Name] = [.eTag, .cacheControl]

    func intercept(
        _ request: HTTPRequest, body: HTTPBody?, metadata: ServerRequestMetadata, operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        try Self.checkPath(metadata.pathParameters)
        // Hummingbird's reading of the query, the one every rule was written against: a pair
        // without `=` is a name with an empty value.
        let items = URI(String(request.path ?? "/")).queryParameters.map { (key: $0.key, value: $0.value) }
        try checks[operationID]?(Preflight(queryItems: items, headerFields: request.headerFields, now: now()))
        var forwarded = request
        forwarded.headerFields[.accept] = nil
        // The generated decoder reads the query again: give it the pairs as read above, so what
        // the rules judged is what it decodes (it refuses a pair without `=`).
        forwarded.path = Self.path(request.path, query: items)
        var (response, answer) = try await RequestScope.$queryItems.withValue(items) {
            try await RequestScope.$headerFields.withValue(request.headerFields) {
                try await next(forwarded, body, metadata)
            }
        }
        for name in Self.answerHeadersAsWritten {
            if let encoded = response.headerFields[name], let written = encoded.removingPercentEncoding {
                response.headerFields[name] = written
            }
        }
        return (response, answer)
    }

    /// The path's parameters as sent: 400 naming one that is not what its route takes.
    static func checkPath(_ parameters: [String: Substring]) throws(Problem) {
        if let id = parameters["id"] { _ = try Routes.userID(String(id)) }
        if let item = parameters["item"] { _ = try Routes.inboxItemID(String(item)) }
        if let token = parameters["token"], case .failure(let error) = DeviceRegistration.normalizedToken(String(token))
        {
            throw Problem.badRequest(error.problem, field: "token")
        }
    }

    /// `path` with its query written again from `items`, percent-encoded.
    static func path(_ path: String?, query items: [(key: Substring, value: Substring)]) -> String? {
        guard let path, let mark = path.firstIndex(of: "?") else { return path }
        let allowed = CharacterSet.urlQueryAllowed.subtracting(CharacterSet(charactersIn: "&=+;"))
        let query = items.map { item in
            (String(item.key).addingPercentEncoding(withAllowedCharacters: allowed) ?? "") + "="
                + (String(item.value).addingPercentEncoding(withAllowedCharacters: allowed) ?? "")
        }
        return String(path[..<mark]) + (query.isEmpty ? "" : "?" + query.joined(separator: "&"))
    }
}

/// The body rules the generated decoder does not keep, checked after authentication:
/// - an operation whose body is required gets a JSON object: an empty body, or one that is not an
///   object, is 400 saying so;
/// - malformed JSON, duplicate keys, a trailing comma or nesting past
///   `JSONScanner.defaultMaximumDepth` are 400 naming where (Foundation's decoder takes the last
///   duplicate and forgives the comma);
/// - an operation whose body is optional reads an empty body as none.
///
/// Size, encoding, media type and time were judged before routing (`RequestBodyMiddleware`).
struct JSONBodyMiddleware: ServerMiddleware {
    /// The operations whose body the document requires: an empty one is 400 saying so.
    static let requiredBodies: Set<String> = [
        "putUser", "postEvent", "registerDevice", "setInboxItemState", "advanceClock",
    ]
    /// The operations whose body may be left out.
    static let optionalBodies: Set<String> = ["mintUserToken", "readAllInbox"]

    func intercept(
        _ request: HTTPRequest, body: HTTPBody?, metadata: ServerRequestMetadata, operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        var bytes: [UInt8] = []
        if let body { bytes = Array(try await ArraySlice(collecting: body, upTo: JSONBody.maxBytes)) }
        // An operation without a body in the document does not read one (revocation refuses one,
        // from `RequestScope.bodyBytes`).
        let reads = Self.requiredBodies.contains(operationID) || Self.optionalBodies.contains(operationID)
        guard reads, !bytes.isEmpty else {
            if reads, Self.requiredBodies.contains(operationID) {
                throw Problem.badRequest("the body is empty; a JSON object is expected")
            }
            return try await RequestScope.$bodyBytes.withValue(bytes) { try await next(request, nil, metadata) }
        }
        try JSONBody.check(bytes)
        return try await RequestScope.$bodyBytes.withValue(bytes) {
            try await next(request, HTTPBody(bytes), metadata)
        }
    }
}

extension Problem {
    /// The problem a route or a middleware threw, as it was thrown or as the generated code passed
    /// it on (`ServerError`); nil for any other error.
    static func thrown(_ error: any Error) -> Problem? {
        (error as? Problem) ?? ((error as? ServerError)?.underlyingError as? Problem)
    }

    /// The problem an error stands for when the request is at fault: a problem as thrown, or a
    /// body the generated decoder refused; nil for any other error.
    static func clientProblem(_ error: any Error) -> Problem? {
        if let problem = thrown(error) { return problem }
        if let decoding = (error as? ServerError)?.underlyingError as? DecodingError { return from(decoding: decoding) }
        return nil
    }

    /// The problem of an error the generated code raised or passed on (`ServerError`): a
    /// handler's or a middleware's problem as it was thrown, a body that did not decode as
    /// `from(decoding:)` names it, and the runtime's own refusals (a missing header or query
    /// parameter, a media type not offered) with their status and description.
    static func from(_ error: ServerError, logger: Logger) -> Problem {
        switch error.underlyingError {
        case let problem as Problem:
            return problem
        case let decoding as DecodingError:
            return from(decoding: decoding)
        case _
        where error.operationInput == nil && !(error.underlyingError is any HTTPResponseConvertible)
            && error.httpStatus == .internalServerError:
            // Raised while the generated code read the request, by a part of it without a status
            // of its own (the URI decoder): the request is at fault, not the server.
            return .badRequest("the request could not be read: \(error.causeDescription)")
        default:
            guard error.httpStatus.code < 500 else {
                logger.error(
                    "unhandled error",
                    metadata: ["operation": "\(error.operationID)", "error": "\(error.underlyingError)"])
                return .internalError("the server failed to answer; the request may be retried")
            }
            let status = error.httpStatus
            return Problem(
                slug: status == .badRequest ? "bad-request" : "http-\(status.code)", title: status.reasonPhrase,
                status: status, detail: error.causeDescription)
        }
    }
}

/// A value the server holds that the document's answer cannot carry (a kind or state it does not
/// list): the server's fault, answered 500 and logged with this detail.
struct APIAnswerError: Error, CustomStringConvertible {
    var detail: String
    var description: String { "an answer the document cannot carry: \(detail)" }
}
