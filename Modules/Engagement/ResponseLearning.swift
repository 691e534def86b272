import Models
import Scheduling

/// Response feedback: how the user answers each slot of an adjustable kind (breakfast, the
/// 13:00 hydration reminder, the morning greeting) at each local hour shifts that slot inside its
/// window or backs it off (`ResponseStats` documents the thresholds); acting reinforces.
extension UserEngine {
    /// Remembers a notification that fired, to learn whether the user answers it.
    mutating func awaitResponse(_ id: OccurrenceID, firedAt: Instant) {
        guard UserEngine.adjustableKinds.contains(id.kind) else { return }
        state.coaching.unanswered.append((id, firedAt))
        let count = state.coaching.unanswered.count
        if count > 64 { state.coaching.unanswered.removeFirst(count - 64) }
    }

    /// Records the user's answer to a notification of `kind`.
    mutating func learnResponse(
        _ outcome: ResponseOutcome, requestID: RequestID, kind: NotificationKind, at now: Instant
    ) {
        guard let id = OccurrenceID(requestID: requestID),
            let index = state.coaching.unanswered.firstIndex(where: { $0.id == id })
        else { return }
        let firedAt = state.coaching.unanswered.remove(at: index).firedAt
        learn(outcome, slot: LearningSlot(id), hour: zone.localDateTime(at: firedAt).hour)
    }

    /// Records a response and refreshes the timing rules it implies (the plan changes only
    /// when they change).
    private mutating func learn(_ outcome: ResponseOutcome, slot: LearningSlot, hour: Int) {
        state.coaching.responses.record(outcome, slot: slot, hour: hour)
        state.coaching.timing = state.coaching.responses.timingRules(for: UserEngine.adjustableKinds)
    }

    /// Notifications nobody answered within three hours count as ignored.
    mutating func expireUnanswered(at now: Instant) {
        while let first = state.coaching.unanswered.first, first.firedAt + 3 * .secondsPerHour < now {
            state.coaching.unanswered.removeFirst()
            learn(.ignored, slot: LearningSlot(first.id), hour: zone.localDateTime(at: first.firedAt).hour)
        }
    }

    /// Kinds whose timing responses adjust.
    static let adjustableKinds: NotificationKindSet = [.morningGreeting, .hydration, .mealReminder]

    /// What learning does to one routine candidate.
    enum Learned {
        /// Sent as planned, or moved inside its window (`retiming` says so).
        case send(Candidate)
        /// Backed off: not sent on this day.
        case skip(Candidate)
    }

    /// Applies the learned timing of the candidate's slot at its nominal hour: shift it (inside
    /// its window, with the nominal time kept for the trace), or (backing off) keep only every
    /// n-th day of it.
    func learned(_ candidate: Candidate) -> Learned {
        guard UserEngine.adjustableKinds.contains(candidate.kind) else { return .send(candidate) }
        let hour = zone.localDateTime(at: candidate.plannedAt).hour
        let slot = LearningSlot(candidate.id)
        guard let rule = state.coaching.timing.first(where: { $0.slot == slot && $0.hour == hour }) else {
            return .send(candidate)
        }
        switch rule.adjustment {
        case .keep: return .send(candidate)
        case .shift(let minutes):
            var moved = candidate
            moved.plannedAt = candidate.plannedAt + Int64(minutes) * .secondsPerMinute
            moved.retiming = Retiming(.learnedShift, nominalAt: candidate.plannedAt)
            return .send(moved)
        case .backOff(let factor):
            return Int64(candidate.id.day) % Int64(max(1, factor)) == 0 ? .send(candidate) : .skip(candidate)
        }
    }

    /// The evidence behind the learned timing of `id`'s slot at the local hour of `nominalAt`,
    /// for the trace (`LearningEvidence.text`: "mealReminder.breakfast at 08:00-08:59: 3 ignored,
    /// 1 dismissed, 0 acted on, the last 4 unanswered; moved +60 min from 08:00 to 09:00").
    func learningEvidence(for id: OccurrenceID, nominalAt: Instant) -> LearningEvidence {
        let slot = LearningSlot(id)
        let local = zone.localDateTime(at: nominalAt)
        let hour = local.hour
        let move: LearningEvidence.Move
        switch state.coaching.timing.first(where: { $0.slot == slot && $0.hour == hour })?.adjustment {
        case .shift(let minutes)?:
            let target = zone.localDateTime(at: nominalAt + Int64(minutes) * .secondsPerMinute).timeOfDay
            let targetCounts = state.coaching.responses.counts(slot: slot, hour: target.hour)
            move = .shift(
                minutes: minutes, from: local.timeOfDay, to: target,
                target: targetCounts.total > 0 && target.hour != hour ? targetCounts : nil)
        case .backOff(let factor)?: move = .backOff(factor: factor)
        default: move = .kept
        }
        return LearningEvidence(
            kind: slot.kind, packedSlot: slot.packedSlot, hour: hour,
            tally: state.coaching.responses.counts(slot: slot, hour: hour), move: move)
    }
}
