import Engagement
import Models
import Scheduling

/// The attention budget's section of report.json: for users planned with the budget and for
/// its holdout, opt-outs (per persona and per kind), the share keeping their settings, open and
/// action rates against the product's goals, the spread of deliveries per user-day, and the last
/// week's engagement per persona; then the budget's lift (budget minus holdout) with a 95 %
/// interval.
///
/// Definitions:
/// - An opt-out is a user disabling a kind or revoking notification permission during the run
///   (the fatigue model's draws); `optOutRate` is users with any opt-out over users.
/// - Keeping defaults: users who changed no notification setting during the run (what they
///   chose at install is their default here).
/// - `openRate`: deliveries the user opened (tapped or used an action) over deliveries;
///   `actionRate`: deliveries answered with an action other than the plain tap, over deliveries.
/// - Deliveries per user-day count every local day of every user of the group, days without a
///   delivery included (as `deliveriesPerUserDay`).
/// - Engagement: `EngagementMetrics.engagementRate` (active within a day) in the last week.
public struct AttentionReport: Codable, Hashable, Sendable {
    /// The product's success metrics, which the attention budget is judged against.
    public struct Goals: Codable, Hashable, Sendable {
        public var openRate = 0.6
        public var actionRate = 0.4
        public var optOutRateBelow = 0.05
        public var keepingDefaultsAbove = 0.8
    }

    /// Percentiles of deliveries per user-day.
    public struct Spread: Codable, Hashable, Sendable {
        public var p50: Int
        public var p90: Int
        public var p99: Int
        public var max: Int

        /// From days with N > 0 deliveries keyed by N, and the number of days with none.
        init(days: [Int: Int], emptyDays: Int) {
            let sorted = days.filter { $0.value > 0 }.sorted { $0.key < $1.key }
            let total = emptyDays + sorted.reduce(0) { $0 + $1.value }
            func percentile(_ fraction: Double) -> Int {
                guard total > 0 else { return 0 }
                let rank = Int((fraction * Double(total)).rounded(.up))
                var seen = emptyDays
                if rank <= seen { return 0 }
                for (count, days) in sorted {
                    seen += days
                    if seen >= rank { return count }
                }
                return sorted.last?.key ?? 0
            }
            p50 = percentile(0.5)
            p90 = percentile(0.9)
            p99 = percentile(0.99)
            max = sorted.last?.key ?? 0
        }
    }

    /// One group's figures; rates are nil (null) for an empty group.
    public struct Group: Codable, Hashable, Sendable {
        public var users: Int
        public var optedOutUsers: Int
        public var revokedUsers: Int
        public var optOutRate: Double?
        public var keepingDefaultsShare: Double?
        public var optOutRateByPersona: [String: Double]
        /// Users who disabled the kind, over the group's users; kinds nobody disabled are absent.
        public var optOutRateByKind: [String: Double]
        public var deliveries: Int
        public var openRate: Double?
        public var actionRate: Double?
        public var deliveriesPerUserDay: Spread
        public var lastWeekEngagementByPersona: [String: Double]
        public var lastWeekEngagement: Double?
        /// Active users and users in the last week (for the interval).
        public var lastWeekActiveUsers: Int
        public var lastWeekUsers: Int
    }

    /// Budget minus holdout, with a 95 % Wald interval (absolute, a fraction).
    public struct Difference: Codable, Hashable, Sendable {
        public var estimate: Double
        public var low95: Double
        public var high95: Double

        /// The difference of two proportions; nil when a group is empty.
        init?(_ a: (hits: Int, of: Int), minus b: (hits: Int, of: Int)) {
            guard a.of > 0, b.of > 0 else { return nil }
            let p = Double(a.hits) / Double(a.of)
            let q = Double(b.hits) / Double(b.of)
            let margin = 1.959_963_985 * (p * (1 - p) / Double(a.of) + q * (1 - q) / Double(b.of)).squareRoot()
            estimate = p - q
            low95 = estimate - margin
            high95 = estimate + margin
        }
    }

    /// The app's budget per day; nil without one.
    public var budgetPerDay: Int?
    public var holdoutShare: Double
    public var fatigueModelled: Bool
    public var goals = Goals()
    public var budgeted: Group
    public var heldOut: Group
    /// Opt-out rate with the budget minus without it.
    public var optOutDifference: Difference?
    /// Last week's engagement rate with the budget minus without it.
    public var lastWeekEngagementDifference: Difference?

    init(_ stats: AttentionStats, scenario: Scenario) {
        let days = scenario.weeks * 7
        func group(_ counts: AttentionStats.Group) -> Group {
            func rate(_ hits: Int, _ total: Int) -> Double? { total > 0 ? Double(hits) / Double(total) : nil }
            var byPersona: [String: Double] = [:]
            var engagement: [String: Double] = [:]
            var lastWeek = EngagementMetrics()
            for persona in Persona.allCases where counts.usersByPersona[persona.position] > 0 {
                let index = persona.position
                byPersona[persona.reportKey] = rate(counts.optedOutByPersona[index], counts.usersByPersona[index])
                let metrics = counts.lastWeekByPersona[index]
                if let value = metrics.engagementRate { engagement[persona.reportKey] = value }
                lastWeek.merge(metrics)
            }
            var byKind: [String: Double] = [:]
            for kind in NotificationKind.allCases where counts.optOutsByKind[kind] > 0 {
                byKind[kind.rawValue] = rate(counts.optOutsByKind[kind], counts.users)
            }
            let countedDays = counts.deliveriesPerUserDay.values.reduce(0, +)
            return Group(
                users: counts.users, optedOutUsers: counts.optedOutUsers, revokedUsers: counts.revokedUsers,
                optOutRate: rate(counts.optedOutUsers, counts.users),
                keepingDefaultsShare: rate(counts.users - counts.optedOutUsers, counts.users),
                optOutRateByPersona: byPersona, optOutRateByKind: byKind, deliveries: counts.deliveries,
                openRate: rate(counts.opened, counts.deliveries), actionRate: rate(counts.acted, counts.deliveries),
                deliveriesPerUserDay: Spread(
                    days: counts.deliveriesPerUserDay, emptyDays: max(0, counts.users * days - countedDays)),
                lastWeekEngagementByPersona: engagement, lastWeekEngagement: lastWeek.engagementRate,
                lastWeekActiveUsers: lastWeek.activeUsers, lastWeekUsers: lastWeek.totalUsers)
        }
        budgetPerDay = scenario.attention.budget?.interruptionsPerDay
        holdoutShare = scenario.attention.holdoutShare
        fatigueModelled = scenario.fatigue.isEnabled
        budgeted = group(stats.budgeted)
        heldOut = group(stats.heldOut)
        optOutDifference = Difference(
            (budgeted.optedOutUsers, budgeted.users), minus: (heldOut.optedOutUsers, heldOut.users))
        lastWeekEngagementDifference = Difference(
            (budgeted.lastWeekActiveUsers, budgeted.lastWeekUsers),
            minus: (heldOut.lastWeekActiveUsers, heldOut.lastWeekUsers))
    }
}
