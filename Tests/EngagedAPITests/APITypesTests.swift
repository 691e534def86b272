import EngagedAPI
import Foundation
import Models
import OpenAPIRuntime
import Testing

/// The generated types read and write what the document says: an event's `type` picks its
/// case, request bodies refuse unknown keys, and the API's instants keep their meaning.
@Suite("EngagedAPI: generated types")
struct APITypesTests {
    typealias Schemas = Components.Schemas

    static func decode<T: Decodable>(_ type: T.Type, _ json: String) throws -> T {
        let decoder = JSONDecoder()
        let transcoder = APIDateTranscoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            try transcoder.decode(try decoder.singleValueContainer().decode(String.self))
        }
        return try decoder.decode(type, from: Data(json.utf8))
    }

    @Test(arguments: [
        (#"{"type": "moodLogged"}"#, "moodLogged"),
        (#"{"type": "appOpened", "sessionSeconds": 5}"#, "appOpened"),
        (#"{"type": "mealLogged", "meal": "lunch"}"#, "mealLogged"),
        (#"{"type": "workoutEnded", "elapsedSeconds": 60}"#, "workoutEnded"),
        (#"{"type": "notificationPermission", "allowed": false}"#, "notificationPermission"),
    ])
    func anEventDecodesAsTheCaseItsTypeNames(json: String, expected: String) throws {
        let event = try Self.decode(Schemas.Event.self, json)
        let name: String =
            switch event {
            case .moodLogged: "moodLogged"
            case .appOpened(let body): body.sessionSeconds == 5 ? "appOpened" : "appOpened without its seconds"
            case .mealLogged(let body): body.meal == .lunch ? "mealLogged" : "mealLogged without its meal"
            case .workoutEnded(let body): body.elapsedSeconds == 60 ? "workoutEnded" : "workoutEnded without seconds"
            case .notificationPermission(let body): body.allowed ? "allowed" : "notificationPermission"
            default: "\(event)"
            }
        #expect(name == expected)
    }

    @Test(arguments: [
        #"{"type": "teleported"}"#,  // an unknown type
        #"{"sessionSeconds": 5}"#,  // no type
        #"{"type": "appOpened", "sessionSecs": 5}"#,  // a misspelt key
        #"{"type": "mealLogged"}"#,  // a required field missing
        #"{"type": "mealLogged", "meal": "brunch"}"#,  // a value outside its enum
    ])
    func aMalformedEventIsRefused(json: String) {
        #expect(throws: (any Error).self) { try Self.decode(Schemas.Event.self, json) }
    }

    @Test func aUserWriteRefusesUnknownKeysAndLeavesOutWhatItDoesNotSet() throws {
        #expect(throws: (any Error).self) {
            try Self.decode(Schemas.User.self, #"{"timeZone": "Europe/Berlin", "timezone": "UTC"}"#)
        }
        let user = try Self.decode(
            Schemas.User.self, #"{"timeZone": "Europe/Berlin", "preferences": {"hydration": null, "maxPerHour": 3}}"#)
        #expect(user.preferences?.hydration == nil)
        #expect(user.preferences?.maxPerHour == 3)
        let encoded = String(decoding: try JSONEncoder().encode(Schemas.User(timeZone: "UTC")), as: UTF8.self)
        #expect(encoded == #"{"timeZone":"UTC"}"#)
    }

    @Test func answersMayGainFields() throws {
        let counts = try Self.decode(
            Schemas.InboxCounts.self, #"{"unseen": 1, "unread": 2, "total": 3, "badge": 2, "archived": 9}"#)
        #expect(counts == .init(unseen: 1, unread: 2, total: 3, badge: 2))
    }

    @Test(arguments: [
        ("2027-03-01T06:00:00Z", 1_803_880_800.0),
        ("2027-03-01T11:45:00+05:45", 1_803_880_800.0),  // Kathmandu's 45-minute offset
        ("2027-03-01T19:00:00+13:00", 1_803_880_800.0),  // across the date line
        ("2027-02-28T20:30:00-09:30", 1_803_880_800.0),  // the Marquesas' half hour, the day before
        ("2027-03-01T06:00:00.250Z", 1_803_880_800.25),
    ])
    func instantsAreReadWithTheirOffsetAndFraction(text: String, seconds: Double) throws {
        let date = try APIDateTranscoder().decode(text)
        #expect(date.timeIntervalSince1970 == seconds)
    }

    @Test func instantsAreWrittenInWholeSecondsInUTC() throws {
        let transcoder = APIDateTranscoder()
        #expect(try transcoder.encode(Date(timeIntervalSince1970: 1_803_880_800.75)) == "2027-03-01T06:00:00Z")
        #expect(try transcoder.encode(Date(timeIntervalSince1970: 0)) == "1970-01-01T00:00:00Z")
    }

    @Test(arguments: ["", "2027-03-01", "2027-03-01T06:00", "2027-03-01T06:00:00", "06:00:00Z", "yesterday"])
    func whatIsNotAnInstantIsRefused(text: String) {
        #expect(throws: DecodingError.self) { try APIDateTranscoder().decode(text) }
    }

    /// A required, nullable field is written as null (the generated encoders leave a nil out),
    /// and both null and an absent key read back as nil.
    @Test func aRequiredNullableFieldIsWrittenAsNull() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let lastPage = Schemas.DeviceList(items: [], nextCursor: Nullable(nil))
        #expect(String(decoding: try encoder.encode(lastPage), as: UTF8.self) == #"{"items":[],"nextCursor":null}"#)
        let page = Schemas.DeviceList(items: [], nextCursor: Nullable("c1"))
        #expect(String(decoding: try encoder.encode(page), as: UTF8.self) == #"{"items":[],"nextCursor":"c1"}"#)
        for json in [#"{"items": [], "nextCursor": null}"#, #"{"items": []}"#] {
            #expect(try Self.decode(Schemas.DeviceList.self, json).nextCursor?.value == nil)
        }
        #expect(
            try Self.decode(Schemas.DeviceList.self, #"{"items": [], "nextCursor": "c2"}"#).nextCursor?.value == "c2")
        let plan = try Self.decode(
            Schemas.LocalPlan.self,
            #"{"version": 1, "timeZone": "UTC", "horizonEnd": "2027-03-01T06:00:00+01:00", "requests": []}"#)
        #expect(plan.horizonEnd?.value == Date(timeIntervalSince1970: 1_803_877_200))
    }
}
