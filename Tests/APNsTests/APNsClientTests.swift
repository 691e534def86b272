import APNs
import AsyncHTTPClient
import Crypto
import Delivery
import FakeAPNs
import Foundation
import Logging
import Models
import NIOCore
import NIOHTTP1
import NIOSSL
import Testing

/// The real client against the fake APNs over HTTP/2 and TLS on loopback.
@Suite("APNs client against the fake APNs")
struct APNsClientTests {
    @Test func anAlertIsDeliveredWithEveryHeaderAPNsReads() async throws {
        try await Harness.with { harness in
            let request = alert(7, collapseID: "friends-cheered")
            #expect(await harness.client.send(request) == .delivered)
            let pushes = harness.fake.pushes
            try #require(pushes.count == 1)
            let push = pushes[0]
            #expect(push.status == 200)
            #expect(push.deviceToken == deviceToken)
            #expect(push.headers["apns-push-type"] == "alert")
            #expect(push.headers["apns-topic"] == topic)
            #expect(push.headers["apns-priority"] == "10")
            #expect(push.headers["apns-id"] == uuid(7))
            #expect(push.headers["apns-expiration"] == String((start + 3600).secondsSinceEpoch))
            #expect(push.headers["apns-collapse-id"] == "friends-cheered")
            #expect(push.payload == request.payload)
        }
    }

    @Test func liveActivityAndBackgroundPushesCarryTheirTopicAndPriority() async throws {
        try await Harness.with { harness in
            var activity = alert(1)
            activity.pushType = .liveactivity
            var silent = PushRequest(
                id: uuid(2), deviceToken: deviceToken, environment: .sandbox, pushType: .background, topic: topic,
                expiration: .nowOrNever, payload: Array(#"{"aps":{"content-available":1}}"#.utf8))
            #expect(await harness.client.send(activity) == .delivered)
            #expect(await harness.client.send(silent) == .delivered)
            let pushes = harness.fake.pushes
            #expect(pushes.map { $0.headers["apns-topic"] } == [topic + ".push-type.liveactivity", topic])
            #expect(pushes.map { $0.headers["apns-priority"] } == ["10", "5"])
            #expect(pushes[1].headers["apns-expiration"] == "0")
            // A background push at priority 10 is refused before it is sent.
            silent.priority = .immediate
            #expect(await harness.client.send(silent) == .rejected(PushFailure(status: 400, reason: "BadPriority")))
            #expect(harness.fake.requestCount == 2)
        }
    }

    struct ErrorCase: Sendable, CustomTestStringConvertible {
        var fault: FakeAPNs.Fault
        var outcome: PushOutcome
        var testDescription: String { "\(fault) -> \(outcome)" }
    }

    /// Answers that are final: one request each, never retried.
    @Test(arguments: [
        ErrorCase(
            fault: .badDeviceToken,
            outcome: .tokenRetired(PushFailure(status: 400, reason: "BadDeviceToken"), since: nil)),
        ErrorCase(
            fault: .deviceTokenNotForTopic,
            outcome: .tokenRetired(PushFailure(status: 400, reason: "DeviceTokenNotForTopic"), since: nil)),
        ErrorCase(
            fault: .unregistered(atMillis: 1_803_960_000_999),
            outcome: .tokenRetired(
                PushFailure(status: 410, reason: "Unregistered"), since: Instant(secondsSinceEpoch: 1_803_960_000))),
        ErrorCase(
            fault: .answer(status: 410, reason: "ExpiredToken", timestampMillis: 1_803_000_000_000),
            outcome: .tokenRetired(
                PushFailure(status: 410, reason: "ExpiredToken"), since: Instant(secondsSinceEpoch: 1_803_000_000))),
        ErrorCase(
            fault: .answer(status: 413, reason: "PayloadTooLarge"),
            outcome: .rejected(PushFailure(status: 413, reason: "PayloadTooLarge"))),
        ErrorCase(
            fault: .answer(status: 400, reason: "BadCollapseId"),
            outcome: .rejected(PushFailure(status: 400, reason: "BadCollapseId"))),
        ErrorCase(
            fault: .answer(status: 403, reason: "InvalidProviderToken"),
            outcome: .rejected(PushFailure(status: 403, reason: "InvalidProviderToken"))),
        ErrorCase(
            fault: .answer(status: 405, reason: "MethodNotAllowed"),
            outcome: .rejected(PushFailure(status: 405, reason: "MethodNotAllowed"))),
    ])
    func finalAnswersAreNeverRetried(_ errorCase: ErrorCase) async throws {
        try await Harness.with { harness in
            harness.fake.answer(token: deviceToken, with: errorCase.fault)
            #expect(await harness.client.send(alert()) == errorCase.outcome)
            #expect(harness.fake.requestCount == 1)
            #expect(harness.sleeps.all.isEmpty)
        }
    }

    @Test func anExpiredProviderTokenIsRenewedOnceAndThePushRetriedOnce() async throws {
        try await Harness.with { harness in
            #expect(await harness.client.send(alert(0)) == .delivered)
            harness.fake.expireProviderTokens()
            #expect(await harness.client.send(alert(1)) == .delivered)
            let pushes = harness.fake.pushes
            #expect(pushes.map(\.status) == [200, 403, 200])
            #expect(pushes[1].jwt != pushes[2].jwt)
            #expect(await harness.client.tokens.signedCount == 2)
            #expect(harness.sleeps.all.isEmpty)

            // Expired again with the new token: no second renewal, no third attempt.
            harness.fake.enqueue([.expiredProviderToken, .expiredProviderToken])
            #expect(
                await harness.client.send(alert(2))
                    == .failedAfterRetries(PushFailure(status: 403, reason: "ExpiredProviderToken"), attempts: 2))
            #expect(harness.fake.requestCount == 5)
            #expect(await harness.client.tokens.signedCount == 3)
        }
    }

    @Test func manySendersRefusedWithTheSameExpiredTokenRenewItOnce() async throws {
        try await Harness.with { harness in
            #expect(await harness.client.send(alert(0)) == .delivered)  // the connection and the first token
            harness.fake.expireProviderTokens()
            let outcomes = await withTaskGroup(of: PushOutcome.self) { group in
                for n in 1...40 { group.addTask { await harness.client.send(alert(n)) } }
                return await group.reduce(into: []) { $0.append($1) }
            }
            #expect(outcomes.allSatisfy { $0 == .delivered })
            #expect(await harness.client.tokens.signedCount == 2)
            #expect(harness.fake.providerTokens.count == 2)
        }
    }

    @Test func tooManyRequestsAndServerErrorsBackOffThenSucceed() async throws {
        try await Harness.with(unitRandom: 0.5) { harness in
            harness.fake.enqueue([.tooManyRequests, .serviceUnavailable, .internalServerError])
            #expect(await harness.client.send(alert()) == .delivered)
            #expect(harness.fake.pushes.map(\.status) == [429, 503, 500, 200])
            // base 100 ms doubling, equal jitter at 0.5: three quarters of each ceiling.
            #expect(harness.sleeps.all == [.milliseconds(75), .milliseconds(150), .milliseconds(300)])
        }
    }

    @Test func serverErrorsThatPersistEndInARecordedFailureAfterBoundedAttempts() async throws {
        let retry = RetryPolicy(maxAttempts: 5, baseDelay: .milliseconds(500), maxDelay: .seconds(1))
        try await Harness.with(retry: retry, unitRandom: 1) { harness in
            harness.fake.answer(token: deviceToken, with: .internalServerError)
            #expect(
                await harness.client.send(alert())
                    == .failedAfterRetries(PushFailure(status: 500, reason: "InternalServerError"), attempts: 5))
            #expect(harness.fake.requestCount == 5)
            // Capped at 1 s; jitter 1 is the whole ceiling.
            #expect(harness.sleeps.all == [.milliseconds(500), .seconds(1), .seconds(1), .seconds(1)])
        }
    }

    @Test func aPayloadOverTheLimitIsRefusedBeforeSending() async throws {
        try await Harness.with { harness in
            #expect(
                await harness.client.send(alert(payload: payload(bytes: 4097)))
                    == .rejected(PushFailure(status: 413, reason: "PayloadTooLarge")))
            #expect(
                await harness.client.send(alert(collapseID: String(repeating: "c", count: 65)))
                    == .rejected(PushFailure(status: 400, reason: "BadCollapseId")))
            #expect(harness.fake.requestCount == 0)
            #expect(await harness.client.send(alert(payload: payload(bytes: 4096))) == .delivered)
            #expect(harness.fake.delivered.first?.payload.count == 4096)
        }
    }

    @Test func concurrentPushesShareOneConnectionAndOneProviderToken() async throws {
        try await Harness.with { harness in
            // Held answers keep the streams open together: long enough that the 200 sends all
            // start inside the hold even when other suites share the cores.
            harness.fake.answer(token: deviceToken, with: .delay(.seconds(2)))
            let outcomes = await withTaskGroup(of: PushOutcome.self) { group in
                for n in 1...200 { group.addTask { await harness.client.send(alert(n)) } }
                return await group.reduce(into: []) { $0.append($1) }
            }
            #expect(outcomes.count == 200)
            #expect(outcomes.allSatisfy { $0 == .delivered })
            #expect(harness.fake.connectionCount == 1)
            #expect(harness.fake.maxConcurrentStreamsSeen >= 50)
            #expect(Set(harness.fake.pushes.compactMap(\.jwt)).count == 1)
            #expect(await harness.client.tokens.signedCount == 1)
            #expect(Set(harness.fake.pushes.compactMap(\.apnsID)).count == 200)
        }
    }

    @Test func aGoAwayIsFollowedByANewConnection() async throws {
        try await Harness.with { harness in
            #expect(await harness.client.send(alert(1)) == .delivered)
            harness.fake.enqueue([.goAway])
            #expect(await harness.client.send(alert(2)) == .delivered)
            // The client learns of the close, then the next push opens a connection of its own.
            try await Task.sleep(for: .milliseconds(200))
            #expect(await harness.client.send(alert(3)) == .delivered)
            #expect(harness.fake.connectionCount == 2)
            #expect(harness.fake.pushes.map(\.connection) == [1, 1, 2])
        }
    }

    @Test func pushesInFlightAcrossAGoAwayAreAllDelivered() async throws {
        try await Harness.with { harness in
            #expect(await harness.client.send(alert(0)) == .delivered)
            harness.fake.enqueue(Array(repeating: .delay(.milliseconds(20)), count: 20) + [.goAway])
            let outcomes = await withTaskGroup(of: PushOutcome.self) { group in
                for n in 1...100 { group.addTask { await harness.client.send(alert(n)) } }
                return await group.reduce(into: []) { $0.append($1) }
            }
            #expect(outcomes.allSatisfy { $0 == .delivered })
            #expect(harness.fake.connectionCount >= 2)
            #expect(Set(harness.fake.delivered.compactMap(\.apnsID)).isSuperset(of: (1...100).map(uuid)))
        }
    }

    @Test func aConnectionClosedWithoutAnAnswerIsRetriedOnANewOne() async throws {
        try await Harness.with { harness in
            harness.fake.enqueue([.closeConnection])
            #expect(await harness.client.send(alert()) == .delivered)
            #expect(harness.fake.pushes.map(\.status) == [0, 200])
            #expect(harness.fake.connectionCount == 2)
            // One back-off, or two when the retry still found the closing connection.
            #expect((1...2).contains(harness.sleeps.all.count))
        }
    }

    @Test func anAnswerSlowerThanTheAttemptTimeoutIsRetriedThenRecorded() async throws {
        let retry = RetryPolicy(maxAttempts: 2, baseDelay: .milliseconds(10), maxDelay: .milliseconds(10))
        try await Harness.with(retry: retry, attemptTimeout: .seconds(1)) { harness in
            // Far beyond the timeout: a test run loaded with simulations on two cores once starved
            // the event loops for more than 9 s, and the 10 s answer came first. The fake's event
            // loop is shut down with the harness, so the answer never keeps the test waiting.
            harness.fake.answer(token: deviceToken, with: .delay(.seconds(300)))
            let outcome = await harness.client.send(alert())
            guard case .failedAfterRetries(let failure, let attempts) = outcome else {
                Issue.record("expected a failure after retries, got \(outcome)")
                return
            }
            #expect(failure.status == nil)
            #expect(attempts == 2)
            // The slow streams did not hold up the connection for others.
            harness.fake.answer(token: deviceToken, with: nil)
            #expect(await harness.client.send(alert(2, token: otherToken)) == .delivered)
        }
    }

    @Test func providerTokenIsRenewedAfterItsRefreshAgeAndNotBefore() async throws {
        try await Harness.with { harness in
            #expect(await harness.client.send(alert(1)) == .delivered)
            harness.clock.advance(bySeconds: 19 * 60)
            #expect(await harness.client.send(alert(2)) == .delivered)
            harness.clock.advance(bySeconds: 50 * 60 - 19 * 60 - 1)  // 49:59 old
            #expect(await harness.client.send(alert(3)) == .delivered)
            #expect(await harness.client.tokens.signedCount == 1)
            harness.clock.advance(bySeconds: 1)  // 50:00
            #expect(await harness.client.send(alert(4)) == .delivered)
            #expect(await harness.client.tokens.signedCount == 2)
            // The fake accepted the renewal: it was not "too many updates" (20 minutes) and the
            // old token was never used past 60 minutes.
            #expect(harness.fake.pushes.map(\.status) == [200, 200, 200, 200])
            #expect(harness.fake.providerTokens.count == 2)
            let jwts = harness.fake.pushes.compactMap(\.jwt)
            #expect(jwts[0] == jwts[2] && jwts[2] != jwts[3])
        }
    }

    @Test func theFakeRefusesATokenRenewedTooSoonAndOneUsedPastAnHour() async throws {
        try await Harness.with { harness in
            #expect(await harness.client.send(alert(1)) == .delivered)
            // A second client with the same key renews at once: APNs refuses that.
            let early = try ProviderToken.sign(harness.credentials, issuedAt: harness.clock.now() + 1)
            let stale = try ProviderToken.sign(harness.credentials, issuedAt: harness.clock.now() - 3600)
            #expect(
                try await rawPost(harness, jwt: early.jwt)
                    == (429, #"{"reason":"TooManyProviderTokenUpdates"}"#))
            harness.clock.advance(bySeconds: 30 * 60)
            #expect(try await rawPost(harness, jwt: stale.jwt) == (403, #"{"reason":"ExpiredProviderToken"}"#))
            #expect(try await rawPost(harness, jwt: "not.a.jwt") == (403, #"{"reason":"InvalidProviderToken"}"#))
        }
    }

    @Test func theFakesCertificateIsNotTrustedByDefault() async throws {
        try await Harness.with { harness in
            let client = try APNsClient(
                configuration: APNsClient.Configuration(
                    credentials: harness.credentials,
                    endpoints: [.sandbox: harness.fake.url, .production: harness.fake.url],
                    retry: RetryPolicy(maxAttempts: 1), attemptTimeout: .seconds(1)),
                dependencies: APNsClient.Dependencies(
                    now: { harness.clock.now() }, sleep: { _ in }, unitRandom: { 0 }),
                logger: .init(label: "apns-tests"))
            let outcome = await client.send(alert())
            try await client.shutdown()
            guard case .failedAfterRetries(let failure, attempts: 1) = outcome else {
                Issue.record("expected a TLS failure, got \(outcome)")
                return
            }
            #expect(failure.status == nil)
            #expect(harness.fake.requestCount == 0)
        }
    }

    @Test func cancellationDuringABackOffEndsTheSend() async throws {
        let key = P256.Signing.PrivateKey()
        let fake = try await FakeAPNs.start(
            FakeAPNs.Configuration(teamID: teamID, keys: [keyID: key.publicKey], topic: topic))
        let client = try APNsClient(
            configuration: APNsClient.Configuration(
                credentials: try APNsCredentials(privateKey: key, keyID: keyID, teamID: teamID),
                endpoints: [.sandbox: fake.url, .production: fake.url], testingTrustRootsPEM: [fake.certificatePEM]),
            dependencies: APNsClient.Dependencies(
                now: { Instant(secondsSinceEpoch: Int64(Date().timeIntervalSince1970)) },
                sleep: { _ in throw CancellationError() }, unitRandom: { 0 }),
            logger: .init(label: "apns-tests"))
        fake.answer(token: deviceToken, with: .serviceUnavailable)
        let outcome = await client.send(alert())
        try await client.shutdown()
        try await fake.shutdown()
        #expect(outcome == .failedAfterRetries(PushFailure(status: 503, reason: "ServiceUnavailable"), attempts: 1))
    }
}

/// A well-formed push with a provider token of the test's choosing, past the client's checks;
/// returns the status and body the fake answered.
func rawPost(_ harness: Harness, jwt: String) async throws -> (Int, String) {
    var tls = TLSConfiguration.makeClientConfiguration()
    tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMBytes(Array(harness.fake.certificatePEM.utf8)))
    let http = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: .init(tlsConfiguration: tls))
    var request = HTTPClientRequest(url: harness.fake.url + "/3/device/" + deviceToken)
    request.method = .POST
    request.headers.add(name: "authorization", value: "bearer " + jwt)
    request.headers.add(name: "apns-push-type", value: "alert")
    request.headers.add(name: "apns-topic", value: topic)
    request.body = .bytes(Array(#"{"aps":{}}"#.utf8))
    do {
        let response = try await http.execute(request, timeout: .seconds(10))
        let body = try await response.body.collect(upTo: 4096)
        try await http.shutdown()
        return (Int(response.status.code), String(buffer: body))
    } catch {
        try await http.shutdown()
        throw error
    }
}
