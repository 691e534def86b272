import Models
public import Scheduling

/// The scenario's attention section: the engine's daily budget and its holdout.
///
///     "attentionBudget": { "perDay": 8, "holdoutShare": 0.2 }
///
/// - `perDay`: the app's budget of interruptions per user and local day (a whole number in
///   `ScenarioLimits.attentionBudgetPerDay`), or `"none"` for no budget; default
///   `AttentionBudget.defaultInterruptionsPerDay` (8).
/// - `holdoutShare`: share of users planned without the budget, for its lift (0 ... 1); default
///   0.2. Users are drawn from their id with the budget's own salt, independent of the
///   re-engagement holdout.
public struct AttentionSettings: Hashable, Sendable {
    /// nil: no budget.
    public var budget: AttentionBudget? = AttentionBudget()
    public var holdoutShare: Double = 0.2

    public init() {}

    static let keys: Set<String> = ["perDay", "holdoutShare"]

    static func parse(_ node: JSONNode?, reader: Reader) throws(ScenarioError) -> AttentionSettings {
        var settings = AttentionSettings()
        let object = try reader.dictionary(node, key: "attentionBudget", allowed: keys)
        if let perDay = object["perDay"] {
            if case .string("none") = perDay.value {
                settings.budget = nil
            } else {
                guard case .number = perDay.value else {
                    throw reader.fail(
                        "attentionBudget.perDay", perDay,
                        "expected \"none\" or a whole number in \(ScenarioLimits.attentionBudgetPerDay.lowerBound)..."
                            + "\(ScenarioLimits.attentionBudgetPerDay.upperBound), got \(perDay.value.quoted)")
                }
                let count = try reader.integer(
                    perDay, key: "attentionBudget.perDay", range: ScenarioLimits.attentionBudgetPerDay,
                    default: AttentionBudget.defaultInterruptionsPerDay)
                settings.budget = AttentionBudget(interruptionsPerDay: count)
            }
        }
        if let share = object["holdoutShare"] {
            settings.holdoutShare = try reader.number(share, key: "attentionBudget.holdoutShare", range: 0...1)
        }
        return settings
    }
}

extension ScenarioLimits {
    /// The app's daily attention budget a scenario may set (the engine's own range).
    public static let attentionBudgetPerDay: ClosedRange<Int> = AttentionBudget.interruptionsPerDayRange
}
