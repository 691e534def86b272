import Foundation
import Testing

@testable import Models

/// Known dates with their day numbers and weekdays (checked against Python's `datetime`).
private let knownDates: [(date: LocalDate, days: Int64, weekday: Weekday)] = [
    (LocalDate(year: 1970, month: 1, day: 1), 0, .thursday),
    (LocalDate(year: 1969, month: 12, day: 31), -1, .wednesday),
    (LocalDate(year: 2000, month: 1, day: 1), 10_957, .saturday),
    (LocalDate(year: 2000, month: 2, day: 29), 11_016, .tuesday),
    (LocalDate(year: 1900, month: 1, day: 1), -25_567, .monday),
    (LocalDate(year: 1900, month: 3, day: 1), -25_508, .thursday),
    (LocalDate(year: 2100, month: 1, day: 1), 47_482, .friday),
    (LocalDate(year: 2100, month: 3, day: 1), 47_541, .monday),
    (LocalDate(year: 1600, month: 1, day: 1), -135_140, .saturday),
    (LocalDate(year: 1582, month: 10, day: 15), -141_427, .friday),
    (LocalDate(year: 1, month: 1, day: 1), -719_162, .monday),
    (LocalDate(year: 0, month: 3, day: 1), -719_468, .wednesday),
    (LocalDate(year: 1904, month: 2, day: 29), -24_048, .monday),
    (LocalDate(year: 2024, month: 2, day: 29), 19_782, .thursday),
    (LocalDate(year: 2038, month: 1, day: 19), 24_855, .tuesday),
    (LocalDate(year: 9999, month: 12, day: 31), 2_932_896, .friday),
]

@Suite("LocalDate")
struct LocalDateTests {
    @Test func knownDatesHaveKnownDayNumbers() {
        for known in knownDates {
            #expect(known.date.daysSinceEpoch == known.days, "\(known.date)")
            #expect(LocalDate(daysSinceEpoch: known.days) == known.date, "\(known.days)")
        }
    }

    @Test func knownDatesHaveKnownWeekdays() {
        for known in knownDates {
            #expect(known.date.weekday == known.weekday, "\(known.date)")
        }
    }

    /// Walking day by day from 1599-12-01 to 2401-02-01, each date follows the previous one by
    /// the calendar's rules, and converting back gives the day number.
    @Test func consecutiveDaysFollowTheCalendar() {
        let first = LocalDate(year: 1599, month: 12, day: 1).daysSinceEpoch
        let last = LocalDate(year: 2401, month: 2, day: 1).daysSinceEpoch
        var previous = LocalDate(daysSinceEpoch: first - 1)
        var failures = 0
        for days in first...last {
            let date = LocalDate(daysSinceEpoch: days)
            let expected: LocalDate =
                previous.day < LocalDate.daysInMonth(year: previous.year, month: previous.month)
                ? LocalDate(year: previous.year, month: previous.month, day: previous.day + 1)
                : previous.month < 12
                    ? LocalDate(year: previous.year, month: previous.month + 1, day: 1)
                    : LocalDate(year: previous.year + 1, month: 1, day: 1)
            if date != expected || date.daysSinceEpoch != days || !date.isValid || !(previous < date) {
                failures += 1
                if failures < 5 { Issue.record("day \(days): got \(date), expected \(expected)") }
            }
            previous = date
        }
        #expect(failures == 0)
        #expect(last - first + 1 == 292_623)
    }

    @Test func roundTripsOverAWideRange() {
        for days in stride(from: Int64(-1_000_000), through: 3_000_000, by: 97) {
            let date = LocalDate(daysSinceEpoch: days)
            #expect(date.isValid)
            #expect(date.daysSinceEpoch == days)
        }
    }

    @Test func agreesWithFoundationsGregorianCalendar() throws {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = try #require(TimeZone(identifier: "UTC"))
        // From 1700 on, where Foundation's calendar is Gregorian rather than Julian.
        for days in stride(from: Int64(-98_000), through: 150_000, by: 13) {
            let date = LocalDate(daysSinceEpoch: days)
            let components = calendar.dateComponents(
                [.year, .month, .day, .weekday], from: Date(timeIntervalSince1970: Double(days) * 86_400))
            #expect(components.year == date.year && components.month == date.month && components.day == date.day)
            #expect(components.weekday == date.weekday.rawValue)
        }
    }

    @Test func leapYearRules() {
        #expect(LocalDate.daysInMonth(year: 2024, month: 2) == 29)
        #expect(LocalDate.daysInMonth(year: 2027, month: 2) == 28)
        #expect(LocalDate.daysInMonth(year: 1900, month: 2) == 28)
        #expect(LocalDate.daysInMonth(year: 2000, month: 2) == 29)
        #expect(LocalDate.daysInMonth(year: 2100, month: 2) == 28)
        #expect(LocalDate.daysInMonth(year: 2400, month: 2) == 29)
        #expect(
            (1...12).map { LocalDate.daysInMonth(year: 2027, month: $0) } == [
                31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31,
            ])
        #expect(LocalDate(year: 1900, month: 2, day: 29).isValid == false)
        #expect(LocalDate(year: 2000, month: 2, day: 29).isValid)
        #expect(LocalDate(year: 2100, month: 2, day: 29).isValid == false)
        #expect(LocalDate(year: 2100, month: 2, day: 28).adding(days: 1) == LocalDate(year: 2100, month: 3, day: 1))
        #expect(LocalDate(year: 2000, month: 2, day: 28).adding(days: 1) == LocalDate(year: 2000, month: 2, day: 29))
        #expect(LocalDate(year: 1900, month: 2, day: 28).adding(days: 1) == LocalDate(year: 1900, month: 3, day: 1))
    }

    @Test func invalidDates() {
        #expect(LocalDate(year: 2027, month: 0, day: 1).isValid == false)
        #expect(LocalDate(year: 2027, month: 13, day: 1).isValid == false)
        #expect(LocalDate(year: 2027, month: 4, day: 31).isValid == false)
        #expect(LocalDate(year: 2027, month: 1, day: 0).isValid == false)
        #expect(LocalDate(year: 2027, month: 12, day: 31).isValid)
    }

    @Test func addingDaysIncludingNegative() {
        let date = LocalDate(year: 2027, month: 3, day: 1)
        #expect(date.adding(days: -1) == LocalDate(year: 2027, month: 2, day: 28))
        #expect(date.adding(days: 365) == LocalDate(year: 2028, month: 2, day: 29))
        #expect(date.adding(days: -21_914) == LocalDate(year: 1967, month: 3, day: 2))
        #expect(LocalDate(year: 1970, month: 1, day: 1).adding(days: -719_162) == LocalDate(year: 1, month: 1, day: 1))
        #expect(date.adding(days: 0) == date)
        #expect(date.adding(days: 1_000).adding(days: -1_000) == date)
    }

    @Test func orderingAndDescription() {
        #expect(LocalDate(year: 2027, month: 1, day: 31) < LocalDate(year: 2027, month: 2, day: 1))
        #expect(LocalDate(year: 2026, month: 12, day: 31) < LocalDate(year: 2027, month: 1, day: 1))
        #expect(!(LocalDate(year: 2027, month: 2, day: 1) < LocalDate(year: 2027, month: 2, day: 1)))
        #expect(LocalDate(year: 2027, month: 3, day: 9).description == "2027-03-09")
        #expect(LocalDate(year: 987, month: 1, day: 2).description == "0987-01-02")
    }

    @Test func codableRoundTrip() throws {
        let date = LocalDate(year: 2028, month: 2, day: 29)
        let data = try JSONEncoder().encode(date)
        #expect(try JSONDecoder().decode(LocalDate.self, from: data) == date)
    }
}

@Suite("Weekday")
struct WeekdayTests {
    @Test func numberedLikeFoundation() {
        #expect(Weekday.sunday.rawValue == 1)
        #expect(Weekday.saturday.rawValue == 7)
        #expect(Weekday.allCases.count == 7)
        #expect(Weekday.allCases == Weekday.allCases.sorted())
    }

    @Test func fromDayNumbersIncludingNegative() {
        #expect(Weekday(daysSinceEpoch: 0) == .thursday)
        #expect(Weekday(daysSinceEpoch: 1) == .friday)
        #expect(Weekday(daysSinceEpoch: 3) == .sunday)
        #expect(Weekday(daysSinceEpoch: -1) == .wednesday)
        #expect(Weekday(daysSinceEpoch: -4) == .sunday)
        #expect(Weekday(daysSinceEpoch: -7) == .thursday)
        #expect(Weekday(daysSinceEpoch: -8) == .wednesday)
        #expect(Weekday(daysSinceEpoch: -719_162) == .monday)
    }

    @Test func cyclesEverySevenDays() {
        for days in Int64(-3_000)...3_000 {
            let today = Weekday(daysSinceEpoch: days)
            let tomorrow = Weekday(daysSinceEpoch: days + 1)
            #expect(tomorrow.rawValue == today.rawValue % 7 + 1)
            #expect(Weekday(daysSinceEpoch: days + 7) == today)
        }
    }

    @Test func dateWeekdays() {
        #expect(LocalDate(year: 2027, month: 3, day: 14).weekday == .sunday)
        #expect(LocalDate(year: 2027, month: 11, day: 7).weekday == .sunday)
        #expect(LocalDate(year: 2027, month: 3, day: 1).weekday == .monday)
    }

    @Test func codesAsFoundationNumber() throws {
        #expect(String(decoding: try JSONEncoder().encode([Weekday.monday, .sunday]), as: UTF8.self) == "[2,1]")
        #expect(try JSONDecoder().decode(Weekday.self, from: Data("7".utf8)) == .saturday)
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(Weekday.self, from: Data("8".utf8)) }
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(Weekday.self, from: Data("0".utf8)) }
    }
}

@Suite("LocalTimeOfDay")
struct LocalTimeOfDayTests {
    @Test(arguments: [
        ("07:00", 7, 0), ("7:05", 7, 5), ("00:00", 0, 0), ("23:59", 23, 59), ("12:30", 12, 30), ("0:00", 0, 0),
    ])
    func parsesValidTimes(text: String, hour: Int, minute: Int) throws {
        let time = try #require(LocalTimeOfDay(text))
        #expect(time.hour == hour)
        #expect(time.minute == minute)
        #expect(time.minutesSinceMidnight == hour * 60 + minute)
    }

    @Test(arguments: [
        "24:00", "12:60", "1200", "", ":", "7", "07:", ":30", "07:5", "007:00", "07:000", "7:00:00", "-1:00",
        "07-00", "ab:cd", " 7:00", "7:00 ", "07h00", "07:00Z", "25:00", "99:99",
    ])
    func rejectsInvalidTimes(text: String) {
        #expect(LocalTimeOfDay(text) == nil, "\"\(text)\" parsed as \(String(describing: LocalTimeOfDay(text)))")
    }

    @Test
    func rejectsSignedComponents() {
        #expect(LocalTimeOfDay("+7:00") == nil)
        #expect(LocalTimeOfDay("7:+5") == nil)
        #expect(LocalTimeOfDay("-0:00") == nil)
    }

    @Test func componentInitialiserValidatesRanges() {
        #expect(LocalTimeOfDay(hour: 24) == nil)
        #expect(LocalTimeOfDay(hour: -1) == nil)
        #expect(LocalTimeOfDay(hour: 12, minute: 60) == nil)
        #expect(LocalTimeOfDay(hour: 12, minute: -1) == nil)
        #expect(LocalTimeOfDay(hour: 23, minute: 59)?.minutesSinceMidnight == 1_439)
        #expect(LocalTimeOfDay(hour: 9)?.minutesSinceMidnight == 540)
    }

    @Test func formatsWithTwoDigits() {
        #expect(LocalTimeOfDay("7:05")?.description == "07:05")
        #expect(LocalTimeOfDay(minutesSinceMidnight: 0).description == "00:00")
        #expect(LocalTimeOfDay(minutesSinceMidnight: 1_439).description == "23:59")
    }

    @Test func everyMinuteRoundTripsThroughText() {
        for minutes in 0..<1_440 {
            let time = LocalTimeOfDay(minutesSinceMidnight: minutes)
            #expect(LocalTimeOfDay(time.description) == time)
        }
    }

    @Test func ordering() throws {
        #expect(try #require(LocalTimeOfDay("06:59")) < #require(LocalTimeOfDay("07:00")))
        #expect(try #require(LocalTimeOfDay("9:00")) < #require(LocalTimeOfDay("10:00")))
    }

    @Test func codesAsText() throws {
        let data = try JSONEncoder().encode([LocalTimeOfDay(minutesSinceMidnight: 7 * 60 + 5)])
        #expect(String(decoding: data, as: UTF8.self) == #"["07:05"]"#)
        #expect(
            try JSONDecoder().decode([LocalTimeOfDay].self, from: Data(#"["7:05"]"#.utf8)).first?.minutesSinceMidnight
                == 425)
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode([LocalTimeOfDay].self, from: Data(#"["24:00"]"#.utf8))
        }
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode([LocalTimeOfDay].self, from: Data("[420]".utf8))
        }
    }
}

@Suite("LocalDateTime")
struct LocalDateTimeTests {
    @Test func fromLocalSecondsIncludingNegative() {
        let epoch = LocalDateTime(localSeconds: 0)
        #expect(epoch.date == LocalDate(year: 1970, month: 1, day: 1) && epoch.secondOfDay == 0)
        let before = LocalDateTime(localSeconds: -1)
        #expect(before.date == LocalDate(year: 1969, month: 12, day: 31) && before.secondOfDay == 86_399)
        let dayBefore = LocalDateTime(localSeconds: -86_400)
        #expect(dayBefore.date == LocalDate(year: 1969, month: 12, day: 31) && dayBefore.secondOfDay == 0)
        let earlier = LocalDateTime(localSeconds: -86_401)
        #expect(earlier.date == LocalDate(year: 1969, month: 12, day: 30) && earlier.secondOfDay == 86_399)
    }

    @Test func localSecondsRoundTrip() {
        for seconds in stride(from: Int64(-5_000_000_000), through: 5_000_000_000, by: 9_999_991) {
            let local = LocalDateTime(localSeconds: seconds)
            #expect((0..<86_400).contains(local.secondOfDay))
            #expect(local.localSeconds == seconds)
        }
        for seconds in Int64(-200)...200 {
            #expect(LocalDateTime(localSeconds: seconds).localSeconds == seconds)
        }
    }

    @Test func components() throws {
        let local = LocalDateTime(date: LocalDate(year: 2027, month: 3, day: 14), secondOfDay: 2 * 3_600 + 30 * 60 + 15)
        #expect(local.hour == 2 && local.minute == 30 && local.second == 15)
        #expect(local.timeOfDay == LocalTimeOfDay(hour: 2, minute: 30))
        #expect(local.description == "2027-03-14T02:30:15")
        let time = try #require(LocalTimeOfDay("22:45"))
        #expect(LocalDateTime(date: local.date, time: time).secondOfDay == 22 * 3_600 + 45 * 60)
    }

    @Test func formattedWithOffsets() {
        let local = LocalDateTime(date: LocalDate(year: 2027, month: 3, day: 14), secondOfDay: 3 * 3_600)
        #expect(local.formatted(offsetSeconds: 0) == "2027-03-14T03:00:00Z")
        #expect(local.formatted(offsetSeconds: -4 * 3_600) == "2027-03-14T03:00:00-04:00")
        #expect(local.formatted(offsetSeconds: 5 * 3_600 + 45 * 60) == "2027-03-14T03:00:00+05:45")
        #expect(local.formatted(offsetSeconds: -(3 * 3_600 + 30 * 60)) == "2027-03-14T03:00:00-03:30")
        #expect(local.formatted(offsetSeconds: 13 * 3_600 + 45 * 60) == "2027-03-14T03:00:00+13:45")
    }

    @Test func ordering() {
        let date = LocalDate(year: 2027, month: 3, day: 14)
        #expect(
            LocalDateTime(date: date, secondOfDay: 86_399) < LocalDateTime(date: date.adding(days: 1), secondOfDay: 0))
        #expect(LocalDateTime(date: date, secondOfDay: 10) < LocalDateTime(date: date, secondOfDay: 11))
    }
}

/// `CivilText` writes what joining `pad`ded numbers wrote before it, character for character:
/// years of any width and sign, every second of a day, offsets either side of UTC (30- and
/// 45-minute ones among them) and wider than a day.
@Suite("Civil text")
struct CivilTextTests {
    private func date(_ date: LocalDate) -> String { date.description }

    private func reference(_ date: LocalDate) -> String {
        "\(pad(date.year, 4))-\(pad(date.month, 2))-\(pad(date.day, 2))"
    }

    private func reference(_ local: LocalDateTime) -> String {
        "\(reference(local.date))T\(pad(local.hour, 2)):\(pad(local.minute, 2)):\(pad(local.second, 2))"
    }

    private func reference(_ local: LocalDateTime, offsetSeconds: Int) -> String {
        guard offsetSeconds != 0 else { return reference(local) + "Z" }
        let magnitude = abs(offsetSeconds) / 60
        return reference(local) + (offsetSeconds < 0 ? "-" : "+") + pad(magnitude / 60, 2) + ":"
            + pad(magnitude % 60, 2)
    }

    @Test func writesWhatThePaddedPiecesWrote() {
        var random = SeededGenerator(seed: 2027)
        let years = [0, 7, 99, 1970, 2027, 9_999, 10_000, 123_456, -1, -44, -12_345, Int.max, Int.min + 1, Int.min]
        let offsets = [0, 19_800, 20_700, -12_600, -18_000, 50_400, -43_200, 3_600 * 100, -59, 59, 86_400 * 3]
        for step in 0..<5_000 {
            let year = step < years.count ? years[step] : Int(Int64(bitPattern: random.next()) % 30_000)
            let date = LocalDate(year: year, month: 1 + Int(random.next() % 12), day: 1 + Int(random.next() % 31))
            let secondOfDay = Int(random.next() % 86_400)
            let local = LocalDateTime(localSeconds: Int64(bitPattern: random.next()) % 1_000_000_000_000)
            let offset =
                step < offsets.count ? offsets[step] : Int(Int64(bitPattern: random.next()) % 200_000)
            #expect(date.description == reference(date))
            #expect(
                CivilText.text(date: date, secondOfDay: secondOfDay)
                    == "\(reference(date))T\(pad(secondOfDay / 3_600, 2)):\(pad(secondOfDay / 60 % 60, 2)):\(pad(secondOfDay % 60, 2))"
            )
            #expect(local.formatted(offsetSeconds: offset) == reference(local, offsetSeconds: offset))
            let minutes = Int(random.next() % 1_440)
            #expect(
                LocalTimeOfDay(minutesSinceMidnight: minutes).description
                    == "\(pad(minutes / 60, 2)):\(pad(minutes % 60, 2))")
        }
        // The longest text there is: every number at its widest.
        let widest = LocalDate(year: Int.min, month: Int.min, day: Int.min)
        #expect(date(widest) == reference(widest))
        #expect(
            CivilText.text(date: widest, secondOfDay: 86_399, offsetSeconds: -Int(Int32.max))
                == reference(widest) + "T23:59:59-" + pad(Int(Int32.max) / 60 / 60, 2) + ":"
                + pad(Int(Int32.max) / 60 % 60, 2))
        let spring = LocalDateTime(date: LocalDate(year: 2027, month: 3, day: 14), secondOfDay: 3 * 3_600)
        #expect(spring.description == reference(spring))
        #expect(spring.formatted(offsetSeconds: -14_400) == "2027-03-14T03:00:00-04:00")
        #expect(spring.formatted(offsetSeconds: 20_700) == "2027-03-14T03:00:00+05:45")
        #expect(Instant(secondsSinceEpoch: 0).iso8601 == "1970-01-01T00:00:00Z")
    }
}
