import Models
public import Scheduling

/// What one candidate is worth to this user, the order in which the attention budget is handed
/// out (`AttentionBudget`, `Planner.order(_:value:)`):
///
///     value = relevance × response weight × freshness
///
/// - relevance: the kind's policy (0 ... 1; a digest the user chose is 0.9).
/// - response weight: the user's learned response rate for the kind at the candidate's local
///   hour (acts count 1, snoozes `snoozeCredit`), smoothed towards `priorResponseRate` by
///   `priorWeight` pseudo-responses, divided by that prior: 1 without evidence, up to 2 for a
///   kind the user always acts on there, towards 0 for one they always ignore.
/// - freshness: 1 for a candidate not yet due; one already overdue (a rule held it) loses a
///   quarter of its value for each whole quarter of its staleness window that has passed, down
///   to `minimumFreshness`: steps, so a few seconds of holding never reorder two otherwise
///   equal candidates (the earlier keeps its place).
///
/// Pure: the same candidate, responses, zone and time give the same value.
enum AttentionValue {
    static let priorResponseRate = 0.5
    static let priorWeight = 4.0
    static let snoozeCredit = 0.5
    static let minimumFreshness = 0.25

    static func of(_ candidate: Candidate, responses: ResponseStats, zone: ZoneRules, now: Instant) -> Double {
        var freshness = 1.0
        if candidate.plannedAt < now, candidate.policy.stalenessSeconds > 0 {
            let quarters = (4 * (now - candidate.plannedAt)) / candidate.policy.stalenessSeconds
            freshness = max(minimumFreshness, 1 - Double(quarters) / 4)
        }
        return notYetDue(
            kind: candidate.kind, at: candidate.plannedAt, relevance: candidate.policy.relevance,
            responses: responses, zone: zone) * freshness
    }

    /// The value of a candidate not past its time (freshness 1): relevance times response weight.
    static func notYetDue(
        kind: NotificationKind, at plannedAt: Instant, relevance: Double, responses: ResponseStats, zone: ZoneRules
    ) -> Double {
        let counts = responses.counts(kind: kind, hour: zone.localDateTime(at: plannedAt).hour)
        let positive = Double(counts.acted) + snoozeCredit * Double(counts.snoozed)
        let rate = (positive + priorResponseRate * priorWeight) / (Double(counts.total) + priorWeight)
        return relevance * (rate / priorResponseRate)
    }
}

extension UserEngine {
    /// The attention budget this user's plan follows: the user's own, else the app's; nil for a
    /// user in the budget's holdout (`EngineConfiguration.budgetHoldoutShare`).
    public var attentionBudget: AttentionBudget? {
        if isHeldOutOfBudget { return nil }
        return AttentionBudget.effective(
            app: configuration.attentionBudget, userPerDay: profile.preferences.interruptionBudgetPerDay)
    }

    /// Whether the user is planned without the attention budget, to measure its lift (fixed by
    /// the id and the configuration).
    public var isHeldOutOfBudget: Bool {
        configuration.budgetHoldoutShare > 0
            && Holdout.isHeldOut(
                userID: profile.id, share: configuration.budgetHoldoutShare, salt: configuration.budgetHoldoutSalt)
    }
}
