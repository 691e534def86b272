import Hummingbird
import Models
import Runtime

/// `POST /v1/users/{id}/tokens` (mint) and `DELETE /v1/users/{id}/tokens` (revoke), with the API
/// key: a backend mints a token for the app of a user it has signed in, and revokes them all when
/// the user signs out everywhere or loses a phone.
extension Routes {
    /// 201 with the token and its expiry; 404 for a user the server does not know.
    @Sendable func mintUserToken(_ request: Request, context: EngagedRequestContext) async throws -> Response {
        let id = try Self.userID(context)
        let bytes = try await JSONBody.read(request)
        let body = bytes.isEmpty ? MintTokenBody() : try JSONBody.decode(MintTokenBody.self, from: bytes)
        try await perform { try await runtime.requireUser(id) }
        // Issued no earlier than the user's revocation instant (at most a second ahead of the
        // clock), so a token minted right after a revocation works at once.
        let now = runtime.clock.now()
        let revokedBefore = try await perform { try runtime.userTokensRevokedBefore(of: id) }
        let minted = try await environment.userTokens.mint(
            for: id, now: max(now, revokedBefore ?? now),
            ttlSeconds: body.ttlSeconds ?? environment.userTokenTTLSeconds)
        return JSONBody.response(.created, MintedTokenView(minted, userID: id))
    }

    /// 200 with the instant before which the user's tokens are now refused: `issuedBefore` of
    /// the query (an ISO 8601 instant, not after the server's clock), or else every token issued
    /// so far. Revocation only moves forward; 404 for an unknown user.
    @Sendable func revokeUserTokens(_ request: Request, context: EngagedRequestContext) async throws -> Response {
        let id = try Self.userID(context)
        guard try await JSONBody.read(request).isEmpty else {
            throw Problem.badRequest("this route takes no body; give issuedBefore in the query")
        }
        var issuedBefore: Instant?
        var seen: Set<Substring> = []
        for (name, value) in request.uri.queryParameters {
            guard seen.insert(name).inserted else {
                throw Problem.badRequest("the query parameter \(name) is given more than once", field: String(name))
            }
            guard name == "issuedBefore" else {
                throw Problem.badRequest("unknown query parameter \(name); expected issuedBefore", field: String(name))
            }
            guard let instant = Instant(iso8601: String(value)) else {
                throw Problem.badRequest(
                    "issuedBefore is an ISO 8601 instant such as 2027-03-01T06:00:00Z", field: "issuedBefore")
            }
            guard instant <= runtime.clock.now() + 1 else {
                throw Problem.invalidField(
                    "issuedBefore", "must not be later than the server's clock (\(runtime.clock.now().iso8601))")
            }
            issuedBefore = instant
        }
        let inForce = try await perform { try await runtime.revokeUserTokens(of: id, issuedBefore: issuedBefore) }
        return JSONBody.response(.ok, RevokedTokensView(userID: id, tokensIssuedBefore: inForce.iso8601))
    }
}

/// `POST /v1/users/{id}/tokens`: an optional `ttlSeconds`; an empty body takes the default.
struct MintTokenBody: Decodable {
    /// A minted token lives at least a minute and at most 30 days.
    static let ttlRange = 60...2_592_000
    var ttlSeconds: Int64?

    init() {}

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: AnyKey.self)
        try c.rejectKeys(outside: ["ttlSeconds"], at: decoder.codingPath)
        ttlSeconds = try c.integer("ttlSeconds", in: Self.ttlRange, at: decoder.codingPath).map(Int64.init)
    }
}

/// A minted token, as `POST /v1/users/{id}/tokens` answers it.
struct MintedTokenView: Encodable {
    var token: String
    var tokenType = "Bearer"
    var userID: UserID
    var keyID: String
    /// ISO 8601 UTC.
    var issuedAt: String
    var expiresAt: String
    var expiresInSeconds: Int64

    init(_ minted: MintedUserToken, userID: UserID) {
        token = minted.token
        self.userID = userID
        keyID = minted.keyID
        issuedAt = minted.issuedAt.iso8601
        expiresAt = minted.expiresAt.iso8601
        expiresInSeconds = minted.expiresAt.secondsSinceEpoch - minted.issuedAt.secondsSinceEpoch
    }
}

/// `DELETE /v1/users/{id}/tokens`: the user's tokens issued before this instant are refused.
struct RevokedTokensView: Encodable {
    var userID: UserID
    var tokensIssuedBefore: String
}
