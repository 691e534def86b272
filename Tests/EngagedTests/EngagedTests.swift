import ArgumentParser
import Foundation
import GRDB
import Hummingbird
import HummingbirdTesting
import Models
import Runtime
import Scheduling
import Storage
import Synchronization
import Testing

@testable import engaged

let berlin = #"{"timeZone": "Europe/Berlin", "displayName": "Ana Test"}"#

@Suite("engaged routes")
struct RouteTests {
    @Test func healthzAnswersWithoutAKey() async throws {
        try await TestServer().run { client in
            let response = try await client.send(.get, "/healthz", headers: [:])
            #expect(response.status == .ok)
            #expect(response.json["status"] as? String == "ok")
        }
    }

    @Test func readyzAnswersWithoutAKeyAnd503WhenTheSchemaIsNotThisBuilds() async throws {
        let server = try await TestServer()
        try await server.run { client in
            let ready = try await client.send(.get, "/readyz", headers: [:])
            #expect(ready.status == .ok)
            #expect(ready.json["status"] as? String == "ready")
            // A newer build migrated the store under this server.
            let file = server.directory.appendingPathComponent("engaged.sqlite").path
            let newer = SQLiteEngagementStore.schemaVersion + 1
            let other = try DatabaseQueue(path: file)
            try await other.write { db in try db.execute(sql: "PRAGMA user_version = \(newer)") }
            try other.close()
            // The answer is kept a second (probes are not limited; the store is asked once a second).
            try await Task.sleep(for: .milliseconds(1_100))
            let notReady = try await client.send(.get, "/readyz", headers: [:])
            notReady.expectProblem(503, "not-ready", detailContains: "schema")
            #expect(!notReady.text.contains("version"))  // what is wrong is logged, not sent
            #expect(try await client.send(.get, "/healthz", headers: [:]).status == .ok)
        }
    }

    @Test(arguments: [nil, "wrong-key", ""])
    func v1RefusesAMissingOrWrongKey(key: String?) async throws {
        let server = try await TestServer()
        try await server.run { client in
            let response = try await client.send(.put, "/v1/users/ana", berlin, headers: headers(key: key))
            response.expectProblem(401, "unauthorized", detailContains: key == nil ? "Authorization" : "not valid")
            #expect(response.headers[.wwwAuthenticate] == "Bearer")
            // Refused before anything ran: the user does not exist.
            #expect(try server.store.profile(id: "ana") == nil)
        }
    }

    @Test func anAuthorizationThatIsNotBearerIsRefused() async throws {
        try await TestServer().run { client in
            var fields = headers(key: nil)
            fields[.authorization] = "Basic \(TestServer.apiKey)"
            let response = try await client.send(.get, "/v1/users/ana/schedule", headers: fields)
            response.expectProblem(401, "unauthorized")
        }
    }

    @Test func theBearerSchemeIsCaseInsensitive() async throws {
        try await TestServer().run { client in
            var fields = headers(key: nil)
            fields[.authorization] = "bearer \(TestServer.apiKey)"
            let response = try await client.send(.put, "/v1/users/ana", berlin, headers: fields)
            #expect(response.status == .created)
            #expect(response.json["id"] as? String == "ana")
        }
    }

    @Test func putCreatesThenUpdates() async throws {
        let server = try await TestServer()
        try await server.run { client in
            let created = try await client.send(.put, "/v1/users/ana", berlin)
            #expect(created.status == .created)
            #expect(created.json["created"] as? Bool == true)
            #expect(created.json["id"] as? String == "ana")
            #expect(created.json["timeZone"] as? String == "Europe/Berlin")
            // The documented defaults.
            #expect(created.json["absenceResponse"] as? String == "light_nudge")
            #expect(created.json["privacyLevel"] as? String == "friendsOnly")
            #expect(created.json["motivationalStyle"] as? String == "encouraging")

            let updated = try await client.send(
                .put, "/v1/users/ana",
                #"{"timeZone": "America/New_York", "absenceResponse": "give_me_space", "preferences": {"maxPerHour": 3}}"#
            )
            #expect(updated.status == .ok)
            #expect(updated.json["created"] as? Bool == false)
            #expect(updated.json["timeZone"] as? String == "America/New_York")
            #expect((updated.json["preferences"] as? [String: Any])?["maxPerHour"] as? Int == 3)
            let stored = try #require(try server.store.profile(id: "ana"))
            #expect(stored.timeZone == "America/New_York")
            #expect(stored.communication.absenceResponse == .giveMeSpace)
            #expect(stored.preferences.maxPerHour == 3)
        }
    }

    @Test(arguments: [
        (#"{"timeZone": "Europe/Berln"}"#, "timeZone", "Europe/Berln"),
        (#"{"timeZone": "Europe/Berlin", "preferences": {"maxPerHour": 0}}"#, "preferences.maxPerHour", "1...60"),
        (
            #"{"timeZone": "UTC", "preferences": {"quietHours": {"start": "22:00", "end": "22:00"}}}"#,
            "preferences.quietHours.end", "equals start"
        ),
        (#"{"timeZone": "UTC", "privacyLevel": "secret"}"#, "privacyLevel", "secret"),
        (#"{"timeZone": "UTC", "nickname": "A"}"#, "nickname", "unknown key"),
    ])
    func putRefusesABadValueNamingItsField(body: String, field: String, detail: String) async throws {
        let server = try await TestServer()
        try await server.run { client in
            let response = try await client.send(.put, "/v1/users/ana", body)
            response.expectProblem(422, "invalid-field", field: field, detailContains: detail)
            #expect(try server.store.profile(id: "ana") == nil)
        }
    }

    @Test(arguments: [
        (#"{"displayName": "Ana"}"#, "timeZone"),
        (#"{"timeZone": 7}"#, "timeZone"),
        (#"{"timeZone": "UTC", "preferences": {"maxPerHour": "many"}}"#, "preferences.maxPerHour"),
        ("not json", nil),
        ("", nil),
    ])
    func putRefusesABodyOfTheWrongShape(body: String, field: String?) async throws {
        try await TestServer().run { client in
            let response = try await client.send(.put, "/v1/users/ana", body)
            response.expectProblem(400, "bad-request", field: field)
        }
    }

    @Test(arguments: [String(repeating: "a", count: 65), "bad!id", "b%C3%A4d", "a:b"])
    func aBadUserIDIsRefused(id: String) async throws {
        try await TestServer().run { client in
            let response = try await client.send(.put, "/v1/users/\(id)", berlin)
            response.expectProblem(400, "bad-request", field: "id", detailContains: "1 to 64")
        }
    }

    @Test func aUserIDOf64AllowedCharactersIsAccepted() async throws {
        try await TestServer().run { client in
            let id = "Az09_.-" + String(repeating: "x", count: 57)
            let response = try await client.send(.put, "/v1/users/\(id)", berlin)
            #expect(response.status == .created)
            #expect(response.json["id"] as? String == id)
        }
    }

    @Test func aBodyOver64KBIsRefusedAndChangesNothing() async throws {
        let server = try await TestServer()
        try await server.run { client in
            let padding = String(repeating: "x", count: 70 * 1_024)
            let body = #"{"timeZone": "Europe/Berlin", "displayName": "\#(padding)"}"#
            let response = try await client.send(.put, "/v1/users/ana", body)
            response.expectProblem(413, "body-too-large", detailContains: "65536")
            #expect(try server.store.profile(id: "ana") == nil)
        }
    }

    @Test func anEventIsAcceptedWithTheNumberOfEffects() async throws {
        let server = try await TestServer()
        try await server.run { client in
            _ = try await client.send(.put, "/v1/users/ana", berlin)
            server.clock.advance(by: 600)
            let response = try await client.send(
                .post, "/v1/users/ana/events", #"{"type": "appOpened", "sessionSeconds": 120}"#)
            #expect(response.status == .accepted)
            let effects = try #require(response.json["effects"] as? Int)
            #expect(effects > 0)
            let events = try server.store.activityEvents(userID: "ana", since: TestServer.start)
            #expect(events.map(\.kind) == [.appOpened(sessionSeconds: 120)])
        }
    }

    @Test(arguments: [
        #"{"type": "workoutCompleted", "durationMinutes": 40}"#,
        #"{"type": "mealLogged", "meal": "lunch"}"#,
        #"{"type": "moodLogged"}"#,
        #"{"type": "energyLogged"}"#,
        #"{"type": "coachChat"}"#,
        #"{"type": "checkInCompleted"}"#,
        #"{"type": "notificationResponse", "requestID": "mealReminder.2027-03-01.lunch", "actionIdentifier": "LOG_MEAL"}"#,
        #"{"type": "notificationResponse", "requestID": "hydration.daily.0900", "actionIdentifier": "FROM_A_NEWER_APP"}"#,
        #"{"type": "socialEvent", "id": "s1", "kind": "workoutKudos", "actorName": "Ben", "topic": "run", "isMutualFriend": true}"#,
        #"{"type": "notificationPermission", "allowed": false}"#,
        #"{"type": "notificationPermission", "allowed": true}"#,
    ])
    func everyEventTypeIsAccepted(body: String) async throws {
        let server = try await TestServer()
        try await server.run { client in
            _ = try await client.send(.put, "/v1/users/ana", berlin)
            let response = try await client.send(.post, "/v1/users/ana/events", body)
            #expect(response.status == .accepted, "\(response.text)")
            #expect(response.json["effects"] is Int)
        }
    }

    @Test func anActivityReportedLateIsRecordedWhenItHappened() async throws {
        let server = try await TestServer()
        try await server.run { client in
            _ = try await client.send(.put, "/v1/users/ana", berlin)
            server.clock.advance(by: 3 * 3_600)  // 09:00Z; the workout was at 07:30Z, logged offline
            let response = try await client.send(
                .post, "/v1/users/ana/events",
                #"{"type": "workoutCompleted", "durationMinutes": 30, "at": "2027-03-01T07:30:00Z"}"#)
            #expect(response.status == .accepted, "\(response.text)")
            let events = try server.store.activityEvents(userID: "ana", since: TestServer.start)
            #expect(events.map(\.at) == [Instant(iso8601: "2027-03-01T07:30:00Z")!])
            // A device clock a little ahead of the server's is tolerated (recorded at the server's time).
            let ahead = try await client.send(
                .post, "/v1/users/ana/events", #"{"type": "moodLogged", "at": "2027-03-01T09:04:00Z"}"#)
            #expect(ahead.status == .accepted, "\(ahead.text)")
            let last = try server.store.activityEvents(userID: "ana", since: TestServer.start).last
            #expect(last?.at == server.clock.now())
        }
    }

    @Test func anEventForAnUnknownUserIs404() async throws {
        let server = try await TestServer()
        try await server.run { client in
            let response = try await client.send(.post, "/v1/users/nobody/events", #"{"type": "moodLogged"}"#)
            response.expectProblem(404, "not-found", detailContains: "nobody")
            #expect(try server.store.profile(id: "nobody") == nil)
        }
    }

    @Test(arguments: [
        (#"{"type": "danced"}"#, 400, "bad-request", "type", "danced"),
        (#"{"sessionSeconds": 3}"#, 400, "bad-request", "type", "missing"),
        (#"{"type": "workoutCompleted"}"#, 400, "bad-request", "durationMinutes", "missing"),
        (#"{"type": "appOpened", "sessionSeconds": -1}"#, 422, "invalid-field", "sessionSeconds", "0...86400"),
        (#"{"type": "mealLogged", "meal": "brunch"}"#, 422, "invalid-field", "meal", "brunch"),
        (#"{"type": "moodLogged", "at": "2027-03-01T07:00:00Z"}"#, 422, "invalid-field", "at", "in the future"),
        (#"{"type": "moodLogged", "at": "2027-02-20T06:00:00Z"}"#, 422, "invalid-field", "at", "more than 7 days"),
        (#"{"type": "moodLogged", "at": "yesterday"}"#, 422, "invalid-field", "at", "ISO 8601"),
        (#"{"type": "notificationPermission"}"#, 400, "bad-request", "allowed", "missing"),
        (#"{"type": "notificationPermission", "allowed": "no"}"#, 400, "bad-request", "allowed", "Bool"),
        (#"{"type": "moodLogged", "at": 1700000000}"#, 400, "bad-request", "at", "String"),
        (
            #"{"type": "socialEvent", "id": "s", "kind": "workoutKudos", "actorName": "B", "topic": "t", "#
                + #""at": "2027-03-01T05:00:00Z"}"#, 422, "invalid-field", "at", "unknown key"
        ),
        (
            #"{"type": "notificationResponse", "requestID": "nonsense", "actionIdentifier": "SNOOZE"}"#, 422,
            "invalid-field", "requestID", "request identifier"
        ),
        (
            #"{"type": "socialEvent", "id": "s", "kind": "hydration", "actorName": "B", "topic": "t"}"#, 422,
            "invalid-field", "kind", "hydration"
        ),
    ])
    func aBadEventIsRefusedNamingItsField(body: String, status: Int, slug: String, field: String, detail: String)
        async throws
    {
        let server = try await TestServer()
        try await server.run { client in
            _ = try await client.send(.put, "/v1/users/ana", berlin)
            let response = try await client.send(.post, "/v1/users/ana/events", body)
            response.expectProblem(status, slug, field: field, detailContains: detail)
            #expect(try server.store.activityEvents(userID: "ana", since: TestServer.start).isEmpty)
        }
    }

    @Test func aRepeatedIdempotencyKeyReplaysTheFirstAnswerAndAppliesOnce() async throws {
        let server = try await TestServer()
        try await server.run { client in
            _ = try await client.send(.put, "/v1/users/ana", berlin)
            let body = #"{"type": "workoutCompleted", "durationMinutes": 30}"#
            let first = try await client.send(
                .post, "/v1/users/ana/events", body, headers: headers(idempotencyKey: "k-1"))
            server.clock.advance(by: 60)
            let again = try await client.send(
                .post, "/v1/users/ana/events", body, headers: headers(idempotencyKey: "k-1"))
            #expect(first.status == .accepted)
            #expect(again.status == .accepted)
            #expect(again.text == first.text)
            #expect(try server.store.activityEvents(userID: "ana", since: TestServer.start).count == 1)

            // Another key is another event.
            let other = try await client.send(
                .post, "/v1/users/ana/events", body, headers: headers(idempotencyKey: "k-2"))
            #expect(other.status == .accepted)
            #expect(try server.store.activityEvents(userID: "ana", since: TestServer.start).count == 2)
        }
    }

    /// Requests with one key sent at once: the event is applied once; every other answer is
    /// the first answer replayed, or 409 while it was being applied.
    @Test func concurrentRequestsWithOneKeyApplyTheEventOnce() async throws {
        let server = try await TestServer()
        try await server.run(.live) { client in
            _ = try await client.send(.put, "/v1/users/ana", berlin)
            let body = #"{"type": "workoutCompleted", "durationMinutes": 30}"#
            let answers = try await withThrowingTaskGroup(of: TestResponse.self) { group in
                for _ in 0..<8 {
                    group.addTask {
                        try await client.send(
                            .post, "/v1/users/ana/events", body, headers: headers(idempotencyKey: "k"))
                    }
                }
                var answers: [TestResponse] = []
                for try await answer in group { answers.append(answer) }
                return answers
            }
            let replayed = HTTPFields.Element.Name("Idempotency-Replayed")!
            let firsts = answers.filter { $0.status == .accepted && $0.headers[replayed] == nil }
            #expect(firsts.count == 1)
            for answer in answers where answer.status != .accepted {
                answer.expectProblem(409, "idempotency-conflict")
            }
            for answer in answers where answer.status == .accepted {
                #expect(answer.text == firsts.first?.text)
            }
            #expect(try server.store.activityEvents(userID: "ana", since: TestServer.start).count == 1)
        }
    }

    @Test func twoIdempotencyKeyHeadersAre400AndApplyNothing() async throws {
        let server = try await TestServer()
        try await server.run { client in
            _ = try await client.send(.put, "/v1/users/ana", berlin)
            var fields = headers(idempotencyKey: "k-1")
            fields.append(HTTPFields.Element(name: .init("Idempotency-Key")!, value: "k-2"))
            let refused = try await client.send(
                .post, "/v1/users/ana/events", #"{"type": "moodLogged"}"#, headers: fields)
            refused.expectProblem(400, "bad-request", field: "Idempotency-Key", detailContains: "not 2")
            #expect(try server.store.activityEvents(userID: "ana", since: TestServer.start).isEmpty)
            // Neither key was taken: each still works on its own.
            let first = try await client.send(
                .post, "/v1/users/ana/events", #"{"type": "moodLogged"}"#, headers: headers(idempotencyKey: "k-1"))
            #expect(first.status == .accepted)
            #expect(!first.headers.contains { $0.name.canonicalName == "idempotency-replayed" })
        }
    }

    @Test func anIdempotencyKeyReusedWithAnotherBodyIs409() async throws {
        let server = try await TestServer()
        try await server.run { client in
            _ = try await client.send(.put, "/v1/users/ana", berlin)
            let first = try await client.send(
                .post, "/v1/users/ana/events", #"{"type": "moodLogged"}"#, headers: headers(idempotencyKey: "k-1"))
            #expect(first.status == .accepted)
            let conflict = try await client.send(
                .post, "/v1/users/ana/events", #"{"type": "energyLogged"}"#, headers: headers(idempotencyKey: "k-1"))
            conflict.expectProblem(409, "idempotency-conflict", detailContains: "different body")
            let events = try server.store.activityEvents(userID: "ana", since: TestServer.start)
            #expect(events.map(\.kind) == [.moodLogged])
        }
    }

    @Test func aRetryWhoseAtHasAgedPastTheLimitGetsTheFirstAnswer() async throws {
        let server = try await TestServer()
        try await server.run { client in
            _ = try await client.send(.put, "/v1/users/ana", berlin)
            // Seven days before the clock, less a minute: accepted now, too old an hour later.
            let at = Instant(secondsSinceEpoch: TestServer.start.secondsSinceEpoch - 7 * 86_400 + 60)
            let body = #"{"type": "moodLogged", "at": "\#(at.iso8601)"}"#
            let first = try await client.send(
                .post, "/v1/users/ana/events", body, headers: headers(idempotencyKey: "k-old"))
            #expect(first.status == .accepted)
            server.clock.advance(by: 3600)
            let retry = try await client.send(
                .post, "/v1/users/ana/events", body, headers: headers(idempotencyKey: "k-old"))
            #expect(retry.status == .accepted)
            #expect(retry.headers[EventKey.replayedHeader] == "true")
            #expect(retry.text == first.text)
            let unkeyed = try await client.send(.post, "/v1/users/ana/events", body)
            unkeyed.expectProblem(422, "invalid-field", field: "at")
            #expect(try server.store.activityEvents(userID: "ana", since: at).count == 1)
        }
    }

    @Test func aRefusedRequestDoesNotHoldItsIdempotencyKey() async throws {
        let server = try await TestServer()
        try await server.run { client in
            let body = #"{"type": "moodLogged"}"#
            let early = try await client.send(
                .post, "/v1/users/ana/events", body, headers: headers(idempotencyKey: "k-1"))
            early.expectProblem(404, "not-found")
            _ = try await client.send(.put, "/v1/users/ana", berlin)
            let retried = try await client.send(
                .post, "/v1/users/ana/events", body, headers: headers(idempotencyKey: "k-1"))
            #expect(retried.status == .accepted)
            #expect(retried.json["effects"] is Int)
        }
    }

    @Test func theScheduleListsThePlanInUTCAndLocalTime() async throws {
        try await TestServer().run { client in
            _ = try await client.send(.put, "/v1/users/ana", berlin)
            let response = try await client.send(.get, "/v1/users/ana/schedule")
            #expect(response.status == .ok)
            #expect(response.json.keys.sorted() == ["items", "nextCursor", "timeZone"])
            #expect(response.json["nextCursor"] is NSNull)
            #expect(response.json["timeZone"] as? String == "Europe/Berlin")
            let items = try #require(response.json["items"] as? [[String: Any]])
            #expect(!items.isEmpty)
            for item in items {
                #expect(item.keys.sorted() == ["channel", "fireAt", "id", "kind", "localTime"])
                let id = try #require(item["id"] as? String)
                let fireAt = try #require((item["fireAt"] as? String).flatMap { Instant(iso8601: $0) })
                #expect((item["fireAt"] as? String)?.hasSuffix("Z") == true)
                #expect(item["kind"] as? String == OccurrenceID(requestID: id)?.kind.rawValue)
                // Routine kinds are planned ahead on the device, re-engagement is pushed.
                let kind = try #require((item["kind"] as? String).flatMap(NotificationKind.init(rawValue:)))
                #expect(item["channel"] as? String == ChannelPolicy.channel(for: kind).rawValue)
                // Berlin is at +01:00 until 28 March 2027; the local time names the same instant.
                let local = try #require(item["localTime"] as? String)
                #expect(local.hasSuffix("+01:00") || local.hasSuffix("+02:00"))
                #expect(Instant(iso8601: local) == fireAt)
            }
            // Ana's morning: breakfast at 08:00 Berlin time.
            let breakfast = items.first { $0["id"] as? String == "mealReminder.2027-03-01.breakfast" }
            #expect(breakfast?["localTime"] as? String == "2027-03-01T08:00:00+01:00")
            #expect(breakfast?["fireAt"] as? String == "2027-03-01T07:00:00Z")
        }
    }

    @Test func theScheduleOfAnUnknownUserIs404() async throws {
        try await TestServer().run { client in
            let response = try await client.send(.get, "/v1/users/nobody/schedule")
            response.expectProblem(404, "not-found", detailContains: "nobody")
        }
    }

    @Test func anUnknownRouteIsAProblemToo() async throws {
        try await TestServer().run { client in
            let response = try await client.send(.get, "/v2/anything")
            response.expectProblem(404, "not-found")
        }
    }

    @Test func theAdminClockIs404WithoutTheManualClock() async throws {
        let server = try await TestServer(manualClock: false)
        try await server.run { client in
            let response = try await client.send(.post, "/v1/admin/clock", #"{"advanceSeconds": 3600}"#)
            response.expectProblem(404, "not-found", detailContains: "--manual-clock")
            #expect(server.clock.now() == TestServer.start)
        }
    }

    @Test func theAdminClockAdvancesAndPerformsWhatFellDue() async throws {
        let server = try await TestServer()
        try await server.run { client in
            _ = try await client.send(.put, "/v1/users/ana", berlin)
            let response = try await client.send(.post, "/v1/admin/clock", #"{"advanceSeconds": 86400}"#)
            #expect(response.status == .ok)
            #expect(response.json["now"] as? String == "2027-03-02T06:00:00Z")
            let dispatched = try #require(response.json["dispatched"] as? Int)
            #expect(dispatched > 0)
            let performed = server.transport.performed.withLock { $0 }
            // Jobs run inside the runtime, inbox rows land in the inbox; a local kind gets no push
            // (the device fires it) but a badge sync, which went to the transport, in due order.
            #expect(!performed.contains { $0.channel == .push })
            #expect(performed.contains { $0.channel == .silent && $0.payload == .sync })
            let inbox = try server.store.inboxPage(userID: "ana", before: nil, limit: 100).items
            #expect(inbox.contains { $0.requestID == "mealReminder.2027-03-01.breakfast" })
            #expect(performed.map(\.dueAt) == performed.map(\.dueAt).sorted())
            #expect(performed.allSatisfy { $0.dueAt <= server.clock.now() })
        }
    }

    @Test func withoutTheManualClockTheDueWorkLoopPerformsWhatFellDue() async throws {
        // `engaged serve` without --manual-clock: the loop, not a route, performs due rows. The
        // runtime's clock is still the test's, moved here directly as time would pass.
        let server = try await TestServer(manualClock: false)
        try await server.run { client in
            _ = try await client.send(.put, "/v1/users/ana", berlin)
            server.clock.advance(by: 3 * 3_600)
            // The loop wakes at least every second; give it five for each step.
            for _ in 0..<50 where try server.store.inboxPage(userID: "ana", before: nil, limit: 100).items.isEmpty {
                try await Task.sleep(for: .milliseconds(100))
            }
            // Breakfast (07:00Z) landed in the inbox; its badge sync follows at the next slot.
            let inbox = try server.store.inboxPage(userID: "ana", before: nil, limit: 100).items
            #expect(inbox.contains { $0.requestID == "mealReminder.2027-03-01.breakfast" })
            let sync = try #require(try server.store.pendingOutbox(userID: "ana").first { $0.channel == .silent })
            server.clock.advance(by: sync.dueAt - server.clock.now())
            for _ in 0..<50 where server.transport.performed.withLock({ $0.isEmpty }) {
                try await Task.sleep(for: .milliseconds(100))
            }
            let performed = server.transport.performed.withLock { $0 }
            #expect(performed.contains { $0.channel == .silent })
            #expect(performed.allSatisfy { $0.dueAt <= server.clock.now() })
            #expect(try server.store.outboxDepth() > 0)  // later rows stay pending
        }
    }

    @Test(arguments: [#"{"advanceSeconds": -5}"#, #"{"advanceSeconds": 99999999}"#])
    func theAdminClockRefusesABadAdvance(body: String) async throws {
        let server = try await TestServer()
        try await server.run { client in
            let response = try await client.send(.post, "/v1/admin/clock", body)
            response.expectProblem(422, "invalid-field", field: "advanceSeconds")
            #expect(server.clock.now() == TestServer.start)
        }
    }

    @Test func aSessionOverARealLoopbackPort() async throws {
        let server = try await TestServer()
        try await server.run(.live) { client in
            #expect(client.port != nil)
            let health = try await client.send(.get, "/healthz", headers: [:])
            #expect(health.json["status"] as? String == "ok")
            let created = try await client.send(.put, "/v1/users/ana", berlin)
            #expect(created.status == .created)
            let event = try await client.send(
                .post, "/v1/users/ana/events", #"{"type": "mealLogged", "meal": "breakfast"}"#,
                headers: headers(idempotencyKey: "live-1"))
            #expect(event.status == .accepted)
            let replay = try await client.send(
                .post, "/v1/users/ana/events", #"{"type": "mealLogged", "meal": "breakfast"}"#,
                headers: headers(idempotencyKey: "live-1"))
            #expect(replay.text == event.text)
            let schedule = try await client.send(.get, "/v1/users/ana/schedule")
            #expect(schedule.status == .ok)
            #expect((schedule.json["items"] as? [Any])?.isEmpty == false)
            let unauthorized = try await client.send(.get, "/v1/users/ana/schedule", headers: headers(key: "nope"))
            unauthorized.expectProblem(401, "unauthorized")
        }
    }
}

@Suite("engaged parts")
struct PartTests {
    @Test(arguments: [
        ("secret", "secret", true), ("secret", "secreT", false), ("secret", "secre", false),
        ("secret", "secrets", false), ("secret", "", false),
    ])
    func theKeyComparisonIsExact(given: String, expected: String, equal: Bool) {
        #expect(APIKey.constantTimeEqual(Array(given.utf8), expected) == equal)
    }

    @Test(
        arguments: [
            (["serve", "--frobnicate"], 64), (["serve", "--data-dir", "d"], 64),
            (["serve", "--data-dir", "d", "--port", "70000"], 64),
            (["serve", "--data-dir", "d", "--port", "80", "--manual-clock", "yesterday"], 64),
        ] as [([String], Int32)])
    func badFlagsAreUsageErrors(arguments: [String], status: Int32) {
        do {
            _ = try Engaged.parseAsRoot(arguments)
            Issue.record("parsed \(arguments)")
        } catch {
            #expect(Engaged.exitCode(for: error).rawValue == status)
        }
    }

    @Test func goodFlagsParse() throws {
        let command = try Engaged.parseAsRoot([
            "serve", "--data-dir", "d", "--port", "0", "--manual-clock", "2027-03-01T06:00:00Z",
        ])
        let serve = try #require(command as? Serve)
        #expect(serve.host == "127.0.0.1")
        #expect(serve.port == 0)
        #expect(serve.manualClock == "2027-03-01T06:00:00Z")
    }
}
