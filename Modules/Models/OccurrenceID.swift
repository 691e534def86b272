/// What tells apart the occurrences of one kind on one local day. Each kind has one meaning
/// (`NotificationKind.slotMeaning`); an `OccurrenceID` holds only the meaning of its kind.
public enum OccurrenceSlot: Hashable, Sendable {
    /// The kind's one occurrence of the day (morning greeting, weekly review, streak reminder),
    /// or, for a check-in reminder, the day as a whole (what a completed check-in makes moot).
    case day
    /// A meal reminder's meal.
    case meal(MealType)
    /// A local time: hydration, the scheduled workout, the habitual workout time of pre- and
    /// post-workout coaching, the time of a reflection.
    case minuteOfDay(Int)
    /// The re-engagement attempt of a lapse, from 1 (the campaign is the identifier's date: the
    /// UTC date of the last activity).
    case attempt(Int)
    /// A social group (single, batch or digest), numbered per user (15 bits, wraps).
    case group(Int)
    /// An achievement's streak length in days.
    case streakDays(Int)
    /// Occurrence of the user's recurring reminder `number` (1...31) at `minuteOfDay`.
    case reminder(number: Int, minuteOfDay: Int)

    /// The slot packed into 16 bits, as request identifiers and `OccurrenceID.packed` hold it.
    var raw: Int32 {
        switch self {
        case .day: 0
        case .meal(let meal): Int32(MealType.allCases.firstIndex(of: meal)!)
        case .minuteOfDay(let minute): Int32(minute)
        case .attempt(let n), .group(let n), .streakDays(let n): Int32(n)
        case .reminder(let number, let minute): Int32(number << 11 | minute)
        }
    }
}

/// The meaning of a kind's occurrence slot.
public enum SlotMeaning: Sendable {
    case day, meal, minuteOfDay, attempt, group, streakDays, reminder
}

extension NotificationKind {
    /// What the slot of this kind's occurrences means; fixed per kind.
    public var slotMeaning: SlotMeaning {
        switch self {
        case .mealReminder: .meal
        case .hydration, .workoutReminder, .preWorkout, .postWorkoutCheckIn, .reflection: .minuteOfDay
        case .reEngagement: .attempt
        case .achievement: .streakDays
        case .checkInReminder: .reminder
        case .newFollower, .followRequest, .workoutKudos, .workoutComment, .mention, .challengeInvite,
            .leaderboardChange:
            .group
        case .morningGreeting, .weeklyReview, .streakReminder, .energyLog, .securityAlert, .privacyUpdate,
            .featureAnnouncement, .maintenanceNotice:
            .day
        }
    }
}

/// The identity of one notification occurrence: its kind, the local date it belongs to and its
/// slot that day. Request identifiers are derived from it, so re-planning replaces a request
/// instead of duplicating it, and a fired occurrence is recognised and never planned again.
///
/// Request identifier forms (stable, readable in logs), built and parsed only here:
/// - `morningGreeting.2027-03-01` (`.day`)
/// - `mealReminder.2027-03-01.lunch` (`.meal`)
/// - `hydration.2027-03-01.0900`, `workoutReminder.2027-03-01.1830` (`.minuteOfDay`)
/// - `reEngagement.2027-03-01.2` (date = the UTC date of the last activity, which a change of
///   zone does not change; `.attempt`)
/// - `workoutKudos.2027-03-01.17` (`.group`), `achievement.2027-03-01.7` (`.streakDays`)
/// - `checkInReminder.2027-03-01.r3-2000` (`.reminder`)
/// - `hydration.daily.0900`: a daily series, one repeating request for every day
/// - any of these + `.snooze1`, `.snooze2`, ... for a snoozed copy.
public struct OccurrenceID: Hashable, Sendable, Comparable, CustomStringConvertible {
    public let kind: NotificationKind
    /// The local date, as days since 1970-01-01 (`seriesDay` for a daily series).
    public let day: Int32
    /// The slot as 16 bits; its meaning is `kind.slotMeaning`. Read it typed through `slot`.
    @usableFromInline let rawSlot: Int32
    /// 0 for the occurrence itself, n for its n-th snoozed copy.
    public var snooze: Int32

    /// The occurrence of `kind` on the local day `daysSinceEpoch` in `slot`, which must have
    /// the kind's meaning (a programming error otherwise).
    public init(_ kind: NotificationKind, daysSinceEpoch: Int64, _ slot: OccurrenceSlot = .day, snooze: Int = 0) {
        precondition(OccurrenceID.slot(slot, fits: kind), "slot \(slot) does not fit \(kind)")
        self.kind = kind
        day = Int32(daysSinceEpoch)
        rawSlot = slot.raw
        self.snooze = Int32(snooze)
    }

    public init(_ kind: NotificationKind, date: LocalDate, _ slot: OccurrenceSlot = .day, snooze: Int = 0) {
        self.init(kind, daysSinceEpoch: date.daysSinceEpoch, slot, snooze: snooze)
    }

    private init(kind: NotificationKind, day: Int32, rawSlot: Int32, snooze: Int32) {
        self.kind = kind
        self.day = day
        self.rawSlot = rawSlot
        self.snooze = snooze
    }

    private static func slot(_ slot: OccurrenceSlot, fits kind: NotificationKind) -> Bool {
        switch (slot, kind.slotMeaning) {
        case (.day, .day), (.day, .reminder), (.meal, .meal): true
        case (.attempt(let n), .attempt), (.group(let n), .group), (.streakDays(let n), .streakDays):
            (0...0x7FFF).contains(n)
        case (.minuteOfDay(let minute), .minuteOfDay): (0..<1_440).contains(minute)
        case (.reminder(let number, let minute), .reminder): (1...31).contains(number) && (0..<1_440).contains(minute)
        default: false
        }
    }

    /// The slot, typed by the kind's meaning.
    public var slot: OccurrenceSlot {
        let value = Int(rawSlot)
        switch kind.slotMeaning {
        case .day: return .day
        case .meal: return .meal(MealType.allCases[value])
        case .minuteOfDay: return .minuteOfDay(value)
        case .attempt: return .attempt(value)
        case .group: return .group(value)
        case .streakDays: return .streakDays(value)
        case .reminder: return value == 0 ? .day : .reminder(number: value >> 11, minuteOfDay: value & 0x7FF)
        }
    }

    /// The local minute of a `.minuteOfDay` slot (the series time, the workout's time).
    public var minuteOfDay: Int? {
        if case .minuteOfDay(let minute) = slot { return minute }
        return nil
    }

    /// The meal of a meal reminder.
    public var meal: MealType? {
        if case .meal(let meal) = slot { return meal }
        return nil
    }

    public var date: LocalDate { LocalDate(daysSinceEpoch: Int64(day)) }

    /// The `day` of a daily series: one repeating request for every day (`hydration.daily.0900`).
    public static let seriesDay = Int32.max

    /// A daily series of `kind` at `minute` after local midnight.
    public static func dailySeries(_ kind: NotificationKind, minute: Int) -> OccurrenceID {
        precondition(kind.slotMeaning == .minuteOfDay && (0..<1_440).contains(minute))
        return OccurrenceID(kind: kind, day: seriesDay, rawSlot: Int32(minute), snooze: 0)
    }

    public var isDailySeries: Bool { day == OccurrenceID.seriesDay }

    /// All four fields in one word: day, kind, slot, snooze (orders by day, then kind, slot, snooze).
    @inlinable public var packed: UInt64 {
        UInt64(UInt32(bitPattern: day &+ Int32.min)) << 32 | UInt64(UInt8(truncatingIfNeeded: kind.ordinal)) << 24
            | UInt64(UInt16(truncatingIfNeeded: rawSlot)) << 8 | UInt64(UInt8(truncatingIfNeeded: snooze))
    }

    /// The slot as its 16 stored bits (what `packed` holds); `slot` is the typed reading.
    public var packedSlot: Int32 { rawSlot }

    /// The identity from its stored parts, as `packed` and snapshots hold them; nil when the
    /// slot's bits have no meaning for the kind.
    public init?(kind: NotificationKind, day: Int32, packedSlot: Int32, snooze: Int32) {
        guard (0...0xFFFF).contains(packedSlot), (0...255).contains(snooze) else { return nil }
        let value = Int(packedSlot)
        let fits: Bool =
            switch kind.slotMeaning {
            case .day: value == 0
            case .meal: MealType.allCases.indices.contains(value)
            case .minuteOfDay: value < 1_440
            case .attempt, .group, .streakDays: value <= 0x7FFF
            case .reminder: value == 0 || ((1...31).contains(value >> 11) && value & 0x7FF < 1_440)
            }
        guard fits else { return nil }
        self.init(kind: kind, day: day, rawSlot: packedSlot, snooze: snooze)
    }

    /// The identity `packed` holds; nil when it holds no valid identity.
    public init?(packed: UInt64) {
        guard let kind = NotificationKind(ordinal: Int(packed >> 24 & 0xFF)) else { return nil }
        self.init(
            kind: kind, day: Int32(bitPattern: UInt32(truncatingIfNeeded: packed >> 32)) &- Int32.min,
            packedSlot: Int32(packed >> 8 & 0xFFFF), snooze: Int32(packed & 0xFF))
    }

    public static func < (a: OccurrenceID, b: OccurrenceID) -> Bool { a.packed < b.packed }

    public static func == (a: OccurrenceID, b: OccurrenceID) -> Bool {
        a.day == b.day && a.rawSlot == b.rawSlot && a.snooze == b.snooze && a.kind.ordinal == b.kind.ordinal
    }

    public func hash(into hasher: inout Hasher) { hasher.combine(packed) }

    /// The occurrence this one is a snoozed copy of (itself when not snoozed).
    public var original: OccurrenceID {
        var copy = self
        copy.snooze = 0
        return copy
    }

    /// The next snoozed copy of this occurrence (the 255th stays the last: a snooze count fits a byte).
    public var snoozedAgain: OccurrenceID {
        var copy = self
        copy.snooze = min(copy.snooze + 1, 255)
        return copy
    }

    /// The day as a whole of a check-in reminder (what a completed check-in makes moot).
    public var wholeDay: OccurrenceID { OccurrenceID(kind: kind, day: day, rawSlot: 0, snooze: 0) }

    /// A slot's name without a date, as response learning names it: `mealReminder.breakfast`,
    /// `hydration.1300`, `morningGreeting`; `kind.N` for bits with no meaning for the kind.
    public static func slotName(kind: NotificationKind, packedSlot: Int32) -> String {
        var text = UTF8Text(capacity: 32)
        writeSlotName(kind: kind, packedSlot: packedSlot, to: &text)
        return text.string
    }

    /// Writes `slotName` into `sink`, from the identifier written on the stack.
    public static func writeSlotName<Sink: TextSink & ~Copyable>(
        kind: NotificationKind, packedSlot: Int32, to sink: inout Sink
    ) {
        guard let id = OccurrenceID(kind: kind, day: 0, packedSlot: packedSlot, snooze: 0) else {
            sink.write("\(kind.rawValue).\(packedSlot)")
            return
        }
        // The identifier less its date: "kind" + ".1970-01-01" + the slot's ".part", if any.
        let kindEnd = kind.rawValue.utf8.count
        id.withRequestIDBytes { bytes in
            sink.write(utf8: UnsafeBufferPointer(rebasing: bytes[..<kindEnd]))
            sink.write(utf8: UnsafeBufferPointer(rebasing: bytes[(kindEnd + 11)...]))
        }
    }

    // MARK: - Request identifiers

    /// The request identifier.
    public var description: String { canonicalText }

    /// `description` as string concatenation: for the years `canonicalText` does not write.
    var slowDescription: String {
        var text = kind.rawValue + "." + (isDailySeries ? "daily" : date.description)
        switch slot {
        case .day: break
        case .meal(let meal): text += "." + meal.rawValue
        case .minuteOfDay(let minute): text += "." + OccurrenceID.clock(minute)
        case .reminder(let number, let minute): text += ".r\(number)-" + OccurrenceID.clock(minute)
        case .attempt(let n), .group(let n), .streakDays(let n): text += ".\(n)"
        }
        if snooze > 0 { text += ".snooze\(snooze)" }
        return text
    }

    /// Parses a request identifier of the forms above (numbers in their canonical form; `.0` is
    /// also read for kinds without a slot, as identifiers were written before slots were typed);
    /// nil for anything else, an unknown kind included.
    public init?(requestID: String) {
        guard let parsed = try? OccurrenceID(parsing: requestID) else { return nil }
        self = parsed
    }

    /// `init?(requestID:)` for a typed request identifier.
    public init?(requestID: RequestID) { self.init(requestID: requestID.rawValue) }

    /// The identifier of this occurrence's request (its text form above).
    public var requestID: RequestID { RequestID(rawValue: description) }

    /// Parses a request identifier of the forms above, or says what is wrong with it.
    public init(parsing requestID: String) throws(OccurrenceIDError) {
        if let canonical = OccurrenceID.canonical(requestID) {
            self = canonical
            return
        }
        try self.init(parsingSlowly: requestID)
    }

    /// Every form, and what is wrong with anything else: what `canonical` gives up on.
    init(parsingSlowly requestID: String) throws(OccurrenceIDError) {
        func fail(_ problem: String) -> OccurrenceIDError { OccurrenceIDError(requestID: requestID, problem: problem) }
        var parts = requestID.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard parts.count >= 2 else { throw fail("expected kind.date[.slot][.snoozeN]") }
        guard let kind = NotificationKind(rawValue: parts[0]) else { throw fail("unknown kind \"\(parts[0])\"") }
        if parts[1] == "daily" {
            guard kind.slotMeaning == .minuteOfDay, parts.count == 3, let minute = OccurrenceID.minuteOfDay(parts[2])
            else { throw fail("a daily series is kind.daily.HHMM") }
            self = .dailySeries(kind, minute: minute)
            return
        }
        guard parts[1].count == 10, let parsed = LocalDateTime.parseWithOffset(parts[1]) else {
            throw fail("bad date \"\(parts[1])\"")
        }
        var snooze = 0
        if let last = parts.last, last.hasPrefix("snooze"), parts.count > 2 {
            guard let n = Int(last.dropFirst(6)), (1...255).contains(n), "snooze\(n)" == last else {
                throw fail("bad snooze \"\(last)\"")
            }
            snooze = n
            parts.removeLast()
        }
        guard parts.count <= 3 else { throw fail("too many parts") }
        let text = parts.count == 3 ? parts[2] : nil
        let slot: OccurrenceSlot
        switch (kind.slotMeaning, text) {
        // `.0` is the form identifiers of day kinds had before slots were typed: still read.
        case (.day, nil), (.reminder, nil), (.day, "0"): slot = .day
        case (.meal, let text?):
            guard let meal = MealType(rawValue: text) else { throw fail("unknown meal \"\(text)\"") }
            slot = .meal(meal)
        case (.minuteOfDay, let text?):
            guard let minute = OccurrenceID.minuteOfDay(text) else { throw fail("bad time \"\(text)\"") }
            slot = .minuteOfDay(minute)
        case (.reminder, let text?):
            let pieces = text.dropFirst().split(separator: "-")
            guard text.hasPrefix("r"), pieces.count == 2, let number = Int(pieces[0]), (1...31).contains(number),
                String(number) == pieces[0],
                let minute = OccurrenceID.minuteOfDay(String(pieces[1]))
            else { throw fail("a reminder slot is rN-HHMM, N in 1...31") }
            slot = .reminder(number: number, minuteOfDay: minute)
        case (.attempt, let text?), (.group, let text?), (.streakDays, let text?):
            guard let n = Int(text), (0...0x7FFF).contains(n), String(n) == text else {
                throw fail("bad number \"\(text)\"")
            }
            slot = kind.slotMeaning == .attempt ? .attempt(n) : kind.slotMeaning == .group ? .group(n) : .streakDays(n)
        case (_, nil): throw fail("\(kind.rawValue) needs a slot")
        case (.day, _?): throw fail("\(kind.rawValue) has no slot")
        }
        self.init(kind, date: parsed.local.date, slot, snooze: snooze)
    }

    /// `HHMM` as minutes after midnight.
    static func minuteOfDay(_ clock: String) -> Int? {
        guard clock.count == 4, clock.utf8.allSatisfy({ (48...57).contains($0) }), let value = Int(clock),
            value % 100 < 60, value / 100 < 24
        else { return nil }
        return value / 100 * 60 + value % 100
    }

    private static func clock(_ minute: Int) -> String { pad(minute / 60 * 100 + minute % 60, 4) }
}

/// A request identifier that is not one of `OccurrenceID`'s forms.
public struct OccurrenceIDError: Error, Hashable, Sendable, CustomStringConvertible {
    public var requestID: String
    public var problem: String

    public var description: String { "request identifier \"\(requestID.prefix(80))\": \(problem)" }
}
