import Foundation
import Hummingbird
import HummingbirdTesting
import Models
import Runtime
import Storage
import Synchronization
import Testing

@testable import engaged

/// A PUT body for user "ana" with `updatedAt` and the given fields.
private func userBody(_ fields: String = "", updatedAt: String?) -> String {
    let stamp = updatedAt.map { #", "updatedAt": "\#($0)""# } ?? ""
    return #"{"timeZone": "Europe/Berlin"\#(stamp)\#(fields.isEmpty ? "" : ", " + fields)}"#
}

private func versions(_ response: TestResponse) -> [String: String?] {
    let raw = response.json["versions"] as? [String: Any] ?? [:]
    return raw.mapValues { $0 as? String }
}

@Suite("engaged users: last-write-wins and locale")
struct UserLastWriteWinsTests {
    @Test func aUserAnswersWithItsVersionsAndWhatWasApplied() async throws {
        try await TestServer().run(.live) { client in
            let created = try await client.send(.put, "/v1/users/ana", #"{"timeZone": "Europe/Berlin"}"#)
            #expect(created.status == .created)
            #expect(
                created.json.keys.sorted() == [
                    "absenceResponse", "applied", "created", "displayName", "id", "locale", "motivationalStyle",
                    "preferences", "preferredTimes", "privacyLevel", "stale", "timeZone", "versions",
                ])
            #expect(created.json["locale"] as? String == "en")
            // Without updatedAt the server's clock stamps the write; unwritten groups have no version.
            #expect(
                versions(created) == [
                    "timeZone": "2027-03-01T06:00:00.000Z", "profile": nil, "communication": nil, "preferences": nil,
                ])
            #expect(created.json["applied"] as? [String] == ["timeZone"])
            #expect(created.json["stale"] as? [String] == [])
        }
    }

    @Test func aUserIsReadBackAsStoredWithItsVersions() async throws {
        try await TestServer().run(.live) { client in
            _ = try await client.send(
                .put, "/v1/users/ana",
                userBody(#""displayName": "Ana", "preferences": {"maxPerHour": 4}"#, updatedAt: nil))
            let read = try await client.send(.get, "/v1/users/ana")
            #expect(read.status == .ok)
            #expect(
                read.json.keys.sorted() == [
                    "absenceResponse", "displayName", "id", "locale", "motivationalStyle", "preferences",
                    "preferredTimes", "privacyLevel", "timeZone", "versions",
                ])
            #expect(read.json["displayName"] as? String == "Ana")
            #expect((read.json["preferences"] as? [String: Any])?["maxPerHour"] as? Int == 4)
            #expect(
                versions(read) == [
                    "timeZone": "2027-03-01T06:00:00.000Z", "profile": "2027-03-01T06:00:00.000Z",
                    "communication": nil, "preferences": "2027-03-01T06:00:00.000Z",
                ])
            try await client.send(.get, "/v1/users/bob").expectProblem(404, "not-found")
            try await client.send(.get, "/v1/users/a%20b").expectProblem(400, "bad-request", field: "id")
            let token = try await userToken("ana")
            #expect(try await client.send(.get, "/v1/users/ana", headers: headers(key: token)).status == .unauthorized)
        }
    }

    @Test func anOlderWriteLosesPerGroupAndChangesNothingOfIt() async throws {
        let server = try await TestServer()
        try await server.run(.live) { client in
            let newer = "2027-03-01T05:00:00.500Z"
            let first = try await client.send(
                .put, "/v1/users/ana", userBody(#""displayName": "Ana New", "locale": "pt-BR""#, updatedAt: newer))
            #expect(first.status == .created)
            // An older write of the profile (stale) and of preferences (never written: applied).
            let older = try await client.send(
                .put, "/v1/users/ana",
                userBody(
                    #""displayName": "Ana Old", "preferences": {"maxPerHour": 4}"#,
                    updatedAt: "2027-03-01T05:00:00.499Z"))
            #expect(older.status == .ok)
            #expect(older.json["created"] as? Bool == false)
            #expect(older.json["applied"] as? [String] == ["preferences"])
            #expect(older.json["stale"] as? [String] == ["profile", "timeZone"])
            #expect(older.json["displayName"] as? String == "Ana New")
            #expect(older.json["locale"] as? String == "pt-BR")
            #expect((older.json["preferences"] as? [String: Any])?["maxPerHour"] as? Int == 4)
            #expect(
                versions(older) == [
                    "timeZone": newer, "profile": newer, "communication": nil,
                    "preferences": "2027-03-01T05:00:00.499Z",
                ])
            let stored = try #require(try server.store.profile(id: "ana"))
            #expect(stored.displayName == "Ana New")
            #expect(stored.preferences.maxPerHour == 4)

            // Wholly stale: 200 with what stands, and nothing committed.
            let afterPreferences = try server.store.snapshot(userID: "ana")
            let versionsBefore = try server.store.userVersions(userID: "ana")
            let stale = try await client.send(
                .put, "/v1/users/ana", userBody(#""displayName": "Ana Older""#, updatedAt: "2027-03-01T04:00:00Z"))
            #expect(stale.status == .ok)
            #expect(stale.json["applied"] as? [String] == [])
            #expect(stale.json["stale"] as? [String] == ["profile", "timeZone"])
            #expect(stale.json["displayName"] as? String == "Ana New")
            #expect(try server.store.snapshot(userID: "ana") == afterPreferences)
            #expect(try server.store.userVersions(userID: "ana") == versionsBefore)
            #expect(try server.store.profile(id: "ana")?.displayName == "Ana New")
        }
    }

    @Test func aNewerWriteWinsAndAnEqualOneWinsByArrivingLater() async throws {
        let server = try await TestServer()
        try await server.run(.live) { client in
            let t1 = "2027-03-01T05:00:00Z"
            _ = try await client.send(
                .put, "/v1/users/ana", userBody(#""absenceResponse": "give_me_space""#, updatedAt: t1))
            let newer = try await client.send(
                .put, "/v1/users/ana",
                userBody(#""absenceResponse": "check_in_on_me""#, updatedAt: "2027-03-01T05:00:01Z"))
            #expect(newer.json["applied"] as? [String] == ["communication", "timeZone"])
            #expect(newer.json["absenceResponse"] as? String == "check_in_on_me")
            #expect(versions(newer)["communication"] == "2027-03-01T05:00:01.000Z")
            // Equal stamps: the later arrival wins (the server commits one write at a time).
            let equal = try await client.send(
                .put, "/v1/users/ana",
                userBody(#""absenceResponse": "light_nudge""#, updatedAt: "2027-03-01T06:00:01+01:00"))
            #expect(equal.json["applied"] as? [String] == ["communication", "timeZone"])
            #expect(equal.json["absenceResponse"] as? String == "light_nudge")
            #expect(try server.store.profile(id: "ana")?.communication.absenceResponse == .lightNudge)
        }
    }

    @Test func mixedGroupsOfOneWriteAreDecidedSeparately() async throws {
        let server = try await TestServer()
        try await server.run(.live) { client in
            // Device A set preferences at 05:10, device B set the profile at 05:20.
            _ = try await client.send(
                .put, "/v1/users/ana", userBody(#""preferences": {"maxPerHour": 2}"#, updatedAt: "2027-03-01T05:10:00Z")
            )
            _ = try await client.send(
                .put, "/v1/users/ana", userBody(#""displayName": "B""#, updatedAt: "2027-03-01T05:20:00Z"))
            // Device C syncs late a write of 05:15 carrying both groups: preferences win, profile loses.
            let late = try await client.send(
                .put, "/v1/users/ana",
                userBody(#""displayName": "C", "preferences": {"maxPerHour": 7}"#, updatedAt: "2027-03-01T05:15:00Z"))
            #expect(late.json["applied"] as? [String] == ["preferences"])
            #expect(late.json["stale"] as? [String] == ["profile", "timeZone"])
            #expect(late.json["displayName"] as? String == "B")
            #expect((late.json["preferences"] as? [String: Any])?["maxPerHour"] as? Int == 7)
            let stored = try #require(try server.store.profile(id: "ana"))
            #expect(stored.displayName == "B")
            #expect(stored.preferences.maxPerHour == 7)
        }
    }

    @Test(arguments: [
        (#""updatedAt": "yesterday""#, 422, "invalid-field", "ISO 8601"),
        (#""updatedAt": "2027-03-01T05:00:00.Z""#, 422, "invalid-field", "ISO 8601"),
        (#""updatedAt": 1772341200"#, 400, "bad-request", "String"),
        (#""updatedAt": "2027-03-02T06:00:01Z""#, 422, "invalid-field", "after the server's clock"),
    ])
    func aBadUpdatedAtIsRefusedAndChangesNothing(field: String, status: Int, slug: String, detail: String)
        async throws
    {
        let server = try await TestServer()
        try await server.run(.live) { client in
            let response = try await client.send(.put, "/v1/users/ana", userBody(field, updatedAt: nil))
            response.expectProblem(status, slug, field: "updatedAt", detailContains: detail)
            #expect(try server.store.profile(id: "ana") == nil)
        }
    }

    @Test(arguments: [("de-de", "de-DE"), ("en", "en"), ("zh-hant-tw", "zh-Hant-TW"), ("es-419", "es-419")])
    func theLocaleIsStoredInCanonicalCase(given: String, stored: String) async throws {
        let server = try await TestServer()
        try await server.run(.live) { client in
            let response = try await client.send(
                .put, "/v1/users/ana", userBody(#""locale": "\#(given)""#, updatedAt: nil))
            #expect(response.status == .created)
            #expect(response.json["locale"] as? String == stored)
            #expect(try server.store.profile(id: "ana")?.locale == stored)
        }
    }

    @Test(arguments: [
        (#""locale": "de_DE""#, 422, "invalid-field", "BCP 47"),
        (#""locale": "english""#, 422, "invalid-field", "BCP 47"),
        (#""locale": """#, 422, "invalid-field", "empty"),
        (#""locale": 5"#, 400, "bad-request", "String"),
    ])
    func aBadLocaleIsRefusedNamingIt(field: String, status: Int, slug: String, detail: String) async throws {
        let server = try await TestServer()
        try await server.run(.live) { client in
            _ = try await client.send(.put, "/v1/users/ana", userBody(#""locale": "fr""#, updatedAt: nil))
            let response = try await client.send(.put, "/v1/users/ana", userBody(field, updatedAt: nil))
            response.expectProblem(status, slug, field: "locale", detailContains: detail)
            #expect(try server.store.profile(id: "ana")?.locale == "fr")
        }
    }
}

@Suite("engaged idempotency keys across a restart")
struct DurableIdempotencyTests {
    @Test func aKeyAnsweredBeforeARestartIsReplayedAndConflictsAfterIt() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "engaged-restart-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let body = #"{"type": "workoutCompleted", "durationMinutes": 30}"#
        let first = Mutex<String?>(nil)
        do {
            try await TestServer(directory: directory).run(.live) { client in
                _ = try await client.send(.put, "/v1/users/ana", berlin)
                let answer = try await client.send(
                    .post, "/v1/users/ana/events", body, headers: headers(idempotencyKey: "k-1"))
                #expect(answer.status == .accepted)
                #expect(answer.headers[EventKey.replayedHeader] == nil)
                first.withLock { $0 = answer.text }
            }
        }
        // A new process over the same data dir: the in-memory state is gone, the record is not.
        let restarted = try await TestServer(directory: directory)
        try await restarted.run(.live) { client in
            restarted.clock.advance(by: 600)
            let replay = try await client.send(
                .post, "/v1/users/ana/events", body, headers: headers(idempotencyKey: "k-1"))
            #expect(replay.status == .accepted)
            #expect(replay.text == first.withLock { $0 })
            #expect(replay.headers[EventKey.replayedHeader] == "true")
            let conflict = try await client.send(
                .post, "/v1/users/ana/events", #"{"type": "moodLogged"}"#, headers: headers(idempotencyKey: "k-1"))
            conflict.expectProblem(409, "idempotency-conflict", detailContains: "different body")
            // Even a malformed body: a body that is refused meets the key's record first.
            let malformed = try await client.send(
                .post, "/v1/users/ana/events", "{", headers: headers(idempotencyKey: "k-1"))
            malformed.expectProblem(409, "idempotency-conflict")
            let events = try restarted.store.activityEvents(userID: "ana", since: TestServer.start)
            #expect(events.map(\.kind) == [.workoutCompleted(durationMinutes: 30)])
        }
    }

    @Test func keysExpireAfterADayAndArePruned() async throws {
        let server = try await TestServer()
        try await server.run(.live) { client in
            _ = try await client.send(.put, "/v1/users/ana", berlin)
            let body = #"{"type": "moodLogged"}"#
            for (key, type) in [("k-1", "moodLogged"), ("k-2", "energyLogged")] {
                let answer = try await client.send(
                    .post, "/v1/users/ana/events", #"{"type": "\#(type)"}"#, headers: headers(idempotencyKey: key))
                #expect(answer.status == .accepted)
            }
            #expect(try server.store.idempotencyRecordCount() == 2)
            server.clock.advance(by: IdempotencyRecord.retentionSeconds - 1)
            let replay = try await client.send(
                .post, "/v1/users/ana/events", body, headers: headers(idempotencyKey: "k-1"))
            #expect(replay.headers[EventKey.replayedHeader] == "true")
            server.clock.advance(by: 2)
            // A day on, k-1 is a new request, applied again; its commit prunes k-2.
            let again = try await client.send(
                .post, "/v1/users/ana/events", body, headers: headers(idempotencyKey: "k-1"))
            #expect(again.status == .accepted)
            #expect(again.headers[EventKey.replayedHeader] == nil)
            #expect(try server.store.idempotencyRecordCount() == 1)
            #expect(try server.store.activityEvents(userID: "ana", since: TestServer.start).count == 3)
        }
    }
}

@Suite("engaged updatedAt")
struct MillisecondTimeTests {
    @Test(
        arguments: [
            ("2027-03-01T05:00:00Z", 1_803_877_200_000), ("2027-03-01T05:00:00.5Z", 1_803_877_200_500),
            ("2027-03-01T05:00:00.250Z", 1_803_877_200_250), ("2027-03-01T05:00:00.2509Z", 1_803_877_200_250),
            ("2027-03-01T06:00:00.001+01:00", 1_803_877_200_001), ("2027-03-01t05:00:00z", 1_803_877_200_000),
            ("1969-12-31T23:59:59.999Z", -1),
        ] as [(String, Int64)])
    func instantsAreReadToTheMillisecond(text: String, milliseconds: Int64) {
        #expect(MillisecondTime.parse(text) == milliseconds)
    }

    @Test(arguments: ["", "yesterday", "2027-03-01T05:00:00.Z", "2027-03-01T05:00:00.abcZ", "2027-02-30T05:00:00Z"])
    func otherTextIsNotAnInstant(text: String) {
        #expect(MillisecondTime.parse(text) == nil)
    }

    @Test(
        arguments: [
            (1_803_877_200_000, "2027-03-01T05:00:00.000Z"), (1_803_877_200_250, "2027-03-01T05:00:00.250Z"),
            (1_803_877_200_007, "2027-03-01T05:00:00.007Z"), (-1, "1969-12-31T23:59:59.999Z"),
        ] as [(Int64, String)])
    func versionsAreWrittenWithThreeDigitsOfFraction(milliseconds: Int64, text: String) {
        #expect(MillisecondTime.format(milliseconds) == text)
        #expect(MillisecondTime.parse(text) == milliseconds)
    }
}
