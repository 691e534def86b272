import EngagedAPI
import Models
import Runtime

/// `POST /v1/users/{id}/tokens` (mint) and `DELETE /v1/users/{id}/tokens` (revoke), with the API
/// key: a backend mints a token for the app of a user it has signed in, and revokes them all when
/// the user signs out everywhere or loses a phone.
extension Routes {
    /// A minted token lives at least a minute and at most 30 days.
    static let userTokenTTLRange = 60...2_592_000

    /// 201 with the token and its expiry; 404 for a user the server does not know. An empty body
    /// takes the server's lifetime (`--user-token-ttl-seconds`).
    func mintUserToken(_ input: Operations.MintUserToken.Input) async throws -> Operations.MintUserToken.Output {
        let id = try Self.userID(input.path.id)
        var ttlSeconds = environment.userTokenTTLSeconds
        if case .json(let body)? = input.body, let requested = body.ttlSeconds {
            guard Self.userTokenTTLRange.contains(requested) else {
                throw Problem.invalidField(
                    "ttlSeconds",
                    "must be in \(Self.userTokenTTLRange.lowerBound)...\(Self.userTokenTTLRange.upperBound), got \(requested)"
                )
            }
            ttlSeconds = Int64(requested)
        }
        try await perform { try await runtime.requireUser(id) }
        // Issued no earlier than the user's revocation instant (at most a second ahead of the
        // clock), so a token minted right after a revocation works at once.
        let now = runtime.clock.now()
        let revokedBefore = try await perform { try runtime.userTokensRevokedBefore(of: id) }
        let minted = try await environment.userTokens.mint(
            for: id, now: max(now, revokedBefore ?? now), ttlSeconds: ttlSeconds)
        return .created(
            .init(
                body: .json(
                    .init(
                        token: minted.token, tokenType: .bearer, userID: id.rawValue, keyID: minted.keyID,
                        issuedAt: minted.issuedAt.date, expiresAt: minted.expiresAt.date,
                        expiresInSeconds: Int(minted.expiresAt - minted.issuedAt)))))
    }

    /// 200 with the instant before which the user's tokens are now refused: `issuedBefore` of
    /// the query (`RevokeQuery`), or else every token issued so far. Revocation only moves
    /// forward; 404 for an unknown user.
    func revokeUserTokens(_ input: Operations.RevokeUserTokens.Input) async throws
        -> Operations.RevokeUserTokens.Output
    {
        let id = try Self.userID(input.path.id)
        guard RequestScope.bodyBytes.isEmpty else {
            throw Problem.badRequest("this route takes no body; give issuedBefore in the query")
        }
        let query = try RevokeQuery(RequestScope.queryItems, now: runtime.clock.now())
        let inForce = try await perform {
            try await runtime.revokeUserTokens(of: id, issuedBefore: query.issuedBefore)
        }
        return .ok(.init(body: .json(.init(userID: id.rawValue, tokensIssuedBefore: inForce.date))))
    }
}

/// The query of `DELETE /v1/users/{id}/tokens`: at most one `issuedBefore`, an ISO 8601 instant
/// not after the server's clock; any other parameter is refused. 400 (422 for a time ahead of
/// the clock) naming it.
struct RevokeQuery: Equatable {
    var issuedBefore: Instant?

    init(_ parameters: [(key: Substring, value: Substring)], now: Instant) throws(Problem) {
        var seen: Set<Substring> = []
        for (name, value) in parameters {
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
            guard instant <= now + 1 else {
                throw Problem.invalidField("issuedBefore", "must not be later than the server's clock (\(now.iso8601))")
            }
            issuedBefore = instant
        }
    }
}
