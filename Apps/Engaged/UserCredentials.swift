import Foundation
import Hummingbird
import Models
import Runtime

/// The user routes' `Authorization: Bearer <credential>`: the API key (a backend, any user), or a
/// user token for the user of the path (an app reading its own inbox and plan, sending its own
/// events, and registering its own push token). `AuthenticationMiddleware` asks it of the
/// operations that take both (`OperationAccess.apiKeyOrUserToken`) and passes the caller on
/// (`RequestScope.caller`).
///
/// A user token is a signed JWT (`UserTokenAuthority`), refused when expired, not valid yet,
/// signed by a key or an algorithm this server does not take, or issued before the user's tokens
/// were revoked (`DELETE /v1/users/{id}/tokens`). With `--legacy-user-tokens` the deprecated HMAC
/// tokens (`LegacyUserTokens`) are taken too: a bare hex token, or `<userID>.<token>`.
///
/// Missing, malformed, wrong, expired or revoked: 401 with `WWW-Authenticate: Bearer`. A valid
/// token of another user: 403. The other `/v1` routes take the API key only: a user token there
/// is a wrong key (401).
struct UserCredentials: Sendable {
    let apiKey: String
    let userTokens: UserTokenAuthority
    let legacyUserTokens: LegacyUserTokens?
    let runtime: EngineRuntime
    let limiter: RateLimiter
    let metrics: ServerMetrics

    /// The credentials over the server's keys, store and limits.
    init(_ environment: ServerEnvironment) {
        self.init(
            apiKey: environment.apiKey, userTokens: environment.userTokens,
            legacyUserTokens: environment.legacyUserTokens, runtime: environment.runtime,
            limiter: environment.rateLimiter, metrics: environment.metrics)
    }

    init(
        apiKey: String, userTokens: UserTokenAuthority, legacyUserTokens: LegacyUserTokens?, runtime: EngineRuntime,
        limiter: RateLimiter, metrics: ServerMetrics
    ) {
        self.apiKey = apiKey
        self.userTokens = userTokens
        self.legacyUserTokens = legacyUserTokens
        self.runtime = runtime
        self.limiter = limiter
        self.metrics = metrics
    }

    func verdict(_ header: String?, pathUserID: UserID) async throws -> InboxAccess {
        guard let header else {
            return .unauthorized(
                "missing Authorization header; send Authorization: Bearer <api key> or Bearer <user token>")
        }
        guard let credential = APIKey.bearerCredential(header) else {
            return .unauthorized("the Authorization header is not Bearer <api key> or Bearer <user token>")
        }
        if APIKey.isAPIKey(credential, apiKey) { return .apiKey }
        if let legacyUserTokens, Self.isLegacyShaped(credential) {
            return legacyUserTokens.verdict(credential, pathUserID: pathUserID)
        }
        switch await userTokens.verify(credential, now: runtime.clock.now()) {
        case .invalid(let reason): return .unauthorized(reason)
        case .valid(let userID, let issuedAt):
            let revokedBefore: Instant?
            do { revokedBefore = try runtime.userTokensRevokedBefore(of: userID) } catch {
                throw Problem.internalError("the server failed to answer; the request may be retried")
            }
            if let revokedBefore, issuedAt < revokedBefore {
                return .unauthorized("the user token was revoked: tokens issued before \(revokedBefore.iso8601) are")
            }
            guard userID == pathUserID else {
                return .forbidden("the user token is for another user; it opens only that user's routes")
            }
            return .user(userID)
        }
    }

    /// A legacy token ends in 64 hex digits (an HS256 JWT's signature is 43 base64url characters).
    static func isLegacyShaped(_ credential: Substring) -> Bool {
        let token = credential.lastIndex(of: ".").map { credential[credential.index(after: $0)...] } ?? credential
        return token.utf8.count == 64
            && token.utf8.allSatisfy {
                (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0)
                    || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0)
            }
    }
}

extension LegacyUserTokens {
    /// The verdict on a legacy credential: a bare token is checked against the path's user;
    /// `<userID>.<token>` names its user (ids may contain dots; the token never does, so the last
    /// dot splits them). A bare token of another user the server knows is 403.
    func verdict(_ credential: Substring, pathUserID: UserID) -> InboxAccess {
        let named = credential.lastIndex(of: ".").map {
            (credential[..<$0], credential[credential.index(after: $0)...])
        }
        let claimedUserID = named.map { UserID(String($0.0)) } ?? pathUserID
        guard isValid(named?.1 ?? credential, for: claimedUserID) else {
            if named == nil, owner(of: credential) != nil {
                return .forbidden("the user token is for another user; it opens only that user's routes")
            }
            return .unauthorized("neither the API key nor a user token of this user")
        }
        guard claimedUserID == pathUserID else {
            return .forbidden("the user token is for another user; it opens only that user's routes")
        }
        return .legacyUser(pathUserID)
    }
}

/// Who a request was authenticated as, for the routes open to both the backend and the user.
enum Caller: Equatable, Sendable {
    /// The API key.
    case backend
    /// A valid signed token of this user (their app).
    case user(UserID)
    /// A valid deprecated HMAC token of this user (`--legacy-user-tokens`): it reads the inbox,
    /// the plan and the devices; it does not send events or register or remove devices.
    case legacyUser(UserID)
}

/// What `UserCredentials` decides about a user route's credential, with the detail of a refusal.
enum InboxAccess: Equatable, Sendable {
    /// The backend's API key.
    case apiKey
    /// A valid signed token of this user.
    case user(UserID)
    /// A valid legacy token of this user.
    case legacyUser(UserID)
    case unauthorized(String)
    case forbidden(String)
}

extension Problem {
    /// The credential is valid but not for this resource (another user's token).
    static func forbidden(_ detail: String) -> Problem {
        Problem(slug: "forbidden", title: "Forbidden", status: .forbidden, detail: detail)
    }
}
