import APNs
import ArgumentParser
import Crypto
import Delivery
import Engagement
import FakeAPNs
import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import Models
import Runtime
import Scheduling
import Storage
import Testing

@testable import engaged

@Suite("engaged APNs settings")
struct APNsSettingsTests {
    static let all = [
        "--apns-key-file", "/keys/AuthKey.p8", "--apns-key-id", "KEY1234567", "--apns-team-id", "TEAM123456",
        "--apns-topic", "com.example.fitness",
    ]

    func resolve(_ flags: [String: String], environment: [String: String] = [:]) throws(APNsSettingsError)
        -> APNsSettings?
    {
        try APNsSettings.resolve(
            url: flags["url"], keyFile: flags["key-file"], keyID: flags["key-id"], teamID: flags["team-id"],
            topic: flags["topic"], caFile: flags["ca-file"], environment: environment)
    }

    @Test func noneGivenIsTheServerWithoutAPNs() throws {
        #expect(try resolve([:], environment: ["ENGAGED_API_KEY": "k"]) == nil)
    }

    @Test func flagsWinOverTheEnvironment() throws {
        let settings = try resolve(
            ["key-file": "/a.p8", "key-id": "KEY1234567", "team-id": "TEAM123456"],
            environment: [
                "ENGAGED_APNS_TOPIC": "com.example.fitness", "ENGAGED_APNS_KEY_ID": "OTHER12345",
                "ENGAGED_APNS_URL": "https://127.0.0.1:2197",
            ])
        #expect(
            settings
                == APNsSettings(
                    url: "https://127.0.0.1:2197", keyFile: "/a.p8", keyID: "KEY1234567", teamID: "TEAM123456",
                    topic: "com.example.fitness"))
    }

    @Test func somePiecesGivenNamesTheMissingOnes() {
        #expect(
            throws: APNsSettingsError.incomplete(missing: [
                "--apns-key-file", "--apns-key-id", "--apns-team-id", "--apns-topic",
            ])
        ) { try resolve(["url": "https://127.0.0.1:2197"]) }
        do {
            _ = try resolve(["key-file": "/a.p8"], environment: ["ENGAGED_APNS_TOPIC": "com.example.fitness"])
            Issue.record("resolved")
        } catch {
            #expect(error == .incomplete(missing: ["--apns-key-id", "--apns-team-id"]))
            #expect(
                error.description
                    == "APNs is configured only in part: missing --apns-key-id (or ENGAGED_APNS_KEY_ID), "
                    + "--apns-team-id (or ENGAGED_APNS_TEAM_ID)")
        }
    }

    @Test(arguments: [
        ("url", "http://127.0.0.1:2197", "--apns-url"), ("key-id", "key1234567", "--apns-key-id"),
        ("team-id", "TEAM", "--apns-team-id"), ("topic", "com.example.fitness.push-type.liveactivity", "--apns-topic"),
    ])
    func aMalformedValueNamesItsFlag(field: String, value: String, flag: String) {
        var flags = [
            "key-file": "/a.p8", "key-id": "KEY1234567", "team-id": "TEAM123456", "topic": "com.example.fitness",
        ]
        flags[field] = value
        do {
            _ = try resolve(flags)
            Issue.record("resolved")
        } catch {
            guard case .malformed(let named, _) = error else {
                Issue.record("expected malformed, got \(error)")
                return
            }
            #expect(named == flag)
        }
    }

    @Test(arguments: [
        ["--apns-key-file", "/a.p8"], ["--apns-url", "https://127.0.0.1:2197"],
        all.filter { $0 != "--apns-topic" && $0 != "com.example.fitness" }, all + ["--apns-url", "ftp://x"],
    ])
    func partialOrMalformedAPNsFlagsAreUsageErrors(apns: [String]) {
        do {
            _ = try Engaged.parseAsRoot(["serve", "--data-dir", "d", "--port", "0"] + apns)
            Issue.record("parsed \(apns)")
        } catch {
            #expect(Engaged.exitCode(for: error).rawValue == 64)
        }
    }

    @Test func allAPNsFlagsParse() throws {
        let command = try Engaged.parseAsRoot(["serve", "--data-dir", "d", "--port", "0"] + Self.all)
        let serve = try #require(command as? Serve)
        #expect(try serve.apns.apnsSettings([:])?.topic == "com.example.fitness")
    }

    @Test func aKeyFileThatCannotBeUsedExits78() throws {
        let command = try Engaged.parseAsRoot(["serve", "--data-dir", "d", "--port", "0"] + Self.all)
        let serve = try #require(command as? Serve)
        #expect(throws: ExitCode(78)) { try serve.apns.makeClient([:], logger: Logger(label: "test")) }
    }
}

@Suite("engaged APNs channel")
struct APNsChannelTests {
    static let token = String(repeating: "5a", count: 32)
    static let topic = "com.example.fitness"

    /// A server's runtime with user `ana` and her device (registered at the test's start), a
    /// fake APNs, and the channel between.
    func withChannel(
        _ body: @escaping @Sendable (PushChannelTransport, FakeAPNs, EngineRuntime) async throws -> Void
    ) async throws {
        try await withChannel { channel, fake, runtime, _ in try await body(channel, fake, runtime) }
    }

    /// `withChannel`, with the server's store too.
    func withChannel(
        _ body:
            @escaping @Sendable (PushChannelTransport, FakeAPNs, EngineRuntime, SQLiteEngagementStore) async throws
            -> Void
    ) async throws {
        let server = try await TestServer()
        let runtime = server.environment.runtime
        try await server.run { client in
            _ = try await client.send(.put, "/v1/users/ana", berlin)
            let device = #"{"token": "\#(Self.token)", "environment": "production"}"#
            #expect(try await client.send(.post, "/v1/users/ana/devices", device).status == .created)
            let key = P256.Signing.PrivateKey()
            let fake = try await FakeAPNs.start(
                FakeAPNs.Configuration(teamID: "TEAM123456", keys: ["KEY1234567": key.publicKey], topic: Self.topic))
            let apns = try APNsClient(
                configuration: APNsClient.Configuration(
                    credentials: try APNsCredentials(privateKey: key, keyID: "KEY1234567", teamID: "TEAM123456"),
                    endpoints: [.production: fake.url, .sandbox: fake.url], testingTrustRootsPEM: [fake.certificatePEM]),
                dependencies: .system, logger: Logger(label: "test"))
            let channel = PushChannelTransport(
                runtime: runtime, push: apns, topic: Self.topic, metrics: server.environment.metrics,
                logger: Logger(label: "test"))
            do { try await body(channel, fake, runtime, server.store) } catch {
                try await apns.shutdown()
                try await fake.shutdown()
                throw error
            }
            try await apns.shutdown()
            try await fake.shutdown()
        }
    }

    static func row(
        _ title: String, kind: NotificationKind = .mention, id: Models.RequestID = "mention.2027-03-01.1",
        channel: OutboxChannel = .push
    ) -> OutboxRow {
        let request = NotificationRequest(
            identifier: id, content: NotificationContent(kind: kind, title: title, body: "Have a look"),
            trigger: .date(TestServer.start + 60))
        let dueAt = TestServer.start + 60
        return OutboxRow(
            key: OutboxKey.make("ana", request.identifier, dueAt, channel), userID: "ana",
            requestID: request.identifier,
            dueAt: dueAt,
            payload: channel == .inbox
                ? .inboxItem(request, shownBy: ChannelPolicy.channel(for: kind)) : .alert(request))
    }

    @Test func anAlertCarriesTheUnreadCountItsKindsDeadlineAndForGroupedSocialCopyACollapseID() async throws {
        try await withChannel { channel, fake, _, store in
            // Two unread items in Ana's inbox, one of them the kudos the push announces.
            for title in ["Lunch", "Kudos"] {
                let item = Self.row(title, id: "x-\(title)", channel: .inbox)
                try store.commit(RuntimeCommit(userID: "ana", snapshot: [1], outbox: [item]))
                try store.deliverToInbox(
                    InboxDelivery(row: item, kind: "mealReminder", title: title, body: ""), next: [], at: item.dueAt)
            }
            let kudos = Self.row(
                "Ben and 2 others cheered your run", kind: .workoutKudos, id: "workoutKudos.2027-03-01.3")
            try await channel.perform(kudos)
            let push = try #require(fake.pushes.first)
            let payload = String(decoding: push.payload, as: UTF8.self)
            #expect(payload.contains(#""badge":2"#))
            #expect(push.headers["apns-push-type"] == "alert")
            #expect(push.headers["apns-collapse-id"] == "workoutKudos.2027-03-01.3")
            // The caps count kudos: shown after the minute the plan counted it in, it could share
            // an hour (or a day) with what the engine planned after it, so APNs keeps it no longer.
            let minute = kudos.dueAt.secondsSinceEpoch / 60 * 60
            #expect(push.headers["apns-expiration"] == String(minute + 59))
            #expect(push.headers["apns-priority"] == "10")
            // A mention is not grouped copy: it collapses only with a re-send of itself (its key).
            // The caps do not count it: APNs keeps it until it is stale, 6 hours on.
            let mention = Self.row("Ben mentioned you")
            try await channel.perform(mention)
            #expect(fake.pushes.count == 2)
            #expect(fake.pushes[1].headers["apns-collapse-id"] == mention.key.rawValue)
            #expect(fake.pushes[1].headers["apns-expiration"] == String(mention.dueAt.secondsSinceEpoch + 6 * 3_600))
        }
    }

    @Test func anAlertPastTheMinuteThePlanCountedItInGoesNowOrNever() async throws {
        try await withChannel { channel, fake, runtime in
            let clock = try #require(runtime.clock as? ManualClock)
            let kudos = Self.row("Ben cheered your run", kind: .workoutKudos, id: "workoutKudos.2027-03-01.4")
            // A backlog reaches it two minutes after its minute: offered once to a phone online,
            // never stored for one offline (its later showing could share an hour with what the
            // engine planned after it).
            clock.advance(by: kudos.dueAt - clock.now() + 120)
            try await channel.perform(kudos)
            let push = try #require(fake.pushes.first)
            #expect(push.headers["apns-expiration"] == "0")
            // A mention is counted by no cap: kept until it is stale.
            let mention = Self.row("Ben mentioned you")
            try await channel.perform(mention)
            #expect(fake.pushes.count == 2)
            #expect(fake.pushes[1].headers["apns-expiration"] == String(mention.dueAt.secondsSinceEpoch + 6 * 3_600))
        }
    }

    @Test func aSyncRowIsABackgroundPushWithTheCountsOfTheMoment() async throws {
        try await withChannel { channel, fake, runtime, store in
            let item = Self.row("Lunch", id: "mealReminder.2027-03-01.lunch", channel: .inbox)
            let snapshot = try #require(try await runtime.engine(of: "ana")).snapshot()
            try store.commit(RuntimeCommit(userID: "ana", snapshot: snapshot, outbox: [item]))
            try store.deliverToInbox(
                InboxDelivery(row: item, kind: "mealReminder", title: "Lunch", body: ""), next: [], at: item.dueAt)
            let sync = runtime.silentPushes.row(for: "ana", changedAt: item.dueAt)
            try await channel.perform(sync)
            let push = try #require(fake.pushes.first)
            #expect(push.status == 200)
            #expect(push.apnsID == sync.key.rawValue)
            #expect(push.headers["apns-push-type"] == "background")
            #expect(push.headers["apns-priority"] == "5")
            #expect(push.headers["apns-topic"] == Self.topic)
            // The plan's version of the moment: ana's first pass planned her local reminders.
            let engine = try await runtime.engine(of: "ana")
            let planVersion = try #require(engine).localPlanRevision
            #expect(planVersion > 0)
            #expect(
                String(decoding: push.payload, as: UTF8.self)
                    == #"{"aps":{"content-available":1},"inbox":{"unread":1,"unseen":1,"total":1},"planVersion":"#
                    + "\(planVersion)}")
            // Kept a day for a phone offline; a later sync replaces it at APNs.
            #expect(
                push.headers["apns-expiration"]
                    == String(sync.dueAt.secondsSinceEpoch + SilentPushPlan.lifetimeSeconds))
        }
    }

    @Test func aSyncStillFailingAfterRetriesIsReportedFailedAndARefusalRefused() async throws {
        try await withChannel { channel, fake, runtime in
            fake.answer(token: Self.token, with: .serviceUnavailable)
            let sync = runtime.silentPushes.row(for: "ana", changedAt: TestServer.start)
            // The runtime moves a failed sync to the next slot (`OutboxSteps.afterSend`).
            let failed = try await channel.perform(sync)
            #expect(failed == .failed(reason: "ServiceUnavailable"))
            // A refusal would be refused again: that row is completed, not moved.
            fake.answer(token: Self.token, with: .answer(status: 400, reason: "BadTopic"))
            let refused = try await channel.perform(sync)
            #expect(refused == .refused(reason: "BadTopic"))
        }
    }

    @Test func anAlertStillFailingAfterRetriesIsFollowedByABadgeSync() async throws {
        try await withChannel { channel, fake, runtime, store in
            fake.answer(token: Self.token, with: .serviceUnavailable)
            let alert = Self.row("a")
            try store.commit(RuntimeCommit(userID: "ana", snapshot: [1], outbox: [alert]))
            #expect(try !store.pendingOutbox(userID: "ana").contains { $0.channel == .silent })
            let clock = try #require(runtime.clock as? ManualClock)
            clock.advance(by: alert.dueAt - clock.now())
            let done = try await runtime.dispatchDue(through: channel)
            #expect(done.contains { $0.key == alert.key })
            let syncs = try store.pendingOutbox(userID: "ana").filter { $0.channel == .silent }
            #expect(syncs.count == 1)
            #expect(syncs.first.map { $0.requestID == SilentPushPlan.requestID(forSlot: $0.dueAt) } == true)
        }
    }

    /// The stale badge of a retried alert: prepared with the count 1, it gets through a
    /// second later, after the item was read (and a sync may have shown 0): a sync follows. An
    /// alert that gets through at once, its count unchanged, asks for none.
    @Test func anAlertThatGotThroughAfterTheCountChangedIsFollowedByABadgeSync() async throws {
        let server = try await TestServer()
        let runtime = server.environment.runtime
        let store = server.store
        let clock = try #require(runtime.clock as? ManualClock)
        try await server.run { client in
            _ = try await client.send(.put, "/v1/users/ana", berlin)
            let device = #"{"token": "\#(Self.token)", "environment": "production"}"#
            #expect(try await client.send(.post, "/v1/users/ana/devices", device).status == .created)
            let item = Self.row("Lunch", id: "mealReminder.2027-03-01.lunch", channel: .inbox)
            try store.commit(RuntimeCommit(userID: "ana", snapshot: [1], outbox: [item]))
            try store.deliverToInbox(
                InboxDelivery(row: item, kind: "mealReminder", title: "Lunch", body: ""), next: [], at: item.dueAt)
            for readMeanwhile in [false, true] {
                let push = SlowPush {
                    guard readMeanwhile else { return }
                    clock.advance(by: 1)
                    _ = try? await runtime.readAllInbox(of: "ana")
                }
                let channel = PushChannelTransport(
                    runtime: runtime, push: push, topic: Self.topic, metrics: server.environment.metrics,
                    logger: Logger(label: "test"))
                let report = try await channel.perform(Self.row("Ben mentioned you"))
                #expect(push.badges == [1])
                #expect(report == (readMeanwhile ? .acceptedWithOutdatedBadge : .accepted))
            }
        }
    }

    /// Accepts every push after running `meanwhile` (what happens while the client retries),
    /// and keeps the badge each carried.
    final class SlowPush: PushTransport, @unchecked Sendable {
        let meanwhile: @Sendable () async -> Void
        private let lock = NSLock()
        private var carried: [Int] = []
        init(meanwhile: @escaping @Sendable () async -> Void) { self.meanwhile = meanwhile }
        var badges: [Int] { lock.withLock { carried } }
        func send(_ request: PushRequest) async -> PushOutcome {
            let payload = (try? JSONSerialization.jsonObject(with: Data(request.payload))) as? [String: Any]
            let badge = (payload?["aps"] as? [String: Any])?["badge"] as? Int ?? -1
            lock.withLock { carried.append(badge) }
            await meanwhile()
            return .delivered
        }
    }

    @Test func everyOutcomeIsCountedPerChannelInMetrics() async throws {
        try await withChannel { channel, fake, runtime in
            try await channel.perform(Self.row("a"))
            fake.answer(token: Self.token, with: .badDeviceToken)
            try await channel.perform(runtime.silentPushes.row(for: "ana", changedAt: TestServer.start))
            let metrics = try #require((channel.observer as? ServerSendObserver)?.metrics)
            let text = String(decoding: metrics.exposition(outboxDepth: nil), as: UTF8.self)
            for line in [
                #"engaged_deliveries_total{channel="remote",outcome="sent"} 1"#,
                #"engaged_deliveries_total{channel="remote",outcome="accepted"} 1"#,
                #"engaged_deliveries_total{channel="silent",outcome="sent"} 1"#,
                #"engaged_deliveries_total{channel="silent",outcome="token_retired"} 1"#,
                #"engaged_delivery_failures_total{channel="silent",outcome="token_retired",reason="BadDeviceToken"} 1"#,
            ] {
                #expect(text.contains(line), "\(line) in \(text)")
            }
        }
    }

    @Test func aPushRowIsSentToEachDeviceWithItsKeyAsApnsID() async throws {
        try await withChannel { channel, fake, _ in
            let row = Self.row("Lunch time")
            try await channel.perform(row)
            let pushes = fake.pushes
            try #require(pushes.count == 1)
            #expect(pushes[0].status == 200)
            #expect(pushes[0].apnsID == row.key.rawValue)
            #expect(pushes[0].deviceToken == Self.token)
            #expect(pushes[0].headers["apns-topic"] == Self.topic)
            #expect(String(decoding: pushes[0].payload, as: UTF8.self).contains(#""title":"Lunch time""#))
        }
    }

    @Test func a410RetiresTheTokenUnlessItWasRegisteredAgainSince() async throws {
        try await withChannel { channel, fake, runtime in
            let registeredMillis = TestServer.start.secondsSinceEpoch * 1000
            // APNs says it died before the registration we hold: the registration stands.
            fake.answer(token: Self.token, with: .unregistered(atMillis: registeredMillis - 5_000))
            try await channel.perform(Self.row("a"))
            #expect(try await runtime.devices(of: "ana").count == 1)
            // It died after it: the token is removed.
            fake.answer(token: Self.token, with: .unregistered(atMillis: registeredMillis + 5_000))
            try await channel.perform(Self.row("b"))
            #expect(try await runtime.devices(of: "ana").isEmpty)
            // No devices: nothing is sent.
            try await channel.perform(Self.row("c"))
            #expect(fake.requestCount == 2)
        }
    }

    @Test func aBadDeviceTokenIsRetiredAtOnce() async throws {
        try await withChannel { channel, fake, runtime in
            fake.answer(token: Self.token, with: .badDeviceToken)
            try await channel.perform(Self.row("a"))
            #expect(try await runtime.devices(of: "ana").isEmpty)
        }
    }

    @Test func dueNotificationsReachTheFakeAPNsThroughTheServer() async throws {
        let server = try await TestServer()
        defer { try? FileManager.default.removeItem(at: server.directory) }
        let key = P256.Signing.PrivateKey()
        let fake = try await FakeAPNs.start(
            FakeAPNs.Configuration(teamID: "TEAM123456", keys: ["KEY1234567": key.publicKey], topic: Self.topic))
        let apns = try APNsClient(
            configuration: APNsClient.Configuration(
                credentials: try APNsCredentials(privateKey: key, keyID: "KEY1234567", teamID: "TEAM123456"),
                endpoints: [.production: fake.url, .sandbox: fake.url], testingTrustRootsPEM: [fake.certificatePEM]),
            dependencies: .system, logger: Logger(label: "test"))
        var environment = server.environment
        environment.transport = PushChannelTransport(
            runtime: environment.runtime, push: apns, topic: Self.topic, metrics: environment.metrics,
            logger: environment.logger)
        let app = try EngagedServer.application(environment, clock: server.clock, host: "127.0.0.1", port: 0)
        do {
            try await app.test(.router) { client in
                _ = try await client.send(.put, "/v1/users/ana", berlin)
                let device = #"{"token": "\#(Self.token)", "environment": "sandbox"}"#
                #expect(try await client.send(.post, "/v1/users/ana/devices", device).status == .created)
                let mention =
                    #"{"type": "socialEvent", "id": "m1", "kind": "mention", "actorName": "Ben", "topic": "run"}"#
                #expect(try await client.send(.post, "/v1/users/ana/events", mention).status == .accepted)
                #expect(try await client.send(.post, "/v1/admin/clock", #"{"advanceSeconds": 86400}"#).status == .ok)
            }
        } catch {
            try await apns.shutdown()
            try await fake.shutdown()
            throw error
        }
        try await apns.shutdown()
        try await fake.shutdown()
        let pushes = fake.pushes
        #expect(!pushes.isEmpty)
        #expect(pushes.allSatisfy { $0.status == 200 && $0.deviceToken == Self.token })
        #expect(Set(pushes.compactMap(\.apnsID)).count == pushes.count)  // one apns-id per outbox row
        #expect(fake.connectionCount == 1)
        // The mention is remote: one alert. The day's routine kinds are local: no alert for them,
        // only badge syncs, at most two in any hour (their expiries are their slots' ends).
        let alerts = pushes.filter { $0.headers["apns-push-type"] == "alert" }
        #expect(alerts.count == 1)
        #expect(alerts.allSatisfy { String(decoding: $0.payload, as: UTF8.self).contains(#""kind":"mention""#) })
        let syncs = pushes.filter { $0.headers["apns-push-type"] == "background" }
        #expect(syncs.count == pushes.count - alerts.count)
        #expect(syncs.count >= 2)
        let slotEnds = syncs.compactMap { $0.headers["apns-expiration"].flatMap { Int64($0) } }.sorted()
        #expect(slotEnds.count == syncs.count)
        for index in slotEnds.indices.dropFirst(2) { #expect(slotEnds[index] - slotEnds[index - 2] >= 3_600) }
    }
}
