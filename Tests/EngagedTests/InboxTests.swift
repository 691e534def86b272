import Foundation
import Hummingbird
import HummingbirdTesting
import Models
import Runtime
import Storage
import Testing

@testable import engaged

/// The counts of an inbox answer, in the order unseen, unread, total, badge.
private func counts(_ json: [String: Any]) -> [Int] {
    ["unseen", "unread", "total", "badge"].map { json[$0] as? Int ?? -1 }
}

private func items(_ json: [String: Any]) -> [[String: Any]] { json["items"] as? [[String: Any]] ?? [] }
private func ids(_ json: [String: Any]) -> [String] { items(json).compactMap { $0["id"] as? String } }

extension TestClientProtocol {
    /// Creates ana (Europe/Berlin) and moves the clock a day on, which delivers a day of items.
    fileprivate func anaWithADayOfItems() async throws {
        #expect(try await send(.put, "/v1/users/ana", berlin).status == .created)
        #expect(try await send(.post, "/v1/admin/clock", #"{"advanceSeconds": 86400}"#).status == .ok)
    }

    fileprivate func advanceADay() async throws {
        #expect(try await send(.post, "/v1/admin/clock", #"{"advanceSeconds": 86400}"#).status == .ok)
    }

    fileprivate func inbox(_ query: String = "", key: String? = TestServer.apiKey) async throws -> [String: Any] {
        let response = try await send(.get, "/v1/users/ana/inbox" + query, headers: headers(key: key))
        #expect(response.status == .ok, "\(response.text)")
        return response.json
    }

    fileprivate func setState(_ item: String, _ state: String) async throws -> TestResponse {
        try await send(.post, "/v1/users/ana/inbox/\(item)", #"{"state": "\#(state)"}"#)
    }
}

@Suite("engaged inbox")
struct InboxRouteTests {
    @Test func theInboxListsDeliveredItemsNewestFirstWithCounts() async throws {
        let server = try await TestServer()
        try await server.run(.live) { client in
            #expect(try await client.send(.put, "/v1/users/ana", berlin).status == .created)
            let empty = try await client.inbox()
            #expect(items(empty).isEmpty)
            #expect(empty.keys.contains("nextCursor") && empty["nextCursor"] is NSNull)
            #expect(counts(empty) == [0, 0, 0, 0])

            try await client.advanceADay()
            let page = try await client.inbox("?limit=100")
            let list = items(page)
            #expect(!list.isEmpty)
            let breakfast = try #require(
                list.first { $0["requestID"] as? String == "mealReminder.2027-03-01.breakfast" })
            #expect(breakfast["kind"] as? String == "mealReminder")
            #expect((breakfast["title"] as? String)?.isEmpty == false)
            #expect((breakfast["body"] as? String)?.isEmpty == false)
            #expect(breakfast["state"] as? String == "unseen")
            #expect(UUID(uuidString: breakfast["id"] as? String ?? "") != nil)
            let delivered = list.compactMap { ($0["deliveredAt"] as? String).flatMap(Instant.init(iso8601:)) }
            #expect(delivered.count == list.count)
            #expect(delivered == delivered.sorted(by: >))
            #expect(counts(page) == [list.count, list.count, list.count, list.count])
            // The store holds exactly what the route lists.
            #expect(try server.store.inboxPage(userID: "ana", before: nil, limit: 100).items.map(\.id) == ids(page))
        }
    }

    /// Credentials that open no inbox of ana's.
    enum WrongCredential: CaseIterable {
        case none, word, empty, zeros, anotherServersToken, uppercasedToken, twoTokensJoined, userIDAndDot

        func value() async throws -> String? {
            switch self {
            case .none: nil
            case .word: "wrong"
            case .empty: ""
            case .zeros: String(repeating: "0", count: 64)
            case .anotherServersToken:
                try await UserTokenAuthority(
                    keys: UserTokenKeys(keys: [.init(id: "k2", secret: Array(repeating: 7, count: 32))])
                ).mint(for: "ana", now: TestServer.start, ttlSeconds: 3_600).token
            case .uppercasedToken: try await userToken("ana").uppercased()
            case .twoTokensJoined: try await "ana." + userToken("bob")
            case .userIDAndDot: "ana."
            }
        }
    }

    @Test(arguments: WrongCredential.allCases)
    func theInboxRefusesAMissingOrWrongCredential(credential: WrongCredential) async throws {
        let key = try await credential.value()
        let server = try await TestServer()
        try await server.run(.live) { client in
            try await client.anaWithADayOfItems()
            let before = try server.store.inboxPage(userID: "ana", before: nil, limit: 100)
            let item = try #require(before.items.first).id
            let requests: [(HTTPRequest.Method, String, String?)] = [
                (.get, "/v1/users/ana/inbox", nil), (.post, "/v1/users/ana/inbox/read-all", nil),
                (.post, "/v1/users/ana/inbox/\(item)", #"{"state": "read"}"#),
            ]
            for (method, uri, body) in requests {
                let response = try await client.send(method, uri, body, headers: headers(key: key))
                response.expectProblem(401, "unauthorized")
                #expect(response.headers[.wwwAuthenticate] == "Bearer")
            }
            #expect(try server.store.inboxPage(userID: "ana", before: nil, limit: 100) == before)
        }
    }

    @Test func aUserTokenOpensItsOwnInboxAndNoOneElses() async throws {
        let server = try await TestServer()
        try await server.run(.live) { client in
            try await client.anaWithADayOfItems()
            #expect(try await client.send(.put, "/v1/users/bob", berlin).status == .created)
            let ana = try await userToken("ana")
            let page = try await client.inbox(key: ana)
            #expect(!items(page).isEmpty)
            let item = try #require(ids(page).first)
            let read = try await client.send(
                .post, "/v1/users/ana/inbox/\(item)", #"{"state": "read"}"#, headers: headers(key: ana))
            #expect(read.status == .ok)
            let readAll = try await client.send(.post, "/v1/users/ana/inbox/read-all", headers: headers(key: ana))
            #expect(readAll.status == .ok)
            #expect(readAll.json["unread"] as? Int == 0)

            // bob's valid token on ana's inbox: 403; a valid token names its user, known or not.
            let bob = try await userToken("bob")
            let other = try await client.send(.get, "/v1/users/ana/inbox", headers: headers(key: bob))
            other.expectProblem(403, "forbidden", detailContains: "another user")
            let stranger = try await client.send(
                .get, "/v1/users/ana/inbox", headers: headers(key: try await userToken("nobody")))
            stranger.expectProblem(403, "forbidden")
            #expect(try await client.send(.get, "/v1/users/bob/inbox", headers: headers(key: bob)).status == .ok)

            // The other /v1 routes take the API key only, but for the events (the app's own).
            let schedule = try await client.send(.get, "/v1/users/ana/schedule", headers: headers(key: ana))
            schedule.expectProblem(401, "unauthorized")
            let event = try await client.send(
                .post, "/v1/users/ana/events", #"{"type": "appOpened"}"#, headers: headers(key: ana))
            #expect(event.status == .accepted)
        }
    }

    @Test func pagesStayStableWhileNewItemsArrive() async throws {
        let server = try await TestServer()
        try await server.run(.live) { client in
            try await client.anaWithADayOfItems()
            let firstDay = ids(try await client.inbox("?limit=100"))
            try #require(firstDay.count >= 3)
            let first = try await client.inbox("?limit=2")
            #expect(ids(first) == Array(firstDay.prefix(2)))
            var cursor = try #require(first["nextCursor"] as? String)

            try await client.advanceADay()  // new items are delivered between two pages
            var walked = ids(first)
            for _ in 0..<firstDay.count {
                let page = try await client.inbox("?cursor=\(cursor)&limit=2")
                #expect(counts(page)[3] == counts(page)[1])  // badge == unread
                walked += ids(page)
                guard let next = page["nextCursor"] as? String else { break }
                cursor = next
            }
            #expect(walked == firstDay)  // no duplicates, no gaps
            // A fresh first page starts with the new items.
            let fresh = ids(try await client.inbox("?limit=100&cursor="))
            #expect(fresh.count > firstDay.count)
            #expect(Array(fresh.suffix(firstDay.count)) == firstDay)
        }
    }

    @Test func readAllCoversWhatWasDeliveredAndNotWhatComesAfter() async throws {
        let server = try await TestServer()
        try await server.run(.live) { client in
            try await client.anaWithADayOfItems()
            let before = try await client.inbox("?limit=100")
            let total = items(before).count
            for body in [nil, "{}"] {
                let readAll = try await client.send(.post, "/v1/users/ana/inbox/read-all", body)
                #expect(readAll.status == .ok)
                #expect(counts(readAll.json) == [0, 0, total, 0])
            }
            let after = try await client.inbox("?limit=100")
            #expect(items(after).allSatisfy { $0["state"] as? String == "read" })

            try await client.advanceADay()  // arrives after the read-all: unread
            let later = try await client.inbox("?limit=100")
            let fresh = items(later).filter { !ids(before).contains($0["id"] as? String ?? "") }
            #expect(!fresh.isEmpty)
            #expect(fresh.allSatisfy { $0["state"] as? String == "unseen" })
            #expect(counts(later) == [fresh.count, fresh.count, total + fresh.count, fresh.count])
        }
    }

    @Test func statesMoveOnlyForwardAndTheBadgeFollowsUnread() async throws {
        let server = try await TestServer()
        try await server.run(.live) { client in
            try await client.anaWithADayOfItems()
            let page = try await client.inbox("?limit=100")
            let n = items(page).count
            let item = try #require(ids(page).first)
            let steps: [(ask: String, stands: String, counts: [Int])] = [
                ("seen", "seen", [n - 1, n, n, n]),
                ("read", "read", [n - 1, n - 1, n, n - 1]),
                ("seen", "read", [n - 1, n - 1, n, n - 1]),  // back: nothing changes
                ("archived", "archived", [n - 1, n - 1, n - 1, n - 1]),
                ("read", "archived", [n - 1, n - 1, n - 1, n - 1]),
            ]
            for step in steps {
                let response = try await client.setState(item, step.ask)
                #expect(response.status == .ok, "\(response.text)")
                let answered = response.json["item"] as? [String: Any]
                #expect(answered?["id"] as? String == item)
                #expect(answered?["state"] as? String == step.stands)
                #expect(counts(response.json) == step.counts)
                #expect(counts(try await client.inbox()) == step.counts)
            }
            // Archived: out of the list.
            #expect(!ids(try await client.inbox("?limit=100")).contains(item))
        }
    }

    @Test(arguments: [
        ("?limit=abc", 400, "bad-request", "limit"),
        ("?limit=", 400, "bad-request", "limit"),
        ("?limit=0", 422, "invalid-field", "limit"),
        ("?limit=101", 422, "invalid-field", "limit"),
        ("?cursor=garbage", 400, "bad-request", "cursor"),
        ("?cursor=aW5ib3g6MA", 400, "bad-request", "cursor"),
        ("?limit=5&limit=6", 400, "bad-request", "limit"),
        ("?page=2", 400, "bad-request", "page"),
    ])
    func aBadQueryIsRefusedNamingItsParameter(query: String, status: Int, slug: String, field: String) async throws {
        let server = try await TestServer()
        try await server.run(.live) { client in
            try await client.anaWithADayOfItems()
            let response = try await client.send(.get, "/v1/users/ana/inbox" + query)
            response.expectProblem(status, slug, field: field)
        }
    }

    @Test(arguments: [
        (#"{"state": "unseen"}"#, 422, "invalid-field", "state"),
        (#"{"state": "deleted"}"#, 422, "invalid-field", "state"),
        (#"{"state": "read", "at": "now"}"#, 422, "invalid-field", "at"),
        (#"{"state": 2}"#, 400, "bad-request", "state"),
        (#"{}"#, 400, "bad-request", "state"),
        ("not json", 400, "bad-request", nil),
        ("", 400, "bad-request", nil),
    ])
    func aBadStateBodyIsRefusedAndChangesNothing(body: String, status: Int, slug: String, field: String?)
        async throws
    {
        let server = try await TestServer()
        try await server.run(.live) { client in
            try await client.anaWithADayOfItems()
            let before = try server.store.inboxPage(userID: "ana", before: nil, limit: 100)
            let item = try #require(before.items.first).id
            let response = try await client.send(.post, "/v1/users/ana/inbox/\(item)", body)
            response.expectProblem(status, slug, field: field)
            #expect(try server.store.inboxPage(userID: "ana", before: nil, limit: 100) == before)
        }
    }

    @Test func badPathsAndBodiesOfTheOtherRoutesAreRefused() async throws {
        let server = try await TestServer()
        try await server.run(.live) { client in
            try await client.anaWithADayOfItems()
            let before = try server.store.inboxPage(userID: "ana", before: nil, limit: 100)
            let read = #"{"state": "read"}"#
            for item in ["not-an-item", "0F8E2C1A-4B3D-8E6F-9A1B-2C3D4E5F6A7B", String(repeating: "a", count: 36)] {
                let response = try await client.send(.post, "/v1/users/ana/inbox/\(item)", read)
                response.expectProblem(400, "bad-request", field: "item")
            }
            let unknownItem = try await client.send(
                .post, "/v1/users/ana/inbox/0f8e2c1a-4b3d-8e6f-9a1b-2c3d4e5f6a7b", read)
            unknownItem.expectProblem(404, "not-found", detailContains: "no inbox item")
            let readAllWithAKey = try await client.send(.post, "/v1/users/ana/inbox/read-all", #"{"upTo": 3}"#)
            readAllWithAKey.expectProblem(422, "invalid-field", field: "upTo")
            let readAllNotJSON = try await client.send(.post, "/v1/users/ana/inbox/read-all", "all")
            readAllNotJSON.expectProblem(400, "bad-request")
            let badUser = try await client.send(.get, "/v1/users/bad!id/inbox")
            badUser.expectProblem(400, "bad-request", field: "id")
            #expect(try server.store.inboxPage(userID: "ana", before: nil, limit: 100) == before)

            // An unknown user is 404 on every route, with the API key or a token for that id.
            for key in [TestServer.apiKey, try await userToken("nobody")] {
                let requests: [(HTTPRequest.Method, String, String?)] = [
                    (.get, "/v1/users/nobody/inbox", nil), (.post, "/v1/users/nobody/inbox/read-all", nil),
                    (.post, "/v1/users/nobody/inbox/\(before.items[0].id)", read),
                ]
                for (method, uri, body) in requests {
                    let response = try await client.send(method, uri, body, headers: headers(key: key))
                    response.expectProblem(404, "not-found", detailContains: "nobody")
                }
            }
            // Last: the server may close a connection whose body it refused to read.
            let tooLarge = try await client.send(
                .post, "/v1/users/ana/inbox/\(before.items[0].id)",
                #"{"state": "read", "pad": "\#(String(repeating: "x", count: 70 * 1_024))"}"#)
            tooLarge.expectProblem(413, "body-too-large")
            #expect(try server.store.inboxPage(userID: "ana", before: nil, limit: 100) == before)
        }
    }
}
