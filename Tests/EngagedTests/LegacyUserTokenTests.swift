import Foundation
import Hummingbird
import HummingbirdTesting
import Models
import Testing

@testable import engaged

/// The deprecated HMAC tokens, taken only with `--legacy-user-tokens`.
@Suite("engaged legacy user tokens")
struct LegacyUserTokenTests {
    static let secret = "test-legacy-user-token-secret-0123456789"
    static let tokens = LegacyUserTokens(secret: secret)

    @Test func aTokenIsTheLowercaseHexHMACSHA256OfTheUserID() {
        // RFC 4231-style known answer (the widely published HMAC-SHA256 example).
        let tokens = LegacyUserTokens(secret: "key")
        let fox: UserID = "The quick brown fox jumps over the lazy dog"
        #expect(tokens.token(for: fox) == "f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8")
        #expect(tokens.isValid("f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8", for: fox))
        #expect(!tokens.isValid("F7BC83F430538424B13298E6AA6FB143EF4D59A14946175997479DBC2D1A3CD8", for: fox))
        #expect(!tokens.isValid("f7bc83f4", for: fox))
    }

    static let cases: [(header: String, pathUserID: UserID, expected: InboxAccess)] = [
        ("Bearer " + tokens.token(for: "a.b"), "a.b", .legacyUser("a.b")),
        ("Bearer a.b." + tokens.token(for: "a.b"), "a.b", .legacyUser("a.b")),
        ("Bearer a.b." + tokens.token(for: "a.b"), "a", .forbidden("")),
        ("Token " + tokens.token(for: "ana"), "ana", .unauthorized("")),
        ("Bearer " + TestServer.apiKey, "ana", .apiKey),
    ]

    @Test(arguments: cases.indices)
    func credentialsAreJudgedByTheirUser(index: Int) async throws {
        let (header, pathUserID, expected) = Self.cases[index]
        let server = try await TestServer()
        let credentials = UserCredentials(
            apiKey: TestServer.apiKey, userTokens: server.environment.userTokens, legacyUserTokens: Self.tokens,
            runtime: server.environment.runtime, limiter: RateLimiter(settings: .off), metrics: ServerMetrics())
        let verdict = try await credentials.verdict(header, pathUserID: pathUserID)
        switch (verdict, expected) {
        case (.forbidden, .forbidden), (.unauthorized, .unauthorized): break
        default: #expect(verdict == expected)
        }
    }

    @Test func legacyTokensOpenTheInboxOnlyWithTheFlag() async throws {
        var server = try await TestServer()
        server.environment.legacyUserTokens = Self.tokens
        try await server.run(.live) { client in
            #expect(try await client.send(.put, "/v1/users/ana", berlin).status == .created)
            #expect(try await client.send(.put, "/v1/users/bob", berlin).status == .created)
            let ana = Self.tokens.token(for: "ana")
            #expect(try await client.send(.get, "/v1/users/ana/inbox", headers: headers(key: ana)).status == .ok)
            #expect(
                try await client.send(.get, "/v1/users/ana/inbox", headers: headers(key: "ana." + ana)).status == .ok)
            // bob's bare token is known (bob was created after the server started): 403.
            let bob = Self.tokens.token(for: "bob")
            try await client.send(.get, "/v1/users/ana/inbox", headers: headers(key: bob))
                .expectProblem(403, "forbidden")
            // They read; they do not send events (they never expire and cannot be revoked).
            #expect(try await client.send(.get, "/v1/users/ana/plan", headers: headers(key: ana)).status == .ok)
            try await client.send(.post, "/v1/users/ana/events", #"{"type": "moodLogged"}"#, headers: headers(key: ana))
                .expectProblem(403, "forbidden", detailContains: "legacy")
            // Refused for the credential before the body is read: a bad body, or a key another
            // request of the user's app used, changes nothing.
            try await client.send(.post, "/v1/users/ana/events", #"{"type": 1}"#, headers: headers(key: ana))
                .expectProblem(403, "forbidden", detailContains: "legacy")
            let device = #"{"token": "\#(String(repeating: "ab", count: 32))", "environment": "production"}"#
            try await client.send(.post, "/v1/users/ana/devices", device, headers: headers(key: ana))
                .expectProblem(403, "forbidden", detailContains: "legacy")
            #expect(try await client.send(.get, "/v1/users/ana/devices", headers: headers(key: ana)).status == .ok)
            // Signed tokens work beside them.
            let signed = try await userToken("ana")
            #expect(try await client.send(.get, "/v1/users/ana/inbox", headers: headers(key: signed)).status == .ok)
            #expect(
                try await client.send(
                    .post, "/v1/users/ana/events", #"{"type": "moodLogged"}"#, headers: headers(key: signed)
                ).status == .accepted)
        }
        let strict = try await TestServer()
        try await strict.run(.live) { client in
            #expect(try await client.send(.put, "/v1/users/ana", berlin).status == .created)
            try await client.send(.get, "/v1/users/ana/inbox", headers: headers(key: Self.tokens.token(for: "ana")))
                .expectProblem(401, "unauthorized")
        }
    }
}
