import Delivery
import EngagementKit
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Models
import Runtime
import Storage
import Synchronization
import Testing

@testable import engaged

/// A phone running EngagementKit against `engaged`: it mirrors the plan the server answers into
/// its notification center, pulls again when its own event's answer or the server's signal says
/// the plan moved, and holds exactly the server's local plan after each pull.
@Suite("engaged and EngagementKit: the phone mirrors the plan")
struct PhoneMirrorTests {
    @Test func theEventQueueAppliesEachEventOnceThoughAnswersAreLost() async throws {
        let server = try await TestServer()
        try await server.run { client in
            #expect(try await client.send(.put, "/v1/users/ana", berlin).status == .created)
            let queue = EventQueue(store: InMemoryEventQueueStore(userID: "ana", installation: "ana-phone"), seed: 9)
            let start = TestServer.start
            try await queue.enqueue(.activity(.mealLogged(.breakfast)), at: start - 3_600)  // offline since then
            try await queue.enqueue(.activity(.moodLogged), at: start - 60)
            try await queue.enqueue(.notificationPermission(allowed: true), at: start)
            let sender = PhoneLink(client: client, token: try await userToken("ana"), userID: "ana", lostAnswers: 1)
            let first = try await queue.flush(via: sender, at: start)
            #expect(first.sent == 0 && first.nextAttemptAt != nil)  // applied, answer lost
            let second = try await queue.flush(via: sender, at: try #require(first.nextAttemptAt))
            #expect(second.sent == 3 && second.planVersion != nil)
            let kinds = try server.store.activityEvents(userID: "ana", since: start - 86_400).map(\.kind)
            #expect(kinds == [.mealLogged(.breakfast), .moodLogged])
            // Recorded when they happened, not when they arrived.
            #expect(try server.store.activityEvents(userID: "ana", since: start - 86_400).first?.at == start - 3_600)
        }
    }

    @Test func thePhoneHoldsTheServersPlanThroughItsEventsAndTheBackendsChanges() async throws {
        let server = try await TestServer()
        try await server.run { client in
            #expect(try await client.send(.put, "/v1/users/ana", berlin).status == .created)
            var phone = KitPhone(link: PhoneLink(client: client, token: try await userToken("ana"), userID: "ana"))
            let now = TestServer.start

            // First launch: the whole plan, with its meal reminders.
            guard case .applied = try await phone.pull(at: now) else {
                Issue.record("the first pull placed nothing")
                return
            }
            #expect(phone.pendingIDs == (try await KitPhone.serverPlan(client)))
            #expect(phone.pendingIDs.contains { $0.rawValue.hasPrefix("mealReminder.") })
            #expect(try await phone.pull(at: now) == .unchanged)
            #expect(phone.lastStatus == .notModified)

            // The phone's own event: its answer says the plan moved; one pull follows it, and
            // today's lunch reminder is gone from the phone.
            let todaysLunch: Models.RequestID = "mealReminder.2027-03-01.lunch"
            #expect(phone.pendingIDs.contains(todaysLunch))
            let lunch = try await client.send(
                .post, "/v1/users/ana/events", #"{"type": "mealLogged", "meal": "lunch"}"#,
                headers: headers(key: phone.link.token))
            let version = try #require(lunch.json["planVersion"] as? Int)
            #expect(phone.sync.needsPull(signalled: version))
            _ = try await phone.pull(at: now)
            #expect(phone.sync.state.version == version)
            #expect(!phone.pendingIDs.contains(todaysLunch))
            #expect(phone.pendingIDs == (try await KitPhone.serverPlan(client)))

            // The backend disables meal reminders: the server signals (a sync row), the phone
            // pulls, and no meal reminder is left on it.
            let syncsBefore = try server.store.pendingOutbox(userID: "ana").filter { $0.channel == .silent }
            let put = try await client.send(
                .put, "/v1/users/ana",
                #"{"timeZone": "Europe/Berlin", "displayName": "Ana Test", "preferences": {"settings": {"mealReminder": "disabled"}}}"#
            )
            #expect(put.status == .ok)
            let syncs = try server.store.pendingOutbox(userID: "ana").filter { $0.channel == .silent }
            #expect(syncsBefore.isEmpty && syncs.count == 1)
            // The version the sync push carries, as the APNs channel reads it when it sends.
            let signalled = try await server.environment.runtime.localPlanVersion(of: "ana")
            #expect(phone.sync.needsPull(signalled: signalled))
            _ = try await phone.pull(at: now)
            #expect(phone.lastStatus == .ok && phone.sync.state.version == signalled)
            #expect(!phone.pendingIDs.contains { $0.rawValue.hasPrefix("mealReminder.") })
            #expect(!phone.pendingIDs.isEmpty)
            #expect(phone.pendingIDs == (try await KitPhone.serverPlan(client)))
        }
    }
}
