import Foundation
import Hummingbird
import HummingbirdTesting
import Models
import Runtime
import Storage
import Testing

@testable import engaged

/// The items of an explain answer.
private func items(_ response: TestResponse) -> [[String: Any]] {
    response.json["items"] as? [[String: Any]] ?? []
}

/// Every page of `uri` (which has no `cursor`) from `cursor` on, following `nextCursor`; at most
/// 100 pages.
private func allPages(_ client: any TestClientProtocol, _ uri: String, from cursor: String? = nil) async throws
    -> [[[String: Any]]]
{
    var pages: [[[String: Any]]] = []
    var cursor = cursor
    for _ in 0..<100 {
        let separator = uri.contains("?") ? "&" : "?"
        let response = try await client.send(.get, uri + (cursor.map { "\(separator)cursor=\($0)" } ?? ""))
        #expect(response.status == .ok, "\(response.text)")
        pages.append(items(response))
        guard let next = response.json["nextCursor"] as? String else { break }
        cursor = next
    }
    return pages
}

@Suite("engaged explain")
struct ExplainTests {
    @Test func explainListsTheDecisionsOfEventsAndOfDueWorkWithTheirReasons() async throws {
        let server = try await TestServer()
        try await server.run(.live) { client in
            #expect(try await client.send(.put, "/v1/users/ana", berlin).status == .created)
            let first = try await client.send(.get, "/v1/users/ana/explain")
            #expect(first.status == .ok)
            #expect(first.contentType == "application/json; charset=utf-8")
            #expect(first.json["timeZone"] as? String == "Europe/Berlin")
            #expect(first.json["since"] as? String == "2027-02-22T06:00:00Z")  // a week before the clock
            #expect(first.json["nextCursor"] is NSNull)
            let launched = items(first)
            #expect(!launched.isEmpty)
            for item in launched {
                #expect(item["input"] as? String == "appLaunched")
                #expect(item["at"] as? String == "2027-03-01T06:00:00Z")
                #expect(item["localTime"] as? String == "2027-03-01T07:00:00+01:00")
                #expect((item["id"] as? String).flatMap { Int64($0) } != nil)
                #expect(TraceDecision(rawValue: item["decision"] as? String ?? "") != nil)
                #expect(ReasonCode(rawValue: item["reason"] as? String ?? "") != nil, "\(item)")
                #expect((item["requestID"] as? String)?.isEmpty == false)
                #expect(NotificationKind(rawValue: item["kind"] as? String ?? "") != nil)
                if item["decision"] as? String == "scheduled" {
                    let fireAt = try #require(item["fireAt"] as? String)
                    #expect(Instant(iso8601: fireAt) != nil)
                    #expect((item["fireAtLocalTime"] as? String)?.hasSuffix("+01:00") == true)
                }
            }
            #expect(launched.contains { $0["decision"] as? String == "scheduled" })

            // Lunch logged before its reminder: the reminder is withdrawn because it is done.
            server.clock.advance(by: 3_600)
            let lunch = try await client.send(
                .post, "/v1/users/ana/events", #"{"type": "mealLogged", "meal": "lunch"}"#)
            #expect(lunch.status == .accepted)
            let afterLunch = items(try await client.send(.get, "/v1/users/ana/explain?since=2027-03-01T07:00:00Z"))
            #expect(!afterLunch.isEmpty)
            #expect(afterLunch.allSatisfy { $0["input"] as? String == "mealLogged" })
            #expect(
                afterLunch.contains {
                    $0["requestID"] as? String == "mealReminder.2027-03-01.lunch"
                        && $0["reason"] as? String == "alreadyDone" && ($0["detail"] as? String)?.isEmpty == false
                }, "\(afterLunch)")

            // A day on the clock: the due work (background jobs, the next day's plan) is traced too.
            let advanced = try await client.send(.post, "/v1/admin/clock", #"{"advanceSeconds": 86400}"#)
            #expect(advanced.status == .ok)
            let dueWork = items(try await client.send(.get, "/v1/users/ana/explain?since=2027-03-01T07:00:01Z"))
            #expect(dueWork.contains { ($0["input"] as? String)?.hasPrefix("backgroundTask:") == true }, "\(dueWork)")
            // Oldest first, by time then id.
            let all = items(try await client.send(.get, "/v1/users/ana/explain?limit=500"))
            let order = all.map { ($0["at"] as? String ?? "", Int64($0["id"] as? String ?? "") ?? 0) }
            #expect(order.map(\.0) == order.map(\.0).sorted())
            #expect(Set(order.map(\.1)).count == all.count)
            #expect(all.count == launched.count + afterLunch.count + dueWork.count)
        }
    }

    @Test func sinceKeepsTheDecisionsMadeAtOrAfterItAndDefaultsToTheLastWeek() async throws {
        let server = try await TestServer()
        try await server.run(.live) { client in
            _ = try await client.send(.put, "/v1/users/ana", berlin)
            server.clock.advance(by: 8 * 86_400)
            _ = try await client.send(.post, "/v1/users/ana/events", #"{"type": "appOpened"}"#)
            let fromStart = items(try await client.send(.get, "/v1/users/ana/explain?since=2027-03-01&limit=500"))
            #expect(fromStart.contains { $0["input"] as? String == "appLaunched" })
            // The default window (7 days before the clock's 2027-03-09T06:00Z) leaves the launch out.
            let lastWeek = try await client.send(.get, "/v1/users/ana/explain?limit=500")
            #expect(lastWeek.json["since"] as? String == "2027-03-02T06:00:00Z")
            #expect(!items(lastWeek).isEmpty)
            #expect(!items(lastWeek).contains { $0["input"] as? String == "appLaunched" })
            // Inclusive: the decisions of the event, made at exactly the clock's time, are kept.
            let now = items(try await client.send(.get, "/v1/users/ana/explain?since=2027-03-09T06:00:00Z"))
            #expect(!now.isEmpty && now.allSatisfy { $0["at"] as? String == "2027-03-09T06:00:00Z" })
            // An offset is understood (%2B is +).
            let offset = items(try await client.send(.get, "/v1/users/ana/explain?since=2027-03-09T07:00:00%2B01:00"))
            #expect(offset.count == now.count)
            let future = try await client.send(.get, "/v1/users/ana/explain?since=2030-01-01T00:00:00Z")
            #expect(future.status == .ok && items(future).isEmpty && future.json["nextCursor"] is NSNull)
        }
    }

    @Test func pagesFollowTheCursorAndStayStableWhileDecisionsArrive() async throws {
        let server = try await TestServer()
        try await server.run(.live) { client in
            _ = try await client.send(.put, "/v1/users/ana", berlin)
            server.clock.advance(by: 600)
            _ = try await client.send(.post, "/v1/users/ana/events", #"{"type": "mealLogged", "meal": "breakfast"}"#)
            let whole = items(try await client.send(.get, "/v1/users/ana/explain?limit=500"))
            #expect(whole.count >= 4, "\(whole)")

            let firstPage = try await client.send(.get, "/v1/users/ana/explain?limit=2")
            #expect(items(firstPage).count == 2)
            let cursor = try #require(firstPage.json["nextCursor"] as? String)
            // Decisions arrive between two pages: the walk neither repeats nor skips one.
            server.clock.advance(by: 600)
            _ = try await client.send(.post, "/v1/users/ana/events", #"{"type": "mealLogged", "meal": "lunch"}"#)
            let after = items(try await client.send(.get, "/v1/users/ana/explain?limit=500"))
            #expect(after.count > whole.count)
            let rest = try await allPages(client, "/v1/users/ana/explain?limit=3&since=2027-02-01T00:00:00Z")
            let walked =
                items(firstPage)
                + (try await allPages(client, "/v1/users/ana/explain?limit=3", from: cursor))
                .flatMap { $0 }
            #expect(walked.map { $0["id"] as? String } == after.map { $0["id"] as? String })
            #expect(rest.flatMap { $0 }.map { $0["id"] as? String } == after.map { $0["id"] as? String })
            #expect(rest.dropLast().allSatisfy { $0.count == 3 })
            #expect(rest.last.map { $0.count <= 3 } == true)
        }
    }

    @Test(arguments: [
        ("since=yesterday", "since"),
        ("since=2027-13-01T00:00:00Z", "since"),
        ("since=", "since"),
        ("limit=0", "limit"),
        ("limit=501", "limit"),
        ("limit=ten", "limit"),
        ("limit=", "limit"),
        ("cursor=garbage", "cursor"),
        ("limit=2&limit=3", "limit"),
        ("cursor=t", "cursor"),
        ("cursor=MToy", "cursor"),  // "1:2" without the `t` of this server's cursors
        ("cursor=tMTotMQ", "cursor"),  // "1:-1": not a record id
    ])
    func aBadQueryIsRefusedNamingItsParameter(query: String, field: String) async throws {
        try await TestServer().run(.live) { client in
            _ = try await client.send(.put, "/v1/users/ana", berlin)
            let response = try await client.send(.get, "/v1/users/ana/explain?\(query)")
            response.expectProblem(400, "bad-request", field: field)
        }
    }

    @Test func anUnknownUserIs404AndTheRouteNeedsTheKey() async throws {
        try await TestServer().run(.live) { client in
            let unknown = try await client.send(.get, "/v1/users/nobody/explain")
            unknown.expectProblem(404, "not-found", detailContains: "nobody")
            _ = try await client.send(.put, "/v1/users/ana", berlin)
            let withoutKey = try await client.send(.get, "/v1/users/ana/explain", headers: headers(key: nil))
            withoutKey.expectProblem(401, "unauthorized")
            let badID = try await client.send(.get, "/v1/users/bad!id/explain")
            badID.expectProblem(400, "bad-request", field: "id")
        }
    }

    @Test func aCursorRoundTripsItsPosition() {
        let position = TracePosition(at: Instant(iso8601: "2027-03-01T06:00:00Z")!, id: 12_345)
        let cursor = TraceCursor.encode(position)
        #expect(TraceCursor.decode(cursor) == position)
        #expect(!cursor.contains("=") && !cursor.contains("+") && !cursor.contains("/"))
    }
}
