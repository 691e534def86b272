import EngagedAPI
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import Models
import OpenAPIRuntime

// The generated routing (`registerHandlers`, Generated/Server.swift) hands each operation's
// typed input to `Routes` (`APIProtocol`). What the generator does not check runs here, in front
// of it, as OpenAPI middlewares that know the operation: who may call it (`OperationAccess`),
// the query's strict form (`QueryRules`), and the body's (`JSONBodyMiddleware`). What a handler
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
    /// The request's header lines as sent: the generated input keeps the first of a name, and
    /// percent-decodes it (an `Idempotency-Key` of `a%41` would become `aA`).
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
                caller = .legacyUser(userID)
            case .unauthorized(let detail): throw Problem.unauthorized(detail)
            case .forbidden(let detail): throw Problem.forbidden(detail)
            }
        }
        return try await RequestScope.$caller.withValue(caller) { try await next(request, body, metadata) }
    }
}

/// What the generated code loses of a request and of an answer, kept and restored:
/// - the query's pairs and the header lines as sent, for the handlers (`RequestScope`);
/// - the query rules the generated decoder does not keep: a parameter given twice, or one the
///   operation does not take, is 400 naming it, and each value's form is checked with the problem
///   that names it (`ExplainQuery`, `InboxQuery`, `RevokeQuery`) before the generated decoder
///   reads it; operations without a rule take their query as the generated code reads it;
/// - the answer's header values as the handler wrote them: the generated code writes a header
///   as a URI component, so `ETag: W/"7"` would leave as `W%2F%227%22` and never match.
struct RawRequestMiddleware: ServerMiddleware {
    /// Checks the query of an operation at the server's time.
    typealias QueryRule = @Sendable ([(key: Substring, value: Substring)], Instant) throws -> Void

    let queryRules: [String: QueryRule]
    let now: @Sendable () -> Instant

    /// The answers' header parameters of the document whose values hold characters a URI
    /// component escapes.
    static let answerHeadersAsWritten: [HTTPField.Name] = [.eTag, .cacheControl]

    func intercept(
        _ request: HTTPRequest, body: HTTPBody?, metadata: ServerRequestMetadata, operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        let items = URI(String(request.path ?? "/")).queryParameters.map { (key: $0.key, value: $0.value) }
        if let rule = queryRules[operationID] { try rule(items, now()) }
        var (response, answer) = try await RequestScope.$queryItems.withValue(items) {
            try await RequestScope.$headerFields.withValue(request.headerFields) {
                try await next(request, body, metadata)
            }
        }
        for name in Self.answerHeadersAsWritten {
            if let encoded = response.headerFields[name], let written = encoded.removingPercentEncoding {
                response.headerFields[name] = written
            }
        }
        return (response, answer)
    }
}

/// The body rules the generated decoder does not keep, checked after authentication:
/// - an operation whose body is required gets a JSON object: an empty body, or one that is not an
///   object, is 400 saying so;
/// - duplicate keys, a trailing comma or nesting past `StrictJSON.maximumDepth` are 400 naming
///   where (Foundation's decoder takes the last duplicate and forgives the comma);
/// - an operation whose body is optional reads an empty body as none.
///
/// Size, encoding, media type and time were judged before routing (`RequestBodyMiddleware`).
struct JSONBodyMiddleware: ServerMiddleware {
    /// The operations whose body the document requires: an empty one is 400 saying so.
    static let requiredBodies: Set<String> = [
        "putUser", "postEvent", "registerDevice", "setInboxItemState", "advanceClock",
    ]

    func intercept(
        _ request: HTTPRequest, body: HTTPBody?, metadata: ServerRequestMetadata, operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        var bytes: [UInt8] = []
        if let body { bytes = Array(try await ArraySlice(collecting: body, upTo: JSONBody.maxBytes)) }
        guard !bytes.isEmpty else {
            if Self.requiredBodies.contains(operationID) {
                throw Problem.badRequest("the body is empty; a JSON object is expected")
            }
            return try await next(request, nil, metadata)
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
