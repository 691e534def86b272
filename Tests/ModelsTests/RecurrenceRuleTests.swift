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

@Suite("OccurrenceID slots")
struct OccurrenceSlotTests {
    static let day = LocalDate(year: 2027, month: 3, day: 1)

    @Test(arguments: [
        (NotificationKind.morningGreeting, OccurrenceSlot.day, "morningGreeting.2027-03-01"),
        (.mealReminder, .meal(.dinner), "mealReminder.2027-03-01.dinner"),
        (.hydration, .minuteOfDay(0), "hydration.2027-03-01.0000"),
        (.preWorkout, .minuteOfDay(1_439), "preWorkout.2027-03-01.2359"),
        (.reEngagement, .attempt(3), "reEngagement.2027-03-01.3"),
        (.workoutKudos, .group(32_767), "workoutKudos.2027-03-01.32767"),
        (.achievement, .streakDays(100), "achievement.2027-03-01.100"),
        (.checkInReminder, .reminder(number: 31, minuteOfDay: 1_230), "checkInReminder.2027-03-01.r31-2030"),
        (.checkInReminder, .day, "checkInReminder.2027-03-01"),
    ])
    func eachKindHasOneTypedSlotThatRoundTrips(kind: NotificationKind, slot: OccurrenceSlot, text: String) throws {
        let id = OccurrenceID(kind, date: Self.day, slot)
        #expect(id.slot == slot)
        #expect(id.description == text)
        let parsed = try OccurrenceID(parsing: text)
        #expect(parsed == id && parsed.slot == slot)
    }

    @Test(arguments: [
        ("danceParty.2027-03-01", "unknown kind \"danceParty\""),
        ("mealReminder.2027-03-01", "mealReminder needs a slot"),
        ("morningGreeting.2027-03-01.3", "morningGreeting has no slot"),
        ("hydration.daily.2500", "a daily series is kind.daily.HHMM"),
        ("reEngagement.2027-03-01.x", "bad number \"x\""),
        ("mealReminder.2027-03-01.lunch.snooze0", "bad snooze \"snooze0\""),
    ])
    func aMalformedIdentifierSaysWhatIsWrong(text: String, problem: String) {
        #expect(throws: OccurrenceIDError(requestID: text, problem: problem)) { try OccurrenceID(parsing: text) }
    }

    @Test func identifiersWrittenBeforeSlotsWereTypedStillParse() throws {
        #expect(
            try OccurrenceID(parsing: "weeklyReview.2027-03-07.0")
                == OccurrenceID(.weeklyReview, date: Self.day.adding(days: 6)))
        #expect(try OccurrenceID(parsing: "streakReminder.2027-03-01.0").slot == .day)
    }

    @Test(arguments: [
        "reEngagement.2027-03-01.+2", "reEngagement.2027-03-01.02", "checkInReminder.2027-03-01.r03-0900",
        "mealReminder.2027-03-01.lunch.snooze01", "workoutKudos.2027-03-01.40000",
    ])
    func nonCanonicalOrOutOfRangeFormsAreRefused(text: String) {
        #expect(OccurrenceID(requestID: text) == nil)
    }

    @Test func aSnoozeCountStaysInItsByte() {
        var id = OccurrenceID(.mealReminder, date: Self.day, .meal(.lunch))
        for _ in 0..<300 { id = id.snoozedAgain }
        #expect(id.snooze == 255 && id.description.hasSuffix(".snooze255"))
    }

    @Test func aSnoozedCopyKeepsItsOriginal() throws {
        let id = OccurrenceID(.mealReminder, date: Self.day, .meal(.lunch))
        let snoozed = id.snoozedAgain.snoozedAgain
        #expect(snoozed.description == "mealReminder.2027-03-01.lunch.snooze2")
        let parsed = try OccurrenceID(parsing: snoozed.description)
        #expect(snoozed.original == id && parsed == snoozed)
    }

    @Test func packedIdentitiesOrderByDayThenKindThenSlot() {
        let a = OccurrenceID(.hydration, date: Self.day, .minuteOfDay(600))
        let b = OccurrenceID(.hydration, date: Self.day, .minuteOfDay(660))
        let c = OccurrenceID(.morningGreeting, date: Self.day.adding(days: 1))
        #expect(a < b && b < c)
    }
}
