import Models
import Scheduling

/// The trace stage: every decision leaves an entry with its reason code, once per change. A time
/// that is not its slot's nominal time says why (a learned shift with its evidence, the local
/// night, a snooze, a change of zone, or the rule that deferred it) and names the nominal time.
extension UserEngine {
    /// Emits a trace entry unless the occurrence's last traced outcome is the same.
    /// - Parameters:
    ///   - retiming: why `plannedAt` is not the slot's nominal time, if it is not.
    ///   - windowEnd: the end of the occurrence's slot window, for a `slotWindowPassed` detail.
    ///   - nominalAt: the slot's nominal time, when it fires at another.
    mutating func record(
        _ id: OccurrenceID, _ decision: TraceDecision, _ reason: ReasonCode, plannedAt: Instant, fireAt: Instant?,
        level: InterruptionLevel?, retiming: Retiming? = nil, windowEnd: Instant? = nil, nominalAt: Instant? = nil,
        at now: Instant, into effects: inout [Effect]
    ) {
        let traced = TracedDecision(decision: decision, reason: reason, fireAt: fireAt, plannedAt: plannedAt)
        if state.plan.lastTraced[id] == traced { return }
        state.plan.lastTraced[id] = traced
        var why: TraceDetail
        var movedBefore = TraceDetail.none
        if let retiming, retiming.reason == reason {
            why = explain(retiming, id: id, plannedAt: plannedAt)
        } else {
            why = self.detail(for: reason, decision: decision, id: id, plannedAt: plannedAt, windowEnd: windowEnd)
            if let retiming { movedBefore = explain(retiming, id: id, plannedAt: plannedAt) }
        }
        effects.append(
            .trace(
                TraceEntry(
                    at: now, userID: profile.id, subject: .occurrence(id), kind: id.kind, decision: decision,
                    reason: reason, plannedAt: plannedAt, fireAt: fireAt, level: level, why: why,
                    movedBefore: movedBefore, nominalAt: nominalAt)))
    }

    /// The values behind a reason, for a person reading the trace.
    private func detail(
        for reason: ReasonCode, decision: TraceDecision, id: OccurrenceID, plannedAt: Instant, windowEnd: Instant?
    ) -> TraceDetail {
        switch reason {
        case .absenceGiveMeSpace: .giveMeSpace
        case .userReturned: .activeAgain(at: OffsetDateTime(lastActiveAt, in: zone))
        case .kindDisabled: .kindDisabledInPreferences
        case .notificationsNotAllowed: .notificationsNotAllowed
        case .alreadyDone: .alreadyDone
        case .holdout: .holdout
        case .learnedShift, .learnedBackOff: .learning(learningEvidence(for: id, nominalAt: plannedAt))
        case .localNight, .snoozed, .timeZoneChanged:
            explain(Retiming(reason, nominalAt: nil), id: id, plannedAt: plannedAt)
        case .slotWindowPassed: .slotWindowEnded(at: windowEnd.map { zone.localDateTime(at: $0).timeOfDay })
        case .attentionBudget:
            attentionBudget.map { .attentionBudget(interruptionsPerDay: $0.interruptionsPerDay) }
                ?? .rule(reason, dropped: true, limits: RuleLimits(profile.preferences))
        case .sameInstant: .sameInstant(id.kind)
        default:
            .rule(
                reason, dropped: decision == .dropped || decision == .cancelled, limits: RuleLimits(profile.preferences)
            )
        }
    }

    /// Why an occurrence moved away from its nominal time, for a person.
    private func explain(_ retiming: Retiming, id: OccurrenceID, plannedAt: Instant) -> TraceDetail {
        let preferences = profile.preferences
        switch retiming.reason {
        case .learnedShift: return .learning(learningEvidence(for: id, nominalAt: retiming.nominalAt ?? plannedAt))
        case .localNight:
            return .localNight(
                nominal: zone.localDateTime(at: retiming.nominalAt ?? plannedAt).timeOfDay, wake: preferences.wakeTime,
                sleep: preferences.sleepTime, movedTo: zone.localDateTime(at: plannedAt).timeOfDay)
        case .snoozed: return .snoozedCopy(of: id.original)
        case .timeZoneChanged:
            return .zoneChanged(
                zone: zone.identifier, passedAt: retiming.nominalAt.map { zone.localDateTime(at: $0).timeOfDay })
        case .replanned: return .sentAtOnce
        default: return .reasonName(retiming.reason)
        }
    }
}
