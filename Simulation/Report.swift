public import Engagement

/// report.json.
public struct Report: Codable, Sendable {
    public var scenario: String
    public var seed: UInt64
    public var start: String
    public var users: Int
    public var weeks: Int
    public var threads: Int
    public var wallSeconds: Double
    /// World-loop events handled (the simulator's event queue: firings, app activity, background
    /// launches, responses, ...), not lines of events.jsonl: those are `eventLogLines`.
    public var events: Int
    /// `events` per second of wall time.
    public var eventsPerSecond: Double
    /// Lines of the event log (events.jsonl), counted whether or not the file was written.
    public var eventLogLines: Int
    public var engineCalls: Int
    public var digest: String
    public var peakMemoryMB: Double
    public var budgets: [String: BudgetFigures]
    public var invariantViolations: [String: Int]
    public var violationExamples: [String]
    public var deliveries: Int
    public var deliveriesByKind: [String: Int]
    /// The engine's rule decisions by decision (its trace entries: scheduled, deferred, dropped by
    /// a rule, ...); what the simulated platform dropped is in `platform`.
    public var decisions: [String: Int]
    public var responses: [String: Int]
    /// Local days with N deliveries, keyed by N, over all user-days of the run.
    public var deliveriesPerUserDay: [String: Int]
    /// Per kind delivered at least once: 24 counts, the deliveries in each local hour of the
    /// recipient (index 0 is 00:00 to 00:59).
    public var deliveriesByLocalHour: [String: [Int]]
    /// The command line that reproduces the run.
    public var command: String
    public var platform: [String: Int]
    /// Copy: how many AI answers were used, how many fell back to templates and why, and the
    /// virtual time until the copy was settled against the 2 s budget.
    public var content: ContentFigures
    /// The largest push payload delivered, in bytes (APNs allows 4096).
    public var payloadBytesMax: Int
    /// Each user's engine snapshot (`UserEngine.snapshot()`) at the end of the run, in bytes.
    public var snapshotBytesPerUser: SizeFigures
    /// Return within 14 days of a lapse: nudged users versus the holdout (no nudges). A return
    /// is the first activity (or answer to a nudge) after the lapse began, counted once;
    /// `treatedReturnsPromptedByNudge` is the part of the nudged returns that answered a nudge.
    public var lift: ReturnLift
    /// Engagement per persona and simulated week, computed from the activity and delivery logs:
    /// active / lapsed / churn-risk counts, engagement rate, sessions per week, session length,
    /// streaks, delivery / open / action rates per kind.
    public var engagementByPersonaWeek: [String: [EngagementMetrics]]
    /// Per kind, per simulated week: the share of deliveries the user acted on (opened or used
    /// an action), which shows how timing feedback and habits change the response over the run.
    public var responseRateByKindWeek: [String: [Double]]
    /// The attention budget and fatigue: opt-outs, opens, deliveries per user-day, with the
    /// budget and in its holdout (`AttentionReport`).
    public var attention: AttentionReport?
    /// Per channel (local, remote, silent, inbox): sent, accepted by APNs, retries, failed by
    /// reason, tokens retired, shown, opened and acted on; what APNs accepted but never brought
    /// to the device (`droppedByAPNs`: replaced or expired while offline, throttled, lost to an
    /// uninstall); and users who deleted the app.
    public var channels: [String: ChannelFigures] = [:]
    public var droppedByAPNs: [String: Int] = [:]
    public var uninstalls = 0
    /// The drain phase after the last week (`Shard.drain`): its virtual length, events, the
    /// notifications watched, delivered and stuck (liveness failures, exit status 3).
    public var drain = DrainFigures()
    /// The server topology's plan pulls, signals and stale fires; nil on the device topology.
    public var deployment: DeploymentFigures?
    /// The incremental plan held to a full pass after every step; nil unless the run asked
    /// (`RunOptions.checksIncrementalPlan`, `simulate --check-plans`).
    public var incrementalPlan: IncrementalPlanCheck?

    /// No invariant was violated, and a checked incremental plan always matched a full pass.
    public var invariantsHeld: Bool {
        invariantViolations.values.allSatisfy { $0 == 0 } && (incrementalPlan?.differingSteps ?? 0) == 0
    }
    public var budgetsHeld: Bool { budgets.values.allSatisfy { !$0.breached } }

    /// Nothing was left stuck at the end of the drain.
    public var livenessHeld: Bool { drain.stuck == 0 }

    /// 0 all held; 2 an invariant violated; 3 something stuck after the drain (liveness); 1 a
    /// budget breached. The first that applies, in that order.
    public var exitStatus: Int32 { !invariantsHeld ? 2 : !livenessHeld ? 3 : !budgetsHeld ? 1 : 0 }
}
