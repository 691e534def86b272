/// How one slot's notifications at one local hour were answered: the counts response learning
/// decides by (`ResponseStats` in the engine keeps one per slot and hour).
public struct ResponseTally: Hashable, Sendable, Codable {
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

    /// Adds `other`'s counts, runs included (a sum over cells).
    public mutating func add(_ other: ResponseTally) {
        acted += other.acted
        snoozed += other.snoozed
        dismissed += other.dismissed
        ignored += other.ignored
        negativeRun += other.negativeRun
        snoozeRun += other.snoozeRun
    }
}

/// Response learning's evidence for one slot at one local hour, and what it did with it: the
/// detail of a `learnedShift` or `learnedBackOff` decision.
public struct LearningEvidence: Hashable, Sendable {
    /// What learning did at this hour.
    public enum Move: Hashable, Sendable {
        /// Nothing: the time stays.
        case kept
        /// Moved by `minutes` from `from` to `to`; `target` is how the target hour was answered,
        /// when it is another hour with answers.
        case shift(minutes: Int, from: LocalTimeOfDay, to: LocalTimeOfDay, target: ResponseTally?)
        /// Sent only every `factor`-th day.
        case backOff(factor: Int)
    }

    public var kind: NotificationKind
    /// The slot as `OccurrenceID.packedSlot` holds it.
    public var packedSlot: Int32
    /// The local hour of the nominal time, 0 ..< 24.
    public var hour: Int
    public var tally: ResponseTally
    public var move: Move

    public init(kind: NotificationKind, packedSlot: Int32, hour: Int, tally: ResponseTally, move: Move) {
        self.kind = kind
        self.packedSlot = packedSlot
        self.hour = hour
        self.tally = tally
        self.move = move
    }

    /// "mealReminder.dinner at 18:00-18:59: 3 ignored, 0 acted on, the last 3 unanswered; moved
    /// +60 min from 18:30 to 19:30, where 4 of 5 were acted on".
    public var text: String {
        var text = UTF8Text(capacity: 192)
        write(to: &text)
        return text.string
    }

    /// Writes `text` into `sink` piece by piece (the event log writes it into its line).
    @inlinable public func write<Sink: TextSink & ~Copyable>(to sink: inout Sink) {
        OccurrenceID.writeSlotName(kind: kind, packedSlot: packedSlot, to: &sink)
        sink.write(" at ")
        sink.write(LocalTimeOfDay(minutesSinceMidnight: hour * 60).description)
        sink.write("-")
        sink.write(LocalTimeOfDay(minutesSinceMidnight: hour * 60 + 59).description)
        sink.write(": ")
        var first = true
        func part(_ before: String, _ count: Int32, _ after: String) {
            if !first { sink.write(", ") }
            sink.write(before)
            sink.write(Int(count))
            sink.write(after)
            first = false
        }
        if tally.ignored > 0 { part("", tally.ignored, " ignored") }
        if tally.dismissed > 0 { part("", tally.dismissed, " dismissed") }
        if tally.snoozed > 0 { part("", tally.snoozed, " snoozed") }
        part("", tally.acted, " acted on")
        if tally.negativeRun > 0 { part("the last ", tally.negativeRun, " unanswered") }
        if tally.snoozeRun > 0 { part("the last ", tally.snoozeRun, " snoozed") }
        sink.write("; ")
        switch move {
        case .kept: sink.write("kept")
        case .backOff(let factor):
            sink.write("sent every ")
            sink.write(factor)
            sink.write("th day only")
        case .shift(let minutes, let from, let to, let target):
            sink.write(minutes > 0 ? "moved +" : "moved ")
            sink.write(minutes)
            sink.write(" min from ")
            sink.write(from.description)
            sink.write(" to ")
            sink.write(to.description)
            if let target {
                sink.write(", where ")
                sink.write(Int(target.acted))
                sink.write(" of ")
                sink.write(target.total)
                sink.write(" were acted on")
            }
        }
    }
}
