public import Models
import Scheduling

/// When the user's phone hears of a change an input makes to its local plan, where the engine
/// runs on a server and the phone mirrors the plan (EngagementKit's `PlanSync`).
///
/// Until the phone hears, it fires what it holds; so what it holds and fires before then is
/// committed (`PlanningContext.committed`): the pass counts it as delivered and plans around it.
public enum PhoneHearing: Hashable, Sendable {
    /// At once: the engine runs on the phone, or the input came from the phone, whose answer
    /// carries the plan's version so it pulls the change right away.
    case atOnce
    /// By this instant: the input came from anyone else (the app's backend, a job, a social
    /// event, the coach), and the server's sync reaches the phone by then
    /// (`SilentPushPlan.phoneHears(ofChangeAt:)`). A phone offline, or whose app iOS does not
    /// wake, hears later: what it fires meanwhile is a stale copy the server could not avoid.
    case by(Instant)
    /// When the phone next pulls, with no bound known: everything it holds is committed.
    case whenItPulls

    /// Whether a copy the phone holds at `fireAt` fires after `now` and before the phone hears:
    /// never for a phone that hears at once, always (once ahead) for one that hears when it
    /// pulls. What `UserEngine.committed(at:phone:)` keeps.
    func firesBeforeHearing(_ fireAt: Instant, at now: Instant) -> Bool {
        switch self {
        case .atOnce: false
        case .by(let hearsAt): fireAt > now && fireAt < hearsAt
        case .whenItPulls: fireAt > now
        }
    }
}

extension UserEngine {
    /// Records what the user's phone was given of the local plan at `now` (a pull it was
    /// answered, `LocalPlan`): each request by its identifier, at the instant it fires next.
    /// Daily series, identifiers the engine does not read and what fires by `now` are left out.
    /// It replaces what was recorded before: the phone applies a plan whole. A change of zone
    /// moves it as the phone does (`phoneMoves`). A change of what the phone holds keeps the last
    /// pass's key: the next input plans again when what it takes as committed changes, or a copy
    /// held later that a push's rules read (`lastKeyMatches`, `heldLaterChangesLeaveThePlan`).
    /// A pull also tells that the phone hears again (`PlanState.phoneHearsBy`).
    /// Returns whether the engine's state changed (what the phone holds, or that it hears).
    @discardableResult
    public mutating func phoneApplied(
        _ requests: some Sequence<(requestID: RequestID, fireAt: Instant)>, at now: Instant
    ) -> Bool {
        // What the phone held from its last pull and fired since is counted before the record
        // is replaced: no input may have come between.
        retireHeldCopies(through: now)
        var held: [(OccurrenceID, Instant)] = []
        for (requestID, fireAt) in requests where fireAt > now {
            guard let id = OccurrenceID(requestID: requestID), !id.isDailySeries else { continue }
            held.append((id, fireAt))
        }
        let holds = OccurrenceMap(held)
        let heardLate = state.plan.phoneHearsBy != nil
        state.plan.phoneHearsBy = nil
        guard holds != state.plan.phoneHolds else { return heardLate }
        state.plan.phoneHolds = holds
        return true
    }

    /// What the phone fired after it moved from `oldZone` to `newZone` at `movedAt`, when the
    /// engine hears of the move at `now` (the app was offline meanwhile): each calendar trigger
    /// it held re-matched at its wall time in the new zone, and those that came after the move
    /// and by `now` fired there, at that instant. Empty when the engine hears at once.
    func firedAfterMoving(
        from oldZone: ZoneRules, to newZone: ZoneRules, movedAt: Instant, at now: Instant
    ) -> [OccurrenceID: Instant] {
        guard movedAt < now, !state.plan.phoneHolds.isEmpty else { return [:] }
        var fired: [OccurrenceID: Instant] = [:]
        for (id, fireAt) in state.plan.phoneHolds.entries where TriggerChoice.usesCalendarTrigger(fireAt, in: oldZone) {
            let firedAt = newZone.instant(for: oldZone.localDateTime(at: fireAt))
            if firedAt > movedAt && firedAt <= now { fired[id] = firedAt }
        }
        return fired
    }

    /// The user did `activity` at `occurredAt`, which the engine hears of at `now` (the app
    /// queued it offline). The kit withdrew at once every request it held that the activity
    /// makes moot (`withdrawals(of:)`), so one the engine took as fired between the two never
    /// showed: it leaves the caps' ledger, stays out of the plan, and a trace says it was
    /// cancelled as already done. Every plan the kit held then was made before the engine knew
    /// of the activity, so its withdrawals counted from before `occurredAt`, whatever the engine
    /// has heard since (another late event, applied at `now`).
    mutating func unfireWithdrawn(
        by activity: ActivityKind, at occurredAt: Instant, now: Instant, into effects: inout [Effect]
    ) {
        let event = WithdrawingEvent(activity, at: occurredAt)
        let known = min(lastActiveAt, occurredAt - 1)
        for (id, firedAt) in state.plan.fired.entries
        where firedAt > occurredAt && firedAt <= now && ChannelPolicy.channel(for: id.kind) == .local {
            let withdrawals = Self.withdrawals(
                of: id, zone: zone, heard: HeardActivity(lastActiveAt: known, done: state.activity.done))
            guard withdrawals.contains(where: { $0.isMet(by: event) }) else { continue }
            state.plan.ledger.remove(firedAt)
            // Still in `fired` (never planned again, as the kit never places it again), at the
            // instant it was withdrawn: a later event finds nothing left to withdraw.
            state.plan.fired[id] = occurredAt
            state.plan.lastKey = nil
            record(
                id, .cancelled, .alreadyDone, plannedAt: firedAt, fireAt: nil, level: nil, at: now, into: &effects)
        }
    }

    /// What the phone holds after it moved from `oldZone` to `newZone` at `now`: it re-matches
    /// each calendar trigger at the same wall time in the new zone (the rule that chose the
    /// trigger, `TriggerChoice`, tells which they are) and drops those whose wall time has
    /// passed there; a date trigger keeps its instant.
    mutating func phoneMoves(from oldZone: ZoneRules, to newZone: ZoneRules, at now: Instant) {
        guard !state.plan.phoneHolds.isEmpty else { return }
        var moved: [(OccurrenceID, Instant)] = []
        for (id, fireAt) in state.plan.phoneHolds.entries {
            let next =
                TriggerChoice.usesCalendarTrigger(fireAt, in: oldZone)
                ? newZone.instant(for: oldZone.localDateTime(at: fireAt)) : fireAt
            if next > now { moved.append((id, next)) }
        }
        state.plan.phoneHolds = OccurrenceMap(moved)
    }

    /// How the phone hears of a step at `now` that the runtime says it hears of as `phone`:
    /// - a phone that has not pulled a change it was to hear of by `now` is not hearing (it is
    ///   offline, or iOS did not wake it for the sync), so it hears only when it pulls;
    /// - one still to hear of an earlier change hears of this one with it, if sooner: the sync
    ///   that tells it is never postponed, and it carries the plan's version of when it is sent.
    func effectiveHearing(_ phone: PhoneHearing, at now: Instant) -> PhoneHearing {
        guard case .by(let bound) = phone, let due = state.plan.phoneHearsBy else { return phone }
        return due <= now ? .whenItPulls : .by(min(bound, due))
    }

    /// Whether the phone has a change of its plan still to hear of (it has not pulled since):
    /// only then does a sync that missed it matter (`EngineInput.syncMissed`).
    public var phoneHasNotHeard: Bool { state.plan.phoneHearsBy != nil }

    /// The sync that was to tell the phone of a change it has not pulled was missed at `now`
    /// (`EngineInput.syncMissed`): the phone was to hear by now at the latest, so from this step
    /// on it hears only when it pulls (`effectiveHearing`).
    mutating func syncMissed(at now: Instant) {
        guard let due = state.plan.phoneHearsBy else { return }
        state.plan.phoneHearsBy = min(due, now)
    }

    /// Records that a step at `now` heard of as `phone` moved the local plan from
    /// `revisionBefore`: the first change the phone has not pulled sets when it was to hear.
    mutating func notePhoneMustHear(_ phone: PhoneHearing, revisionBefore: Int) {
        guard case .by(let instant) = phone, state.plan.localRevision != revisionBefore,
            state.plan.phoneHearsBy == nil, !state.plan.phoneHolds.isEmpty
        else { return }
        state.plan.phoneHearsBy = instant
    }

    /// Whether a step at `now`, heard of as `phone` (as the step was given it), withdrew or moved
    /// with its `effects` a copy the phone holds and fires before it hears: one the pass took as
    /// committed (`committed(at:phone:)`). A pass keeps every such copy where the phone holds it
    /// unless the user's own intent withdraws it (`Planner.isWithdrawnByIntent`: a kind disabled,
    /// a silence asked for, the thing done, quiet hours), or, rarely, the plan's slot budget has
    /// no room left for it; so a true answer means the phone fires what the user ruled out unless
    /// it hears sooner, and the runtime asks for its sync early (`SilentPushPlan.earlyRows`).
    /// False for a phone that hears at once, and when the phone holds nothing.
    public func withdrewHeldCopy(in effects: [Effect], phone: PhoneHearing, at now: Instant) -> Bool {
        guard !state.plan.phoneHolds.isEmpty else { return false }
        let phone = effectiveHearing(phone, at: now)
        /// Held, firing before the phone hears, and not at `fireAt` any more.
        func withdrawn(_ requestID: RequestID, unlessAt fireAt: Instant?) -> Bool {
            guard let id = OccurrenceID(requestID: requestID), let held = state.plan.phoneHolds[id] else {
                return false
            }
            return held != fireAt && phone.firesBeforeHearing(held, at: now)
        }
        for effect in effects {
            switch effect {
            case .cancel(let requestIDs):
                if requestIDs.contains(where: { withdrawn($0, unlessAt: nil) }) { return true }
            case .schedule(let request, let fireAt, .local):
                if withdrawn(request.identifier, unlessAt: fireAt) { return true }
            default:
                continue
            }
        }
        return false
    }

    /// Whether the phone holds `id` and fires it before it hears of a step at `now` heard of as
    /// `phone` (already effective): one of the copies `committed(at:phone:)` keeps.
    func phoneFiresBeforeHearing(_ id: OccurrenceID, phone: PhoneHearing, at now: Instant) -> Bool {
        state.plan.phoneHolds[id].map { phone.firesBeforeHearing($0, at: now) } ?? false
    }

    /// What the phone holds (`phoneApplied`) of requests still ahead at `now`, committed for a
    /// pass whose change reaches the phone as `phone` says (`PhoneHearing.firesBeforeHearing`).
    func committed(at now: Instant, phone: PhoneHearing) -> OccurrenceMap<Instant> {
        guard phone != .atOnce, !state.plan.phoneHolds.isEmpty else { return OccurrenceMap() }
        return OccurrenceMap(
            state.plan.phoneHolds.entries.lazy.filter { phone.firesBeforeHearing($0.value, at: now) }.map {
                ($0.id, $0.value)
            })
    }

    /// What the phone holds of requests still ahead at `now` that are not committed for a pass
    /// heard of as `phone` (`committed(at:phone:)`): the pass may move each, but places a push
    /// around it (`PlanningContext.heldLater`). Empty for a phone that hears at once, and for
    /// one that hears only when it pulls (everything it holds is committed then).
    func heldLater(at now: Instant, phone: PhoneHearing) -> OccurrenceMap<Instant> {
        guard case .by(let hearsAt) = phone, !state.plan.phoneHolds.isEmpty else { return OccurrenceMap() }
        return OccurrenceMap(
            state.plan.phoneHolds.entries.lazy.filter { $0.value > now && $0.value >= hearsAt }.map {
                ($0.id, $0.value)
            })
    }
}
