import Models
import Scheduling

/// The trace stage: every decision leaves an entry with its reason code, once per change.
extension UserEngine {
    /// Emits a trace entry unless the occurrence's last traced outcome is the same.
    mutating func record(
        _ id: OccurrenceID, _ decision: TraceDecision, _ reason: ReasonCode, plannedAt: Instant, fireAt: Instant?,
        level: InterruptionLevel?, at now: Instant, into effects: inout [Effect]
    ) {
        let traced = TracedDecision(decision: decision, reason: reason, fireAt: fireAt, plannedAt: plannedAt)
        if state.plan.lastTraced[id] == traced { return }
        state.plan.lastTraced[id] = traced
        effects.append(
            .trace(
                TraceEntry(
                    at: now, userID: profile.id, requestID: id.description, kind: id.kind, decision: decision,
                    reason: reason, plannedAt: plannedAt, fireAt: fireAt, level: level,
                    detail: detail(for: reason, decision: decision))))
    }

    /// The values behind a reason, for a person reading the trace.
    private func detail(for reason: ReasonCode, decision: TraceDecision) -> String {
        switch reason {
        case .absenceGiveMeSpace: "absence response give_me_space: no nudges"
        case .userReturned: "active again at \(zone.formatted(lastActiveAt))"
        case .kindDisabled: "kind disabled in preferences"
        case .alreadyDone: "already done"
        case .holdout: "in the re-engagement control group"
        default:
            DeliveryRules.explain(
                reason, dropped: decision == .dropped || decision == .cancelled, preferences: profile.preferences)
        }
    }
}
