import Foundation
import Hummingbird
import HummingbirdTesting
import Models
import Runtime
import Storage
import Testing

@testable import engaged

private let token = String(repeating: "0123456789abcdef", count: 4)
private let otherToken = String(repeating: "fe", count: 32)

private func deviceBody(_ token: String, _ environment: String = "sandbox", extra: String = "") -> String {
    #"{"token": "\#(token)", "environment": "\#(environment)"\#(extra)}"#
}

@Suite("engaged devices")
struct DeviceRoutesTests {
    @Test func aTokenIsRegisteredListedReregisteredAndRemoved() async throws {
        let server = try await TestServer()
        try await server.run(.live) { client in
            _ = try await client.send(.put, "/v1/users/ana", berlin)
            let created = try await client.send(.post, "/v1/users/ana/devices", deviceBody(token))
            #expect(created.status == .created)
            #expect(created.json.keys.sorted() == ["environment", "id", "platform", "registeredAt"])
            #expect(created.json["id"] as? String == token)
            #expect(created.json["environment"] as? String == "sandbox")
            #expect(created.json["platform"] as? String == "ios")
            #expect(created.json["registeredAt"] as? String == "2027-03-01T06:00:00Z")

            // The same token in capitals is the same token: re-registered, now for production.
            server.clock.advance(by: 60)
            let again = try await client.send(
                .post, "/v1/users/ana/devices",
                deviceBody(token.uppercased(), "production", extra: #", "platform": "ios""#))
            #expect(again.status == .ok)
            #expect(again.json["id"] as? String == token)
            #expect(again.json["environment"] as? String == "production")

            let list = try await client.send(.get, "/v1/users/ana/devices")
            #expect(list.status == .ok)
            #expect(list.json.keys.sorted() == ["items", "nextCursor"])
            #expect(list.json["nextCursor"] is NSNull)
            let items = try #require(list.json["items"] as? [[String: Any]])
            #expect(items.map { $0["id"] as? String } == [token])
            #expect(items.first?["registeredAt"] as? String == "2027-03-01T06:01:00Z")

            let removed = try await client.send(.delete, "/v1/users/ana/devices/\(token.uppercased())")
            #expect(removed.status == .noContent)
            #expect(removed.body.readableBytes == 0)
            let gone = try await client.send(.delete, "/v1/users/ana/devices/\(token)")
            gone.expectProblem(404, "not-found", detailContains: "no device")
            #expect(try server.store.devices(userID: "ana").isEmpty)
        }
    }

    @Test func aTokenMovesToTheUserWhoRegistersItLast() async throws {
        let server = try await TestServer()
        try await server.run(.live) { client in
            _ = try await client.send(.put, "/v1/users/ana", berlin)
            _ = try await client.send(.put, "/v1/users/ben", berlin)
            _ = try await client.send(.post, "/v1/users/ana/devices", deviceBody(token))
            _ = try await client.send(.post, "/v1/users/ana/devices", deviceBody(otherToken))
            let moved = try await client.send(.post, "/v1/users/ben/devices", deviceBody(token, "production"))
            #expect(moved.status == .created)
            let ana = try await client.send(.get, "/v1/users/ana/devices")
            #expect((ana.json["items"] as? [[String: Any]])?.map { $0["id"] as? String } == [otherToken])
            let ben = try await client.send(.get, "/v1/users/ben/devices")
            #expect((ben.json["items"] as? [[String: Any]])?.map { $0["id"] as? String } == [token])
            // Ana no longer has it: removing it for her is 404 and leaves Ben's.
            let notHers = try await client.send(.delete, "/v1/users/ana/devices/\(token)")
            notHers.expectProblem(404, "not-found")
            #expect(try server.store.devices(userID: "ben").map(\.token) == [token])
        }
    }

    @Test func devicesOfAnUnknownUserAre404AndNothingIsStored() async throws {
        let server = try await TestServer()
        try await server.run(.live) { client in
            let post = try await client.send(.post, "/v1/users/nobody/devices", deviceBody(token))
            post.expectProblem(404, "not-found", detailContains: "nobody")
            let list = try await client.send(.get, "/v1/users/nobody/devices")
            list.expectProblem(404, "not-found", detailContains: "nobody")
            let delete = try await client.send(.delete, "/v1/users/nobody/devices/\(token)")
            delete.expectProblem(404, "not-found", detailContains: "nobody")
            #expect(try server.store.devices(userID: "nobody").isEmpty)
        }
    }

    @Test(arguments: [
        (deviceBody("xyz" + String(token.dropFirst(3))), 422, "invalid-field", "token", "hex digits only"),
        (deviceBody(token + "0"), 422, "invalid-field", "token", "even number"),
        (deviceBody(String(token.dropFirst(2))), 422, "invalid-field", "token", "64 to 200"),
        (deviceBody(String(repeating: "ab", count: 101)), 422, "invalid-field", "token", "64 to 200"),
        (deviceBody(""), 422, "invalid-field", "token", "64 to 200"),
        (deviceBody(token, "development"), 422, "invalid-field", "environment", "development"),
        (deviceBody(token, extra: #", "platform": "android""#), 422, "invalid-field", "platform", "android"),
        (deviceBody(token, extra: #", "model": "iPhone""#), 422, "invalid-field", "model", "unknown key"),
        (#"{"environment": "sandbox"}"#, 400, "bad-request", "token", "missing"),
        (#"{"token": 12, "environment": "sandbox"}"#, 400, "bad-request", "token", "String"),
        (#"{"token": "\#(token)"}"#, 400, "bad-request", "environment", "missing"),
    ])
    func aBadRegistrationIsRefusedNamingItsField(body: String, status: Int, slug: String, field: String, detail: String)
        async throws
    {
        let server = try await TestServer()
        try await server.run(.live) { client in
            _ = try await client.send(.put, "/v1/users/ana", berlin)
            let response = try await client.send(.post, "/v1/users/ana/devices", body)
            response.expectProblem(status, slug, field: field, detailContains: detail)
            #expect(try server.store.devices(userID: "ana").isEmpty)
        }
    }

    @Test(arguments: ["not-hex", String(token.dropFirst(2)), token + "0"])
    func aBadTokenInThePathIs400(path: String) async throws {
        try await TestServer().run(.live) { client in
            _ = try await client.send(.put, "/v1/users/ana", berlin)
            let response = try await client.send(.delete, "/v1/users/ana/devices/\(path)")
            response.expectProblem(400, "bad-request", field: "token")
        }
    }

    @Test func anAppRegistersAndRemovesItsOwnTokenWithTheUsersToken() async throws {
        let server = try await TestServer()
        try await server.run(.live) { client in
            _ = try await client.send(.put, "/v1/users/ana", berlin)
            _ = try await client.send(.put, "/v1/users/bob", berlin)
            let ana = try await userToken("ana")
            // bob's phone holds otherToken; ana's token cannot take it (409), the API key can.
            #expect(try await client.send(.post, "/v1/users/bob/devices", deviceBody(otherToken)).status == .created)
            try await client.send(.post, "/v1/users/ana/devices", deviceBody(otherToken), headers: headers(key: ana))
                .expectProblem(409, "held-by-another-user")
            #expect(try server.store.devices(userID: "bob").map(\.token) == [otherToken])
            #expect(try server.store.devices(userID: "ana").isEmpty)
            let registered = try await client.send(
                .post, "/v1/users/ana/devices", deviceBody(token), headers: headers(key: ana))
            #expect(registered.status == .created && registered.json["id"] as? String == token)
            #expect(try await client.send(.get, "/v1/users/ana/devices", headers: headers(key: ana)).status == .ok)
            // Another user's routes stay closed to ana's token, and nothing of bob's moves.
            for (method, uri, body) in [
                (HTTPRequest.Method.post, "/v1/users/bob/devices", deviceBody(otherToken) as String?),
                (.get, "/v1/users/bob/devices", nil), (.delete, "/v1/users/bob/devices/\(token)", nil),
            ] {
                try await client.send(method, uri, body, headers: headers(key: ana)).expectProblem(403, "forbidden")
            }
            #expect(try server.store.devices(userID: "bob").map(\.token) == [otherToken])
            let removed = try await client.send(.delete, "/v1/users/ana/devices/\(token)", headers: headers(key: ana))
            #expect(removed.status == .noContent)
            #expect(try server.store.devices(userID: "ana").isEmpty)
            #expect(try await client.send(.post, "/v1/users/ana/devices", deviceBody(otherToken)).status == .created)
            #expect(try server.store.devices(userID: "bob").isEmpty)
        }
    }

    @Test func devicesNeedTheAPIKeyOrTheUsersToken() async throws {
        let server = try await TestServer()
        try await server.run(.live) { client in
            _ = try await client.send(.put, "/v1/users/ana", berlin)
            for (method, uri, body) in [
                (HTTPRequest.Method.post, "/v1/users/ana/devices", deviceBody(token) as String?),
                (.get, "/v1/users/ana/devices", nil), (.delete, "/v1/users/ana/devices/\(token)", nil),
            ] {
                let response = try await client.send(method, uri, body, headers: headers(key: "wrong"))
                response.expectProblem(401, "unauthorized")
            }
            #expect(try server.store.devices(userID: "ana").isEmpty)
        }
    }
}
