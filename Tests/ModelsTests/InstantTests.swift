import Foundation
import Testing

@testable import Models

@Suite("Instant")
struct InstantTests {
    @Test(arguments: [
        ("1970-01-01T00:00:00Z", Int64(0)),
        ("1969-12-31T23:59:59Z", -1),
        ("2027-03-01T07:00:00Z", 1_803_884_400),
        ("2000-02-29T12:34:56Z", 951_827_696),
        ("1900-01-01T00:00:00Z", -2_208_988_800),
        ("2100-01-01T00:00:00Z", 4_102_444_800),
        ("2038-01-19T03:14:08Z", 2_147_483_648),
    ])
    func knownInstantsParseAndFormat(text: String, seconds: Int64) throws {
        let instant = try #require(Instant(iso8601: text))
        #expect(instant.secondsSinceEpoch == seconds)
        #expect(instant.iso8601 == text)
        #expect(instant.description == text)
    }

    @Test(arguments: [
        ("2027-03-14T03:00:00-04:00", "2027-03-14T07:00:00Z"),
        ("2027-03-14T03:00:00+00:00", "2027-03-14T03:00:00Z"),
        ("2027-03-14T03:00:00-00:00", "2027-03-14T03:00:00Z"),
        ("2027-03-01T06:45:00+05:45", "2027-03-01T01:00:00Z"),
        ("2027-03-01T00:30:00+05:30", "2027-02-28T19:00:00Z"),
        ("2027-12-31T22:00:00-03:30", "2028-01-01T01:30:00Z"),
        ("2027-01-01T00:00:00+14:00", "2026-12-31T10:00:00Z"),
        ("2027-09-26T03:45:00+13:45", "2027-09-25T14:00:00Z"),
        ("2027-03-01", "2027-03-01T00:00:00Z"),
        ("2027-03-01T07:00Z", "2027-03-01T07:00:00Z"),
        ("2027-03-01T07:00", "2027-03-01T07:00:00Z"),
        ("2027-03-01T07:00:30", "2027-03-01T07:00:30Z"),
        ("2027-03-01 07:00:00Z", "2027-03-01T07:00:00Z"),
        ("2027-03-01T07:00+01:00", "2027-03-01T06:00:00Z"),
    ])
    func offsetsAndShortFormsNormaliseToUTC(text: String, utc: String) throws {
        let instant = try #require(Instant(iso8601: text))
        #expect(instant.iso8601 == utc)
        #expect(Instant(iso8601: utc) == instant)
    }

    @Test(arguments: [
        "", "2027", "2027-3-01", "2027-03-1", "2027/03/01", "2027-02-29", "2028-02-30", "2027-13-01", "2027-00-10",
        "2027-03-00", "2027-03-01T", "2027-03-01T7:00Z", "2027-03-01T24:00:00Z", "2027-03-01T07:60:00Z",
        "2027-03-01T07:00:60Z", "2027-03-01T07:00:00+15:00", "2027-03-01T07:00:00+05:60", "2027-03-01T07:00:00+0530",
        "2027-03-01T07:00:00+05", "2027-03-01T07:00:00ZZ", "2027-03-01T07:00:00z", "2027-03-01T07:00:00Zx",
        "2027-03-01T07:00:00.000Z", "2027-03-01X07:00:00Z", "x2027-03-01", "2027-03-01T07:00:00 Z", "２０２７-03-01",
    ])
    func rejectsMalformedText(text: String) {
        #expect(Instant(iso8601: text) == nil, "\"\(text)\" parsed as \(String(describing: Instant(iso8601: text)))")
    }

    @Test func agreesWithFoundationsFormatter() throws {
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = try #require(TimeZone(identifier: "UTC"))
        for seconds in stride(from: Int64(-2_208_988_800), through: 4_102_444_800, by: 7_777_777) {
            let instant = Instant(secondsSinceEpoch: seconds)
            let text = formatter.string(from: instant.date)
            #expect(instant.iso8601 == text)
            #expect(Instant(iso8601: text) == instant)
            #expect(formatter.date(from: instant.iso8601) == instant.date)
        }
    }

    @Test func formatParseRoundTripEverywhere() {
        for seconds in stride(from: Int64(-62_135_596_800), through: 253_402_300_799, by: 123_456_789) {
            let instant = Instant(secondsSinceEpoch: seconds)
            #expect(Instant(iso8601: instant.iso8601) == instant, "\(instant)")
        }
    }

    @Test func fromDateRoundsDown() {
        #expect(Instant(Date(timeIntervalSince1970: 10.9)).secondsSinceEpoch == 10)
        #expect(Instant(Date(timeIntervalSince1970: -0.5)).secondsSinceEpoch == -1)
        #expect(Instant(Date(timeIntervalSince1970: 1_803_884_400)).date == Date(timeIntervalSince1970: 1_803_884_400))
    }

    @Test func arithmetic() throws {
        let a = try #require(Instant(iso8601: "2027-03-01T07:00:00Z"))
        #expect((a + .secondsPerDay).iso8601 == "2027-03-02T07:00:00Z")
        #expect((a - .secondsPerHour).iso8601 == "2027-03-01T06:00:00Z")
        #expect((a + 90) - a == 90)
        #expect(a - (a + 90) == -90)
        #expect(a < a + 1)
        #expect(!(a < a))
        #expect(Int64.secondsPerDay == 24 * .secondsPerHour && Int64.secondsPerHour == 60 * .secondsPerMinute)
    }

    @Test func codesAsISO8601Text() throws {
        let instant = try #require(Instant(iso8601: "2027-03-01T07:00:00Z"))
        let data = try JSONEncoder().encode([instant])
        #expect(String(decoding: data, as: UTF8.self) == #"["2027-03-01T07:00:00Z"]"#)
        #expect(try JSONDecoder().decode([Instant].self, from: data) == [instant])
        let offset = try JSONDecoder().decode([Instant].self, from: Data(#"["2027-03-01T02:00:00-05:00"]"#.utf8))
        #expect(offset == [instant])
    }

    @Test func decodingBadTextNamesTheProblem() {
        do {
            _ = try JSONDecoder().decode([String: Instant].self, from: Data(#"{"at": "yesterday"}"#.utf8))
            Issue.record("decoded a bad instant")
        } catch let error as DecodingError {
            #expect(error.fieldMessage.hasPrefix("at:"), "\(error.fieldMessage)")
            #expect(error.fieldMessage.contains("yesterday"))
        } catch {
            Issue.record("unexpected \(error)")
        }
    }
}
