/// Request identifiers read and written over bytes. Identifiers are made and read on every
/// delivery, response and outbox key, too often to split them into `String`s each time.
/// `canonical(_:)` reads the forms `description` writes (and the old `.0` of a day kind) and
/// gives up (nil) on anything else, which `OccurrenceID(parsing:)` then reads slowly and
/// explains; the tests check that both readings agree.
extension OccurrenceID {
    private static let mealNames: [(meal: MealType, bytes: [UInt8])] = MealType.allCases.map {
        ($0, Array($0.rawValue.utf8))
    }
    /// The name's bytes, by kind ordinal.
    private static let kindNameByOrdinal: [[UInt8]] = {
        var names = [[UInt8]](repeating: [], count: NotificationKind.allCases.map(\.ordinal).max()! + 1)
        for kind in NotificationKind.allCases { names[kind.ordinal] = Array(kind.rawValue.utf8) }
        return names
    }()

    /// The identifier in one of `description`'s forms; nil for anything else (which may still be
    /// an identifier an older version wrote, or an error to explain).
    static func canonical(_ requestID: String) -> OccurrenceID? {
        requestID.withUTF8Bytes { canonical(bytes: $0, exactly: false) }
    }

    /// The identifier whose `description` is exactly `requestID`; nil for anything else (an
    /// older form, a number with a leading zero, another app's identifier). Two texts that give
    /// the same occurrence here are the same text, so the occurrence can stand for the text as
    /// a key.
    public init?(exactly requestID: String) {
        guard let id = requestID.withUTF8Bytes({ OccurrenceID.canonical(bytes: $0, exactly: true) }) else { return nil }
        self = id
    }

    private static func canonical(bytes: UnsafeBufferPointer<UInt8>, exactly: Bool) -> OccurrenceID? {
        var cursor = Cursor(bytes: bytes)
        guard let kindName = cursor.part(), let kind = kind(named: kindName), let datePart = cursor.part()
        else { return nil }
        if datePart.elementsEqual("daily".utf8) {
            guard kind.slotMeaning == .minuteOfDay, let clock = cursor.part(), cursor.isAtEnd,
                let minute = minuteOfDay(clock)
            else { return nil }
            return .dailySeries(kind, minute: minute)
        }
        guard let days = daysSinceEpoch(datePart) else { return nil }
        let first = cursor.part()
        let second = cursor.part()
        var slotText = first
        var snooze = 0
        if let snoozeText = second ?? first.flatMap({ $0.starts(with: "snooze".utf8) ? $0 : nil }) {
            guard snoozeText.starts(with: "snooze".utf8), let n = canonicalNumber(snoozeText.dropFirst(6)),
                (1...255).contains(n)
            else { return nil }
            snooze = n
            if second == nil { slotText = nil }
        }
        guard cursor.isAtEnd, let slot = slot(of: kind, slotText, exactly: exactly) else { return nil }
        return OccurrenceID(kind, daysSinceEpoch: days, slot, snooze: snooze)
    }

    /// The kinds by the length of their name (a few share one), each with its name's bytes.
    private static let kindsByNameLength: [[(kind: NotificationKind, name: [UInt8])]] = {
        var table = [[(kind: NotificationKind, name: [UInt8])]](
            repeating: [], count: NotificationKind.allCases.map(\.rawValue.utf8.count).max()! + 1)
        for kind in NotificationKind.allCases {
            table[kind.rawValue.utf8.count].append((kind, Array(kind.rawValue.utf8)))
        }
        return table
    }()

    /// The kind named `name`: the few kinds of its length, byte by byte.
    private static func kind(named name: UnsafeBufferPointer<UInt8>) -> NotificationKind? {
        guard name.count < kindsByNameLength.count else { return nil }
        for known in kindsByNameLength[name.count] {
            let matches = known.name.withUnsafeBufferPointer { bytes in
                var index = bytes.count
                while index > 0 {
                    index -= 1
                    if bytes[index] != name[index] { return false }
                }
                return true
            }
            if matches { return known.kind }
        }
        return nil
    }

    private static func slot(
        of kind: NotificationKind, _ text: UnsafeBufferPointer<UInt8>?, exactly: Bool
    ) -> OccurrenceSlot? {
        guard let text else { return kind.slotMeaning == .day || kind.slotMeaning == .reminder ? .day : nil }
        switch kind.slotMeaning {
        case .day: return !exactly && text.elementsEqual("0".utf8) ? .day : nil
        case .meal: return mealNames.first(where: { $0.bytes.elementsEqual(text) }).map { .meal($0.meal) }
        case .minuteOfDay: return minuteOfDay(text).map { .minuteOfDay($0) }
        case .reminder:
            guard text.first == UInt8(ascii: "r"), let dash = text.firstIndex(of: UInt8(ascii: "-")),
                let number = canonicalNumber(text[1..<dash]), (1...31).contains(number),
                let minute = minuteOfDay(text[(dash + 1)...])
            else { return nil }
            return .reminder(number: number, minuteOfDay: minute)
        case .attempt, .group, .streakDays:
            guard let n = canonicalNumber(text[...]), n <= 0x7FFF else { return nil }
            switch kind.slotMeaning {
            case .attempt: return .attempt(n)
            case .group: return .group(n)
            default: return .streakDays(n)
            }
        }
    }

    /// A decimal number without sign or leading zeros (at most 5 digits), as `String(n)` writes it.
    private static func canonicalNumber(_ digits: Slice<UnsafeBufferPointer<UInt8>>) -> Int? {
        guard (1...5).contains(digits.count), digits.first != UInt8(ascii: "0") || digits.count == 1 else { return nil }
        return number(digits)
    }

    private static func number(_ digits: Slice<UnsafeBufferPointer<UInt8>>) -> Int? {
        var value = 0
        for byte in digits {
            guard (48...57).contains(byte) else { return nil }
            value = value * 10 + Int(byte - 48)
        }
        return value
    }

    private static func minuteOfDay(_ clock: UnsafeBufferPointer<UInt8>) -> Int? { minuteOfDay(clock[...]) }

    private static func minuteOfDay(_ clock: Slice<UnsafeBufferPointer<UInt8>>) -> Int? {
        guard clock.count == 4, let value = number(clock), value % 100 < 60, value / 100 < 24 else { return nil }
        return value / 100 * 60 + value % 100
    }

    /// `YYYY-MM-DD`, a real date.
    private static func daysSinceEpoch(_ text: UnsafeBufferPointer<UInt8>) -> Int64? {
        guard text.count == 10, text[4] == UInt8(ascii: "-"), text[7] == UInt8(ascii: "-"),
            let year = number(text[0..<4]), let month = number(text[5..<7]), let day = number(text[8..<10])
        else { return nil }
        let date = LocalDate(year: year, month: month, day: day)
        return date.isValid ? date.daysSinceEpoch : nil
    }

    /// The parts of an identifier between its dots, in order.
    private struct Cursor {
        let bytes: UnsafeBufferPointer<UInt8>
        var index = 0
        var isAtEnd: Bool { index > bytes.count }

        init(bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

        mutating func part() -> UnsafeBufferPointer<UInt8>? {
            guard index <= bytes.count else { return nil }
            let start = index
            var end = start
            while end < bytes.count, bytes[end] != UInt8(ascii: ".") { end += 1 }
            index = end + 1
            return UnsafeBufferPointer(rebasing: bytes[start..<end])
        }
    }

    /// `description`, written into a buffer on the stack, then copied once into a string of
    /// exactly its size (identifiers are kept by the thousand: no spare capacity).
    var canonicalText: String {
        let date = isDailySeries ? nil : self.date
        if let date, !(0...9_999).contains(date.year) { return slowDescription }
        return TextBuffer.text(capacity: 64) { writeCanonical(date: date, into: &$0) }
    }

    /// Calls `body` with the request identifier's UTF-8 bytes, written on the stack: an edge that
    /// copies them into its own buffer (the event log's line) makes no string.
    public func withRequestIDBytes<Result>(_ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
        let date = isDailySeries ? nil : self.date
        if let date, !(0...9_999).contains(date.year) {
            var text = slowDescription
            return text.withUTF8 { body($0) }
        }
        return TextBuffer.withBytes(capacity: 64, { writeCanonical(date: date, into: &$0) }, body)
    }

    private func writeCanonical(date: LocalDate?, into text: inout TextBuffer) {
        text.put(OccurrenceID.kindNameByOrdinal[kind.ordinal])
        text.put(UInt8(ascii: "."))
        if let date {
            text.put(decimal: date.year, width: 4)
            text.put(UInt8(ascii: "-"))
            text.put(decimal: date.month, width: 2)
            text.put(UInt8(ascii: "-"))
            text.put(decimal: date.day, width: 2)
        } else {
            text.put("daily".utf8)
        }
        switch slot {
        case .day: break
        case .meal(let meal):
            text.put(UInt8(ascii: "."))
            text.put(meal.rawValue.utf8)
        case .minuteOfDay(let minute):
            text.put(UInt8(ascii: "."))
            text.put(decimal: minute / 60 * 100 + minute % 60, width: 4)
        case .reminder(let number, let minute):
            text.put(".r".utf8)
            text.put(decimal: number, width: 1)
            text.put(UInt8(ascii: "-"))
            text.put(decimal: minute / 60 * 100 + minute % 60, width: 4)
        case .attempt(let n), .group(let n), .streakDays(let n):
            text.put(UInt8(ascii: "."))
            text.put(decimal: n, width: 1)
        }
        if snooze > 0 {
            text.put(".snooze".utf8)
            text.put(decimal: Int(snooze), width: 1)
        }
    }
}
