import Engagement
import Foundation
import Models

/// A case of a small enum counted in a fixed table: `position` is its index in `allCases`, so a
/// count is an array access instead of a string-keyed dictionary lookup, and the report's key
/// is the enum's raw value, spelled once.
protocol Tallied: CaseIterable, Hashable {
    var position: Int { get }
    var reportKey: String { get }
}

extension NotificationKind: Tallied {
    var position: Int { ordinal }
    var reportKey: String { rawValue }
}

extension TraceDecision: Tallied {
    var position: Int {
        switch self {
        case .scheduled: 0
        case .deferred: 1
        case .dropped: 2
        case .suppressed: 3
        case .cancelled: 4
        case .folded: 5
        case .copyChosen: 6
        }
    }
    var reportKey: String { rawValue }
}

extension NotificationActionID: Tallied {
    var position: Int { Self.allCases.firstIndex(of: self)! }
    var reportKey: String { rawValue }
}

extension Invariant: Tallied {
    var position: Int { Self.allCases.firstIndex(of: self)! }
    var reportKey: String { rawValue }
}

extension Persona: Tallied {
    var position: Int { Self.allCases.firstIndex(of: self)! }
    var reportKey: String { rawValue }
}

/// A count per case of `Key`.
struct Tally<Key: Tallied>: Equatable {
    private(set) var counts = [Int](repeating: 0, count: Key.allCases.count)

    subscript(key: Key) -> Int {
        get { counts[key.position] }
        set { counts[key.position] = newValue }
    }

    var total: Int { counts.reduce(0, +) }

    mutating func merge(_ other: Tally) {
        for index in counts.indices { counts[index] += other.counts[index] }
    }

    /// The cases counted at least once, by report key: a case never seen has no entry.
    var seen: [String: Int] {
        var table: [String: Int] = [:]
        for key in Key.allCases where self[key] > 0 { table[key.reportKey] = self[key] }
        return table
    }

    /// Every case, by report key, zeros included.
    var all: [String: Int] {
        Dictionary(uniqueKeysWithValues: Key.allCases.map { ($0.reportKey, self[$0]) })
    }
}

/// A count per kind and simulated week.
struct WeeklyTally: Equatable {
    let weeks: Int
    private(set) var counts: [[Int]]

    init(weeks: Int) {
        self.weeks = weeks
        counts = Array(repeating: Array(repeating: 0, count: weeks), count: NotificationKind.allCases.count)
    }

    mutating func add(_ kind: NotificationKind, week: Int) { counts[kind.ordinal][week] += 1 }

    func weeks(of kind: NotificationKind) -> [Int] { counts[kind.ordinal] }

    /// The kinds counted at least once.
    var seenKinds: [NotificationKind] { NotificationKind.allCases.filter { counts[$0.ordinal].contains { $0 > 0 } } }

    mutating func merge(_ other: WeeklyTally) {
        precondition(weeks == other.weeks, "merging tallies of runs of different lengths")
        for kind in counts.indices {
            for week in counts[kind].indices { counts[kind][week] += other.counts[kind][week] }
        }
    }
}

/// Where each notification's copy came from: the coach's (`ai`), or templates after the coach's
/// answer was turned down, counted by the stable code of the reason the engine traced
/// (`TraceDetail.templateKept(code:)`: `coachTimeout`, `heldByPhone`, ...).
struct ContentTally: Equatable {
    var ai = 0
    var templateFallback = 0
    var fallbackReasons: [String: Int] = [:]

    mutating func merge(_ other: ContentTally) {
        ai += other.ai
        templateFallback += other.templateFallback
        fallbackReasons.merge(other.fallbackReasons, uniquingKeysWith: +)
    }

    /// The report's table: `ai`, `templateFallback` and each fallback reason's stable code
    /// (`coachTimeout`, `malformedOutput.missingSeparator`, ...).
    var bySource: [String: Int] {
        var table = fallbackReasons
        if ai > 0 { table["ai"] = ai }
        if templateFallback > 0 { table["templateFallback"] = templateFallback }
        return table
    }
}

/// Counters and distributions of one shard, merged into the report. Every table is typed by what
/// it counts; `merge` is associative and commutative.
struct ShardStats {
    var events = 0
    var engineCalls = 0
    var deliveries = 0
    var deliveriesByKind = Tally<NotificationKind>()
    var decisions = Tally<TraceDecision>()
    var responses = Tally<NotificationActionID>()
    /// Local days with N deliveries, keyed by N (days without any are not counted here).
    var deliveriesPerUserDay: [Int: Int] = [:]
    var deliveriesByLocalHour = HourlyTally()
    var violations = Tally<Invariant>()
    var violationExamples: [String] = []
    /// Thread CPU time of sampled scheduling decisions (`DecisionSampler`) and of every
    /// background run, in nanoseconds.
    var decisionNanos = LatencyHistogram()
    var backgroundNanos = LatencyHistogram()
    /// Thread CPU time of every Live Activity event the engine handled, in nanoseconds.
    var liveActivityNanos = LatencyHistogram()
    /// Each user's engine snapshot size at the end of the run, in bytes.
    var snapshotBytes: [UInt32] = []
    /// With `RunOptions.checksIncrementalPlan`: the steps checked against a full planning pass,
    /// those where it would have scheduled or cancelled something, and the first few of them.
    var incrementalPlan = IncrementalPlanCheck()
    var backgroundRuns = 0
    var backgroundOverBudget = 0
    var droppedByLimit = 0
    var suppressedByAuthorization = 0
    var scheduleRejected = 0
    var backgroundSubmitRejected = 0
    /// Lines of the event log (events.jsonl), counted whether or not the file is written.
    var eventLogLines = 0
    /// Coach answers cut at the content deadline (timed out, or slower than it).
    var contentAtDeadline = 0
    /// Lapses that ended in a return within 14 days, for nudged users and for the holdout.
    var lift = ReturnLift()
    /// Engagement figures per persona (by `Persona.position`), per simulated week; nil for a
    /// persona with no users in this shard.
    var metricsByPersonaWeek: [[EngagementMetrics]?] = Array(repeating: nil, count: Persona.allCases.count)
    /// Virtual time until each copy was settled (coach latency, capped at the deadline), in ms.
    var contentMillis = LatencyHistogram()
    var content = ContentTally()
    var payloadBytesMax = 0
    /// Per kind and simulated week: deliveries, and those the user acted on (opened or an action).
    var deliveredByKindWeek: WeeklyTally
    var actedByKindWeek: WeeklyTally
    /// The attention budget's users and its holdout: opt-outs, opens, deliveries per day.
    var attention = AttentionStats()
    /// Per channel: sent, accepted, failed, retired, shown, opened (`ChannelStats`).
    var channels = ChannelStats()
    /// Users who deleted the app after churning.
    var uninstalls = 0
    /// Apps killed and their engines restored from snapshots.
    var relaunches = 0
    /// Relaunches whose snapshot came from the previous app version.
    var upgrades = 0
    /// Engine steps whose commit failed, rolled back and retried (`storeWriteFailure`).
    var commitsRetried = 0
    /// Store batches refused and written again (`storeWriteFailure` with `--store`).
    var storeBatchesRetried = 0
    /// The devices' clocks jumping, and what a jump forward fired at once (`DeviceClock`).
    var clockJumps = 0
    var releasedByClockJump = 0
    /// Rows the server performed late (`ClaimTimePolicy.isOnTime`): a stall's backlog
    /// (`FaultRates.serverStallsPerWeek`), claimed late.
    var rowsDispatchedLate = 0
    /// The drain phase after the last week.
    var drain = DrainFigures()
    /// Plan pulls, signals and stale fires (`Deployment.server`).
    var deployment = DeploymentStats()

    static let violationExampleLimit = 20

    init(weeks: Int) {
        deliveredByKindWeek = WeeklyTally(weeks: weeks)
        actedByKindWeek = WeeklyTally(weeks: weeks)
    }

    mutating func addWeek(_ summary: UserEngagementSummary, persona: Persona, week: Int, of weeks: Int) {
        var table = metricsByPersonaWeek[persona.position] ?? Array(repeating: EngagementMetrics(), count: weeks)
        table[week].add(summary)
        metricsByPersonaWeek[persona.position] = table
    }

    /// The report's table: only personas with users.
    var engagementByPersonaWeek: [String: [EngagementMetrics]] {
        var table: [String: [EngagementMetrics]] = [:]
        for persona in Persona.allCases {
            if let weeks = metricsByPersonaWeek[persona.position] { table[persona.reportKey] = weeks }
        }
        return table
    }

    mutating func merge(_ other: ShardStats) {
        snapshotBytes += other.snapshotBytes
        incrementalPlan.merge(other.incrementalPlan)
        events += other.events
        engineCalls += other.engineCalls
        deliveries += other.deliveries
        deliveriesByKind.merge(other.deliveriesByKind)
        decisions.merge(other.decisions)
        responses.merge(other.responses)
        deliveriesPerUserDay.merge(other.deliveriesPerUserDay, uniquingKeysWith: +)
        deliveriesByLocalHour.merge(other.deliveriesByLocalHour)
        violations.merge(other.violations)
        violationExamples += other.violationExamples.prefix(
            max(0, Self.violationExampleLimit - violationExamples.count))
        decisionNanos.merge(other.decisionNanos)
        backgroundNanos.merge(other.backgroundNanos)
        liveActivityNanos.merge(other.liveActivityNanos)
        backgroundRuns += other.backgroundRuns
        backgroundOverBudget += other.backgroundOverBudget
        droppedByLimit += other.droppedByLimit
        suppressedByAuthorization += other.suppressedByAuthorization
        scheduleRejected += other.scheduleRejected
        backgroundSubmitRejected += other.backgroundSubmitRejected
        eventLogLines += other.eventLogLines
        contentAtDeadline += other.contentAtDeadline
        lift.merge(other.lift)
        for (index, weeks) in other.metricsByPersonaWeek.enumerated() {
            guard let weeks else { continue }
            var merged = metricsByPersonaWeek[index] ?? Array(repeating: EngagementMetrics(), count: weeks.count)
            for week in weeks.indices { merged[week].merge(weeks[week]) }
            metricsByPersonaWeek[index] = merged
        }
        contentMillis.merge(other.contentMillis)
        content.merge(other.content)
        payloadBytesMax = max(payloadBytesMax, other.payloadBytesMax)
        deliveredByKindWeek.merge(other.deliveredByKindWeek)
        actedByKindWeek.merge(other.actedByKindWeek)
        attention.merge(other.attention)
        channels.merge(other.channels)
        uninstalls += other.uninstalls
        relaunches += other.relaunches
        rowsDispatchedLate += other.rowsDispatchedLate
        upgrades += other.upgrades
        commitsRetried += other.commitsRetried
        storeBatchesRetried += other.storeBatchesRetried
        clockJumps += other.clockJumps
        releasedByClockJump += other.releasedByClockJump
        drain.merge(other.drain)
        deployment.merge(other.deployment)
    }
}
