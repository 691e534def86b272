import Models

/// Deliveries per kind and local hour of the recipient (0 to 23), for report.html's heat map.
struct HourlyTally: Equatable {
    private(set) var counts = Array(repeating: Array(repeating: 0, count: 24), count: NotificationKind.allCases.count)

    /// Counts one delivery of `kind` at `secondOfDay` seconds after the recipient's local midnight.
    mutating func add(_ kind: NotificationKind, secondOfDay: Int) {
        counts[kind.ordinal][min(23, max(0, secondOfDay / 3_600))] += 1
    }

    mutating func merge(_ other: HourlyTally) {
        for kind in counts.indices {
            for hour in counts[kind].indices { counts[kind][hour] += other.counts[kind][hour] }
        }
    }

    /// The report's table: per kind delivered at least once, 24 counts indexed by local hour.
    var byKind: [String: [Int]] {
        var table: [String: [Int]] = [:]
        for kind in NotificationKind.allCases where counts[kind.ordinal].contains(where: { $0 > 0 }) {
            table[kind.rawValue] = counts[kind.ordinal]
        }
        return table
    }
}
