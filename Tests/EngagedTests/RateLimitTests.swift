import Foundation
import Hummingbird
import HummingbirdTesting
import Models
import NIOCore
import Synchronization
import Testing

@testable import engaged

/// A clock the test moves.
private final class TestSeconds: Sendable {
    private let value = Mutex(0.0)
    func advance(_ seconds: Double) { value.withLock { $0 += seconds } }
    func read() -> Double { value.withLock { $0 } }
    var now: @Sendable () -> Double { { self.read() } }
}

@Suite("engaged rate limits")
struct RateLimiterTests {
    @Test func aBucketAllowsItsBurstThenRefillsAtItsRate() {
        let clock = TestSeconds()
        let limiter = RateLimiter(
            settings: RateLimitSettings(
                apiKey: RateLimit(ratePerSecond: 2, burst: 4), user: .off, address: .off, failedAuthenticationCost: 0),
            now: clock.now)
        for _ in 0..<4 { #expect(limiter.take(.apiKey, "") == nil) }
        #expect(limiter.take(.apiKey, "") == 1)  // half a second to the next token: Retry-After 1
        clock.advance(0.5)
        #expect(limiter.take(.apiKey, "") == nil)
        #expect(limiter.take(.apiKey, "", cost: 3) == 2)  // 1.5 s for three tokens, rounded up
        clock.advance(60)
        for _ in 0..<4 { #expect(limiter.take(.apiKey, "") == nil) }  // never more than the burst
        #expect(limiter.take(.apiKey, "") != nil)
        // A scope that is off never refuses.
        for _ in 0..<1_000 { #expect(limiter.take(.user, "ana") == nil) }
    }

    @Test func bucketsAreKeptPerIdAndPenaltiesPushTheNextRequestOut() {
        let clock = TestSeconds()
        let limiter = RateLimiter(
            settings: RateLimitSettings(
                apiKey: .off, user: RateLimit(ratePerSecond: 1, burst: 2),
                address: RateLimit(ratePerSecond: 10, burst: 10), failedAuthenticationCost: 5),
            now: clock.now)
        #expect(limiter.take(.user, "ana") == nil)
        #expect(limiter.take(.user, "ana") == nil)
        #expect(limiter.take(.user, "ana") != nil)
        #expect(limiter.take(.user, "bob") == nil)
        // Three failures from one address: 15 tokens from 10, so the bucket stands at -5.
        for _ in 0..<3 { limiter.penalize(.address, "10.0.0.1", cost: 5) }
        #expect(limiter.take(.address, "10.0.0.1") == 1)
        clock.advance(0.5)
        #expect(limiter.take(.address, "10.0.0.1") == 1)
        clock.advance(0.2)
        #expect(limiter.take(.address, "10.0.0.1") == nil)
        // Down to minus the burst at most.
        for _ in 0..<100 { limiter.penalize(.address, "10.0.0.2", cost: 5) }
        #expect(limiter.take(.address, "10.0.0.2") == 2)
        #expect(limiter.take(.address, "10.0.0.3") == nil)
    }

    @Test func refilledBucketsAreForgottenPastTheBound() {
        let clock = TestSeconds()
        let limiter = RateLimiter(
            settings: RateLimitSettings(
                apiKey: .off, user: .off, address: RateLimit(ratePerSecond: 1, burst: 1), failedAuthenticationCost: 0),
            maxTrackedBuckets: 100, now: clock.now)
        for index in 0..<100 { #expect(limiter.take(.address, "a\(index)") == nil) }
        #expect(limiter.trackedBuckets == 100)
        clock.advance(1)  // every bucket is full again
        #expect(limiter.take(.address, "new") == nil)
        #expect(limiter.trackedBuckets <= 90)
        // When none has refilled, the fullest go first, and the table stays bounded.
        for index in 0..<200 { _ = limiter.take(.address, "b\(index)") }
        #expect(limiter.trackedBuckets <= 100)
    }

    @Test func anIPv6ClientHasOneBucketPer64AndAMappedIPv4ItsAddress() throws {
        let one = try SocketAddress(ipAddress: "2001:db8:aa:bb:1::1", port: 1)
        let other = try SocketAddress(ipAddress: "2001:db8:aa:bb:ffff::9", port: 2)
        let elsewhere = try SocketAddress(ipAddress: "2001:db8:aa:bc::1", port: 3)
        let key = AddressRateLimitMiddleware<EngagedRequestContext>.bucketID
        #expect(key(one) == "2001:db8:aa:bb::/64")
        #expect(key(one) == key(other))
        #expect(key(one) != key(elsewhere))
        #expect(key(try SocketAddress(ipAddress: "::ffff:10.1.2.3", port: 4)) == "10.1.2.3")
        #expect(key(try SocketAddress(ipAddress: "10.1.2.3", port: 5)) == "10.1.2.3")
    }

    @Test(arguments: [("100/200", 100.0, 200.0), ("1/1", 1, 1), ("0", 0, 0)])
    func limitsParse(text: String, rate: Double, burst: Double) {
        #expect(RateLimit(text) == RateLimit(ratePerSecond: rate, burst: burst))
    }

    @Test(arguments: ["", "100", "0/0", "10/5", "-1/2", "a/b", "1/2/3", "1.5/3", "1/2000000"])
    func badLimitsAreRefused(text: String) {
        #expect(RateLimit(text) == nil)
    }
}

@Suite("engaged rate limits over HTTP")
struct RateLimitRouteTests {
    /// Buckets on a clock that stands still: nothing refills while a loaded machine runs the test.
    static func server(_ settings: RateLimitSettings) async throws -> TestServer {
        var server = try await TestServer()
        server.environment.rateLimiter = RateLimiter(settings: settings, now: { 0 })
        return server
    }

    @Test func theAPIKeyOverItsLimitIs429WithRetryAfterAndCounted() async throws {
        let server = try await Self.server(
            RateLimitSettings(
                apiKey: RateLimit(ratePerSecond: 1, burst: 3), user: .off, address: .off, failedAuthenticationCost: 0))
        try await server.run(.live) { client in
            #expect(try await client.send(.put, "/v1/users/ana", berlin).status == .created)
            #expect(try await client.send(.get, "/v1/users/ana/schedule").status == .ok)
            #expect(try await client.send(.get, "/v1/users/ana/devices").status == .ok)
            let limited = try await client.send(.put, "/v1/users/ana", berlin)
            limited.expectProblem(429, "rate-limited", detailContains: "API key")
            #expect(Int(limited.headers[.retryAfter] ?? "") ?? 0 >= 1)
            // Liveness and metrics are not limited.
            #expect(try await client.send(.get, "/healthz", headers: [:]).status == .ok)
            let metrics = try await client.send(.get, "/metrics", headers: [:]).text
            #expect(metrics.contains(#"engaged_rate_limited_total{scope="api_key"} 1"#), "\(metrics)")
        }
    }

    @Test func eachUserTokenHasItsOwnBucket() async throws {
        let server = try await Self.server(
            RateLimitSettings(
                apiKey: .off, user: RateLimit(ratePerSecond: 1, burst: 2), address: .off, failedAuthenticationCost: 0))
        try await server.run(.live) { client in
            #expect(try await client.send(.put, "/v1/users/ana", berlin).status == .created)
            #expect(try await client.send(.put, "/v1/users/bob", berlin).status == .created)
            let ana = try await userToken("ana")
            let bob = try await userToken("bob")
            for _ in 0..<2 {
                #expect(try await client.send(.get, "/v1/users/ana/inbox", headers: headers(key: ana)).status == .ok)
            }
            try await client.send(.get, "/v1/users/ana/inbox", headers: headers(key: ana))
                .expectProblem(429, "rate-limited", detailContains: "user")
            #expect(try await client.send(.get, "/v1/users/bob/inbox", headers: headers(key: bob)).status == .ok)
            // The API key is another bucket.
            #expect(try await client.send(.get, "/v1/users/ana/inbox").status == .ok)
        }
    }

    @Test func failedAuthenticationCostsAnAddressMoreThanASuccess() async throws {
        let server = try await Self.server(
            RateLimitSettings(
                apiKey: .off, user: .off, address: RateLimit(ratePerSecond: 1, burst: 30),
                failedAuthenticationCost: 10))
        try await server.run(.live) { client in
            #expect(try await client.send(.put, "/v1/users/ana", berlin).status == .created)
            let ana = try await userToken("ana")
            // Ten requests with a user token leave twenty tokens; two wrong keys take 2 x 11.
            for _ in 0..<10 {
                #expect(try await client.send(.get, "/v1/users/ana/inbox", headers: headers(key: ana)).status == .ok)
            }
            for _ in 0..<2 {
                try await client.send(.get, "/v1/users/ana/devices", headers: headers(key: "wrong"))
                    .expectProblem(401, "unauthorized")
            }
            // Now even a valid token is refused from this address, before it is checked.
            try await client.send(.get, "/v1/users/ana/inbox", headers: headers(key: ana))
                .expectProblem(429, "rate-limited", detailContains: "address")
            #expect(try await client.send(.get, "/healthz", headers: [:]).status == .ok)
            let metrics = try await client.send(.get, "/metrics", headers: [:]).text
            #expect(metrics.contains(#"engaged_rate_limited_total{scope="address"} 1"#), "\(metrics)")
            // The API key is its own bucket's: the backend at the same address goes on.
            #expect(try await client.send(.get, "/v1/users/ana/devices").status == .ok)
        }
    }
}
