import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Models
import Runtime
import Storage
import Testing

@testable import engaged

/// The phone's own events (the user's token) and the plan's signal: an event's answer carries
/// the local plan's version; a change of the plan that did not come from the phone commits the
/// user's background sync (`PlanSignal`).
@Suite("engaged: the phone's events and the plan's signal")
struct PlanSignalRouteTests {
    static let lunchLogged = #"{"type": "mealLogged", "meal": "lunch"}"#

    func withAna(_ test: @escaping @Sendable (any TestClientProtocol, TestServer) async throws -> Void) async throws {
        let server = try await TestServer()
        try await server.run { client in
            #expect(try await client.send(.put, "/v1/users/ana", berlin).status == .created)
            try await test(client, server)
        }
    }

    static func syncRows(_ server: TestServer) throws -> [OutboxRow] {
        try server.store.pendingOutbox(userID: "ana").filter { $0.channel == .silent }
    }

    @Test func aUsersCreationSignalsNothing() async throws {
        try await withAna { _, server in
            let rows = try Self.syncRows(server)
            #expect(rows.isEmpty)
        }
    }

    @Test func thePhonesOwnEventIsAnsweredWithTheVersionAndSignalsNothing() async throws {
        try await withAna { client, server in
            let before = try await client.send(.get, "/v1/users/ana/plan").json["version"] as? Int
            let ana = try await userToken("ana")
            let event = try await client.send(
                .post, "/v1/users/ana/events", Self.lunchLogged, headers: headers(key: ana))
            #expect(event.status == .accepted, "\(event.text)")
            let version = try #require(event.json["planVersion"] as? Int)
            #expect(version > (before ?? .max))
            #expect(try Self.syncRows(server).isEmpty)
        }
    }

    @Test func theBackendsEventThatChangesThePlanSignalsThePhoneOnce() async throws {
        try await withAna { client, server in
            let event = try await client.send(.post, "/v1/users/ana/events", Self.lunchLogged)
            #expect(event.status == .accepted)
            let rows = try Self.syncRows(server)
            #expect(rows.count == 1)
            // Inside the silent budget: at the next slot, one row however many changes ask.
            let plan = SilentPushPlan()
            #expect(rows.first?.dueAt == plan.slot(after: TestServer.start))
            let dinner = try await client.send(
                .post, "/v1/users/ana/events", #"{"type": "mealLogged", "meal": "dinner"}"#)
            #expect(dinner.status == .accepted)
            #expect(try Self.syncRows(server).count == 1)
        }
    }

    @Test func theBackendsEventThatChangesNothingLocalSignalsNothing() async throws {
        try await withAna { client, server in
            let before = try await client.send(.get, "/v1/users/ana/plan").json["version"] as? Int
            let mood = try await client.send(.post, "/v1/users/ana/events", #"{"type": "moodLogged"}"#)
            #expect(mood.json["planVersion"] as? Int == before)
            #expect(try Self.syncRows(server).isEmpty)
        }
    }

    @Test func aPreferenceWrittenByTheBackendSignalsThePhone() async throws {
        try await withAna { client, server in
            let put = try await client.send(
                .put, "/v1/users/ana",
                #"{"timeZone": "Europe/Berlin", "displayName": "Ana Test", "preferences": {"settings": {"mealReminder": "disabled"}}}"#
            )
            #expect(put.status == .ok, "\(put.text)")
            #expect(try Self.syncRows(server).count == 1)
            let plan = try await client.send(.get, "/v1/users/ana/plan")
            let kinds = (plan.json["requests"] as? [[String: Any]] ?? []).compactMap { $0["kind"] as? String }
            #expect(!kinds.contains("mealReminder"))
        }
    }

    @Test func anAppMayNotSendWhatOthersDidNorEventsOfAnotherUser() async throws {
        try await withAna { client, server in
            let ana = try await userToken("ana")
            let outbox = try server.store.pendingOutbox(userID: "ana")
            let social =
                #"{"type": "socialEvent", "id": "s1", "kind": "workoutKudos", "actorName": "Ben", "topic": "run"}"#
            try await client.send(.post, "/v1/users/ana/events", social, headers: headers(key: ana))
                .expectProblem(403, "forbidden", detailContains: "backend")
            #expect(try server.store.pendingOutbox(userID: "ana") == outbox)
            let bob = try await userToken("bob")
            try await client.send(.post, "/v1/users/ana/events", Self.lunchLogged, headers: headers(key: bob))
                .expectProblem(403, "forbidden")
            try await client.send(.post, "/v1/users/ana/events", Self.lunchLogged, headers: headers(key: "nonsense"))
                .expectProblem(401, "unauthorized")
            #expect(try server.store.pendingOutbox(userID: "ana") == outbox)
            // The backend sends it.
            #expect(try await client.send(.post, "/v1/users/ana/events", social).status == .accepted)
        }
    }

    @Test func aKeyedEventsReplayCarriesTheFirstAnswersVersion() async throws {
        try await withAna { client, _ in
            let ana = try await userToken("ana")
            let first = try await client.send(
                .post, "/v1/users/ana/events", Self.lunchLogged, headers: headers(key: ana, idempotencyKey: "k"))
            let version = try #require(first.json["planVersion"] as? Int)
            let replay = try await client.send(
                .post, "/v1/users/ana/events", Self.lunchLogged, headers: headers(key: ana, idempotencyKey: "k"))
            #expect(replay.headers[EventKey.replayedHeader] == "true")
            #expect(replay.json["planVersion"] as? Int == version)
        }
    }
}
