import Foundation
import Testing

@testable import Models

struct RRuleVectors: Decodable {
    struct Case: Decodable {
        var rule: String
        var start: String
        var occurrences: [String]
    }

    var cases: [Case]

    static let all: RRuleVectors = {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../Fixtures/rrule_vectors.json").standardized.path
        return try! JSONDecoder().decode(RRuleVectors.self, from: FileManager.default.contents(atPath: path)!)
    }()
}

@Suite("RecurrenceRule")
struct RecurrenceRuleTests {
    @Test(arguments: RRuleVectors.all.cases.indices)
    func occurrencesMatchPythonDateutil(index: Int) throws {
        let vector = RRuleVectors.all.cases[index]
        let rule = try RecurrenceRule(parsing: vector.rule)
        let start = try #require(LocalDateTime.parseWithOffset(vector.start)?.local)
        let occurrences = rule.occurrences(start: start, limit: 40).map(\.description)
        #expect(occurrences == vector.occurrences, "\(vector.rule) from \(vector.start)")
    }

    @Test func aMonthlyRuleOnThe31stSkipsShorterMonths() throws {
        let rule = try RecurrenceRule(parsing: "FREQ=MONTHLY;BYMONTHDAY=31")
        let start = LocalDateTime(date: LocalDate(year: 2027, month: 1, day: 31), secondOfDay: 9 * 3_600)
        let months = rule.occurrences(start: start, limit: 7).map { $0.date.month }
        #expect(months == [1, 3, 5, 7, 8, 10, 12])
    }

    @Test func aWindowLaterInTheSeriesKeepsCountingFromTheStart() throws {
        let rule = try RecurrenceRule(parsing: "FREQ=DAILY;COUNT=5")
        let start = LocalDateTime(date: LocalDate(year: 2027, month: 3, day: 1), secondOfDay: 8 * 3_600)
        let from = LocalDateTime(date: LocalDate(year: 2027, month: 3, day: 4), secondOfDay: 0)
        #expect(rule.occurrences(start: start, from: from, limit: 10).map { $0.date.day } == [4, 5])
    }

    @Test(arguments: [
        ("FREQ=YEARLY", "FREQ"), ("FREQ=DAILY;BYSETPOS=1", "BYSETPOS"), ("FREQ=MONTHLY;BYDAY=1MO", "BYDAY"),
        ("INTERVAL=2", "FREQ"), ("FREQ=DAILY;INTERVAL=0", "INTERVAL"), ("FREQ=DAILY;BYHOUR=24", "BYHOUR"),
        ("FREQ=DAILY;COUNT=3;UNTIL=20270101", "COUNT"), ("FREQ=WEEKLY;BYMONTHDAY=3", "BYMONTHDAY"),
        ("FREQ=DAILY;UNTIL=2027-01-01", "UNTIL"), ("FREQ=DAILY;FREQ=WEEKLY", "FREQ"), ("FREQ", "FREQ"),
    ])
    func anUnsupportedRuleIsRejectedNamingThePart(text: String, part: String) {
        #expect {
            try RecurrenceRule(parsing: text)
        } throws: { ($0 as? RecurrenceRule.ParseError)?.part == part }
    }

    @Test func aRuleRoundTripsThroughItsText() throws {
        let text = "FREQ=WEEKLY;INTERVAL=2;BYDAY=MO,FR;BYHOUR=7;BYMINUTE=30;COUNT=12"
        #expect(try RecurrenceRule(parsing: text).description == text)
        #expect(try RecurrenceRule(parsing: "RRULE:freq=daily").frequency == .daily)
    }
}

@Suite("OccurrenceID")
struct OccurrenceIDTests {
    @Test(arguments: [
        "morningGreeting.2027-03-01", "mealReminder.2027-03-01.lunch", "hydration.2027-03-01.0900",
        "workoutReminder.2027-03-01.1830", "reEngagement.2027-03-01.2", "checkInReminder.2027-03-01.r3-2000",
        "reflection.2027-03-02.1815", "hydration.daily.0700", "mealReminder.2027-03-01.lunch.snooze2",
        "workoutKudos.2027-03-01.17",
    ])
    func aRequestIdentifierRoundTrips(text: String) throws {
        let id = try #require(OccurrenceID(requestID: text))
        #expect(id.description == text)
    }

    @Test(arguments: [
        "", "hydration", "bogusKind.2027-03-01", "hydration.2027-03-01.2460", "checkInReminder.2027-03-01.r40-2000",
        "mealReminder.2027-03-01.brunch", "morningGreeting.2027-02-30",
    ])
    func malformedIdentifiersAreRejected(text: String) {
        #expect(OccurrenceID(requestID: text) == nil)
    }
}
