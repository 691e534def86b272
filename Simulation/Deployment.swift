import Delivery
import Engagement
import EngagementKit
import Models
import Runtime
import Scheduling
import Storage

/// Where the engine runs in a simulated run (the scenario's `deployment`, `--deployment`).
///
/// `server` is the default, because it is what ships: a phone whose copy of the plan is only
/// as fresh as its last pull, and every promise judged by what that phone shows. `device` stays
/// as the strictest judge of the engine's own rules: every decision reaches the phone's
/// notification center in the step that makes it, so `planMatchesPlatform` holds the two equal
/// after every step.
public enum Deployment: String, Hashable, Sendable, CaseIterable {
    /// The engine plans straight into the phone's notification center and runs in the app's
    /// background tasks.
    case device
    /// As deployed with `engaged`: the engine runs on the server, its background jobs run as the
    /// server's due rows when due, and the phone holds a copy of the server's local plan
    /// (`LocalPlan`), which EngagementKit's `PlanSync` pulls: after the phone's own events (the
    /// answer names the plan's version), when the plan signal's background push names a version
    /// it does not hold, and on a background refresh (`PlanRefresh`) that iOS runs late or
    /// never. An offline phone pulls nothing; the user's own events and the zone it moved to
    /// wait in the kit's queue and reach the server when the network is back. A local notification
    /// that fires though the server's plan no longer holds it is a stale fire
    /// (`DeploymentStats`).
    case server

    /// The scenario key's and the flag's message for an unknown name.
    public static func problem(_ name: String) -> String {
        "unknown deployment \"\(name)\"; expected one of "
            + allCases.map(\.rawValue).joined(separator: ", ")
    }
}

/// The phone's side of the server topology for one user: its `PlanSync` and what the server's
/// plan held, to judge each local fire against it.
struct PhonePlan {
    /// A request of the server's plan as the server last committed it.
    struct Held: Equatable {
        var content: NotificationContent
        /// The instant a one-off fires; a daily series' first row (it is due again at each match).
        var fireAt: Instant
        var repeats: Bool
    }

    var sync = PlanSync()
    /// The server's local plan by identifier, as its commits left it (a request's inbox row),
    /// and the one-offs it dispatched in the last two days: the phone fires those at their
    /// instants, the server files them in the inbox then.
    var held: [RequestID: Held] = [:]
    /// When the server's plan first dropped a request or changed its content or time since the
    /// phone's last pull (a pull hears of every change before it): a stale fire's age counts
    /// from there, and its cause is read from what the phone could hear since.
    var changedAt: [RequestID: Int64] = [:]
    /// The user's profile as the server held it at the phone's last pull: a setting changed
    /// since, which the phone's copies do not know of (`Shard.unavoidableCause`).
    var pulledProfile: UserProfile?
    /// The horizon's end of the plan the phone last pulled: when its next refresh is asked for.
    var horizonEnd: Instant?
    /// What the plan the phone last applied holds: what the app moves onto its clock while the
    /// clock is off (`Shard.appBelieves`).
    var pulled: [BelievedRequest] = []
    /// When the pull after an event sent offline is due (`Shard.pullWhenOnline`), if one is.
    var pullQueuedAt: Int64?
    /// The user's events made while the device was offline, oldest first: the kit's queue sends
    /// them when the network is back (`Shard.sendQueuedEvents`).
    var queuedEvents: [EngineInput] = []
    /// The user deleted the app: nothing is pending on the phone, and it pulls no more.
    var uninstalled = false
    /// Pulls answered with a plan (200), counted per user: which are measured
    /// (`DeploymentStats.measuresPlanBytes`) is then the same on any number of threads.
    var plansAnswered = 0

    /// Takes the server's commit of a step: the withdrawn requests and the rows made pending.
    mutating func commit(cancelled: [RequestID], rows: [OutboxRow], at now: Instant) {
        for id in cancelled where held.removeValue(forKey: id) != nil {
            changedAt[id] = changedAt[id] ?? now.secondsSinceEpoch
        }
        for row in rows where row.channel == .inbox {
            guard case .inboxItem(let request, shownBy: .local) = row.payload else { continue }
            let next = Held(content: request.content, fireAt: row.dueAt, repeats: row.payload.repeatingMatch != nil)
            let previous = held.updateValue(next, forKey: request.identifier)
            // A series' row due again at its next match is the same request.
            if let previous, previous != next, !(previous.repeats && next.repeats && previous.content == next.content) {
                changedAt[request.identifier] = changedAt[request.identifier] ?? now.secondsSinceEpoch
            }
        }
    }

    /// The phone holds the server's plan as it stands, `profile` its user's: every change so far
    /// is heard of.
    mutating func heardEverything(profile: UserProfile) {
        changedAt = [:]
        pulledProfile = profile
    }

    /// Whether a request the phone fired at true time `instant` is one the server's plan holds
    /// as it fired: the same content, and for a one-off the same instant.
    func holds(_ request: NotificationRequest, firedAt instant: Instant) -> Bool {
        guard let server = held[request.identifier], server.content == request.content else { return false }
        return server.repeats || server.fireAt == instant
    }

    /// Forgets one-offs more than two days past (nothing planned fires later than a day after
    /// its time), and changes more than four days old (the horizon is at most 60 hours: a stale
    /// copy fires within three days of its change).
    mutating func forget(before now: Instant) {
        let cutoff = now.secondsSinceEpoch - 2 * .secondsPerDay
        held = held.filter { $0.value.repeats || $0.value.fireAt.secondsSinceEpoch > cutoff }
        changedAt = changedAt.filter { $0.value > cutoff - 2 * .secondsPerDay }
    }
}

/// A request the app believes planned, with its next firing: on the device topology the
/// engine's plan, on the server topology the plan the phone last pulled.
struct BelievedRequest {
    var id: RequestID
    var fireAt: Instant
    var repeatsDaily: Bool
}

/// The server topology's figures: pulls, signals and stale fires.
struct DeploymentStats {
    /// Pulls the phone made, by what prompted them.
    var pullsAfterEvent = 0
    var pullsOnSignal = 0
    var pullsOnRefresh = 0
    /// Pulls answered 304 (the phone held the version already).
    var notModified = 0
    /// Pulls an offline phone could not make.
    var pullsOffline = 0
    /// Steps not from the phone that moved the plan and asked for the signal.
    var signals = 0
    /// Syncs sent before their slot, because a step withdrew what the phone would fire before
    /// the slot's sync reached it (`SilentPushPlan.earlyRows`).
    var earlySyncs = 0
    /// Requests the phone withdrew at once on its user's own event (`PlanSync.withdraw`).
    var withdrawnOnPhone = 0
    /// The user's events the kit queued offline and sent when the network came back.
    var eventsQueuedOffline = 0
    /// Local notifications fired that the server's plan no longer held, and their age since the
    /// server's plan changed them (seconds).
    var staleFires = 0
    var staleAgeSeconds = LatencyHistogram()
    var staleFiresByCause = Tally<StaleFireCause>()
    /// The age of the stale fires whose phone could hear of the change
    /// (`StaleFireCause.phoneCouldHear`).
    var heardStaleAgeSeconds = LatencyHistogram()
    /// Broken promises no design could have kept (`Shard.unavoidableCause`), by cause, and the
    /// first few with their invariant.
    var unavoidable = Tally<UnavoidableCause>()
    var unavoidableExamples: [String] = []
    /// The body of a pull answered with a plan, in bytes as the server sends it
    /// (`PlanWire.encodedAnswer`), for the answers `measuresPlanBytes` picks. (The histogram keeps
    /// three significant digits.)
    var planAnswerBytes = LatencyHistogram()
    /// Pulls answered with a plan (200), and those answered with only what changed since the
    /// version the phone held (`ServedPlans`).
    var plansAnswered = 0
    var deltaAnswers = 0

    /// One plan answer in this many is measured: encoding with Foundation's `JSONEncoder` is the
    /// cost (docs/PERFORMANCE.md, "What a pull carries").
    static let planBytesSampleRate: UInt64 = 128

    /// Whether the `answered`-th plan answer (from 0) of the scenario's user `userIndex` is
    /// measured: a draw of the user's stream for that answer (`SeededGenerator.derived`) picks one
    /// in `planBytesSampleRate`, spread over users and over each user's answers (the first one
    /// after install as often as any later one), the same on any number of threads.
    static func measuresPlanBytes(answered: Int, userIndex: Int) -> Bool {
        var draw = SeededGenerator(seed: UInt64(truncatingIfNeeded: userIndex))
            .derived(UInt64(truncatingIfNeeded: answered))
        return draw.next() % planBytesSampleRate == 0
    }

    var pulls: Int { pullsAfterEvent + pullsOnSignal + pullsOnRefresh }

    mutating func merge(_ other: DeploymentStats) {
        pullsAfterEvent += other.pullsAfterEvent
        pullsOnSignal += other.pullsOnSignal
        pullsOnRefresh += other.pullsOnRefresh
        notModified += other.notModified
        pullsOffline += other.pullsOffline
        signals += other.signals
        earlySyncs += other.earlySyncs
        withdrawnOnPhone += other.withdrawnOnPhone
        eventsQueuedOffline += other.eventsQueuedOffline
        staleFires += other.staleFires
        staleAgeSeconds.merge(other.staleAgeSeconds)
        staleFiresByCause.merge(other.staleFiresByCause)
        heardStaleAgeSeconds.merge(other.heardStaleAgeSeconds)
        planAnswerBytes.merge(other.planAnswerBytes)
        plansAnswered += other.plansAnswered
        deltaAnswers += other.deltaAnswers
        unavoidable.merge(other.unavoidable)
        unavoidableExamples += other.unavoidableExamples.prefix(
            max(0, ShardStats.violationExampleLimit - unavoidableExamples.count))
    }
}

/// The report's figures of the server topology (`Report.deployment`).
public struct DeploymentFigures: Codable, Sendable, Equatable {
    public var deployment: String
    /// Plan pulls per user-day (each prompted: by the phone's own event, by the signal, by a
    /// background refresh), and the share answered 304.
    public var pullsPerUserDay: Double
    public var pullsByReason: [String: Int]
    public var notModifiedShare: Double
    /// The bytes of a pull's answer when it carries the plan (a 304 carries none), p50 and p99,
    /// as `engaged` encodes it (`PlanWire.encodedAnswer`; a test holds the two equal), measured on
    /// the answers `DeploymentStats.measuresPlanBytes` picks; and how many were measured.
    public var planAnswerBytesP50: Double
    public var planAnswerBytesP99: Double
    public var planAnswersMeasured: Int
    /// The share of the pulls answered with a plan that carried only what changed since the
    /// version the phone held (a delta, `?since=`), not the whole plan.
    public var deltaShareOfPlanAnswers: Double
    /// Pulls an offline phone could not make.
    public var pullsWhileOffline: Int
    /// Signals (background sync rows asked for because the plan changed) per user-day.
    public var signalsPerUserDay: Double
    /// Syncs sent outside the slots' grid, early, because a step withdrew what the phone would
    /// fire before the slot's sync reached it, per user-day.
    public var earlySyncsPerUserDay: Double
    /// Requests the phone withdrew on its user's own event, before the server heard of it, per
    /// user-day.
    public var withdrawnOnPhonePerUserDay: Double
    /// The user's events made offline, which the kit queued and the server applied only when the
    /// network came back, per user-day.
    public var eventsQueuedOfflinePerUserDay: Double
    /// Local notifications that fired though the server's plan no longer held them.
    public var staleFires: Int
    public var staleShareOfLocalDeliveries: Double
    public var staleAgeSecondsP50: Double
    public var staleAgeSecondsP99: Double
    /// Stale fires by what kept the change from the phone (`StaleFireCause`), every cause listed.
    public var staleFiresByCause: [String: Int]
    /// The age of the stale fires whose phone could hear of the change
    /// (`StaleFireCause.phoneCouldHear`).
    public var heardStaleAgeSecondsP50: Double
    public var heardStaleAgeSecondsP99: Double
    /// Broken promises no design could have kept, counted apart from the violations by cause
    /// (`UnavoidableCause`), their share of local deliveries, and the first few.
    public var unavoidableByCause: [String: Int]
    public var unavoidableShareOfLocalDeliveries: Double
    public var unavoidableExamples: [String]

    init(_ stats: DeploymentStats, localDeliveries: Int, userDays: Int) {
        deployment = Deployment.server.rawValue
        let days = Double(max(1, userDays))
        pullsPerUserDay = Double(stats.pulls) / days
        pullsByReason = [
            "event": stats.pullsAfterEvent, "signal": stats.pullsOnSignal, "refresh": stats.pullsOnRefresh,
        ]
        notModifiedShare = stats.pulls == 0 ? 0 : Double(stats.notModified) / Double(stats.pulls)
        planAnswerBytesP50 = stats.planAnswerBytes.value(at: 0.5)
        planAnswerBytesP99 = stats.planAnswerBytes.value(at: 0.99)
        planAnswersMeasured = Int(stats.planAnswerBytes.count)
        deltaShareOfPlanAnswers =
            stats.plansAnswered == 0 ? 0 : Double(stats.deltaAnswers) / Double(stats.plansAnswered)
        pullsWhileOffline = stats.pullsOffline
        signalsPerUserDay = Double(stats.signals) / days
        earlySyncsPerUserDay = Double(stats.earlySyncs) / days
        withdrawnOnPhonePerUserDay = Double(stats.withdrawnOnPhone) / days
        eventsQueuedOfflinePerUserDay = Double(stats.eventsQueuedOffline) / days
        staleFires = stats.staleFires
        staleShareOfLocalDeliveries = localDeliveries == 0 ? 0 : Double(stats.staleFires) / Double(localDeliveries)
        staleAgeSecondsP50 = stats.staleAgeSeconds.value(at: 0.5)
        staleAgeSecondsP99 = stats.staleAgeSeconds.value(at: 0.99)
        staleFiresByCause = stats.staleFiresByCause.all
        heardStaleAgeSecondsP50 = stats.heardStaleAgeSeconds.value(at: 0.5)
        heardStaleAgeSecondsP99 = stats.heardStaleAgeSeconds.value(at: 0.99)
        unavoidableByCause = stats.unavoidable.all
        unavoidableShareOfLocalDeliveries =
            localDeliveries == 0 ? 0 : Double(stats.unavoidable.total) / Double(localDeliveries)
        unavoidableExamples = stats.unavoidableExamples
    }
}

extension ServerPlan {
    /// The plan as the phone reads it from `GET /v1/users/{id}/plan`, whole or a delta: the
    /// same requests and times, passed as values (the simulated network carries no bytes).
    init(_ plan: LocalPlan) {
        self.init(
            version: plan.version, timeZone: plan.zone.identifier, horizonEnd: plan.horizonEnd,
            requests: plan.entries.map {
                Entry(request: $0.request, nextFireAt: $0.nextFireAt, withdrawnBy: $0.withdrawnBy)
            }, since: plan.delta?.since, removed: plan.delta?.removed ?? [], digest: plan.digest)
    }
}
