import Engagement
import Models

/// What the attention budget and fatigue did, for users planned with the budget and for its
/// holdout, counted as the run goes; `merge` is associative and commutative (shards, any order).
struct AttentionStats {
    /// One group's counts.
    struct Group {
        var users = 0
        var usersByPersona = [Int](repeating: 0, count: Persona.allCases.count)
        /// Users who opted out of anything (a kind, or the permission), overall and per persona.
        var optedOutUsers = 0
        var optedOutByPersona = [Int](repeating: 0, count: Persona.allCases.count)
        var revokedUsers = 0
        /// Users who disabled each kind.
        var optOutsByKind = Tally<NotificationKind>()
        var deliveries = 0
        var opened = 0
        var acted = 0
        /// Local days with N deliveries (N > 0), keyed by N.
        var deliveriesPerUserDay: [Int: Int] = [:]
        /// The last simulated week's engagement, per persona (by `Persona.position`).
        var lastWeekByPersona = [EngagementMetrics](repeating: EngagementMetrics(), count: Persona.allCases.count)

        mutating func merge(_ other: Group) {
            users += other.users
            optedOutUsers += other.optedOutUsers
            revokedUsers += other.revokedUsers
            for index in usersByPersona.indices {
                usersByPersona[index] += other.usersByPersona[index]
                optedOutByPersona[index] += other.optedOutByPersona[index]
                lastWeekByPersona[index].merge(other.lastWeekByPersona[index])
            }
            optOutsByKind.merge(other.optOutsByKind)
            deliveries += other.deliveries
            opened += other.opened
            acted += other.acted
            deliveriesPerUserDay.merge(other.deliveriesPerUserDay, uniquingKeysWith: +)
        }
    }

    var budgeted = Group()
    var heldOut = Group()

    subscript(heldOut isHeldOut: Bool) -> Group {
        get { isHeldOut ? heldOut : budgeted }
        set { if isHeldOut { heldOut = newValue } else { budgeted = newValue } }
    }

    /// Counts one finished local day with `deliveries` deliveries for the user's group.
    mutating func countDay(_ deliveries: Int, heldOut isHeldOut: Bool) {
        self[heldOut: isHeldOut].deliveriesPerUserDay[deliveries, default: 0] += 1
    }

    mutating func merge(_ other: AttentionStats) {
        budgeted.merge(other.budgeted)
        heldOut.merge(other.heldOut)
    }
}

/// One simulated user's opt-outs so far (fatigue's consequences).
struct OptOutRecord {
    var kinds: [OptOut] = []
    var revoked = false

    var any: Bool { revoked || !kinds.isEmpty }
}
