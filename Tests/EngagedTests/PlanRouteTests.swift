import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Models
import Testing

@testable import engaged

/// `GET /v1/users/{id}/plan`: the local notifications the server planned, with their content,
/// triggers and a version an app can ask with `If-None-Match`.
@Suite("engaged plan")
struct PlanRouteTests {
    static func requests(_ response: TestResponse) -> [[String: Any]] {
        response.json["requests"] as? [[String: Any]] ?? []
    }

    func withAna(_ test: @escaping @Sendable (any TestClientProtocol) async throws -> Void) async throws {
        let server = try await TestServer()
        try await server.run { client in
            #expect(try await client.send(.put, "/v1/users/ana", berlin).status == .created)
            try await test(client)
        }
    }

    @Test func thePlanHoldsEachLocalRequestWithItsContentAndTrigger() async throws {
        try await withAna { client in
            let plan = try await client.send(.get, "/v1/users/ana/plan")
            #expect(plan.status == .ok, "\(plan.text)")
            #expect(plan.json["timeZone"] as? String == "Europe/Berlin")
            let horizon = try #require((plan.json["horizonEnd"] as? String).flatMap { Instant(iso8601: $0) })
            #expect(horizon > TestServer.start)
            let requests = Self.requests(plan)
            #expect(!requests.isEmpty)
            for request in requests {
                let kind = try #require(request["kind"] as? String)
                #expect(["morningGreeting", "mealReminder", "hydration", "workoutReminder"].contains(kind), "\(kind)")
                #expect((request["title"] as? String)?.isEmpty == false)
                #expect((request["body"] as? String)?.isEmpty == false)
                #expect(request["categoryIdentifier"] is String && request["threadIdentifier"] is String)
                #expect(request["interruptionLevel"] is String && request["relevanceScore"] is Double)
                #expect(request.keys.contains("subtitle") && request.keys.contains("sound"))
                #expect((request["userInfo"] as? [String: String])?["kind"] == kind)
                let next = try #require((request["nextFireAt"] as? String).flatMap { Instant(iso8601: $0) })
                #expect(next > TestServer.start)
                let trigger = try #require(request["trigger"] as? [String: Any])
                switch trigger["type"] as? String {
                case "date": #expect(trigger["fireAt"] as? String == request["nextFireAt"] as? String)
                case "calendar": #expect(trigger["hour"] is Int && trigger["repeats"] is Bool)
                default: Issue.record("unexpected trigger \(trigger)")
                }
                let withdrawnBy = try #require(request["withdrawnBy"] as? [[String: Any]], "\(request)")
                if kind == "mealReminder" {
                    // That meal, logged on the reminder's local day in Berlin, after the server's news.
                    let identifier = try #require(request["identifier"] as? String)
                    let meal = try #require(identifier.split(separator: ".").last.map(String.init))
                    let withdrawal = try #require(withdrawnBy.first)
                    #expect(withdrawnBy.count == 1 && withdrawal["activity"] as? String == "mealLogged")
                    #expect(withdrawal["meal"] as? String == meal)
                    let from = try #require((withdrawal["from"] as? String).flatMap { Instant(iso8601: $0) })
                    let until = try #require((withdrawal["until"] as? String).flatMap { Instant(iso8601: $0) })
                    let zone = try #require(ZoneRules(identifier: "Europe/Berlin"))
                    // Until the local day's end, from its start or what the server last heard.
                    #expect(zone.localDateTime(at: until).secondOfDay == 0 && until > from && until - from <= 86_400)
                } else if kind == "morningGreeting" || kind == "hydration" {
                    #expect(withdrawnBy.isEmpty)
                }
            }
            // Soonest first; no remote kind (those are pushed when due).
            let times = requests.compactMap { $0["nextFireAt"] as? String }
            #expect(times == times.sorted())
        }
    }

    @Test func theVersionIsTheETagAndIfNoneMatchAnswers304UntilThePlanChanges() async throws {
        try await withAna { client in
            let first = try await client.send(.get, "/v1/users/ana/plan")
            let version = try #require(first.json["version"] as? Int)
            let tag = "W/\"\(version)\""
            #expect(first.headers[.eTag] == tag)
            for header in [tag, "\"\(version)\"", "\"other\", \(tag)", "*"] {
                var fields = headers()
                fields[.ifNoneMatch] = header
                let again = try await client.send(.get, "/v1/users/ana/plan", headers: fields)
                #expect(again.status == .notModified, "\(header)")
                #expect(again.headers[.eTag] == tag)
                #expect(again.body.readableBytes == 0)
            }
            for header in ["\"\(version + 1)\"", "\"other\", *", "", "W/ \"\(version)\""] {
                var other = headers()
                other[.ifNoneMatch] = header
                #expect(try await client.send(.get, "/v1/users/ana/plan", headers: other).status == .ok, "\(header)")
            }

            // An event that changes nothing local keeps the version, and its answer says so.
            let mood = try await client.send(.post, "/v1/users/ana/events", #"{"type": "moodLogged"}"#)
            #expect(mood.status == .accepted)
            #expect(mood.json["planVersion"] as? Int == version)

            // Lunch logged: today's lunch reminder goes, and with it the version; the answer
            // carries the new one, which the plan then answers.
            let lunch = Self.requests(first).compactMap { $0["identifier"] as? String }.filter {
                $0.hasSuffix(".lunch")
            }
            #expect(!lunch.isEmpty)
            let event = try await client.send(
                .post, "/v1/users/ana/events", #"{"type": "mealLogged", "meal": "lunch"}"#)
            #expect(event.status == .accepted)
            let newVersion = try #require(event.json["planVersion"] as? Int)
            #expect(newVersion > version)
            var stale = headers()
            stale[.ifNoneMatch] = tag
            let changed = try await client.send(.get, "/v1/users/ana/plan", headers: stale)
            #expect(changed.status == .ok)
            #expect(changed.json["version"] as? Int == newVersion)
            #expect(changed.headers[.eTag] == "W/\"\(newVersion)\"")
            let identifiers = Self.requests(changed).compactMap { $0["identifier"] as? String }
            #expect(identifiers.contains(lunch[0]) == false)

        }
    }

    @Test func sinceAKeptVersionAnswersWhatChangedAndAnyOtherTheWholePlan() async throws {
        try await withAna { client in
            let first = try await client.send(.get, "/v1/users/ana/plan")
            let version = try #require(first.json["version"] as? Int)
            #expect(first.json["since"] == nil && first.json["removed"] == nil, "a whole plan says so")
            let lunch = try #require(
                Self.requests(first).compactMap { $0["identifier"] as? String }.first { $0.hasSuffix(".lunch") })
            let event = try await client.send(
                .post, "/v1/users/ana/events", #"{"type": "mealLogged", "meal": "lunch"}"#)
            let newVersion = try #require(event.json["planVersion"] as? Int)

            // From the version answered: only what changed, and lunch removed.
            let delta = try await client.send(.get, "/v1/users/ana/plan?since=\(version)")
            #expect(delta.status == .ok && delta.headers[.eTag] == "W/\"\(newVersion)\"")
            #expect(delta.json["version"] as? Int == newVersion && delta.json["since"] as? Int == version)
            let removed = try #require(delta.json["removed"] as? [String])
            #expect(removed.contains(lunch) && removed == removed.sorted())
            let changed = Self.requests(delta).compactMap { $0["identifier"] as? String }
            #expect(changed.count < Self.requests(first).count - removed.count, "\(changed)")
            // From a version never answered: the whole plan.
            let whole = try await client.send(.get, "/v1/users/ana/plan?since=\(version - 1)")
            #expect(whole.status == .ok && whole.json["since"] == nil && whole.json["removed"] == nil)
            #expect(Self.requests(whole).count == Self.requests(first).count - 1)
            // From the version held, with If-None-Match naming it: 304, as without since.
            var current = headers()
            current[.ifNoneMatch] = "W/\"\(newVersion)\""
            let same = try await client.send(.get, "/v1/users/ana/plan?since=\(newVersion)", headers: current)
            #expect(same.status == .notModified)

            for query in ["since=-1", "since=abc", "since=1.5", "since=", "since=1&since=2"] {
                try await client.send(.get, "/v1/users/ana/plan?\(query)").expectProblem(
                    400, "bad-request", field: "since")
            }
            try await client.send(.get, "/v1/users/ana/plan?sinse=1").expectProblem(400, "bad-request", field: "sinse")
        }
    }

    @Test func theUsersOwnTokenReadsItsPlanAndNoOneElses() async throws {
        try await withAna { client in
            let ana = try await userToken("ana")
            #expect(try await client.send(.get, "/v1/users/ana/plan", headers: headers(key: ana)).status == .ok)
            let bob = try await userToken("bob")
            try await client.send(.get, "/v1/users/ana/plan", headers: headers(key: bob))
                .expectProblem(403, "forbidden")
            try await client.send(.get, "/v1/users/ana/plan", headers: headers(key: nil))
                .expectProblem(401, "unauthorized")
            try await client.send(.get, "/v1/users/nobody/plan").expectProblem(404, "not-found")
            try await client.send(.get, "/v1/users/a%20b/plan").expectProblem(400, "bad-request", field: "id")
        }
    }
}
