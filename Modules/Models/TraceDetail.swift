/// The values behind one traced decision, as the engine decided them: plain values (times of
/// day, counts, kinds, reason codes), written as text only where a person or a store reads them
/// (`text`). The engine traces every decision it makes; most traces are never read as text, so
/// none pays for building it.
///
/// A case holds a string only when the text reached the engine as a string (an action identifier
/// the app sent, a social event's id, a zone's name) or is the code Content gives a refused
/// copy (a rare path: the coach's answer): it is kept as given, never built for the trace.
public enum TraceDetail: Hashable, Sendable {
    /// Nothing beyond the reason code.
    case none
    /// "absence response give_me_space: no nudges".
    case giveMeSpace
    /// The user was active again at this time.
    case activeAgain(at: OffsetDateTime)
    /// "kind disabled in preferences".
    case kindDisabledInPreferences
    /// The device does not let the app show notifications.
    case notificationsNotAllowed
    case alreadyDone
    /// The user is in the re-engagement control group.
    case holdout
    /// Response learning's evidence for a slot and what it did with it.
    indirect case learning(LearningEvidence)
    /// A nudge at `nominal`, in the local night (outside `wake`..`sleep`), moved to `movedTo`.
    case localNight(nominal: LocalTimeOfDay, wake: LocalTimeOfDay, sleep: LocalTimeOfDay, movedTo: LocalTimeOfDay)
    /// A snoozed copy of `original`.
    case snoozedCopy(of: OccurrenceID)
    /// Re-timed in the zone named `zone`; `passedAt` is the local time that had already passed.
    case zoneChanged(zone: String, passedAt: LocalTimeOfDay?)
    /// Planned again after its time had passed: sent at once.
    case sentAtOnce
    /// Its slot's window ended at this local time (nil: the time is not known).
    case slotWindowEnded(at: LocalTimeOfDay?)
    /// The day's attention budget of this many interruptions went to notifications valued more.
    case attentionBudget(interruptionsPerDay: Int)
    /// Another notification of this kind fires at the same instant.
    case sameInstant(NotificationKind)
    /// A delivery rule's reason with the limits that made it (`RuleLimits`); `dropped` when it
    /// gave the notification up rather than moved it.
    case rule(ReasonCode, dropped: Bool, limits: RuleLimits)
    /// Only the reason code's name.
    case reasonName(ReasonCode)
    /// The coach's copy replaced the template's; the time did not change.
    case coachCopyAccepted
    /// The template's copy stays: the coach's answer was refused for `code`.
    case templateKept(code: String)
    /// An action identifier no category declares, as the system reported it.
    case unknownAction(String)
    /// Snoozed for this many minutes.
    case snoozedFor(minutes: Int64)
    /// A social event with this id is already waiting.
    case duplicateEvent(String)
    /// A social event whose id the user already received at `firstSeen`, within the window its
    /// host keeps social ids for (after its notification went out, say): not notified again.
    case repeatedEvent(String, firstSeen: OffsetDateTime)
    /// A social event of a kind the user disabled.
    case socialKindDisabled(NotificationKind)
    /// A waiting item whose kind was disabled before its group went out.
    case disabledBeforeGroup(NotificationKind)
    /// A group's counted items, whose kind was disabled.
    case countedItemsDisabled(count: Int, kind: NotificationKind)
    /// An item waiting since `since`, whose digest was blocked again by `blockedBy`.
    case staleInDigest(since: OffsetDateTime, blockedBy: ReasonCode)
    /// A group's counted items, waiting since `since`, whose digest was blocked again.
    case countedItemsStale(count: Int, since: OffsetDateTime, blockedBy: ReasonCode)
    /// A group's counted items moved into `group`.
    case countedItemsMoved(count: Int, into: GroupSummary)
    /// An item folded into `group`.
    case folded(into: GroupSummary)

    /// The values for a person: "held until quiet hours 22:00-07:00 end", "3 per hour already
    /// used until past the deadline"; empty for `none` and for a reason that says it all.
    public var text: String {
        var text = UTF8Text(capacity: 96)
        write(to: &text)
        return text.string
    }

    /// Whether `text` is empty: `none`, or a rule whose reason no limit explains.
    @inlinable public var isEmpty: Bool {
        switch self {
        case .none: true
        case .rule(let reason, _, _): !RuleLimits.explains(reason)
        default: false
        }
    }

    /// Writes `text` into `sink`, piece by piece: an edge (the event log's line) writes it into
    /// its own buffer without making a string of it.
    @inlinable public func write<Sink: TextSink & ~Copyable>(to sink: inout Sink) {
        switch self {
        case .none: break
        case .giveMeSpace: sink.write("absence response give_me_space: no nudges")
        case .activeAgain(let at):
            sink.write("active again at ")
            sink.write(at.description)
        case .kindDisabledInPreferences: sink.write("kind disabled in preferences")
        case .notificationsNotAllowed:
            sink.write("notifications are off for the app in Settings: nothing waits on the device")
        case .alreadyDone: sink.write("already done")
        case .holdout: sink.write("in the re-engagement control group")
        case .learning(let evidence): evidence.write(to: &sink)
        case .localNight(let nominal, let wake, let sleep, let movedTo):
            sink.write(nominal.description)
            sink.write(" is in the local night (waking hours ")
            sink.write(wake.description)
            sink.write("-")
            sink.write(sleep.description)
            sink.write(") and no app opens show the user awake then: moved to ")
            sink.write(movedTo.description)
        case .snoozedCopy(let original):
            sink.write("the user snoozed ")
            sink.write(original.description)
        case .zoneChanged(let zone, let passedAt):
            if let passedAt {
                sink.write("its time passed in ")
                sink.write(zone)
                sink.write(" (")
                sink.write(passedAt.description)
                sink.write("): sent at once")
            } else {
                sink.write("re-timed in ")
                sink.write(zone)
            }
        case .sentAtOnce: sink.write("its time had passed when it was planned again: sent at once")
        case .slotWindowEnded(let end):
            if let end {
                sink.write("its slot's window ended at ")
                sink.write(end.description)
            } else {
                sink.write("its slot's window had passed")
            }
        case .attentionBudget(let interruptions):
            sink.write("the day's attention budget of ")
            sink.write(interruptions)
            sink.write(" interruptions went to notifications this user values more")
        case .sameInstant(let kind):
            sink.write("another ")
            sink.write(kind.rawValue)
            sink.write(" fires at the same instant: that one is kept")
        case .rule(let reason, let dropped, let limits): limits.write(reason, dropped: dropped, to: &sink)
        case .reasonName(let reason): sink.write(reason.rawValue)
        case .coachCopyAccepted: sink.write("AI copy accepted; the time is unchanged")
        case .templateKept(let code):
            sink.write("template copy kept: ")
            sink.write(code)
            sink.write("; the time is unchanged")
        case .unknownAction(let identifier):
            // The quotes go through `write(String)`: a sink escapes them where its format must.
            sink.write("unknown action identifier ")
            sink.write("\"" + identifier.prefix(64) + "\"")
        case .snoozedFor(let minutes):
            sink.write("snoozed ")
            sink.write(Int(minutes))
            sink.write(" min")
        case .duplicateEvent(let id):
            sink.write("social event ")
            sink.write(String(id.prefix(128)))
            sink.write(" is already waiting")
        case .repeatedEvent(let id, let firstSeen):
            sink.write("social event ")
            sink.write(String(id.prefix(128)))
            sink.write(" was already received at ")
            sink.write(firstSeen.description)
        case .socialKindDisabled(let kind):
            sink.write(kind.rawValue)
            sink.write(" is disabled in preferences")
        case .disabledBeforeGroup(let kind):
            sink.write(kind.rawValue)
            sink.write(" was disabled before its group went out")
        case .countedItemsDisabled(let count, let kind):
            sink.write(count)
            sink.write(" counted items: ")
            sink.write(kind.rawValue)
            sink.write(" was disabled")
        case .staleInDigest(let since, let reason):
            sink.write("waiting since ")
            sink.write(since.description)
            sink.write("; its digest was blocked again (")
            sink.write(reason.rawValue)
            sink.write(")")
        case .countedItemsStale(let count, let since, let reason):
            sink.write(count)
            sink.write(" counted items waiting since ")
            sink.write(since.description)
            sink.write("; their digest was blocked again (")
            sink.write(reason.rawValue)
            sink.write(")")
        case .countedItemsMoved(let count, let group):
            sink.write(count)
            sink.write(" counted items into ")
            group.write(to: &sink)
        case .folded(let group): group.write(to: &sink)
        }
    }
}

/// Where trace text is written: a string being built (`UTF8Text`), or an edge's own buffer.
public protocol TextSink: ~Copyable {
    mutating func write(_ text: String)
    mutating func write(_ value: Int)
    /// UTF-8 bytes of an identifier the engine wrote: ASCII letters, digits, `.` and `-`.
    mutating func write(utf8: UnsafeBufferPointer<UInt8>)
}

extension UTF8Text: TextSink {
    public mutating func write(_ text: String) { add(text) }
    public mutating func write(_ value: Int) { add(value) }
    public mutating func write(utf8: UnsafeBufferPointer<UInt8>) { add(utf8: utf8) }
}

/// An instant as a wall time with its offset from UTC, for text: `2027-03-14T03:00:00-04:00`.
public struct OffsetDateTime: Hashable, Sendable, CustomStringConvertible {
    public var local: LocalDateTime
    /// Offsets are within a day: four bytes.
    @usableFromInline var storedOffsetSeconds: Int32

    public init(_ instant: Instant, in zone: ZoneRules) {
        local = zone.localDateTime(at: instant)
        storedOffsetSeconds = Int32(zone.offsetSeconds(at: instant))
    }

    public var offsetSeconds: Int { Int(storedOffsetSeconds) }

    /// ISO 8601 with the offset, as `ZoneRules.formatted` writes it.
    public var description: String { local.formatted(offsetSeconds: offsetSeconds) }
}

/// A batch or digest as a trace names it: "dailyDigest of 7 until 2027-03-01T19:00:00+01:00".
public struct GroupSummary: Hashable, Sendable, CustomStringConvertible {
    public var mode: NotificationGroupMode
    @usableFromInline var storedItemCount: Int32
    public var sendAt: OffsetDateTime

    public init(mode: NotificationGroupMode, itemCount: Int, sendAt: OffsetDateTime) {
        self.mode = mode
        storedItemCount = Int32(clamping: itemCount)
        self.sendAt = sendAt
    }

    @inlinable public var itemCount: Int { Int(storedItemCount) }

    public var description: String {
        var text = UTF8Text(capacity: 64)
        write(to: &text)
        return text.string
    }

    @inlinable public func write<Sink: TextSink & ~Copyable>(to sink: inout Sink) {
        sink.write(mode.rawValue)
        sink.write(" of ")
        sink.write(itemCount)
        sink.write(" until ")
        sink.write(sendAt.description)
    }
}

/// How social items go out together: alone, in a batch, or in a daily or weekly digest.
public enum NotificationGroupMode: String, Hashable, Sendable, CaseIterable {
    case single, batch, dailyDigest, weeklyDigest
}

/// The user's limits a delivery rule's reason names, copied out of their preferences.
public struct RuleLimits: Hashable, Sendable {
    public var quietStart: LocalTimeOfDay?
    public var quietEnd: LocalTimeOfDay?
    public var maxPerHour: Int
    public var maxPerDay: Int?

    public init(_ preferences: NotificationPreferences) {
        quietStart = preferences.quietHours?.start
        quietEnd = preferences.quietHours?.end
        maxPerHour = preferences.maxPerHour
        maxPerDay = preferences.maxPerDay
    }

    /// The values behind a rule's reason, for a person reading the trace; empty for a reason no
    /// limit explains.
    public func explain(_ reason: ReasonCode, dropped: Bool) -> String {
        var text = UTF8Text(capacity: 64)
        write(reason, dropped: dropped, to: &text)
        return text.string
    }

    /// Whether `explain` says anything for `reason`.
    @inlinable public static func explains(_ reason: ReasonCode) -> Bool {
        switch reason {
        case .quietHours, .capPerHour, .capPerDay, .stale, .slotWindowPassed, .capExemptTransactional,
            .userActiveInApp, .attentionBudget:
            true
        default: false
        }
    }

    @inlinable public func write<Sink: TextSink & ~Copyable>(
        _ reason: ReasonCode, dropped: Bool, to sink: inout Sink
    ) {
        switch reason {
        case .quietHours:
            if !dropped { sink.write("held until ") }
            sink.write("quiet hours")
            if let quietStart, let quietEnd {
                sink.write(" ")
                sink.write(quietStart.description)
                sink.write("-")
                sink.write(quietEnd.description)
            }
            sink.write(dropped ? " last past the deadline" : " end")
        case .capPerHour:
            if !dropped { sink.write("moved after ") }
            sink.write(maxPerHour)
            sink.write(
                dropped ? " per hour already used until past the deadline" : " per hour were used")
        case .capPerDay:
            sink.write(maxPerDay ?? 0)
            sink.write(" per day already used that local day")
        case .stale: sink.write("no allowed time before the deadline")
        case .slotWindowPassed: sink.write("its slot's window had passed")
        case .capExemptTransactional: sink.write("transactional: exempt from caps")
        case .userActiveInApp:
            sink.write(
                dropped
                    ? "the user stayed in the app past the deadline"
                    : "held while the user is in the app")
        case .attentionBudget: sink.write("the day's attention budget went to notifications this user values more")
        default: break
        }
    }
}
