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
    ///   - requestID: `id.description`, when the caller has written it already.
    mutating func record(
        _ id: OccurrenceID, _ decision: TraceDecision, _ reason: ReasonCode, plannedAt: Instant, fireAt: Instant?,
        level: InterruptionLevel?, retiming: Retiming? = nil, windowEnd: Instant? = nil, nominalAt: Instant? = nil,
        requestID: String? = nil, at now: Instant, into effects: inout [Effect]
    ) {
        let traced = TracedDecision(decision: decision, reason: reason, fireAt: fireAt, plannedAt: plannedAt)
        if state.plan.lastTraced[id] == traced { return }
        state.plan.lastTraced[id] = traced
        var detail: String
        if let retiming, retiming.reason == reason {
            detail = explain(retiming, id: id, plannedAt: plannedAt)
        } else {
            detail = self.detail(for: reason, decision: decision, id: id, plannedAt: plannedAt, windowEnd: windowEnd)
            if let retiming {
                let moved = explain(retiming, id: id, plannedAt: plannedAt)
                detail = detail.isEmpty ? moved : detail + "; before that: " + moved
            }
        }
        effects.append(
            .trace(
                TraceEntry(
                    at: now, userID: profile.id, requestID: requestID ?? id.description, kind: id.kind,
                    decision: decision,
                    reason: reason, plannedAt: plannedAt, fireAt: fireAt, level: level, detail: detail,
                    nominalAt: nominalAt)))
    }

    /// The values behind a reason, for a person reading the trace.
    private func detail(
        for reason: ReasonCode, decision: TraceDecision, id: OccurrenceID, plannedAt: Instant, windowEnd: Instant?
    ) -> String {
        switch reason {
        case .absenceGiveMeSpace: "absence response give_me_space: no nudges"
        case .userReturned: "active again at \(zone.formatted(lastActiveAt))"
        case .kindDisabled: "kind disabled in preferences"
        case .notificationsNotAllowed: "notifications are off for the app in Settings: nothing waits on the device"
        case .alreadyDone: "already done"
        case .holdout: "in the re-engagement control group"
        case .learnedShift, .learnedBackOff: learningEvidence(for: id, nominalAt: plannedAt)
        case .localNight, .snoozed, .timeZoneChanged:
            explain(Retiming(reason, nominalAt: nil), id: id, plannedAt: plannedAt)
        case .slotWindowPassed:
            windowEnd.map { "its slot's window ended at \(zone.localDateTime(at: $0).timeOfDay)" }
                ?? "its slot's window had passed"
        case .attentionBudget:
            attentionBudget?.explain(value: nil)
                ?? DeliveryRules.explain(reason, dropped: true, preferences: profile.preferences)
        case .sameInstant: "another \(id.kind.rawValue) fires at the same instant: that one is kept"
        default:
            DeliveryRules.explain(
                reason, dropped: decision == .dropped || decision == .cancelled, preferences: profile.preferences)
        }
    }

    /// Why an occurrence moved away from its nominal time, for a person.
    private func explain(_ retiming: Retiming, id: OccurrenceID, plannedAt: Instant) -> String {
        let preferences = profile.preferences
        switch retiming.reason {
        case .learnedShift: return learningEvidence(for: id, nominalAt: retiming.nominalAt ?? plannedAt)
        case .localNight:
            let nominal = (retiming.nominalAt ?? plannedAt)
            return "\(zone.localDateTime(at: nominal).timeOfDay) is in the local night (waking hours "
                + "\(preferences.wakeTime)-\(preferences.sleepTime)) and no app opens show the user awake then: "
                + "moved to \(zone.localDateTime(at: plannedAt).timeOfDay)"
        case .snoozed: return "the user snoozed \(id.original)"
        case .timeZoneChanged:
            return retiming.nominalAt.map {
                "its time passed in \(zone.identifier) (\(zone.localDateTime(at: $0).timeOfDay)): sent at once"
            } ?? "re-timed in \(zone.identifier)"
        case .replanned: return "its time had passed when it was planned again: sent at once"
        default: return retiming.reason.rawValue
        }
    }
}
