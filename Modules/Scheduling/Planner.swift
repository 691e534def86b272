public import Models

/// A notification the engine has handed to the platform, as the plan holds it.
public struct PlannedNotification: Hashable, Sendable {
    public var id: OccurrenceID
    /// When it was due: the candidate's time, or the moment of the pass for one already overdue.
    public var plannedAt: Instant
    public var fireAt: Instant
    /// Scheduled with a calendar trigger, which the device re-matches when its zone changes.
    public var followsWallClock: Bool
    /// The content revision scheduled (see `Candidate.revision`).
    public var revision: Int
    /// A repeating daily request: it stays pending after it fires.
    public var repeatsDaily: Bool
    public var kind: NotificationKind { id.kind }

    public init(candidate: Candidate, dueAt: Instant, fireAt: Instant, zone: ZoneRules, repeatsDaily: Bool = false) {
        id = candidate.id
        plannedAt = dueAt
        self.fireAt = fireAt
        followsWallClock = TriggerChoice.usesCalendarTrigger(fireAt, in: zone)
        revision = candidate.revision
        self.repeatsDaily = repeatsDaily
    }

    /// Fire time, then occurrence: the order of the platform's pending list.
    public static func firesBefore(_ a: PlannedNotification, _ b: PlannedNotification) -> Bool {
        a.fireAt != b.fireAt ? a.fireAt < b.fireAt : a.id < b.id
    }
}

/// How a request's trigger is chosen.
public enum TriggerChoice {
    /// Wall-clock times on the minute go out as calendar triggers (they follow the device's
    /// zone, as UNCalendarNotificationTrigger does); anything else as a date trigger.
    public static func usesCalendarTrigger(_ fireAt: Instant, in zone: ZoneRules) -> Bool {
        let local = zone.localDateTime(at: fireAt)
        return local.second == 0 && zone.instant(for: local) == fireAt
    }

    /// The trigger of a one-off request firing at `fireAt` in `zone`.
    public static func trigger(for fireAt: Instant, in zone: ZoneRules) -> NotificationTrigger {
        usesCalendarTrigger(fireAt, in: zone)
            ? .calendar(CalendarMatch(zone.localDateTime(at: fireAt)), repeats: false) : .date(fireAt)
    }
}

/// Everything one planning pass reads, built once per pass and not changed by it.
public struct PlanningContext: Sendable {
    public var now: Instant
    public var zone: ZoneRules
    public var preferences: NotificationPreferences
    /// Fire times already passed, for the caps (`Planner.allocate` counts what it plans on a copy).
    public var ledger: CapLedger
    /// The end of the user's app session: non-urgent notifications wait until then.
    public var activeUntil: Instant?
    /// Pending slots the plan may fill (the platform's 64 less those reserved for arrivals).
    public var slotBudget: Int
    /// Occurrences already fired: never planned again.
    public var fired: OccurrenceMap<Instant>
    /// Occurrences made moot by what the user did.
    public var done: OccurrenceMap<Instant>
    /// What the platform holds from the last pass.
    public var previous: OccurrenceMap<PlannedNotification>
    /// The user's daily attention budget, applied after the rules; nil: none (the user is held
    /// out of it, or the app has none).
    public var attentionBudget: AttentionBudget?
    /// The phone's copies that fire before the phone can hear of a change (each occurrence at
    /// the instant the phone holds): committed. `allocate` keeps each where the phone holds it
    /// and counts it before anything else, unless the user's own intent rules it out.
    public var committed: OccurrenceMap<Instant> = OccurrenceMap()
    /// The phone's other copies, each at the instant the phone holds: a pass may move them, the
    /// phone hearing in time, but a push fires whether or not the phone hears, so `allocate`
    /// places a push as if each still fired there.
    public var heldLater: OccurrenceMap<Instant> = OccurrenceMap()

    public init(
        now: Instant, zone: ZoneRules, preferences: NotificationPreferences, ledger: CapLedger, activeUntil: Instant?,
        slotBudget: Int, fired: OccurrenceMap<Instant>, done: OccurrenceMap<Instant>,
        previous: OccurrenceMap<PlannedNotification>, attentionBudget: AttentionBudget? = nil
    ) {
        self.attentionBudget = attentionBudget
        self.now = now
        self.zone = zone
        self.preferences = preferences
        self.ledger = ledger
        self.activeUntil = activeUntil
        self.slotBudget = slotBudget
        self.fired = fired
        self.done = done
        self.previous = previous
    }

    /// Whether the user already did what the occurrence (or the one it is a snoozed copy of)
    /// reminds of; a completed check-in makes the whole day's check-in reminders moot.
    public func isDone(_ id: OccurrenceID) -> Bool { Self.isDone(id, in: done) }

    /// `isDone` against another record of done things.
    public static func isDone(_ id: OccurrenceID, in done: OccurrenceMap<Instant>) -> Bool {
        if done.contains(id.original) { return true }
        return id.kind == .checkInReminder && done.contains(id.wholeDay)
    }
}

/// What the rules decided for one candidate in a pass.
public struct PlanDecision: Hashable, Sendable {
    public var candidate: Candidate
    /// When it is due: its planned time, or just after `now` for one planned before and now overdue.
    public var dueAt: Instant
    public var outcome: RuleOutcome
}

/// The new plan and how it came about.
public struct Allocation: Sendable {
    /// What the platform should hold, soonest first.
    public var plan: [PlannedNotification]
    /// The rules' outcome for every candidate evaluated, in value order.
    public var decisions: [PlanDecision]
    /// Candidates not evaluated because the user already did the thing.
    public var suppressed: [(candidate: Candidate, reason: ReasonCode)]
    /// The daily series placed first (each candidate's time is its next firing).
    public var series: [Candidate]
}

/// A change the engine turns into effects (schedule, cancel) and trace entries, in order.
public enum PlanChange: Hashable, Sendable {
    /// Remove a pending request; `reason` when this pass knows why (else the engine decides).
    case cancel(PlannedNotification, reason: ReasonCode?)
    /// Schedule (or replace) a request: new, moved, or with new content.
    case schedule(Candidate, dueAt: Instant, fireAt: Instant, reason: ReasonCode)
    /// A candidate never planned that the rules drop.
    case drop(Candidate, dueAt: Instant, reason: ReasonCode)
    /// A social group that cannot go out as planned: its items move to the digest.
    case regroup(OccurrenceID, reason: ReasonCode)
    /// A candidate never planned whose thing is already done.
    case suppress(Candidate, reason: ReasonCode)
}

/// The planning pass as named pure stages: `order` the candidates by value, `allocate` the
/// pending slots and the caps (the delivery rules with an explicit `now`), `diff` the new plan
/// against what the platform holds. The engine gathers the candidates before and turns the
/// changes into effects and trace entries after.
public enum Planner {
    /// Value first, then time: caps and pending slots go to what matters most (a digest the
    /// user asked for before a routine hydration nudge), earlier before later within a value.
    public static func order(_ candidates: inout [Candidate]) {
        order(&candidates) { $0.policy.relevance }
    }

    /// Value first, as the attention budget sees it: `value` is asked once per candidate (the
    /// engine's is relevance times the user's learned response rate times freshness); ties go
    /// to the earlier time, then the occurrence, so the order is total and reproducible.
    public static func order(_ candidates: inout [Candidate], value: (Candidate) -> Double) {
        // Sorted as small keys, then the candidates moved once: sorting the candidates themselves
        // would copy each (with its strings) at every step of the merge.
        var keys = candidates.indices.map { index in
            (
                OrderKey(value: value(candidates[index]), at: candidates[index].plannedAt, id: candidates[index].id),
                index: index
            )
        }
        keys.sort { $0.0 != $1.0 ? OrderKey.precedes($0.0, $1.0) : $0.index < $1.index }
        candidates = keys.map { candidates[$0.index] }
    }

    /// Where a candidate goes in `order`: its value, then its time, then its occurrence.
    public struct OrderKey: Equatable, Sendable {
        public var value: Double
        public var at: Instant
        public var id: UInt64

        public init(value: Double, at: Instant, id: OccurrenceID) {
            self.value = value
            self.at = at
            self.id = id.packed
        }

        /// Whether `a` goes before `b`: the higher value, then the earlier time, then the lower
        /// occurrence (a strict order on distinct occurrences).
        public static func precedes(_ a: OrderKey, _ b: OrderKey) -> Bool {
            if a.value != b.value { return a.value > b.value }
            if a.at != b.at { return a.at < b.at }
            return a.id < b.id
        }
    }

    /// Fills the slot budget in the candidates' order. Daily `series` (each candidate at its next
    /// firing) take their slots first; `reservedFireTimes` are their future firings, which the
    /// caps must count.
    ///
    /// A candidate already fired is skipped; one already done is suppressed; one whose time
    /// passed before it was ever planned is not sent late, while one that was planned (a
    /// time-zone change moved it into the past) is due just after now: against its original
    /// deadline, and once that has passed, at once, as long as its slot's window lasts (what was
    /// planned is never lost to a move, nor sent as something else: past the window it is
    /// dropped, `slotWindowPassed`).
    ///
    /// Two notifications of one kind never fire at the same instant: the first in value order
    /// keeps the instant, the other is dropped (`sameInstant`; a social group's items fold into
    /// the digest). The daily series' firings count as taken for the series' kinds.
    ///
    /// Then the context's attention budget: a candidate the rules would send on a local day whose
    /// budget the candidates before it (in value order) and what fired already used up is cut
    /// (`AttentionBudget.cut`, reason `attentionBudget`).
    ///
    /// A committed candidate (`PlanningContext.committed`: the phone holds it and fires it
    /// before it can hear of a change) is placed first, at the instant the phone holds, and
    /// counts for the caps, the attention budget and the same-instant rule as if delivered:
    /// whatever is planned after works around it and never moves it. Only the user's intent
    /// withdraws it: a kind disabled or a silence asked for (the engine gives no candidate), the
    /// thing done, or quiet hours that now cover its instant (`isWithdrawnByIntent`).
    ///
    /// A push (a kind on the remote channel) never takes the room of a copy the phone holds
    /// (`PlanningContext.heldLater`): if the phone does not hear that the pass moved or dropped
    /// that copy (it lost its network, iOS dropped the sync), it fires the copy beside the push.
    /// The push's rules and budget count each held copy at the instant the phone holds, as
    /// well as what this pass placed; a copy placed again at that same instant counts once. So
    /// does a committed copy the pass does not keep: the phone fires it unless it hears first.
    public static func allocate(
        _ candidates: [Candidate], series: [Candidate] = [], reservedFireTimes: [Instant] = [],
        context: PlanningContext
    ) -> Allocation {
        var ledger = context.ledger
        for at in reservedFireTimes { ledger.insert(at) }
        let now = context.now
        // Kept in fire order as it grows (a binary search and a move per notification planned),
        // rather than sorted at the end: the same order, as `firesBefore` is a total order on
        // what can be planned together (a tie needs one occurrence planned twice); ties would
        // keep the order of planning, as the stable sort did.
        var plan = series.map {
            PlannedNotification(
                candidate: $0, dueAt: $0.plannedAt, fireAt: $0.plannedAt, zone: context.zone, repeatsDaily: true)
        }
        plan.sort(by: PlannedNotification.firesBefore)
        func planInFireOrder(_ planned: PlannedNotification) {
            var low = 0
            var high = plan.count
            while low < high {
                let middle = (low + high) >> 1
                if PlannedNotification.firesBefore(planned, plan[middle]) { high = middle } else { low = middle + 1 }
            }
            plan.insert(planned, at: low)
        }
        /// Kind and fire time of everything planned, so no kind fires twice at one instant. A list:
        /// it holds the plan and the daily series' firings up to the ledger's end (a few dozen
        /// words, a hundred or more when a nudge two weeks out stretches the ledger), which a
        /// scan of machine words answers sooner than a hash.
        var seriesKinds: [NotificationKind] = []
        for candidate in series where !seriesKinds.contains(candidate.kind) { seriesKinds.append(candidate.kind) }
        var taken: [Int64] = []
        taken.reserveCapacity(seriesKinds.count * (series.count + reservedFireTimes.count) + context.slotBudget)
        func instantOfKind(_ kind: NotificationKind, _ at: Instant) -> Int64 {
            Int64(kind.ordinal) << 48 | (at.secondsSinceEpoch & 0xFFFF_FFFF_FFFF)
        }
        func take(_ word: Int64) -> Bool {
            if taken.contains(word) { return false }
            taken.append(word)
            return true
        }
        for kind in seriesKinds {
            for candidate in series where candidate.kind == kind {
                _ = take(instantOfKind(kind, candidate.plannedAt))
            }
            for at in reservedFireTimes { _ = take(instantOfKind(kind, at)) }
        }
        // The phone's committed copies first: they fire whatever this pass decides.
        var kept: OccurrenceMap<Instant> = OccurrenceMap()
        if !context.committed.isEmpty {
            var keptEntries: [(OccurrenceID, Instant)] = []
            for candidate in candidates {
                guard let fireAt = context.committed[candidate.id], context.fired[candidate.id] == nil,
                    !isWithdrawnByIntent(candidate, firingAt: fireAt, context: context)
                else { continue }
                ledger.insert(fireAt)
                _ = take(instantOfKind(candidate.kind, fireAt))
                keptEntries.append((candidate.id, fireAt))
            }
            kept = OccurrenceMap(keptEntries)
        }
        // No room reserved for the whole slot budget: the plan is kept in the engine's state
        // until the next pass, and most plans hold far fewer.
        // What a push is placed around: what this pass placed, and each copy the phone holds at
        // the instant it holds it (once, when the pass places it there again). A committed copy
        // this pass does not keep (its candidate gone, or withdrawn by the user's intent) still
        // fires on a phone that does not hear in time: a push counts it too.
        var pushLedger: CapLedger?
        if !context.heldLater.isEmpty || kept.count < context.committed.count {
            var held = ledger
            for entry in context.heldLater.entries { held.insert(entry.value) }
            for entry in context.committed.entries where kept[entry.id] == nil { held.insert(entry.value) }
            pushLedger = held
        }
        var decisions: [PlanDecision] = []
        decisions.reserveCapacity(candidates.count)
        var suppressed: [(candidate: Candidate, reason: ReasonCode)] = []
        for candidate in candidates where plan.count < context.slotBudget {
            guard context.fired[candidate.id] == nil else { continue }
            if context.isDone(candidate.id) {
                suppressed.append((candidate, .alreadyDone))
                continue
            }
            let dueAt = max(candidate.plannedAt, now + 1)
            if let fireAt = kept[candidate.id] {
                planInFireOrder(
                    PlannedNotification(candidate: candidate, dueAt: dueAt, fireAt: fireAt, zone: context.zone))
                decisions.append(
                    PlanDecision(candidate: candidate, dueAt: dueAt, outcome: .send(fireAt: fireAt, reason: .onTime)))
                continue
            }
            if candidate.plannedAt <= now, context.previous[candidate.id] == nil { continue }
            let rulesLedger =
                ChannelPolicy.channel(for: candidate.kind) == .remote ? pushLedger ?? ledger : ledger
            let outcome = DeliveryRules.evaluate(
                candidate, at: now, preferences: context.preferences, zone: context.zone, ledger: rulesLedger,
                activeUntil: context.activeUntil)
            var decided = outcome
            if case .send(let fireAt, _) = outcome {
                guard fireAt > now else { continue }
                if let budget = context.attentionBudget,
                    let cut = budget.cut(candidate, firingAt: fireAt, zone: context.zone, ledger: rulesLedger)
                {
                    decided = cut
                } else if take(instantOfKind(candidate.kind, fireAt)) {
                    ledger.insert(fireAt)
                    if context.heldLater[candidate.id] != fireAt { pushLedger?.insert(fireAt) }
                    planInFireOrder(
                        PlannedNotification(candidate: candidate, dueAt: dueAt, fireAt: fireAt, zone: context.zone))
                } else {
                    decided = .drop(reason: .sameInstant)
                }
            }
            decisions.append(PlanDecision(candidate: candidate, dueAt: dueAt, outcome: decided))
        }
        return Allocation(plan: plan, decisions: decisions, suppressed: suppressed, series: series)
    }

    /// Whether the user's own intent withdraws a committed copy firing at `fireAt`: the thing is
    /// done, or quiet hours (which the user may have just set) cover that instant and the
    /// candidate does not break through them. A disabled kind or an asked-for silence leaves no
    /// candidate to keep.
    static func isWithdrawnByIntent(_ candidate: Candidate, firingAt fireAt: Instant, context: PlanningContext) -> Bool
    {
        if context.isDone(candidate.id) { return true }
        guard let quiet = context.preferences.quietHours, !candidate.level.breaksThroughQuietHours else { return false }
        return quiet.endOfWindow(containing: context.zone.localDateTime(at: fireAt)) != nil
    }

    /// What changes between `previous` (what the platform holds) and the new plan, in the order
    /// the engine applies them: cancellations, the new daily series, each decision in
    /// value order, then suppressions. Unchanged requests (same fire time and revision) produce
    /// nothing; a drop of something planned before is its cancellation. `previousByID` is
    /// `previous` by occurrence when the caller has it already (the context's).
    public static func diff(
        previous: [PlannedNotification], allocation: Allocation, previousByID: OccurrenceMap<PlannedNotification>? = nil
    ) -> [PlanChange] {
        let before = previousByID ?? OccurrenceMap(previous.lazy.map { ($0.id, $0) })
        let after = OccurrenceMap(allocation.plan.lazy.map { ($0.id, ()) })
        var changes: [PlanChange] = []
        for old in previous where !after.contains(old.id) {
            let reason =
                allocation.suppressed.first { $0.candidate.id == old.id }?.reason
                ?? allocation.decisions.lazy.compactMap { decision -> ReasonCode? in
                    if decision.candidate.id == old.id, case .drop(let reason) = decision.outcome { return reason }
                    return nil
                }.first
            changes.append(.cancel(old, reason: reason))
        }
        // A series is scheduled when it is new, or when its copy must be written again (its
        // planned revision differs: `UserEngine.rewriteIfShownDifferently`).
        for series in allocation.series where before[series.id].map({ $0.revision != series.revision }) ?? true {
            changes.append(.schedule(series, dueAt: series.plannedAt, fireAt: series.plannedAt, reason: .dailySeries))
        }
        for decision in allocation.decisions {
            let candidate = decision.candidate
            switch decision.outcome {
            case .send(let fireAt, let reason):
                if let old = before[candidate.id], old.fireAt == fireAt, old.revision == candidate.revision { continue }
                changes.append(.schedule(candidate, dueAt: decision.dueAt, fireAt: fireAt, reason: reason))
            case .drop(let reason):
                if candidate.kind.isSocial {
                    changes.append(.regroup(candidate.id, reason: reason))
                } else if before[candidate.id] == nil {
                    changes.append(.drop(candidate, dueAt: decision.dueAt, reason: reason))
                }
            case .fold(let reason):
                changes.append(.regroup(candidate.id, reason: reason))
            }
        }
        for (candidate, reason) in allocation.suppressed where before[candidate.id] == nil {
            changes.append(.suppress(candidate, reason: reason))
        }
        return changes
    }
}
