/// The figures a run's report gives of its budgets, sizes and copy: percentiles of what was
/// measured, each beside the budget it is held to.

/// Percentiles of a set of timings, in microseconds, against a budget.
public struct BudgetFigures: Codable, Sendable, Equatable {
    /// Calls timed: one scheduling decision in `sampledOneIn`, every background run.
    public var samples: Int
    /// One call in this many was timed (1: every call).
    public var sampledOneIn: Int
    public var p50Micros: Double
    public var p99Micros: Double
    public var maxMicros: Double
    public var budgetMicros: Double
    public var breached: Bool

    init(nanos: LatencyHistogram, sampledOneIn: Int, budgetMicros: Double) {
        samples = nanos.count
        self.sampledOneIn = sampledOneIn
        p50Micros = nanos.value(at: 0.5) / 1_000
        p99Micros = nanos.value(at: 0.99) / 1_000
        maxMicros = nanos.max / 1_000
        self.budgetMicros = budgetMicros
        breached = maxMicros > budgetMicros
    }
}

/// p50, p99 and the largest of a set of sizes, in bytes.
public struct SizeFigures: Codable, Sendable, Equatable {
    public var p50: Int
    public var p99: Int
    public var max: Int

    init(_ sizes: [UInt32]) {
        let sorted = sizes.sorted()
        p50 = Int(nearestRank(sorted, 0.5))
        p99 = Int(nearestRank(sorted, 0.99))
        max = Int(sorted.last ?? 0)
    }
}

/// The nearest-rank percentile `p` (0...1] of ascending samples; 0 when there are none.
func nearestRank(_ sorted: [UInt32], _ p: Double) -> Double {
    guard !sorted.isEmpty else { return 0 }
    let index = Int((Double(sorted.count) * p).rounded(.up)) - 1
    return Double(sorted[min(sorted.count - 1, max(0, index))])
}

/// Content generation in virtual time. The times are until the copy was settled, which the app
/// caps at the deadline (it stops waiting then): a percentile equal to `budgetMillis` is the
/// cap, not a measured latency (`p99AtDeadline`), and `atDeadline` says how many were cut there.
public struct ContentFigures: Codable, Sendable {
    public var coachCalls: Int
    public var aiShare: Double
    public var bySource: [String: Int]
    public var p50Millis: Double
    public var p99Millis: Double
    public var maxMillis: Double
    public var budgetMillis: Double
    /// Coach calls cut at the deadline (timed out, or answered later than it): template copy.
    public var atDeadline: Int
    /// Whether `p99Millis` is the deadline itself (more than 1 % of the calls were cut there).
    public var p99AtDeadline: Bool

    init(millis: LatencyHistogram, bySource: [String: Int], budgetMillis: Int, atDeadline: Int = 0) {
        self.atDeadline = atDeadline
        p99AtDeadline = millis.count > 0 && Double(atDeadline) > 0.01 * Double(millis.count)
        coachCalls = millis.count
        let ai = bySource["ai"] ?? 0
        let fallback = bySource["templateFallback"] ?? 0
        aiShare = ai + fallback == 0 ? 0 : Double(ai) / Double(ai + fallback)
        self.bySource = bySource
        p50Millis = millis.value(at: 0.5)
        p99Millis = millis.value(at: 0.99)
        maxMillis = millis.max
        self.budgetMillis = Double(budgetMillis)
    }
}
