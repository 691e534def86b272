/// A recurrence rule: the RFC 5545 RRULE subset FREQ (DAILY, WEEKLY, MONTHLY), INTERVAL, BYDAY
/// (plain weekdays, no ordinals), BYMONTHDAY (1...31), BYHOUR, BYMINUTE, COUNT and UNTIL.
///
/// Occurrences are wall times in the user's zone (floating, as reminders are); the caller turns
/// them into instants with `ZoneRules`, which moves a time in a DST gap to the end of the gap and
/// a repeated time to its first occurrence. A monthly rule on the 31st skips months without one,
/// as RFC 5545 says (it never falls back to a one-shot). Like
/// python-dateutil, the start counts only if it matches the rule.
public struct RecurrenceRule: Hashable, Sendable, CustomStringConvertible {
    public enum Frequency: String, Hashable, Sendable, CaseIterable {
        case daily = "DAILY", weekly = "WEEKLY", monthly = "MONTHLY"
    }

    public var frequency: Frequency
    public var interval: Int = 1
    public var byDay: [Weekday] = []
    public var byMonthDay: [Int] = []
    public var byHour: [Int] = []
    public var byMinute: [Int] = []
    public var count: Int?
    /// Inclusive, as a wall time.
    public var until: LocalDateTime?

    public init(frequency: Frequency, interval: Int = 1) {
        self.frequency = frequency
        self.interval = interval
    }

    /// Why a rule text is not supported, with the part that is wrong.
    public struct ParseError: Error, Equatable, Sendable, CustomStringConvertible {
        public var part: String
        public var problem: String
        public var description: String { "\(part): \(problem)" }
    }

    static let weekdayCodes: [String: Weekday] = [
        "SU": .sunday, "MO": .monday, "TU": .tuesday, "WE": .wednesday, "TH": .thursday, "FR": .friday, "SA": .saturday,
    ]

    /// Parses `FREQ=WEEKLY;INTERVAL=2;BYDAY=MO,WE` (an optional `RRULE:` prefix is accepted).
    public init(parsing text: String) throws(ParseError) {
        var body = Substring(text.trimmedOrNil ?? "")
        if body.hasPrefix("RRULE:") { body = body.dropFirst(6) }
        var frequency: Frequency?
        var rule = RecurrenceRule(frequency: .daily)
        var seen: Set<String> = []
        func integers(_ name: String, _ value: Substring, _ range: ClosedRange<Int>) throws(ParseError) -> [Int] {
            var result: [Int] = []
            for item in value.split(separator: ",", omittingEmptySubsequences: false) {
                guard let number = Int(item), range.contains(number) else {
                    throw ParseError(
                        part: name, problem: "\"\(item)\" is not in \(range.lowerBound)...\(range.upperBound)")
                }
                result.append(number)
            }
            return result
        }
        for part in body.split(separator: ";") where !part.isEmpty {
            let pieces = part.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard pieces.count == 2, !pieces[1].isEmpty else {
                throw ParseError(part: String(part), problem: "expected NAME=VALUE")
            }
            let name = String(pieces[0]).uppercased()
            let value = pieces[1]
            guard seen.insert(name).inserted else { throw ParseError(part: name, problem: "given twice") }
            switch name {
            case "FREQ":
                guard let parsed = Frequency(rawValue: value.uppercased()) else {
                    throw ParseError(part: name, problem: "\"\(value)\" is not supported; use DAILY, WEEKLY or MONTHLY")
                }
                frequency = parsed
            case "INTERVAL": rule.interval = try integers(name, value, 1...1_000)[0]
            case "COUNT": rule.count = try integers(name, value, 1...10_000)[0]
            case "BYMONTHDAY": rule.byMonthDay = try integers(name, value, 1...31)
            case "BYHOUR": rule.byHour = try integers(name, value, 0...23)
            case "BYMINUTE": rule.byMinute = try integers(name, value, 0...59)
            case "BYDAY":
                for code in value.split(separator: ",") {
                    guard let day = RecurrenceRule.weekdayCodes[code.uppercased()] else {
                        throw ParseError(
                            part: name,
                            problem: "\"\(code)\" is not supported; use MO, TU, WE, TH, FR, SA, SU (no ordinals)")
                    }
                    rule.byDay.append(day)
                }
            case "UNTIL":
                guard let parsed = LocalDateTime.parseBasic(String(value)) else {
                    throw ParseError(part: name, problem: "\"\(value)\" is not a date (YYYYMMDD or YYYYMMDDTHHMMSS[Z])")
                }
                rule.until = parsed
            default:
                throw ParseError(
                    part: name,
                    problem: "not supported; use FREQ, INTERVAL, BYDAY, BYMONTHDAY, BYHOUR, BYMINUTE, COUNT, UNTIL")
            }
        }
        guard let frequency else { throw ParseError(part: "FREQ", problem: "missing") }
        rule.frequency = frequency
        if rule.count != nil && rule.until != nil {
            throw ParseError(part: "COUNT", problem: "COUNT and UNTIL must not both be given (RFC 5545)")
        }
        if frequency == .weekly && !rule.byMonthDay.isEmpty {
            throw ParseError(part: "BYMONTHDAY", problem: "must not be used with FREQ=WEEKLY (RFC 5545)")
        }
        rule.byDay = Array(Set(rule.byDay)).sorted()
        rule.byMonthDay = Array(Set(rule.byMonthDay)).sorted()
        rule.byHour = Array(Set(rule.byHour)).sorted()
        rule.byMinute = Array(Set(rule.byMinute)).sorted()
        self = rule
    }

    /// The rule in RRULE form.
    public var description: String {
        var parts = ["FREQ=\(frequency.rawValue)"]
        if interval != 1 { parts.append("INTERVAL=\(interval)") }
        let codes = Dictionary(uniqueKeysWithValues: RecurrenceRule.weekdayCodes.map { ($1, $0) })
        if !byDay.isEmpty { parts.append("BYDAY=" + byDay.map { codes[$0]! }.joined(separator: ",")) }
        if !byMonthDay.isEmpty { parts.append("BYMONTHDAY=" + byMonthDay.map(String.init).joined(separator: ",")) }
        if !byHour.isEmpty { parts.append("BYHOUR=" + byHour.map(String.init).joined(separator: ",")) }
        if !byMinute.isEmpty { parts.append("BYMINUTE=" + byMinute.map(String.init).joined(separator: ",")) }
        if let count { parts.append("COUNT=\(count)") }
        if let until {
            let d = until.date
            parts.append(
                "UNTIL=\(pad(d.year, 4))\(pad(d.month, 2))\(pad(d.day, 2))T\(pad(until.hour, 2))\(pad(until.minute, 2))\(pad(until.second, 2))"
            )
        }
        return parts.joined(separator: ";")
    }

    /// Occurrences in order, starting at `start`, that are at or after `from`; at most `limit`.
    /// COUNT is counted from the start, so a window later in the series sees the right ones.
    public func occurrences(start: LocalDateTime, from: LocalDateTime? = nil, limit: Int) -> [LocalDateTime] {
        var result: [LocalDateTime] = []
        var counted = 0
        let hours = byHour.isEmpty ? [start.hour] : byHour
        let minutes = byMinute.isEmpty ? [start.minute] : byMinute
        let second = start.second
        let startDate = start.date
        // Bounded: about 100 years of periods at most.
        let maxPeriods: Int =
            switch frequency {
            case .daily: 36_600 / interval + 1
            case .weekly: 5_300 / interval + 1
            case .monthly: 1_200 / interval + 1
            }
        for period in 0..<maxPeriods {
            for day in days(inPeriod: period, start: startDate) {
                for hour in hours {
                    for minute in minutes {
                        let occurrence = LocalDateTime(date: day, secondOfDay: hour * 3_600 + minute * 60 + second)
                        if occurrence < start { continue }
                        if let until, occurrence > until { return result }
                        counted += 1
                        if let count, counted > count { return result }
                        if let from, occurrence < from { continue }
                        result.append(occurrence)
                        if result.count >= limit { return result }
                    }
                }
            }
        }
        return result
    }

    /// The days of one period (a day, a week from Monday, a month), sorted, after BYxxx rules.
    private func days(inPeriod period: Int, start: LocalDate) -> [LocalDate] {
        switch frequency {
        case .daily:
            let day = start.adding(days: period * interval)
            if !byDay.isEmpty && !byDay.contains(day.weekday) { return [] }
            if !byMonthDay.isEmpty && !byMonthDay.contains(day.day) { return [] }
            return [day]
        case .weekly:
            let mondayOffset = (start.weekday.rawValue + 5) % 7  // days since Monday
            let weekStart = start.adding(days: -mondayOffset + period * interval * 7)
            let weekdays = byDay.isEmpty ? [start.weekday] : byDay
            return weekdays.map { weekStart.adding(days: ($0.rawValue + 5) % 7) }.sorted()
        case .monthly:
            let monthIndex = start.year * 12 + (start.month - 1) + period * interval
            let year = monthIndex / 12
            let month = monthIndex % 12 + 1
            let length = LocalDate.daysInMonth(year: year, month: month)
            var candidates: [Int]
            if !byMonthDay.isEmpty {
                candidates = byMonthDay.filter { $0 <= length }  // the 31st skips shorter months
            } else if !byDay.isEmpty {
                candidates = Array(1...length)
            } else {
                candidates = start.day <= length ? [start.day] : []
            }
            var result = candidates.map { LocalDate(year: year, month: month, day: $0) }
            if !byDay.isEmpty { result = result.filter { byDay.contains($0.weekday) } }
            return result
        }
    }
}

extension LocalDateTime {
    /// Parses RFC 5545 basic forms: `YYYYMMDD`, `YYYYMMDDTHHMMSS`, optionally ending in `Z`
    /// (read as the wall time it names; reminders are floating).
    static func parseBasic(_ text: String) -> LocalDateTime? {
        var digits = text
        if digits.hasSuffix("Z") { digits.removeLast() }
        let parts = digits.split(separator: "T", omittingEmptySubsequences: false)
        guard parts.count <= 2, parts[0].count == 8, let ymd = Int(parts[0]) else { return nil }
        let date = LocalDate(year: ymd / 10_000, month: ymd / 100 % 100, day: ymd % 100)
        guard date.isValid else { return nil }
        guard parts.count == 2 else { return LocalDateTime(date: date, secondOfDay: 86_399) }
        guard parts[1].count == 6, let hms = Int(parts[1]), hms / 10_000 < 24, hms / 100 % 100 < 60, hms % 100 < 60
        else { return nil }
        return LocalDateTime(date: date, secondOfDay: hms / 10_000 * 3_600 + hms / 100 % 100 * 60 + hms % 100)
    }
}

extension String {
    /// The text without surrounding white space, or nil when nothing is left (free text from
    /// users can be blank; copy must never read "Your  starts soon").
    public var trimmedOrNil: String? {
        // Printable ASCII at both ends (most text): nothing to trim, no copy. Neither end can then
        // be white space, nor part of a character that is.
        if let head = utf8.first, let tail = utf8.last, (0x21...0x7E).contains(head), (0x21...0x7E).contains(tail) {
            return self
        }
        guard let first = firstIndex(where: { !$0.isWhitespace }), let last = lastIndex(where: { !$0.isWhitespace })
        else { return nil }
        return String(self[first...last])
    }
}
