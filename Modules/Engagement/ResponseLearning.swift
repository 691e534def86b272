import Models
import Scheduling

/// Response feedback: how the user answers each adjustable kind at each local hour shifts a
/// routine reminder or backs it off (`ResponseStats` documents the thresholds); acting reinforces.
extension UserEngine {
    /// Remembers a notification that fired, to learn whether the user answers it.
    mutating func awaitResponse(_ id: OccurrenceID, firedAt: Instant) {
        guard UserEngine.adjustableKinds.contains(id.kind) else { return }
        state.coaching.unanswered.append((id, firedAt))
        let count = state.coaching.unanswered.count
        if count > 64 { state.coaching.unanswered.removeFirst(count - 64) }
    }

    /// Records the user's answer to a notification of `kind`.
    mutating func learnResponse(_ outcome: ResponseOutcome, requestID: String, kind: NotificationKind, at now: Instant)
    {
        guard let id = OccurrenceID(requestID: requestID),
            let index = state.coaching.unanswered.firstIndex(where: { $0.id == id })
        else { return }
        let firedAt = state.coaching.unanswered.remove(at: index).firedAt
        learn(outcome, kind: kind, hour: zone.localDateTime(at: firedAt).hour)
    }

    /// Records a response and refreshes the timing rules it implies (the plan changes only
    /// when they change).
    private mutating func learn(_ outcome: ResponseOutcome, kind: NotificationKind, hour: Int) {
        state.coaching.responses.record(outcome, kind: kind, hour: hour)
        state.coaching.timing = state.coaching.responses.timingRules(for: UserEngine.adjustableKinds)
    }

    /// Notifications nobody answered within three hours count as ignored.
    mutating func expireUnanswered(at now: Instant) {
        while let first = state.coaching.unanswered.first, first.firedAt + 3 * .secondsPerHour < now {
            state.coaching.unanswered.removeFirst()
            learn(.ignored, kind: first.id.kind, hour: zone.localDateTime(at: first.firedAt).hour)
        }
    }

    /// Kinds whose timing responses adjust.
    static let adjustableKinds: Set<NotificationKind> = [.morningGreeting, .hydration, .mealReminder]

    /// Applies the learned timing to a routine candidate: shift it, or (backing off) keep only
    /// every n-th day of it. Returns nil when the day is skipped.
    func adjusted(_ candidate: Candidate) -> Candidate? {
        guard UserEngine.adjustableKinds.contains(candidate.kind) else { return candidate }
        let hour = zone.localDateTime(at: candidate.plannedAt).hour
        guard let rule = state.coaching.timing.first(where: { $0.kind == candidate.kind && $0.hour == hour }) else {
            return candidate
        }
        switch rule.adjustment {
        case .keep: return candidate
        case .shift(let minutes):
            var moved = candidate
            moved.plannedAt = candidate.plannedAt + Int64(minutes) * .secondsPerMinute
            return moved
        case .backOff(let factor):
            return Int64(candidate.id.day) % Int64(max(1, factor)) == 0 ? candidate : nil
        }
    }
}
