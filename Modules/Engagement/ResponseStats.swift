public import Models

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

/// Responses per notification kind per local hour of delivery, and the timing rule they drive
/// (seed 002: quick actions feed back into future timing).
///
/// The rule for `(kind, hour)`, first match wins (defaults in `Thresholds`):
/// 1. Fewer than `minimumResponses` responses recorded there: `.keep` (too little evidence).
/// 2. A run of at least `backOffAfterNegatives` (6) dismissals or ignores with no act or snooze
///    in between: `.backOff(factor:)`, 2 at 6, doubling every further `shiftAfterNegatives`
///    (4 at 9, 8 at 12), at most `maximumBackOffFactor` (8).
/// 3. A run of at least `shiftAfterNegatives` (3): `.shift` to the same kind's best other hour,
///    the one with the highest action rate (at least `reinforcingActionRate`, 0.5, over at least
///    `minimumResponses` responses; ties go to the nearer hour, then the earlier); with no such
///    hour, `defaultShiftMinutes` (60) later, or earlier from `latestHourToShiftLater` (21:00) on.
/// 4. A run of at least `snoozesToShift` (2) snoozes with no act in between: `.shift` later by
///    `snoozeShiftMinutes` (30), the delay the user keeps asking for.
/// 5. Otherwise `.keep`.
///
/// Acting reinforces: it ends both runs at once (the hour goes back to `.keep`) and raises the
/// hour's action rate, making it a target for other hours' shifts. A snooze ends a negative run
/// (the user engaged). Memory is bounded (at most one small cell per kind and hour), and when a
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

    /// The responses at one kind and local hour.
    public struct Counts: Hashable, Sendable, Codable {
        public var acted: Int32 = 0
        public var snoozed: Int32 = 0
        public var dismissed: Int32 = 0
        public var ignored: Int32 = 0
        /// Dismissals and ignores since the last act or snooze.
        public var negativeRun: Int32 = 0
        /// Snoozes since the last act.
        public var snoozeRun: Int32 = 0

        public init() {}

        public var total: Int { Int(acted) + Int(snoozed) + Int(dismissed) + Int(ignored) }

        /// acted / total; nil without responses.
        public var actionRate: Double? { total > 0 ? Double(acted) / Double(total) : nil }
    }

    struct Cell: Hashable, Sendable, Codable {
        /// `kind.ordinal * 24 + hour`: cells sort by kind, then hour.
        var key: Int
        var counts: Counts
    }

    public var thresholds: Thresholds
    /// Sorted by key; at most one per kind and hour.
    private var cells: [Cell] = []

    public init(thresholds: Thresholds = Thresholds()) { self.thresholds = thresholds }

    private static func key(_ kind: NotificationKind, _ hour: Int) -> Int {
        precondition((0..<24).contains(hour), "hour out of range: \(hour)")
        return kind.ordinal * 24 + hour
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

    /// Records a response to a `kind` notification delivered at local hour `hour` (0 ..< 24).
    public mutating func record(_ outcome: ResponseOutcome, kind: NotificationKind, hour: Int) {
        let key = ResponseStats.key(kind, hour)
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

    /// Records a response to a `kind` notification delivered at `deliveredAt`; the hour is
    /// the local hour in `zone` (the user's zone at delivery).
    public mutating func record(
        _ outcome: ResponseOutcome, kind: NotificationKind, deliveredAt: Instant, in zone: ZoneRules
    ) {
        record(outcome, kind: kind, hour: zone.localDateTime(at: deliveredAt).hour)
    }

    /// The counts at `kind` and `hour` (all zero when none were recorded).
    public func counts(kind: NotificationKind, hour: Int) -> Counts {
        let (index, found) = position(of: ResponseStats.key(kind, hour))
        return found ? cells[index].counts : Counts()
    }

    /// The counts of `kind` over all hours (runs are summed too).
    public func counts(kind: NotificationKind) -> Counts {
        var sum = Counts()
        for cell in cells where cell.key / 24 == kind.ordinal {
            sum.acted += cell.counts.acted
            sum.snoozed += cell.counts.snoozed
            sum.dismissed += cell.counts.dismissed
            sum.ignored += cell.counts.ignored
            sum.negativeRun += cell.counts.negativeRun
            sum.snoozeRun += cell.counts.snoozeRun
        }
        return sum
    }

    /// The timing rule for `kind` at local hour `hour`; see `ResponseStats`.
    public func adjustment(kind: NotificationKind, hour: Int) -> TimingAdjustment {
        let counts = counts(kind: kind, hour: hour)
        let negativeRun = Int(counts.negativeRun)
        guard counts.total >= thresholds.minimumResponses else { return .keep }
        if negativeRun >= thresholds.backOffAfterNegatives {
            let doublings = (negativeRun - thresholds.backOffAfterNegatives) / max(1, thresholds.shiftAfterNegatives)
            let factor = 2 << min(doublings, 16)
            return .backOff(factor: min(factor, max(2, thresholds.maximumBackOffFactor)))
        }
        if negativeRun >= thresholds.shiftAfterNegatives {
            if let target = bestHour(of: kind, besides: hour) { return .shift(minutes: (target - hour) * 60) }
            let minutes = thresholds.defaultShiftMinutes
            return .shift(minutes: hour < thresholds.latestHourToShiftLater ? minutes : -minutes)
        }
        if Int(counts.snoozeRun) >= thresholds.snoozesToShift { return .shift(minutes: thresholds.snoozeShiftMinutes) }
        return .keep
    }

    /// The hours of `kinds` whose timing rule is not `.keep` (only hours with responses can
    /// have one), by kind, then hour.
    func timingRules(for kinds: Set<NotificationKind>) -> [TimingRule] {
        var rules: [TimingRule] = []
        for cell in cells where cell.counts.total >= thresholds.minimumResponses {
            guard let kind = NotificationKind(ordinal: cell.key / 24), kinds.contains(kind) else { continue }
            let hour = cell.key % 24
            let adjustment = adjustment(kind: kind, hour: hour)
            if adjustment != .keep { rules.append(TimingRule(kind: kind, hour: hour, adjustment: adjustment)) }
        }
        return rules
    }

    /// The kind's other hour with the best action rate that qualifies as a shift target.
    private func bestHour(of kind: NotificationKind, besides hour: Int) -> Int? {
        var best: (hour: Int, rate: Double)?
        for cell in cells where cell.key / 24 == kind.ordinal {
            let candidate = cell.key % 24
            let counts = cell.counts
            guard candidate != hour, counts.total >= thresholds.minimumResponses,
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
}

extension ResponseStats {
    /// Writes the counts compactly (a snapshot part); the thresholds are the engine's defaults.
    func write(to writer: inout CompactWriter) {
        writer.list(cells) { writer, cell in
            writer.count(cell.key)
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
        cells = try reader.list(limit: 24 * 64) { reader in
            let key = try reader.count(limit: 24 * 64)
            guard key > previousKey else {
                throw CompactBytesError(offset: reader.offset, problem: "response cells out of order")
            }
            previousKey = key
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
            return Cell(key: key, counts: counts)
        }
    }
}
