/// Date components to match, as UNCalendarNotificationTrigger takes them. A nil component
/// above the smallest given one matches any value; a nil component below it is its minimum
/// (`hour: 9` alone matches 09:00:00), which is how Foundation's `Calendar` matches.
public struct CalendarMatch: Codable, Hashable, Sendable {
    public var year: Int?
    public var month: Int?
    public var day: Int?
    public var weekday: Weekday?
    public var hour: Int?
    public var minute: Int?

    public init(
        year: Int? = nil, month: Int? = nil, day: Int? = nil, weekday: Weekday? = nil, hour: Int? = nil,
        minute: Int? = nil
    ) {
        self.year = year
        self.month = month
        self.day = day
        self.weekday = weekday
        self.hour = hour
        self.minute = minute
    }

    /// The components naming one wall time exactly.
    public init(_ local: LocalDateTime) {
        let date = local.date
        self.init(year: date.year, month: date.month, day: date.day, hour: local.hour, minute: local.minute)
    }

    /// Daily at `time`.
    public static func daily(at time: LocalTimeOfDay) -> CalendarMatch {
        CalendarMatch(hour: time.hour, minute: time.minute)
    }

    /// The first instant strictly after `after` at which the wall clock of `zone` matches,
    /// with `ZoneRules`' rules for gaps and repeats; nil when nothing matches within 8 years.
    public func nextMatch(after: Instant, in zone: ZoneRules) -> Instant? {
        let hours: ClosedRange<Int> = hour.map { $0...$0 } ?? (minute == nil ? 0...0 : 0...23)
        let minutes: ClosedRange<Int> = minute.map { $0...$0 } ?? 0...0
        guard hours.lowerBound >= 0, hours.upperBound < 24, minutes.lowerBound >= 0, minutes.upperBound < 60 else {
            return nil
        }
        // Start a day early: a gap or repeat can move a wall time across the date line of `after`.
        let firstDay = zone.localDate(at: after).daysSinceEpoch - 1
        let endDay = firstDay + 366 * 8
        // The first instant after `after` on local day `day` at the hours and minutes asked.
        func firstInstant(onDay day: Int64) -> Instant? {
            for h in hours {
                for m in minutes {
                    let resolved = zone.resolve(
                        LocalDateTime(localSeconds: day * .secondsPerDay + Int64(h * 3_600 + m * 60)))
                    // A fixed time moves to the end of a gap; an hourly wildcard simply has no match there.
                    if hour == nil && resolved.resolution == .skippedGap { continue }
                    if resolved.instant > after { return resolved.instant }
                }
            }
            return nil
        }
        // A match that names its date can only match on that date: look there, not at every day
        // up to it (a one-shot calendar trigger weeks ahead walked every day to its date).
        if let year, let month, let day {
            // A year outside the window cannot match; asked first, so a far year never reaches the
            // day count (where it could overflow).
            guard year >= LocalDate(daysSinceEpoch: firstDay).year, year <= LocalDate(daysSinceEpoch: endDay - 1).year
            else { return nil }
            let date = LocalDate(year: year, month: month, day: day)
            guard date.isValid else { return nil }
            let target = date.daysSinceEpoch
            guard target >= firstDay && target < endDay, weekday.map({ $0 == date.weekday }) ?? true else { return nil }
            return firstInstant(onDay: target)
        }
        let anyDay = year == nil && month == nil && day == nil && weekday == nil
        for dayNumber in firstDay..<endDay {
            if !anyDay {
                let date = LocalDate(daysSinceEpoch: dayNumber)
                if let year, date.year != year {
                    if date.year > year { return nil }
                    continue
                }
                if let month, date.month != month { continue }
                if let day, date.day != day { continue }
                if let weekday, Weekday(daysSinceEpoch: dayNumber) != weekday { continue }
            }
            if let found = firstInstant(onDay: dayNumber) { return found }
        }
        return nil
    }
}

/// When a local notification fires (UNNotificationTrigger and its subclasses).
public enum NotificationTrigger: Codable, Hashable, Sendable {
    /// After `seconds` from scheduling; repeating requires at least 60 s, as the real framework does.
    case timeInterval(seconds: Int64, repeats: Bool)
    /// When the device's wall clock matches; follows the device's current time zone.
    case calendar(CalendarMatch, repeats: Bool)
    /// At an absolute instant, whatever the time zone.
    case date(Instant)

    public var repeats: Bool {
        switch self {
        case .timeInterval(_, let repeats), .calendar(_, let repeats): repeats
        case .date: false
        }
    }

    /// Why the trigger is invalid, or nil if it is valid.
    public var invalidReason: String? {
        switch self {
        case .timeInterval(let seconds, let repeats):
            if seconds <= 0 { return "time interval must be greater than 0" }
            if repeats && seconds < 60 { return "time interval must be at least 60 s if repeating" }
            return nil
        case .calendar(let match, _):
            if let hour = match.hour, !(0..<24).contains(hour) { return "hour \(hour) out of range" }
            if let minute = match.minute, !(0..<60).contains(minute) { return "minute \(minute) out of range" }
            if let month = match.month, !(1...12).contains(month) { return "month \(month) out of range" }
            if let day = match.day, !(1...31).contains(day) { return "day \(day) out of range" }
            return nil
        case .date: return nil
        }
    }

    /// The first fire instant strictly after `after`, for a trigger scheduled at `scheduledAt`
    /// on a device in `zone`; nil when it will not fire again.
    public func nextFire(after: Instant, scheduledAt: Instant, in zone: ZoneRules) -> Instant? {
        switch self {
        case .timeInterval(let seconds, let repeats):
            let first = scheduledAt + seconds
            if after < first { return first }
            guard repeats else { return nil }
            return first + ((after - first) / seconds + 1) * seconds
        case .calendar(let match, _):
            return match.nextMatch(after: after, in: zone)
        case .date(let instant):
            return instant > after ? instant : nil
        }
    }
}
