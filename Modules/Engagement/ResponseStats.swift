public import Models
public import Scheduling

// MARK: - Response feedback

/// What the user did with a delivered notification, as timing feedback sees it.
public enum ResponseOutcome: String, Hashable, Sendable, Codable, CaseIterable {
    /// Tapped it or used an action other than snooze and dismiss (a skip is an answer too:
    /// the timing reached the user).
    case acted
    /// Asked for it later.
    case snoozed
    /// Swiped it away (the custom dismiss action).
    case dismissed
    /// No response before it went stale; the shell decides when that is.
    case ignored

    /// The outcome of an action identifier.
    public init(action: NotificationActionID) {
        switch action {
        case .snooze30, .snoozeReminder, .snooze: self = .snoozed
        case .dismiss: self = .dismissed
        case .logMood, .quickChat, .startWorkout, .logMeal, .quickAdd, .startWorkoutAction, .skipTodayAction,
            .logEnergyAction, .completeWorkout, .logWorkout, .skipWorkout, .startNow, .defaultTap:
            self = .acted
        }
    }
}

/// How a kind's send time at one local hour should change, from the user's responses there.
public enum TimingAdjustment: Hashable, Sendable, Codable {
    /// Send as planned.
    case keep
    /// Move the send time by this many minutes (negative is earlier), same local day.
    case shift(minutes: Int)
    /// Send only every `factor`-th occurrence (or stretch the interval by `factor`): 2, 4 or 8.
    case backOff(factor: Int)
}

/// What learns its timing on its own: a kind, and which of its occurrences of a day (its
/// `OccurrenceSlot`), so breakfast learns from breakfast and each hydration time from its own.
public struct LearningSlot: Hashable, Sendable, Comparable, CustomStringConvertible {
    public var kind: NotificationKind
    /// The slot as `OccurrenceID.packedSlot` holds it: 0 for a kind's one occurrence of the
    /// day, the meal, the minute of the day of a hydration time.
    public var packedSlot: Int32

    public init(_ kind: NotificationKind, packedSlot: Int32 = 0) {
        precondition((0...0xFFFF).contains(packedSlot), "slot out of range: \(packedSlot)")
        self.kind = kind
        self.packedSlot = packedSlot
    }

    /// The slot of an occurrence (its snoozed copies and its daily series share it).
    public init(_ id: OccurrenceID) { self.init(id.kind, packedSlot: id.packedSlot) }

    public static func < (a: LearningSlot, b: LearningSlot) -> Bool {
        (a.kind.ordinal, a.packedSlot) < (b.kind.ordinal, b.packedSlot)
    }

    /// `mealReminder.breakfast`, `hydration.1300`, `morningGreeting`.
    public var description: String { OccurrenceID.slotName(kind: kind, packedSlot: packedSlot) }
}

/// Responses per learning slot (a kind, and which of its occurrences of a day) per local hour of
/// delivery, and the timing rule they drive (quick actions feed back into future
/// timing). Each slot learns from its own deliveries only, and moves only inside its slot's
/// window (`SlotWindow`): a dinner reminder never learns from breakfast, nor moves to it.
///
/// The rule for `(slot, hour)`, first match wins (defaults in `Thresholds`):
/// 1. Fewer than `minimumResponses` responses recorded there: `.keep` (too little evidence).
/// 2. A run of at least `backOffAfterNegatives` (6) dismissals or ignores with no act or snooze
///    in between: `.backOff(factor:)`, 2 at 6, doubling every further `shiftAfterNegatives`
///    (4 at 9, 8 at 12), at most `maximumBackOffFactor` (8).
/// 3. A run of at least `shiftAfterNegatives` (3): `.shift` to the same slot's best other hour
///    inside the window, the one with the highest action rate (at least `reinforcingActionRate`,
///    0.5, over at least `minimumResponses` responses; ties go to the nearer hour, then the
///    earlier); with no such hour, `defaultShiftMinutes` (60) later, or earlier from
///    `latestHourToShiftLater` (21:00) on, clamped to the window (`SlotWindow.clampedShift`).
/// 4. A run of at least `snoozesToShift` (2) snoozes with no act in between: `.shift` later by
///    `snoozeShiftMinutes` (30), the delay the user keeps asking for, clamped to the window.
/// 5. Otherwise (or when the window leaves no room to move) `.keep`.
///
/// Acting reinforces: it ends both runs at once (the hour goes back to `.keep`) and raises the
/// hour's action rate, making it a target for the slot's shifts. A snooze ends a negative run
/// (the user engaged). Memory is bounded (at most one small cell per slot and hour), and when a
/// cell's counts reach `halveAtTotal` (64) they are halved, so old behaviour fades.
public struct ResponseStats: Hashable, Sendable, Codable {
    /// The rule's thresholds; the defaults are documented on `ResponseStats`.
    public struct Thresholds: Hashable, Sendable, Codable {
        public var minimumResponses = 3
        public var shiftAfterNegatives = 3
        public var backOffAfterNegatives = 6
        public var maximumBackOffFactor = 8
        public var snoozesToShift = 2
        public var snoozeShiftMinutes = 30
        public var defaultShiftMinutes = 60
        public var latestHourToShiftLater = 21
        public var reinforcingActionRate = 0.5
        public var halveAtTotal = 64

        public init() {}
    }

    /// The responses at one slot and local hour.
    public typealias Counts = ResponseTally

    struct Cell: Hashable, Sendable, Codable {
        /// `(kind.ordinal << 16 | packedSlot) * 24 + hour`: cells sort by kind, slot, hour.
        var key: Int
        var counts: Counts

        var slot: LearningSlot? {
            let slotKey = key / 24
            guard let kind = NotificationKind(ordinal: slotKey >> 16) else { return nil }
            return LearningSlot(kind, packedSlot: Int32(slotKey & 0xFFFF))
        }
        var hour: Int { key % 24 }
    }

    /// Keys stay below this: 24 kinds' ordinals, 16 bits of slot, 24 hours.
    static let keyLimit = (NotificationKind.allCases.count << 16) * 24

    public var thresholds: Thresholds
    /// Sorted by key; at most one per slot and hour.
    private var cells: [Cell] = []

    public init(thresholds: Thresholds = Thresholds()) { self.thresholds = thresholds }

    private static func key(_ slot: LearningSlot, _ hour: Int) -> Int {
        precondition((0..<24).contains(hour), "hour out of range: \(hour)")
        return (slot.kind.ordinal << 16 | Int(slot.packedSlot)) * 24 + hour
    }

    private func position(of key: Int) -> (index: Int, found: Bool) {
        var low = 0
        var high = cells.count
        while low < high {
            let middle = (low + high) / 2
            if cells[middle].key < key { low = middle + 1 } else { high = middle }
        }
        return (low, low < cells.count && cells[low].key == key)
    }

    /// Records a response to an occurrence of `slot` delivered at local hour `hour` (0 ..< 24).
    public mutating func record(_ outcome: ResponseOutcome, slot: LearningSlot, hour: Int) {
        let key = ResponseStats.key(slot, hour)
        let (index, found) = position(of: key)
        if !found { cells.insert(Cell(key: key, counts: Counts()), at: index) }
        var counts = cells[index].counts
        switch outcome {
        case .acted:
            counts.acted += 1
            counts.negativeRun = 0
            counts.snoozeRun = 0
        case .snoozed:
            counts.snoozed += 1
            counts.negativeRun = 0
            counts.snoozeRun += 1
        case .dismissed:
            counts.dismissed += 1
            counts.negativeRun += 1
        case .ignored:
            counts.ignored += 1
            counts.negativeRun += 1
        }
        if counts.total >= thresholds.halveAtTotal {
            counts.acted /= 2
            counts.snoozed /= 2
            counts.dismissed /= 2
            counts.ignored /= 2
        }
        cells[index].counts = counts
    }

    /// Records a response to an occurrence of `slot` delivered at `deliveredAt`; the hour is
    /// the local hour in `zone` (the user's zone at delivery).
    public mutating func record(
        _ outcome: ResponseOutcome, slot: LearningSlot, deliveredAt: Instant, in zone: ZoneRules
    ) {
        record(outcome, slot: slot, hour: zone.localDateTime(at: deliveredAt).hour)
    }

    /// The counts at `slot` and `hour` (all zero when none were recorded).
    public func counts(slot: LearningSlot, hour: Int) -> Counts {
        let (index, found) = position(of: ResponseStats.key(slot, hour))
        return found ? cells[index].counts : Counts()
    }

    /// The counts of `kind` at local hour `hour` over all its slots (runs are summed too): a
    /// binary search to the kind's cells, then a walk over them.
    public func counts(kind: NotificationKind, hour: Int) -> Counts {
        var sum = Counts()
        let first = position(of: ResponseStats.key(LearningSlot(kind), 0)).index
        let end = ((kind.ordinal + 1) << 16) * 24
        for cell in cells[first...] {
            guard cell.key < end else { break }
            guard cell.hour == hour else { continue }
            sum.add(cell.counts)
        }
        return sum
    }

    /// The counts of `kind` over all its slots and hours (runs are summed too).
    public func counts(kind: NotificationKind) -> Counts {
        var sum = Counts()
        for cell in cells where cell.slot?.kind == kind {
            sum.add(cell.counts)
        }
        return sum
    }

    /// The timing rule for `slot` at local hour `hour` (the hour of its nominal time); see
    /// `ResponseStats`. `window` bounds the moves (nil: the kind's `SlotWindow`, if any).
    public func adjustment(slot: LearningSlot, hour: Int, window: SlotWindow? = nil) -> TimingAdjustment {
        let window = window ?? SlotWindow.of(slot.kind)
        let counts = counts(slot: slot, hour: hour)
        let negativeRun = Int(counts.negativeRun)
        guard counts.total >= thresholds.minimumResponses else { return .keep }
        if negativeRun >= thresholds.backOffAfterNegatives {
            let doublings = (negativeRun - thresholds.backOffAfterNegatives) / max(1, thresholds.shiftAfterNegatives)
            let factor = 2 << min(doublings, 16)
            return .backOff(factor: min(factor, max(2, thresholds.maximumBackOffFactor)))
        }
        if negativeRun >= thresholds.shiftAfterNegatives {
            if let target = bestHour(of: slot, besides: hour, window: window) {
                return .shift(minutes: (target - hour) * 60)
            }
            let minutes = thresholds.defaultShiftMinutes
            return shift(hour < thresholds.latestHourToShiftLater ? minutes : -minutes, within: window)
        }
        if Int(counts.snoozeRun) >= thresholds.snoozesToShift {
            return shift(thresholds.snoozeShiftMinutes, within: window)
        }
        return .keep
    }

    private func shift(_ minutes: Int, within window: SlotWindow?) -> TimingAdjustment {
        let clamped = window?.clampedShift(minutes) ?? minutes
        return clamped == 0 ? .keep : .shift(minutes: clamped)
    }

    /// The hours of `kinds`' slots whose timing rule is not `.keep` (only hours with responses
    /// can have one), by kind, slot, then hour.
    func timingRules(for kinds: NotificationKindSet) -> [TimingRule] {
        var rules: [TimingRule] = []
        for cell in cells where cell.counts.total >= thresholds.minimumResponses {
            guard let slot = cell.slot, kinds.contains(slot.kind) else { continue }
            let adjustment = adjustment(slot: slot, hour: cell.hour)
            if adjustment != .keep { rules.append(TimingRule(slot: slot, hour: cell.hour, adjustment: adjustment)) }
        }
        return rules
    }

    /// The slot's other hour with the best action rate that qualifies as a shift target, among
    /// the hours a whole-hour shift keeps inside `window`.
    func bestHour(of slot: LearningSlot, besides hour: Int, window: SlotWindow?) -> Int? {
        var best: (hour: Int, rate: Double)?
        let first = position(of: ResponseStats.key(slot, 0)).index
        for cell in cells[first...] {
            guard cell.key < ResponseStats.key(slot, 0) + 24 else { break }
            let candidate = cell.hour
            let counts = cell.counts
            guard candidate != hour, window?.contains(offsetMinutes: (candidate - hour) * 60) ?? true,
                counts.total >= thresholds.minimumResponses,
                Int(counts.negativeRun) < thresholds.shiftAfterNegatives, let rate = counts.actionRate,
                rate >= thresholds.reinforcingActionRate
            else { continue }
            if let current = best {
                let nearer = abs(candidate - hour) < abs(current.hour - hour)
                // Cells come in ascending hour order, so an equally near later hour never wins.
                guard rate > current.rate || (rate == current.rate && nearer) else { continue }
            }
            best = (candidate, rate)
        }
        return best?.hour
    }

    /// Moves the counts recorded per kind and hour (snapshot version 1, before slots) into
    /// slots: `slot` names the slot a `(kind, hour)` cell belongs to, nil to forget it.
    mutating func adopt(
        legacy: [(kind: NotificationKind, hour: Int, counts: Counts)], slot: (NotificationKind, Int) -> LearningSlot?
    ) {
        for entry in legacy {
            guard let target = slot(entry.kind, entry.hour) else { continue }
            let key = ResponseStats.key(target, entry.hour)
            let (index, found) = position(of: key)
            if !found { cells.insert(Cell(key: key, counts: entry.counts), at: index) }
        }
    }
}

extension ResponseStats {
    /// Writes the counts compactly (a snapshot part); the thresholds are the engine's defaults.
    /// Keys ascend: each is written as its distance from the one before.
    func write(to writer: inout CompactWriter) {
        var previous = -1
        writer.list(cells) { writer, cell in
            writer.count(cell.key - previous - 1)
            previous = cell.key
            for value in [
                cell.counts.acted, cell.counts.snoozed, cell.counts.dismissed, cell.counts.ignored,
                cell.counts.negativeRun, cell.counts.snoozeRun,
            ] {
                writer.count(Int(value))
            }
        }
    }

    /// Reads what `write(to:)` wrote, with the default thresholds.
    init(reading reader: inout CompactReader) throws {
        self.init()
        var previousKey = -1
        cells = try reader.list(limit: 4_096) { reader in
            let key = previousKey + 1 + (try reader.count(limit: ResponseStats.keyLimit))
            guard key < ResponseStats.keyLimit, NotificationKind(ordinal: (key / 24) >> 16) != nil else {
                throw CompactBytesError(offset: reader.offset, problem: "response cell \(key) out of range")
            }
            previousKey = key
            return Cell(key: key, counts: try ResponseStats.readCounts(&reader))
        }
    }

    /// Writes the counts as snapshot version 1 did, per kind and hour (the slots of a kind summed),
    /// for the migration's tests only: the writer writes the newest version.
    func writeVersion1(to writer: inout CompactWriter) {
        var merged: [(key: Int, counts: Counts)] = []
        for cell in cells {
            guard let slot = cell.slot else { continue }
            let key = slot.kind.ordinal * 24 + cell.hour
            if let index = merged.firstIndex(where: { $0.key == key }) {
                merged[index].counts.acted += cell.counts.acted
                merged[index].counts.snoozed += cell.counts.snoozed
                merged[index].counts.dismissed += cell.counts.dismissed
                merged[index].counts.ignored += cell.counts.ignored
                merged[index].counts.negativeRun += cell.counts.negativeRun
                merged[index].counts.snoozeRun += cell.counts.snoozeRun
            } else {
                merged.append((key, cell.counts))
            }
        }
        merged.sort { $0.key < $1.key }
        writer.list(merged) { writer, cell in
            writer.count(cell.key)
            for value in [
                cell.counts.acted, cell.counts.snoozed, cell.counts.dismissed, cell.counts.ignored,
                cell.counts.negativeRun, cell.counts.snoozeRun,
            ] {
                writer.count(Int(value))
            }
        }
    }

    /// Reads the counts per kind and hour of snapshot version 1 (keys `kind.ordinal * 24 + hour`).
    static func readVersion1(
        _ reader: inout CompactReader
    ) throws -> [(kind: NotificationKind, hour: Int, counts: Counts)] {
        var previousKey = -1
        return try reader.list(limit: 24 * 64) { reader in
            let key = try reader.count(limit: 24 * 64)
            guard key > previousKey, let kind = NotificationKind(ordinal: key / 24) else {
                throw CompactBytesError(offset: reader.offset, problem: "response cells out of order")
            }
            previousKey = key
            return (kind, key % 24, try readCounts(&reader))
        }
    }

    private static func readCounts(_ reader: inout CompactReader) throws -> Counts {
        var values: [Int32] = []
        // Counts are halved at `halveAtTotal` (64): anything far beyond is not a snapshot.
        for _ in 0..<6 { values.append(Int32(try reader.count(limit: 1 << 16))) }
        var counts = Counts()
        counts.acted = values[0]
        counts.snoozed = values[1]
        counts.dismissed = values[2]
        counts.ignored = values[3]
        counts.negativeRun = values[4]
        counts.snoozeRun = values[5]
        return counts
    }
}
