import Engagement
import Foundation
import HTTPTypes
import HummingbirdTesting
import Models
import Runtime
import Storage
import Testing

@testable import engaged

/// `timeZoneChanged`: the phone reports the zone it moved to. The engine plans the move as the
/// phone's own change (the answer's version says to pull; no sync is asked for), and the
/// `timeZone` group is stamped with the server's clock, so a backend write stamped earlier is
/// stale for it.
@Suite("engaged events: the phone's time zone")
struct TimeZoneEventTests {
    @Test func thePhonesZoneMovesThePlanAndStampsTheGroup() async throws {
        let server = try await TestServer()
        try await server.run(.live) { client in
            _ = try await client.send(.put, "/v1/users/ana", #"{"timeZone": "Europe/Berlin"}"#)
            let ana = try await userToken("ana")
            let versionBefore = try await server.environment.runtime.localPlanVersion(of: "ana")
            server.clock.advance(by: 600)
            let moved = try await client.send(
                .post, "/v1/users/ana/events", #"{"type": "timeZoneChanged", "timeZone": "Asia/Kathmandu"}"#,
                headers: headers(key: ana, idempotencyKey: "phone-1"))
            #expect(moved.status == .accepted)
            #expect(try #require(moved.json["planVersion"] as? Int) > versionBefore)
            // The phone's own change: answered with the version, no sync asked for.
            #expect(try !server.store.pendingOutbox(userID: "ana").contains { $0.channel == .silent })
            let read = try await client.send(.get, "/v1/users/ana")
            #expect(read.json["timeZone"] as? String == "Asia/Kathmandu")
            let stamped = (read.json["versions"] as? [String: Any])?["timeZone"] as? String
            #expect(stamped == "2027-03-01T06:10:00.000Z")
            #expect(try await server.environment.runtime.engine(of: "ana")?.zone.identifier == "Asia/Kathmandu")

            // The backend's write of the old zone, stamped before the phone's report, is stale.
            let late = try await client.send(
                .put, "/v1/users/ana", #"{"timeZone": "Europe/Berlin", "updatedAt": "2027-03-01T06:05:00Z"}"#)
            #expect(late.status == .ok)
            #expect(late.json["stale"] as? [String] == ["timeZone"])
            #expect(try await server.environment.runtime.engine(of: "ana")?.zone.identifier == "Asia/Kathmandu")
        }
    }

    @Test func aMoveReportedLateSaysWhenAndIsBoundedLikeAnActivity() async throws {
        let server = try await TestServer()
        try await server.run(.live) { client in
            _ = try await client.send(.put, "/v1/users/ana", #"{"timeZone": "Europe/Berlin"}"#)
            let before = try await server.environment.runtime.localPlanVersion(of: "ana")
            // Eight days before the server's clock (2027-03-01T06:00:00Z): refused, nothing moved.
            let tooOld = try await client.send(
                .post, "/v1/users/ana/events",
                #"{"type": "timeZoneChanged", "timeZone": "Asia/Tokyo", "at": "2027-02-21T06:00:00Z"}"#)
            tooOld.expectProblem(422, "invalid-field", field: "at", detailContains: "more than 7 days")
            #expect(try await server.environment.runtime.engine(of: "ana")?.zone.identifier == "Europe/Berlin")
            #expect(try await server.environment.runtime.localPlanVersion(of: "ana") == before)
            // An hour late: taken, the move planned from then.
            server.clock.advance(by: 3_600)
            let late = try await client.send(
                .post, "/v1/users/ana/events",
                #"{"type": "timeZoneChanged", "timeZone": "Asia/Tokyo", "at": "2027-03-01T06:00:00Z"}"#)
            #expect(late.status == .accepted)
            #expect(try await server.environment.runtime.engine(of: "ana")?.zone.identifier == "Asia/Tokyo")
        }
    }

    @Test(arguments: [
        (#"{"type": "timeZoneChanged", "timeZone": "Mars/Olympus"}"#, 422, "invalid-field", "unknown time zone"),
        (#"{"type": "timeZoneChanged"}"#, 400, "bad-request", "missing"),
        (#"{"type": "timeZoneChanged", "timeZone": 5}"#, 400, "bad-request", "String"),
    ])
    func aBadZoneIsRefusedAndChangesNothing(body: String, status: Int, slug: String, detail: String)
        async throws
    {
        let server = try await TestServer()
        try await server.run(.live) { client in
            _ = try await client.send(.put, "/v1/users/ana", #"{"timeZone": "Europe/Berlin"}"#)
            let before = try await server.environment.runtime.localPlanVersion(of: "ana")
            let response = try await client.send(.post, "/v1/users/ana/events", body)
            response.expectProblem(status, slug, field: "timeZone", detailContains: detail)
            #expect(try await server.environment.runtime.engine(of: "ana")?.zone.identifier == "Europe/Berlin")
            #expect(try await server.environment.runtime.localPlanVersion(of: "ana") == before)
        }
    }
}
