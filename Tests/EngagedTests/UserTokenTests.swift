import Crypto
import Foundation
import Hummingbird
import HummingbirdTesting
import Models
import Storage
import Testing

@testable import engaged

/// A JWT with `header` and `claims` (JSON), HMAC-SHA256-signed with `secret` (or unsigned):
/// tokens a careless or hostile client might send.
private func handMadeToken(header: String, claims: String, secret: [UInt8]?) -> String {
    func base64URL(_ bytes: some Sequence<UInt8>) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }
    let input = base64URL(Array(header.utf8)) + "." + base64URL(Array(claims.utf8))
    guard let secret else { return input + "." }
    let signature = HMAC<SHA256>.authenticationCode(for: Array(input.utf8), using: SymmetricKey(data: secret))
    return input + "." + base64URL(signature)
}

private let startSeconds = TestServer.start.secondsSinceEpoch
private let signingSecret = TestServer.userTokenKeys.keys[0].secret
private func claims(sub: String = "ana", iat: Int64 = startSeconds, exp: Int64 = startSeconds + 600) -> String {
    #"{"sub":"\#(sub)","iat":\#(iat),"exp":\#(exp)}"#
}

@Suite("engaged user tokens")
struct UserTokenTests {
    let authority: UserTokenAuthority

    init() async { authority = await UserTokenAuthority(keys: TestServer.userTokenKeys) }

    @Test func aMintedTokenIsValidForItsUserUntilItExpires() async throws {
        let minted = try await authority.mint(for: "ana", now: TestServer.start, ttlSeconds: 600)
        #expect(minted.keyID == "k2")
        #expect(minted.expiresAt == TestServer.start + 600)
        let token = Substring(minted.token)
        #expect(
            await authority.verify(token, now: TestServer.start) == .valid(userID: "ana", issuedAt: TestServer.start))
        #expect(
            await authority.verify(token, now: TestServer.start + 599)
                == .valid(userID: "ana", issuedAt: TestServer.start))
        guard case .invalid(let reason) = await authority.verify(token, now: TestServer.start + 600) else {
            Issue.record("a token is expired at its exp")
            return
        }
        #expect(reason.contains("expired"))
    }

    @Test func aRememberedTokenIsStillJudgedOnTheClock() async throws {
        let token = Substring(try await authority.mint(for: "ana", now: TestServer.start, ttlSeconds: 600).token)
        #expect(
            await authority.verify(token, now: TestServer.start) == .valid(userID: "ana", issuedAt: TestServer.start))
        // Second use: from memory, and its expiry and start still count.
        #expect(
            await authority.verify(token, now: TestServer.start + 10)
                == .valid(userID: "ana", issuedAt: TestServer.start))
        #expect(
            await authority.verify(token, now: TestServer.start + 600)
                != .valid(userID: "ana", issuedAt: TestServer.start))
        #expect(
            await authority.verify(token, now: TestServer.start - 61)
                != .valid(userID: "ana", issuedAt: TestServer.start))
        // A refused token is not remembered: one changed byte is refused every time.
        var bytes = Array(token.utf8)
        bytes[bytes.count - 2] = bytes[bytes.count - 2] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        let forged = Substring(String(decoding: bytes, as: UTF8.self))
        for _ in 0..<2 {
            #expect(
                await authority.verify(forged, now: TestServer.start)
                    != .valid(userID: "ana", issuedAt: TestServer.start))
        }
    }

    @Test func theMemoryOfTokensIsBounded() {
        let memory = SignedTokens(capacity: 3)
        let signed = SignedToken(userID: "ana", issuedAt: TestServer.start, expiresAt: TestServer.start + 1)
        for index in 0..<3 { memory.keep("t\(index)", signed) }
        #expect(memory.find("t0") == signed)
        memory.keep("t3", signed)
        #expect(memory.find("t0") == nil)
        #expect(memory.find("t3") == signed)
    }

    @Test func theKeyBeforeARotationStillVerifiesAndAnUnknownOneDoesNot() async throws {
        let old = handMadeToken(
            header: #"{"alg":"HS256","typ":"JWT","kid":"k1"}"#, claims: claims(),
            secret: TestServer.userTokenKeys.keys[1].secret)
        #expect(
            await authority.verify(Substring(old), now: TestServer.start)
                == .valid(userID: "ana", issuedAt: TestServer.start))
        // After the rotation ends (k1 dropped), the same token is refused.
        let rotated = await UserTokenAuthority(keys: UserTokenKeys(keys: [TestServer.userTokenKeys.keys[0]]))
        #expect(
            await rotated.verify(Substring(old), now: TestServer.start)
                != .valid(userID: "ana", issuedAt: TestServer.start))
    }

    /// Each is refused (401) whatever its claims say.
    @Test(arguments: [
        ("alg none", handMadeToken(header: #"{"alg":"none","kid":"k2"}"#, claims: claims(), secret: nil)),
        (
            "alg none, signed",
            handMadeToken(header: #"{"alg":"none","kid":"k2"}"#, claims: claims(), secret: signingSecret)
        ),
        (
            "RS256 header over an HMAC",
            handMadeToken(header: #"{"alg":"RS256","kid":"k2"}"#, claims: claims(), secret: signingSecret)
        ),
        (
            "HS512 header",
            handMadeToken(header: #"{"alg":"HS512","kid":"k2"}"#, claims: claims(), secret: signingSecret)
        ),
        ("no kid", handMadeToken(header: #"{"alg":"HS256"}"#, claims: claims(), secret: signingSecret)),
        ("unknown kid", handMadeToken(header: #"{"alg":"HS256","kid":"k9"}"#, claims: claims(), secret: signingSecret)),
        (
            "critical extension",
            handMadeToken(
                header: #"{"alg":"HS256","kid":"k2","crit":["exp"]}"#, claims: claims(), secret: signingSecret)
        ),
        (
            "another key's signature",
            handMadeToken(
                header: #"{"alg":"HS256","kid":"k2"}"#, claims: claims(), secret: Array(repeating: 1, count: 32))
        ),
        (
            "kid of k1, signed by k2",
            handMadeToken(header: #"{"alg":"HS256","kid":"k1"}"#, claims: claims(), secret: signingSecret)
        ),
        (
            "expired",
            handMadeToken(
                header: #"{"alg":"HS256","kid":"k2"}"#, claims: claims(exp: startSeconds), secret: signingSecret)
        ),
        (
            "issued in the future",
            handMadeToken(
                header: #"{"alg":"HS256","kid":"k2"}"#, claims: claims(iat: startSeconds + 61), secret: signingSecret)
        ),
        (
            "not before, in the future",
            handMadeToken(
                header: #"{"alg":"HS256","kid":"k2"}"#,
                claims:
                    #"{"sub":"ana","iat":\#(startSeconds),"exp":\#(startSeconds + 600),"nbf":\#(startSeconds + 61)}"#,
                secret: signingSecret)
        ),
        (
            "no exp",
            handMadeToken(
                header: #"{"alg":"HS256","kid":"k2"}"#, claims: #"{"sub":"ana","iat":\#(startSeconds)}"#,
                secret: signingSecret)
        ),
        (
            "no iat",
            handMadeToken(
                header: #"{"alg":"HS256","kid":"k2"}"#, claims: #"{"sub":"ana","exp":\#(startSeconds + 600)}"#,
                secret: signingSecret)
        ),
        (
            "a subject that is no user id",
            handMadeToken(
                header: #"{"alg":"HS256","kid":"k2"}"#, claims: claims(sub: "ana/../bob"), secret: signingSecret)
        ),
        ("two segments", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhbmEifQ"),
        ("header not base64", "!!!.e30.abc"),
        (
            "crit given twice, null first",
            handMadeToken(
                header: #"{"alg":"HS256","kid":"k2","crit":null,"crit":["x"]}"#, claims: claims(), secret: signingSecret
            )
        ),
        (
            "crit null",
            handMadeToken(header: #"{"alg":"HS256","kid":"k2","crit":null}"#, claims: claims(), secret: signingSecret)
        ),
        (
            "alg given twice",
            handMadeToken(header: #"{"alg":"none","alg":"HS256","kid":"k2"}"#, claims: claims(), secret: signingSecret)
        ),
        (
            "exp past the year 9999",
            handMadeToken(
                header: #"{"alg":"HS256","kid":"k2"}"#, claims: #"{"sub":"ana","iat":\#(startSeconds),"exp":1e30}"#,
                secret: signingSecret)
        ),
        (
            "iat far before year 1",
            handMadeToken(
                header: #"{"alg":"HS256","kid":"k2"}"#,
                claims: #"{"sub":"ana","iat":-1e30,"exp":\#(startSeconds + 600)}"#, secret: signingSecret)
        ),
        (
            "nbf out of range",
            handMadeToken(
                header: #"{"alg":"HS256","kid":"k2"}"#,
                claims: #"{"sub":"ana","iat":\#(startSeconds),"exp":\#(startSeconds + 600),"nbf":1e19}"#,
                secret: signingSecret)
        ),
    ])
    func aTokenThatIsNotOursIsRefused(_ name: String, _ token: String) async {
        if case .valid = await authority.verify(Substring(token), now: TestServer.start) {
            Issue.record("\(name): accepted")
        }
    }

    @Test func aTamperedPayloadIsRefused() async throws {
        let minted = try await authority.mint(for: "ana", now: TestServer.start, ttlSeconds: 600).token
        let parts = minted.split(separator: ".")
        let bob = Data(claims(sub: "bob").utf8).base64EncodedString().replacingOccurrences(of: "=", with: "")
        let tampered = "\(parts[0]).\(bob).\(parts[2])"
        if case .valid = await authority.verify(Substring(tampered), now: TestServer.start) {
            Issue.record("a payload changed under its signature was accepted")
        }
    }

    @Test(arguments: [
        ("", "ENGAGED_USER_TOKEN_KEYS: key 1 is not kid:secret"),
        ("k1", "ENGAGED_USER_TOKEN_KEYS: key 1 is not kid:secret"),
        ("k1:short", "key 1 (k1): a secret is at least 32 bytes, got 5"),
        (":0123456789abcdef0123456789abcdef", "key 1: a key id is 1 to 64 characters"),
        ("k1:0123456789abcdef0123456789abcdef,k1:0123456789abcdef0123456789abcdeX", "key 2: key id k1 is given twice"),
        ("k1:0123456789abcdef0123456789abcdef,", "key 2 is not kid:secret"),
    ])
    func badKeysAreRefusedNamingTheKeyNotItsSecret(_ text: String, _ message: String) {
        #expect(throws: ConfigurationError.self) { try UserTokenKeys.parse(text) }
        do { _ = try UserTokenKeys.parse(text) } catch {
            #expect(error.description.contains(message), "\(error.description)")
            #expect(!error.description.contains("0123456789abcdef0123456789abcdef"))
        }
    }

    @Test func secretsShorterThan32BytesAreRefused() throws {
        let keys = "k1:" + String(repeating: "s", count: 32)
        let good = ["ENGAGED_API_KEY": String(repeating: "a", count: 32), "ENGAGED_USER_TOKEN_KEYS": keys]
        let secrets = try ServerSecrets(good, legacyUserTokens: false)
        #expect(secrets.userTokenKeys.signing.id == "k1")
        #expect(secrets.legacyUserTokenSecret == nil)
        for (name, value) in [("ENGAGED_API_KEY", "ci-key"), ("ENGAGED_API_KEY", ""), ("ENGAGED_USER_TOKEN_KEYS", "")] {
            var environment = good
            environment[name] = value
            #expect(throws: ConfigurationError.self) { try ServerSecrets(environment, legacyUserTokens: false) }
        }
        #expect(throws: ConfigurationError.self) { try ServerSecrets(good, legacyUserTokens: true) }
        var legacy = good
        legacy["ENGAGED_USER_TOKEN_SECRET"] = "short"
        #expect(throws: ConfigurationError.self) { try ServerSecrets(legacy, legacyUserTokens: true) }
    }
}

@Suite("engaged token routes")
struct TokenRouteTests {
    @Test func theBackendMintsATokenThatOpensTheInboxUntilItExpires() async throws {
        let server = try await TestServer()
        try await server.run(.live) { client in
            #expect(try await client.send(.put, "/v1/users/ana", berlin).status == .created)
            let minted = try await client.send(.post, "/v1/users/ana/tokens", #"{"ttlSeconds": 120}"#)
            #expect(minted.status == .created, "\(minted.text)")
            let token = try #require(minted.json["token"] as? String)
            #expect(minted.json["tokenType"] as? String == "Bearer")
            #expect(minted.json["keyID"] as? String == "k2")
            #expect(minted.json["expiresInSeconds"] as? Int == 120)
            #expect(minted.json["expiresAt"] as? String == (TestServer.start + 120).iso8601)
            #expect(try await client.send(.get, "/v1/users/ana/inbox", headers: headers(key: token)).status == .ok)
            // The server's clock judges expiry.
            #expect(try await client.send(.post, "/v1/admin/clock", #"{"advanceSeconds": 120}"#).status == .ok)
            let expired = try await client.send(.get, "/v1/users/ana/inbox", headers: headers(key: token))
            expired.expectProblem(401, "unauthorized", detailContains: "expired")
            #expect(expired.headers[.wwwAuthenticate] == "Bearer")
            // An empty body takes the server's default lifetime.
            let byDefault = try await client.send(.post, "/v1/users/ana/tokens")
            #expect(byDefault.json["expiresInSeconds"] as? Int == 3_600)
        }
    }

    @Test func revokingRefusesEveryTokenIssuedSoFarButNotTheNextOnes() async throws {
        let server = try await TestServer()
        try await server.run(.live) { client in
            #expect(try await client.send(.put, "/v1/users/ana", berlin).status == .created)
            #expect(try await client.send(.put, "/v1/users/bob", berlin).status == .created)
            let before = try #require(try await client.send(.post, "/v1/users/ana/tokens").json["token"] as? String)
            let bobs = try #require(try await client.send(.post, "/v1/users/bob/tokens").json["token"] as? String)
            let revoked = try await client.send(.delete, "/v1/users/ana/tokens")
            #expect(revoked.status == .ok, "\(revoked.text)")
            #expect(revoked.json["tokensIssuedBefore"] as? String == (TestServer.start + 1).iso8601)
            let refused = try await client.send(.get, "/v1/users/ana/inbox", headers: headers(key: before))
            refused.expectProblem(401, "unauthorized", detailContains: "revoked")
            // Another user's tokens are untouched; a token minted right after works at once.
            #expect(try await client.send(.get, "/v1/users/bob/inbox", headers: headers(key: bobs)).status == .ok)
            let after = try #require(try await client.send(.post, "/v1/users/ana/tokens").json["token"] as? String)
            #expect(try await client.send(.get, "/v1/users/ana/inbox", headers: headers(key: after)).status == .ok)
            // An earlier instant changes nothing: revocation moves forward only.
            let earlier = try await client.send(.delete, "/v1/users/ana/tokens?issuedBefore=2027-01-01T00:00:00Z")
            #expect(earlier.json["tokensIssuedBefore"] as? String == (TestServer.start + 1).iso8601)
            #expect(try await client.send(.get, "/v1/users/ana/inbox", headers: headers(key: after)).status == .ok)
        }
    }

    @Test func badMintAndRevokeRequestsChangeNothing() async throws {
        let server = try await TestServer()
        try await server.run(.live) { client in
            #expect(try await client.send(.put, "/v1/users/ana", berlin).status == .created)
            try await client.send(.post, "/v1/users/nobody/tokens").expectProblem(404, "not-found")
            try await client.send(.delete, "/v1/users/nobody/tokens").expectProblem(404, "not-found")
            try await client.send(.post, "/v1/users/ana/tokens", #"{"ttlSeconds": 59}"#)
                .expectProblem(422, "invalid-field", field: "ttlSeconds")
            try await client.send(.post, "/v1/users/ana/tokens", #"{"ttlSeconds": 2592001}"#)
                .expectProblem(422, "invalid-field", field: "ttlSeconds")
            try await client.send(.post, "/v1/users/ana/tokens", #"{"ttl": 60}"#)
                .expectProblem(422, "invalid-field", field: "ttl")
            try await client.send(.post, "/v1/users/ana/tokens", "not json").expectProblem(400, "bad-request")
            try await client.send(.delete, "/v1/users/ana/tokens?issuedBefore=yesterday")
                .expectProblem(400, "bad-request", field: "issuedBefore")
            try await client.send(.delete, "/v1/users/ana/tokens?issuedBefore=2030-01-01T00:00:00Z")
                .expectProblem(422, "invalid-field", field: "issuedBefore")
            try await client.send(.delete, "/v1/users/ana/tokens?before=2027-01-01T00:00:00Z")
                .expectProblem(400, "bad-request", field: "before")
            try await client.send(.delete, "/v1/users/ana/tokens", #"{"issuedBefore": "2027-01-01T00:00:00Z"}"#)
                .expectProblem(400, "bad-request", detailContains: "no body")
            #expect(try server.store.tokensRevokedBefore(userID: "ana") == nil)
            // Minting and revoking take the API key only: a user token is a wrong key there.
            let token = try await userToken("ana")
            try await client.send(.post, "/v1/users/ana/tokens", headers: headers(key: token))
                .expectProblem(401, "unauthorized")
            try await client.send(.delete, "/v1/users/ana/tokens", headers: headers(key: token))
                .expectProblem(401, "unauthorized")
            #expect(try server.store.tokensRevokedBefore(userID: "ana") == nil)
        }
    }
}
