public import Models

/// The attention budget: how many user-visible interruptions one user gets in a local day,
/// applied on top of the caps the user set (`NotificationPreferences.maxPerDay`, `maxPerHour`).
///
/// Contract:
/// - A day's count is every fire time in the cap ledger on that local day in the user's zone:
///   what fired, the daily series' future firings and what the pass already planned. Exempt
///   notifications count too (they interrupt as much as any other), they are just never cut.
/// - The planner hands out the budget in value order (`Planner.order(_:value:)`): the engine's
///   value is relevance, the user's learned response rate for the kind at that hour and
///   staleness, so what is cut is what this user values least. A cut is re-decided on every
///   pass: something planned is cancelled when a more valuable arrival needs its place.
/// - Never cut: transactional kinds (`NotificationKind.isTransactional`, as the caps exempt
///   them) and digests (`Candidate.isDigest`): the digest is where cut items go, so cutting it
///   would lose them.
/// - A cut folds into the kind's digest when the kind allows it (a social group, or a policy of
///   `foldIntoDigest`) and is dropped otherwise, always with the reason `attentionBudget`.
///
/// The default, `defaultInterruptionsPerDay` (8), is a full routine day: a morning greeting,
/// four meals, a workout reminder, its pre-workout and post-workout check-in. Hydration beyond
/// that, single social items and announcements compete for what is left and fold or drop.
public struct AttentionBudget: Hashable, Sendable {
    /// The default daily budget of interruptions per user; see the type's documentation.
    public static let defaultInterruptionsPerDay = 8
    /// The accepted range of a budget, for the app's configuration and a user's preference.
    public static let interruptionsPerDayRange = 1...100

    /// Interruptions per local day, at least 1.
    public var interruptionsPerDay: Int

    public init(interruptionsPerDay: Int = AttentionBudget.defaultInterruptionsPerDay) {
        self.interruptionsPerDay = max(1, interruptionsPerDay)
    }

    /// The budget that applies to one user: the user's own number when they set one
    /// (`NotificationPreferences.interruptionBudgetPerDay`), else the app's; nil when the app
    /// has none and the user set none.
    public static func effective(app: AttentionBudget?, userPerDay: Int?) -> AttentionBudget? {
        if let userPerDay { return AttentionBudget(interruptionsPerDay: userPerDay) }
        return app
    }

    /// Whether the budget never cuts `candidate`: a transactional kind or a digest.
    public func exempts(_ candidate: Candidate) -> Bool { candidate.kind.isTransactional || candidate.isDigest }

    /// The budget's verdict on a candidate the rules would send at `fireAt`: nil keeps it (it is
    /// exempt, or its local day has room in `ledger`), otherwise the cut (`fold` or `drop`,
    /// reason `attentionBudget`).
    public func cut(_ candidate: Candidate, firingAt fireAt: Instant, zone: ZoneRules, ledger: CapLedger)
        -> RuleOutcome?
    {
        guard !exempts(candidate) else { return nil }
        let day = zone.localDateTime(at: fireAt).daysSinceEpoch
        let dayStart = zone.instant(for: LocalDateTime(localSeconds: day * .secondsPerDay))
        let dayEnd = zone.instant(for: LocalDateTime(localSeconds: (day + 1) * .secondsPerDay))
        guard ledger.count(from: dayStart, to: dayEnd) >= interruptionsPerDay else { return nil }
        return candidate.policy.deferral == .foldIntoDigest
            ? .fold(reason: .attentionBudget) : .drop(reason: .attentionBudget)
    }

    /// The rule behind a cut, for a person reading the trace.
    public func explain(value: Double?) -> String {
        let valued = value.map { " (this one's value \(Self.formatted($0)))" } ?? ""
        return "the day's attention budget of \(interruptionsPerDay) interruptions went to notifications "
            + "this user values more\(valued)"
    }

    /// A value with two decimals, without Foundation's formatting.
    static func formatted(_ value: Double) -> String {
        let hundredths = Int((max(0, value) * 100).rounded())
        let fraction = hundredths % 100
        return "\(hundredths / 100).\(fraction < 10 ? "0" : "")\(fraction)"
    }
}
