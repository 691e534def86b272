import Content
import Models
import Scheduling

/// What a planned notification says: template copy at once, the coach's copy when it answers
/// in time with valid copy, grouped social copy for groups.
extension UserEngine {
    /// What the engine knows that copy may use; redacted for the privacy level by `ContentGenerator`.
    private func contentRequest(for candidate: Candidate, fireAt: Instant) -> ContentRequest {
        var context = CopyContext(firstName: recipient.firstName)
        context.meal = candidate.id.meal
        if candidate.kind == .reEngagement {
            let daysAway = Int((fireAt - lastActiveAt) / .secondsPerDay)
            context.daysAway = daysAway
            context.stronger =
                profile.communication.absenceResponse == .checkInOnMe && daysAway >= configuration.strongerFromDay
        }
        coachingFacts(&context, for: candidate.id, fireAt: fireAt)
        if candidate.kind == .workoutReminder, let minute = candidate.id.minuteOfDay {
            context.workoutType =
                profile.preferences.workoutSchedule.first { $0.time.minutesSinceMidnight == minute }?.type
        }
        return ContentRequest(
            kind: candidate.kind, style: profile.motivationalStyle, language: profile.locale, recipient: recipient,
            context: context)
    }

    mutating func makeRequest(for candidate: Candidate, fireAt: Instant, copy: Copy? = nil) -> NotificationRequest {
        if candidate.kind.isSocial, let group = state.social.groups.first(where: { $0.id == candidate.id }) {
            return groupRequest(group, candidate: candidate, fireAt: fireAt)
        }
        let requestTrigger: NotificationTrigger =
            if candidate.id.isDailySeries, let minute = candidate.id.minuteOfDay {
                .calendar(.daily(at: LocalTimeOfDay(minutesSinceMidnight: minute)), repeats: true)
            } else {
                TriggerChoice.trigger(for: fireAt, in: zone)
            }
        let request = contentRequest(for: candidate, fireAt: fireAt)
        let text: Copy
        if let copy {
            text = copy
        } else if let accepted = state.copy.coachCopy[candidate.id]?.copy {
            text = accepted
        } else {
            text =
                content.decide(nil, for: request, memory: &state.copy.templateMemory, generator: &state.copy.random)
                .copy
        }
        let body = NotificationContent(
            kind: candidate.kind, title: text.title, body: text.body, threadID: candidate.policy.threadID,
            interruptionLevel: candidate.level, relevanceScore: candidate.policy.relevance,
            sound: profile.preferences.soundEnabled ? NotificationStyling.sound(for: candidate.kind) : nil,
            deepLink: ResponseRouting.defaultLink(for: candidate.kind, meal: request.context.meal))
        return NotificationRequest(identifier: candidate.id.requestID, content: body, trigger: requestTrigger)
    }

    /// Asks the coach for the copy of a request just scheduled, for the kinds that use it, once
    /// per occurrence.
    mutating func askCoach(
        for candidate: Candidate, requestID: RequestID, fireAt: Instant, into effects: inout [Effect]
    ) {
        guard configuration.coachKinds.contains(candidate.kind), !candidate.id.isDailySeries,
            state.copy.coachCopy[candidate.id] == nil
        else { return }
        state.copy.coachCopy[candidate.id] = CoachCopy(copy: nil, askedAt: fireAt)
        let request = contentRequest(for: candidate, fireAt: fireAt)
        effects.append(
            .generateContent(requestID: requestID, request: content.coachRequest(for: request)))
    }

    /// The coach answered: replace the template copy if the answer is valid and the request still
    /// pending; either way the trace says which copy goes out and why. A copy the phone holds and
    /// fires before it hears of this step (`phoneFiresBeforeHearing`, heard of as `phone`) keeps
    /// its template, as the phone shows it: the inbox and the banner then say the same
    /// (`heldByPhone`).
    mutating func applyCoachCopy(
        _ outcome: CoachOutcome, to requestID: RequestID, phone: PhoneHearing, at now: Instant,
        into effects: inout [Effect]
    ) {
        guard let id = OccurrenceID(requestID: requestID), let item = state.plan.planned.first(where: { $0.id == id }),
            item.fireAt > now
        else { return }
        /// The trace of the copy chosen, and why.
        func chosen(_ reason: ReasonCode, _ why: TraceDetail) -> Effect {
            .trace(
                TraceEntry(
                    at: now, userID: profile.id, subject: .external(requestID.rawValue), kind: id.kind,
                    decision: .copyChosen, reason: reason, plannedAt: item.plannedAt, fireAt: item.fireAt, why: why))
        }
        guard !phoneFiresBeforeHearing(id, phone: phone, at: now) else {
            effects.append(chosen(.templateFallback, .templateKept(code: ContentReason.heldByPhone.code)))
            return
        }
        let candidate = candidate(id, at: item.plannedAt)
        let request = contentRequest(for: candidate, fireAt: item.fireAt)
        switch content.judge(outcome, for: request) {
        case .accepted(let copy, _):
            state.copy.templateMemory.record(id.kind, body: copy.body)
            state.copy.coachCopy[id] = CoachCopy(copy: copy, askedAt: item.fireAt)
            if ChannelPolicy.channel(for: id.kind) == .local { state.plan.countLocalChange(at: now) }
            effects.append(
                .schedule(
                    makeRequest(for: candidate, fireAt: item.fireAt, copy: copy), fireAt: item.fireAt,
                    channel: ChannelPolicy.channel(for: id.kind)))
            effects.append(chosen(.coachCopy, .coachCopyAccepted))
        case .rejected(let reason, _):
            effects.append(chosen(.templateFallback, .templateKept(code: reason.code)))
        }
    }
}
