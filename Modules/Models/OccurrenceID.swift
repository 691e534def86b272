/// The identity of one notification occurrence: its kind, the local date it belongs to and its
/// slot that day. Request identifiers are derived from it, so re-planning replaces a request
/// instead of duplicating it, and a fired occurrence is recognised and never planned again.
///
/// Request identifier forms (stable, readable in logs):
/// - `morningGreeting.2027-03-01`
/// - `mealReminder.2027-03-01.lunch`
/// - `hydration.2027-03-01.0900`, `workoutReminder.2027-03-01.1830` (slot = local minute of day)
/// - `reEngagement.2027-03-01.2` (date = the day of the last activity, slot = attempt)
/// - any of these + `.snooze1`, `.snooze2`, ... for a snoozed copy.
public struct OccurrenceID: Hashable, Sendable, Comparable, CustomStringConvertible {
    public var kind: NotificationKind
    /// The local date, as days since 1970-01-01.
    public var day: Int32
    /// Meaning depends on the kind: meal index, minute of day, attempt number, or 0.
    public var slot: Int32
    /// 0 for the occurrence itself, n for its n-th snoozed copy.
    public var snooze: Int32

    public init(kind: NotificationKind, date: LocalDate, slot: Int = 0, snooze: Int = 0) {
        self.kind = kind
        day = Int32(date.daysSinceEpoch)
        self.slot = Int32(slot)
        self.snooze = Int32(snooze)
    }

    /// The occurrence of `kind` on the local day `daysSinceEpoch`.
    @inlinable public init(kind: NotificationKind, daysSinceEpoch: Int64, slot: Int = 0, snooze: Int = 0) {
        self.kind = kind
        day = Int32(daysSinceEpoch)
        self.slot = Int32(slot)
        self.snooze = Int32(snooze)
    }

    public var date: LocalDate { LocalDate(daysSinceEpoch: Int64(day)) }

    /// The `day` of a daily series: one repeating request for every day (`hydration.daily.0900`).
    public static let seriesDay = Int32.max

    /// A daily series of `kind` at `minute` after local midnight.
    public static func dailySeries(_ kind: NotificationKind, minute: Int) -> OccurrenceID {
        var id = OccurrenceID(kind: kind, daysSinceEpoch: 0, slot: minute)
        id.day = seriesDay
        return id
    }

    public var isDailySeries: Bool { day == OccurrenceID.seriesDay }

    /// All four fields in one word: day, kind, slot, snooze (orders by day, then kind, slot, snooze).
    @inlinable public var packed: UInt64 {
        UInt64(UInt32(bitPattern: day &+ Int32.min)) << 32 | UInt64(UInt8(truncatingIfNeeded: kind.ordinal)) << 24
            | UInt64(UInt16(truncatingIfNeeded: slot)) << 8 | UInt64(UInt8(truncatingIfNeeded: snooze))
    }

    public static func < (a: OccurrenceID, b: OccurrenceID) -> Bool { a.packed < b.packed }

    public static func == (a: OccurrenceID, b: OccurrenceID) -> Bool {
        a.day == b.day && a.slot == b.slot && a.snooze == b.snooze && a.kind.ordinal == b.kind.ordinal
    }

    public func hash(into hasher: inout Hasher) { hasher.combine(packed) }

    /// The occurrence this one is a snoozed copy of (itself when not snoozed).
    public var original: OccurrenceID {
        var copy = self
        copy.snooze = 0
        return copy
    }

    /// The request identifier.
    public var description: String {
        var text = kind.rawValue + "." + (isDailySeries ? "daily" : date.description)
        switch kind {
        case .morningGreeting: break
        case .mealReminder:
            text +=
                "."
                + (MealType.allCases.indices.contains(Int(slot)) ? MealType.allCases[Int(slot)].rawValue : "\(slot)")
        case .hydration, .workoutReminder, .preWorkout, .postWorkoutCheckIn, .reflection:
            text += "." + pad(Int(slot) / 60 * 100 + Int(slot) % 60, 4)
        case .checkInReminder:
            let minute = Int(slot) & 0x7FF
            text += ".r\(Int(slot) >> 11)-" + pad(minute / 60 * 100 + minute % 60, 4)
        default: text += ".\(slot)"
        }
        if snooze > 0 { text += ".snooze\(snooze)" }
        return text
    }

    /// Parses a request identifier of the forms above; nil for anything else.
    public init?(requestID: String) {
        var parts = requestID.split(separator: ".").map(String.init)
        guard parts.count >= 2, let kind = NotificationKind(rawValue: parts[0]) else { return nil }
        if parts[1] == "daily", parts.count == 3, let minute = OccurrenceID.minuteOfDay(parts[2]) {
            self = .dailySeries(kind, minute: minute)
            return
        }
        guard let parsed = LocalDateTime.parseWithOffset(parts[1]), parts[1].count == 10 else { return nil }
        var snooze = 0
        if let last = parts.last, last.hasPrefix("snooze"), let n = Int(last.dropFirst(6)), n > 0 {
            snooze = n
            parts.removeLast()
        }
        var slot = 0
        if parts.count == 3 {
            switch kind {
            case .mealReminder:
                guard let meal = MealType(rawValue: parts[2]) else { return nil }
                slot = MealType.allCases.firstIndex(of: meal)!
            case .hydration, .workoutReminder, .preWorkout, .postWorkoutCheckIn, .reflection:
                guard let minute = OccurrenceID.minuteOfDay(parts[2]) else { return nil }
                slot = minute
            case .checkInReminder:
                let pieces = parts[2].dropFirst().split(separator: "-")
                guard parts[2].hasPrefix("r"), pieces.count == 2, let number = Int(pieces[0]),
                    (1...31).contains(number),
                    let minute = OccurrenceID.minuteOfDay(String(pieces[1]))
                else { return nil }
                slot = number << 11 | minute
            default:
                guard let value = Int(parts[2]) else { return nil }
                slot = value
            }
        } else if parts.count != 2 {
            return nil
        }
        self.init(kind: kind, date: parsed.local.date, slot: slot, snooze: snooze)
    }

    /// The occurrence of reminder `number` at `minute` (of the local day) on `daysSinceEpoch`.
    public static func reminder(number: Int, daysSinceEpoch: Int64, minute: Int) -> OccurrenceID {
        OccurrenceID(kind: .checkInReminder, daysSinceEpoch: daysSinceEpoch, slot: number << 11 | minute)
    }

    /// `HHMM` as minutes after midnight.
    static func minuteOfDay(_ clock: String) -> Int? {
        guard clock.count == 4, clock.utf8.allSatisfy({ (48...57).contains($0) }), let value = Int(clock),
            value % 100 < 60, value / 100 < 24
        else { return nil }
        return value / 100 * 60 + value % 100
    }

    /// The meal of a meal reminder.
    public var meal: MealType? {
        kind == .mealReminder && MealType.allCases.indices.contains(Int(slot)) ? MealType.allCases[Int(slot)] : nil
    }
}
