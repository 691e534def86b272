/// How a reminder repeats: once, daily, weekly, monthly, or a custom RRULE.
public enum Recurrence: Hashable, Sendable {
    case once, daily, weekly, monthly
    case custom(RecurrenceRule)

    /// The rule the reminder follows from its start; nil for a one-off.
    public var rule: RecurrenceRule? {
        switch self {
        case .once: nil
        case .daily: RecurrenceRule(frequency: .daily)
        case .weekly: RecurrenceRule(frequency: .weekly)
        case .monthly: RecurrenceRule(frequency: .monthly)
        case .custom(let rule): rule
        }
    }

    /// `once`, `daily`, `weekly`, `monthly`, or an RRULE such as `FREQ=WEEKLY;BYDAY=MO,TH`.
    public init(parsing text: String) throws(RecurrenceRule.ParseError) {
        switch text {
        case "once": self = .once
        case "daily": self = .daily
        case "weekly": self = .weekly
        case "monthly": self = .monthly
        default: self = .custom(try RecurrenceRule(parsing: text))
        }
    }

    public var text: String {
        switch self {
        case .once: "once"
        case .daily: "daily"
        case .weekly: "weekly"
        case .monthly: "monthly"
        case .custom(let rule): rule.description
        }
    }
}

/// A reminder the user set up (a check-in reminder), in their local time.
public struct Reminder: Hashable, Sendable {
    /// 1...31; names the reminder in request identifiers.
    public var number: Int
    public var title: String
    /// The first occurrence, a wall time.
    public var start: LocalDateTime
    public var recurrence: Recurrence

    public init(number: Int, title: String, start: LocalDateTime, recurrence: Recurrence) {
        self.number = number
        self.title = title
        self.start = start
        self.recurrence = recurrence
    }

    /// Occurrences at or after `from`, at most `limit`.
    public func occurrences(from: LocalDateTime, limit: Int) -> [LocalDateTime] {
        guard let rule = recurrence.rule else { return start >= from ? [start] : [] }
        return rule.occurrences(start: start, from: from, limit: limit)
    }
}

extension Reminder: Codable {
    enum CodingKeys: String, CodingKey, CaseIterable { case number, title, start, recurrence }

    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        number = try c.decode(Int.self, forKey: .number)
        guard (1...31).contains(number) else {
            throw decoder.invalid(CodingKeys.number, "must be in 1...31, got \(number)")
        }
        title = try c.decode(String.self, forKey: .title)
        let startText = try c.decode(String.self, forKey: .start)
        guard let parsed = LocalDateTime.parseWithOffset(startText), parsed.offsetSeconds == 0,
            !startText.hasSuffix("Z")
        else {
            throw decoder.invalid(
                CodingKeys.start, "expected a local date and time YYYY-MM-DDTHH:MM, got \"\(startText)\"")
        }
        start = parsed.local
        let recurrenceText = try c.decode(String.self, forKey: .recurrence)
        do {
            recurrence = try Recurrence(parsing: recurrenceText)
        } catch {
            throw decoder.invalid(CodingKeys.recurrence, "unsupported rule \"\(recurrenceText)\": \(error)")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(number, forKey: .number)
        try c.encode(title, forKey: .title)
        try c.encode(String(start.description.dropLast(3)), forKey: .start)
        try c.encode(recurrence.text, forKey: .recurrence)
    }
}
