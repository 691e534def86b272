/// What the engine decided about one notification occurrence.
public enum TraceDecision: String, Codable, Sendable, CaseIterable {
    /// Handed to the platform to fire at its planned time.
    case scheduled
    /// Handed to the platform to fire later than planned because a rule blocked the planned time.
    case deferred
    /// Given up: a rule blocked it until it went stale.
    case dropped
    /// Never scheduled: a rule or the user's wish rules it out.
    case suppressed
    /// Withdrawn from the platform after having been scheduled.
    case cancelled
    /// Merged into a digest or batch.
    case folded
    /// The copy of a request already scheduled was settled (the coach's, or the template's kept);
    /// its time did not change. Not a second scheduling: the line says what changed.
    case copyChosen
}

/// Why: the rule that decided. The raw value is the reason code written to traces and logs.
public enum ReasonCode: String, Codable, Sendable, CaseIterable {
    /// Scheduled at its planned time; no rule intervened.
    case onTime
    /// The planned time falls in the user's quiet hours.
    case quietHours
    /// The rolling 60-minute cap is reached.
    case capPerHour
    /// The cap per local day is reached.
    case capPerDay
    /// The user chose give_me_space: no re-engagement, ever.
    case absenceGiveMeSpace
    /// The re-engagement attempts of this lapse are used up.
    case attemptsExhausted
    /// The user already did what it reminds of.
    case alreadyDone
    /// The user came back; the lapse campaign ends.
    case userReturned
    /// The user is lapsed; routine reminders pause until they return.
    case routinePausedWhileLapsed
    /// A newer plan no longer contains it (preferences, time zone or inputs changed).
    case replanned
    /// The user disabled the kind.
    case kindDisabled
    /// The user snoozed it.
    case snoozed
    /// Still blocked when its staleness deadline passed.
    case stale
    /// Kinds exempt from caps (transactional) say so.
    case capExemptTransactional
    /// Non-urgent kinds wait while the user is in the app.
    case userActiveInApp
    /// Batched with others of the same kind and thread into one grouped notification.
    case batched
    /// Collected into the user's daily or weekly digest (the kind's setting).
    case digest
    /// Sent as the grouped notification of a batch or digest.
    case groupDelivered
    /// The device moved to another time zone; wall-clock reminders follow it.
    case timeZoneChanged
    /// Planned as a repeating daily request (one pending slot for every day).
    case dailySeries
    /// A response carried an action identifier no category declares.
    case unknownAction
    /// The user is in the re-engagement control group (holdout): no nudges, to measure their lift.
    case holdout
    /// The AI coach's copy replaced the template copy (valid, and within the content deadline).
    case coachCopy
    /// The template copy stays: the coach timed out, failed or wrote something invalid (the
    /// detail names which).
    case templateFallback
    /// Response learning moved it inside its slot's window: the user kept ignoring or dismissing
    /// it at its hour, or kept snoozing it (the detail gives the evidence and the move).
    case learnedShift
    /// Response learning backs it off: sent only every n-th day after a long run of ignores or
    /// dismissals at its hour (the detail gives the evidence).
    case learnedBackOff
    /// A nudge moved out of the user's local night (outside their waking hours), where nothing
    /// they did shows them awake.
    case localNight
    /// Its slot's window (`SlotWindow`) passed before it could be sent: dropped, never sent as
    /// something else.
    case slotWindowPassed
    /// Another notification of the same kind fires at the same instant: one is kept (a social
    /// item folds into the digest).
    case sameInstant
    /// The user's attention budget for that local day (`AttentionBudget`) went to notifications
    /// this user values more: dropped, or folded into the kind's digest where the kind allows it.
    case attentionBudget
    /// The device does not let the app show notifications (the user turned them off in
    /// Settings): nothing is scheduled there, and what was pending is withdrawn, until allowed.
    case notificationsNotAllowed
    /// A social event whose id is already waiting in one of the user's groups, or that its host
    /// already took in within the window it keeps social ids for (a retried webhook, a replayed
    /// queue message, even after the first copy went out): counted once.
    case duplicateEvent
    /// The user already has `EngineConfiguration.waitingSocialItemLimit` social items waiting:
    /// this one is counted in its kind's digest (its number shows in the copy), not kept.
    case waitingItemsFull
}

/// What a trace entry is about: an occurrence the engine planned, a request identifier that came
/// from outside (one the app answered), or a social event's id, each kept as given.
public enum TraceSubject: Hashable, Sendable {
    case occurrence(OccurrenceID)
    case external(String)
    /// A social event's own id (`SocialEvent.id`), as the backend sent it. Social ids are a
    /// namespace of their own, per user: one may equal an engine request's identifier
    /// (`mealReminder.2027-04-12.lunch`) and still names no request, so a store never keys a
    /// request's records (its ledger row) by it.
    case socialEvent(String)

    /// The identifier, as logs and the API write it (a social event's id as given).
    public var requestID: String {
        switch self {
        case .occurrence(let id): id.description
        case .external(let text), .socialEvent(let text): text
        }
    }

    /// Whether it is a social event's id rather than a request's.
    public var isSocialEvent: Bool {
        if case .socialEvent = self { true } else { false }
    }
}

/// One decision with its rule and the values that decided it: the answer to
/// "why didn't I get my reminder?". Plain values (`TraceSubject`, `TraceDetail`): the text a
/// person reads (`requestID`, `detail`, `groupID`) is written only when asked for, at the edges
/// (the trace store, the event log).
public struct TraceEntry: Hashable, Sendable {
    /// When the decision was made.
    public var at: Instant
    public var userID: UserID
    public var subject: TraceSubject
    public var kind: NotificationKind
    public var decision: TraceDecision
    public var reason: ReasonCode
    /// When it was meant to fire.
    public var plannedAt: Instant?
    /// When it will fire, for scheduled and deferred decisions.
    public var fireAt: Instant?
    /// The slot's nominal time, when the occurrence fires at another (a learned shift, a
    /// deferral, the local night, a change of zone); nil when there is none to name.
    public var nominalAt: Instant?
    public var level: InterruptionLevel?
    /// The values that decided: quiet hours, a cap, learning's evidence.
    public var why: TraceDetail
    /// Why the occurrence had moved before this decision (a learned shift, a snooze, a change of
    /// zone), when that is not `why` itself; `.none` otherwise.
    public var movedBefore: TraceDetail
    /// For a folded item: the grouped notification (batch or digest) it joined.
    public var group: OccurrenceID?
    /// For a folded item: the grouping key (kind and topic); a group never mixes keys.
    public var groupKey: String?
    /// Set on an entry that speaks for a group's counted items (kept by number, not by id;
    /// `waitingItemsFull`) rather than for one request: how many. Its request is the group they
    /// leave (moved on, dropped or suppressed); nil on every other entry.
    public var countedItems: Int?

    public init(
        at: Instant, userID: UserID, subject: TraceSubject, kind: NotificationKind, decision: TraceDecision,
        reason: ReasonCode, plannedAt: Instant? = nil, fireAt: Instant? = nil, level: InterruptionLevel? = nil,
        why: TraceDetail = .none, movedBefore: TraceDetail = .none, group: OccurrenceID? = nil,
        groupKey: String? = nil, nominalAt: Instant? = nil, countedItems: Int? = nil
    ) {
        self.nominalAt = nominalAt
        self.at = at
        self.userID = userID
        self.subject = subject
        self.kind = kind
        self.decision = decision
        self.reason = reason
        self.plannedAt = plannedAt
        self.fireAt = fireAt
        self.level = level
        self.why = why
        self.movedBefore = movedBefore
        self.group = group
        self.groupKey = groupKey
        self.countedItems = countedItems
    }

    /// The request identifier the decision is about.
    public var requestID: String { subject.requestID }

    /// For a folded item: the request identifier of the grouped notification it joined.
    public var groupID: String? { group?.description }

    /// The values that decided, for a person: "held until quiet hours 22:00-07:00 end", "3 per
    /// hour already used until past the deadline; before that: the user snoozed ..."; empty when
    /// the reason says it all.
    public var detail: String {
        var text = UTF8Text(capacity: 96)
        writeDetail(to: &text)
        return text.string
    }

    /// Whether `detail` is empty.
    @inlinable public var detailIsEmpty: Bool { why.isEmpty && movedBefore.isEmpty }

    /// Writes `detail` into `sink` without making a string of it.
    @inlinable public func writeDetail<Sink: TextSink & ~Copyable>(to sink: inout Sink) {
        why.write(to: &sink)
        guard !movedBefore.isEmpty else { return }
        if !why.isEmpty { sink.write("; before that: ") }
        movedBefore.write(to: &sink)
    }
}
