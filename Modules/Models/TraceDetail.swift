/// The values behind one traced decision, as the engine decided them: plain values (times of
/// day, counts, kinds, reason codes), written as text only where a person or a store reads them
/// (`text`). The engine traces every decision it makes; most traces are never read as text, so
/// none pays for building it.
///
/// A case holds a string only when the text came from outside the engine as a string (an action
/// identifier the app sent, a social event's id, a zone's name, a coach's rejection code): it is
/// kept as given, never built.
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
    case learning(LearningEvidence)
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
        switch self {
        case .none: ""
        case .giveMeSpace: "absence response give_me_space: no nudges"
        case .activeAgain(let at): "active again at \(at)"
        case .kindDisabledInPreferences: "kind disabled in preferences"
        case .notificationsNotAllowed:
            "notifications are off for the app in Settings: nothing waits on the device"
        case .alreadyDone: "already done"
        case .holdout: "in the re-engagement control group"
        case .learning(let evidence): evidence.text
        case .localNight(let nominal, let wake, let sleep, let movedTo):
            "\(nominal) is in the local night (waking hours \(wake)-\(sleep)) and no app opens show the user "
                + "awake then: moved to \(movedTo)"
        case .snoozedCopy(let original): "the user snoozed \(original)"
        case .zoneChanged(let zone, let passedAt):
            passedAt.map { "its time passed in \(zone) (\($0)): sent at once" } ?? "re-timed in \(zone)"
        case .sentAtOnce: "its time had passed when it was planned again: sent at once"
        case .slotWindowEnded(let end):
            end.map { "its slot's window ended at \($0)" } ?? "its slot's window had passed"
        case .attentionBudget(let interruptions):
            "the day's attention budget of \(interruptions) interruptions went to notifications this user values more"
        case .sameInstant(let kind): "another \(kind.rawValue) fires at the same instant: that one is kept"
        case .rule(let reason, let dropped, let limits): limits.explain(reason, dropped: dropped)
        case .reasonName(let reason): reason.rawValue
        case .coachCopyAccepted: "AI copy accepted; the time is unchanged"
        case .templateKept(let code): "template copy kept: \(code); the time is unchanged"
        case .unknownAction(let identifier): "unknown action identifier \"\(identifier.prefix(64))\""
        case .snoozedFor(let minutes): "snoozed \(minutes) min"
        case .duplicateEvent(let id): "social event \(id.prefix(128)) is already waiting"
        case .socialKindDisabled(let kind): "\(kind.rawValue) is disabled in preferences"
        case .disabledBeforeGroup(let kind): "\(kind.rawValue) was disabled before its group went out"
        case .countedItemsDisabled(let count, let kind): "\(count) counted items: \(kind.rawValue) was disabled"
        case .staleInDigest(let since, let reason):
            "waiting since \(since); its digest was blocked again (\(reason.rawValue))"
        case .countedItemsStale(let count, let since, let reason):
            "\(count) counted items waiting since \(since); their digest was blocked again (\(reason.rawValue))"
        case .countedItemsMoved(let count, let group): "\(count) counted items into \(group)"
        case .folded(let group): group.description
        }
    }
}

/// An instant as a wall time with its offset from UTC, for text: `2027-03-14T03:00:00-04:00`.
public struct OffsetDateTime: Hashable, Sendable, CustomStringConvertible {
    public var local: LocalDateTime
    public var offsetSeconds: Int

    public init(_ instant: Instant, in zone: ZoneRules) {
        local = zone.localDateTime(at: instant)
        offsetSeconds = zone.offsetSeconds(at: instant)
    }

    /// ISO 8601 with the offset, as `ZoneRules.formatted` writes it.
    public var description: String { local.formatted(offsetSeconds: offsetSeconds) }
}

/// A batch or digest as a trace names it: "dailyDigest of 7 until 2027-03-01T19:00:00+01:00".
public struct GroupSummary: Hashable, Sendable, CustomStringConvertible {
    public var mode: NotificationGroupMode
    public var itemCount: Int
    public var sendAt: OffsetDateTime

    public init(mode: NotificationGroupMode, itemCount: Int, sendAt: OffsetDateTime) {
        self.mode = mode
        self.itemCount = itemCount
        self.sendAt = sendAt
    }

    public var description: String { "\(mode.rawValue) of \(itemCount) until \(sendAt)" }
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
        switch reason {
        case .quietHours:
            let quiet = quietStart.flatMap { start in quietEnd.map { "quiet hours \(start)-\($0)" } } ?? "quiet hours"
            return dropped ? "\(quiet) last past the deadline" : "held until \(quiet) end"
        case .capPerHour:
            return dropped
                ? "\(maxPerHour) per hour already used until past the deadline"
                : "moved after \(maxPerHour) per hour were used"
        case .capPerDay: return "\(maxPerDay ?? 0) per day already used that local day"
        case .stale: return "no allowed time before the deadline"
        case .slotWindowPassed: return "its slot's window had passed"
        case .capExemptTransactional: return "transactional: exempt from caps"
        case .userActiveInApp:
            return dropped ? "the user stayed in the app past the deadline" : "held while the user is in the app"
        case .attentionBudget: return "the day's attention budget went to notifications this user values more"
        default: return ""
        }
    }
}
