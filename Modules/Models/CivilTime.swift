/// Calendar arithmetic on the proleptic Gregorian calendar, with no time zone.
///
/// Plain integer algorithms (days from civil and back) instead of Foundation's `Calendar`:
/// exact, allocation-free and fast enough for the engine's hot paths.

/// Day of the week, numbered as Foundation's `Calendar` and `DateComponents.weekday` do
/// (Sunday = 1 ... Saturday = 7), so values carry over to UserNotifications unchanged.
public enum Weekday: Int, Codable, CaseIterable, Sendable, Comparable {
    case sunday = 1, monday, tuesday, wednesday, thursday, friday, saturday

    public static func < (a: Weekday, b: Weekday) -> Bool { a.rawValue < b.rawValue }

    /// The weekday of a day number (days since 1970-01-01, which was a Thursday).
    @inlinable public init(daysSinceEpoch days: Int64) {
        let index = Int(((days % 7) + 7 + 4) % 7)  // 0 = Sunday
        self = Weekday(rawValue: index + 1)!
    }
}

/// A calendar date without a time zone.
public struct LocalDate: Hashable, Comparable, Sendable, Codable, CustomStringConvertible {
    public var year: Int
    public var month: Int
    public var day: Int

    public init(year: Int, month: Int, day: Int) {
        self.year = year
        self.month = month
        self.day = day
    }

    /// The date `days` days after 1970-01-01.
    public init(daysSinceEpoch days: Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        day = Int(dayOfYear - (153 * shiftedMonth + 2) / 5 + 1)
        month = Int(shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9)
        year = Int(yearOfEra + era * 400) + (month <= 2 ? 1 : 0)
    }

    /// Days since 1970-01-01 (negative before it).
    public var daysSinceEpoch: Int64 {
        let y = Int64(month <= 2 ? year - 1 : year)
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let shiftedMonth = Int64((month + 9) % 12)
        let dayOfYear = (153 * shiftedMonth + 2) / 5 + Int64(day) - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    public var weekday: Weekday { Weekday(daysSinceEpoch: daysSinceEpoch) }

    public func adding(days: Int) -> LocalDate { LocalDate(daysSinceEpoch: daysSinceEpoch + Int64(days)) }

    public static func < (a: LocalDate, b: LocalDate) -> Bool {
        (a.year, a.month, a.day) < (b.year, b.month, b.day)
    }

    public static func daysInMonth(year: Int, month: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    public var isValid: Bool {
        (1...12).contains(month) && day >= 1 && day <= LocalDate.daysInMonth(year: year, month: month)
    }

    /// `YYYY-MM-DD`.
    public var description: String { CivilText.text(date: self) }
}

/// A wall-clock time of day with minute resolution, written `HH:MM` (00:00 ... 23:59).
public struct LocalTimeOfDay: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// Minutes after local midnight, 0 ..< 1440: two bytes, as times of day sit in every trace
    /// entry and preference.
    @usableFromInline let storedMinutes: UInt16

    /// Minutes after local midnight, 0 ..< 1440.
    @inlinable public var minutesSinceMidnight: Int { Int(storedMinutes) }

    public init?(hour: Int, minute: Int = 0) {
        guard (0..<24).contains(hour), (0..<60).contains(minute) else { return nil }
        storedMinutes = UInt16(hour * 60 + minute)
    }

    public init(minutesSinceMidnight minutes: Int) {
        precondition((0..<1_440).contains(minutes), "minutes since midnight out of range: \(minutes)")
        storedMinutes = UInt16(minutes)
    }

    public var hour: Int { minutesSinceMidnight / 60 }
    public var minute: Int { minutesSinceMidnight % 60 }

    /// Parses `HH:MM` (24-hour clock, two-digit hour optional: `7:05` is accepted).
    public init?(_ text: String) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[1].count == 2, (1...2).contains(parts[0].count),
            parts.allSatisfy({ $0.utf8.allSatisfy { (48...57).contains($0) } }),
            let hour = Int(parts[0]), let minute = Int(parts[1])
        else { return nil }
        self.init(hour: hour, minute: minute)
    }

    public var description: String { CivilText.time(hour: hour, minute: minute) }

    public static func < (a: LocalTimeOfDay, b: LocalTimeOfDay) -> Bool {
        a.minutesSinceMidnight < b.minutesSinceMidnight
    }
}

extension LocalTimeOfDay: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let value = LocalTimeOfDay(text) else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "expected a time of day \"HH:MM\" (00:00-23:59), got \"\(text)\"")
        }
        self = value
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}

/// A wall-clock date and time without a time zone, to the second.
///
/// Stored as seconds since local 1970-01-01 00:00; the calendar date is derived only when asked
/// for, so time-of-day and day arithmetic on hot paths never divide into years and months.
public struct LocalDateTime: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// Seconds after local 1970-01-01 00:00: the instant this wall time names at UTC+0.
    public let localSeconds: Int64

    /// The wall-clock reading `localSeconds` seconds after local 1970-01-01 00:00.
    @inlinable public init(localSeconds: Int64) { self.localSeconds = localSeconds }

    public init(date: LocalDate, secondOfDay: Int) {
        localSeconds = date.daysSinceEpoch * .secondsPerDay + Int64(secondOfDay)
    }

    public init(date: LocalDate, time: LocalTimeOfDay) {
        self.init(date: date, secondOfDay: time.minutesSinceMidnight * 60)
    }

    /// The wall time `time` on the day `daysSinceEpoch`.
    @inlinable public init(daysSinceEpoch day: Int64, time: LocalTimeOfDay) {
        localSeconds = day * .secondsPerDay + Int64(time.minutesSinceMidnight) * 60
    }

    /// The local day, as days since 1970-01-01.
    @inlinable public var daysSinceEpoch: Int64 {
        localSeconds >= 0 ? localSeconds / .secondsPerDay : (localSeconds - 86_399) / .secondsPerDay
    }

    public var date: LocalDate { LocalDate(daysSinceEpoch: daysSinceEpoch) }
    /// Seconds after local midnight, 0 ..< 86 400.
    @inlinable public var secondOfDay: Int { Int(localSeconds - daysSinceEpoch * .secondsPerDay) }
    @inlinable public var weekday: Weekday { Weekday(daysSinceEpoch: daysSinceEpoch) }
    public var hour: Int { secondOfDay / 3_600 }
    public var minute: Int { secondOfDay / 60 % 60 }
    public var second: Int { secondOfDay % 60 }
    public var timeOfDay: LocalTimeOfDay { LocalTimeOfDay(minutesSinceMidnight: secondOfDay / 60) }

    public static func < (a: LocalDateTime, b: LocalDateTime) -> Bool { a.localSeconds < b.localSeconds }

    /// `YYYY-MM-DDTHH:MM:SS`.
    public var description: String { CivilText.text(date: date, secondOfDay: secondOfDay) }

    /// ISO 8601 with the offset: `2027-03-14T03:00:00-04:00`, or `Z` when the offset is 0.
    public func formatted(offsetSeconds: Int) -> String {
        CivilText.text(date: date, secondOfDay: secondOfDay, offsetSeconds: offsetSeconds)
    }

    /// Parses `YYYY-MM-DD`, `YYYY-MM-DDTHH:MM[:SS]` followed by `Z`, `±HH:MM` or nothing (UTC).
    public static func parseWithOffset(_ text: String) -> (local: LocalDateTime, offsetSeconds: Int)? {
        let bytes = Array(text.utf8)
        func number(_ range: Range<Int>) -> Int? {
            guard range.upperBound <= bytes.count else { return nil }
            var value = 0
            for byte in bytes[range] {
                guard byte >= 48, byte <= 57 else { return nil }
                value = value * 10 + Int(byte - 48)
            }
            return value
        }
        guard bytes.count >= 10, bytes[4] == 45, bytes[7] == 45,
            let year = number(0..<4), let month = number(5..<7), let day = number(8..<10)
        else { return nil }
        let date = LocalDate(year: year, month: month, day: day)
        guard date.isValid else { return nil }
        if bytes.count == 10 { return (LocalDateTime(date: date, secondOfDay: 0), 0) }
        guard bytes.count >= 16, bytes[10] == 84 || bytes[10] == 32, bytes[13] == 58,
            let hour = number(11..<13), let minute = number(14..<16), hour < 24, minute < 60
        else { return nil }
        var index = 16
        var second = 0
        if index < bytes.count, bytes[index] == 58 {
            guard let value = number(17..<19), value < 60 else { return nil }
            second = value
            index = 19
        }
        var offset = 0
        if index < bytes.count {
            switch bytes[index] {
            case 90 where index == bytes.count - 1: offset = 0
            case 43, 45:
                guard bytes.count == index + 6, bytes[index + 3] == 58,
                    let offsetHours = number(index + 1..<index + 3), let offsetMinutes = number(index + 4..<index + 6),
                    offsetHours <= 14, offsetMinutes < 60
                else { return nil }
                offset = (offsetHours * 3_600 + offsetMinutes * 60) * (bytes[index] == 45 ? -1 : 1)
            default: return nil
            }
        }
        return (LocalDateTime(date: date, secondOfDay: hour * 3_600 + minute * 60 + second), offset)
    }
}

/// `value` in decimal, left-padded with zeros to `width` digits (a leading minus if negative).
@usableFromInline func pad(_ value: Int, _ width: Int) -> String {
    TextBuffer.text(capacity: max(width, DecimalText.digitCount(of: value)) + 1) {
        $0.put(decimal: value, width: width)
    }
}
