import Content
import Delivery
import Dispatch
import Engagement
import Foundation
import Models
import Scheduling
import Storage

/// CPU time of the calling thread, in nanoseconds: the cost of an engine call, unaffected by the
/// thread being preempted while the other core's shard (or anything else) runs.
@inline(__always) func threadCPUNanoseconds() -> UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
    return UInt64(time.tv_sec) &* 1_000_000_000 &+ UInt64(time.tv_nsec)
}

enum SimulationError: Error, CustomStringConvertible {
    case output(String)
    var description: String {
        switch self {
        case .output(let message): message
        }
    }
}

/// What happens next to one user.
enum EventKind {
    case dayStart
    case activity(ActivityKind)
    case fire
    case launch
    // Boxed: keeps `Event` small, so the heap moves pointers instead of strings.
    indirect case response(requestID: String, kind: NotificationKind, action: NotificationActionID)
    case travel
    case permission(granted: Bool)
    indirect case social(SocialEvent)
    /// The coach's answer reaching the app (at most the content deadline after the request).
    indirect case content(requestID: String, outcome: CoachOutcome)
    /// The end of a simulated week: the user's engagement figures for it.
    case weekEnd(week: Int)
}

struct Event {
    var time: Int64
    var seq: UInt64
    var user: Int32
    var kind: EventKind

    @inline(__always) func precedes(_ other: Event) -> Bool {
        time != other.time ? time < other.time : seq < other.seq
    }
}

/// A binary min-heap ordered by (virtual time, sequence number): equal times run in the
/// order they were scheduled, as NIO's EmbeddedEventLoop does.
struct EventQueue {
    private var items: [Event] = []
    private var nextSeq: UInt64 = 0

    var isEmpty: Bool { items.isEmpty }
    var count: Int { items.count }

    /// The time of the last event popped: nothing may be scheduled before it.
    private(set) var now: Int64 = .min

    mutating func push(time: Int64, user: Int32, kind: EventKind) {
        precondition(time >= now, "event scheduled in the past: \(time) < \(now)")
        items.append(Event(time: time, seq: nextSeq, user: user, kind: kind))
        nextSeq += 1
        var child = items.count - 1
        while child > 0 {
            let parent = (child - 1) >> 1
            guard items[child].precedes(items[parent]) else { break }
            items.swapAt(child, parent)
            child = parent
        }
    }

    mutating func pop() -> Event? {
        guard !items.isEmpty else { return nil }
        let top = items[0]
        now = top.time
        let last = items.removeLast()
        if !items.isEmpty {
            items[0] = last
            var parent = 0
            while true {
                let left = 2 * parent + 1
                guard left < items.count else { break }
                let right = left + 1
                let child = right < items.count && items[right].precedes(items[left]) ? right : left
                guard items[child].precedes(items[parent]) else { break }
                items.swapAt(child, parent)
                parent = child
            }
        }
        return top
    }
}

/// Everything the world keeps about one user.
struct UserState {
    var traits: SimulatedUserTraits
    var engine: UserEngine
    var center: SimulatedNotificationCenter
    var background: SimulatedBackgroundTaskScheduler
    var generator: SeededGenerator
    var zone: ZoneRules
    var checker = InvariantChecker()
    /// While in a lapse, the user does nothing until this time.
    var lapsedUntil: Int64 = 0
    var churned = false
    var digest = EventDigest.initial
    var fireEventAt: Int64?
    var launchEventAt: Int64?
    var deliveryDay: LocalDate?
    var deliveriesToday = 0
    /// The pending day-start event; an older one (before a time-zone change) is stale.
    var dayStartAt: Int64 = 0
    /// The last local date whose behaviour was drawn, so travel never draws a day twice.
    var lastPlannedDate: LocalDate?
    /// Requests the platform had dropped by the 64 limit at the last check.
    var droppedSeen = 0
    /// Numbers this user's social events.
    var socialSequence = 0
    /// Draws of the simulated coach for this user.
    var coachRandom: SeededGenerator
    /// When the current lapse began (nil when not lapsed), for the return-rate lift.
    var lapseStartedAt: Int64?
    /// This week's activity (plus the last one before it) and deliveries, for the weekly metrics.
    var weekActivity: [ActivityEvent] = []
    var weekDeliveries: [DeliveryRecord] = []
    var weekDeliveryIDs: [String] = []
    /// The platform refused or silenced notifications at some point (permission denied or revoked):
    /// what the engine planned may never have been shown, so "never lost" cannot be judged.
    var notificationsBlocked = false

    func isAway(at now: Int64) -> Bool { churned || now < lapsedUntil }
}

/// Counters and samples of one shard, merged into the report.
struct ShardStats {
    var events = 0
    var engineCalls = 0
    var deliveries = 0
    var deliveriesByKind: [NotificationKind: Int] = [:]
    var decisionsByType: [String: Int] = [:]
    var responsesByAction: [String: Int] = [:]
    var deliveriesPerUserDay: [Int: Int] = [:]
    var violations: [Invariant: Int] = [:]
    var violationExamples: [String] = []
    var decisionNanos: [UInt32] = []
    var backgroundNanos: [UInt32] = []
    var backgroundRuns = 0
    var backgroundOverBudget = 0
    var droppedByLimit = 0
    var suppressedByAuthorization = 0
    var scheduleRejected = 0
    var backgroundSubmitRejected = 0
    var reEngagementReturns = 0
    /// Lapses that ended in a return within 14 days, for nudged users and for the holdout.
    var lift = ReturnLift()
    /// Engagement figures per persona, per simulated week.
    var metricsByPersonaWeek: [String: [EngagementMetrics]] = [:]
    /// Virtual time until each copy was settled (coach latency, capped at the deadline), in ms.
    var contentMillis: [UInt32] = []
    var contentBySource: [String: Int] = [:]
    var payloadBytesMax = 0
    /// Per kind and simulated week: deliveries, and those the user acted on (opened or an action).
    var deliveredByKindWeek: [String: [Int]] = [:]
    var actedByKindWeek: [String: [Int]] = [:]

    mutating func merge(_ other: ShardStats) {
        events += other.events
        engineCalls += other.engineCalls
        deliveries += other.deliveries
        deliveriesByKind.merge(other.deliveriesByKind, uniquingKeysWith: +)
        decisionsByType.merge(other.decisionsByType, uniquingKeysWith: +)
        responsesByAction.merge(other.responsesByAction, uniquingKeysWith: +)
        deliveriesPerUserDay.merge(other.deliveriesPerUserDay, uniquingKeysWith: +)
        violations.merge(other.violations, uniquingKeysWith: +)
        violationExamples += other.violationExamples.prefix(max(0, 20 - violationExamples.count))
        decisionNanos += other.decisionNanos
        backgroundNanos += other.backgroundNanos
        backgroundRuns += other.backgroundRuns
        backgroundOverBudget += other.backgroundOverBudget
        droppedByLimit += other.droppedByLimit
        suppressedByAuthorization += other.suppressedByAuthorization
        scheduleRejected += other.scheduleRejected
        backgroundSubmitRejected += other.backgroundSubmitRejected
        reEngagementReturns += other.reEngagementReturns
        lift.merge(other.lift)
        for (persona, weeks) in other.metricsByPersonaWeek {
            var merged = metricsByPersonaWeek[persona] ?? Array(repeating: EngagementMetrics(), count: weeks.count)
            for index in weeks.indices { merged[index].merge(weeks[index]) }
            metricsByPersonaWeek[persona] = merged
        }
        contentMillis += other.contentMillis
        contentBySource.merge(other.contentBySource, uniquingKeysWith: +)
        payloadBytesMax = max(payloadBytesMax, other.payloadBytesMax)
        for (kind, weeks) in other.deliveredByKindWeek {
            deliveredByKindWeek[kind] = zip(deliveredByKindWeek[kind] ?? Array(repeating: 0, count: weeks.count), weeks)
                .map(+)
        }
        for (kind, weeks) in other.actedByKindWeek {
            actedByKindWeek[kind] = zip(actedByKindWeek[kind] ?? Array(repeating: 0, count: weeks.count), weeks).map(+)
        }
    }
}

/// One thread's share of the population, run as a discrete-event loop in virtual time.
final class Shard {
    let scenario: Scenario
    let zones: [String: ZoneRules]
    let userRange: Range<Int>
    let sink: EventSink
    let showProgress: Bool
    /// Where the run's history is written through (nil: nowhere); write-only, so it cannot
    /// change what happens, and the digest is the same with any store.
    let store: (any EngagementStore)?
    /// Writes waiting for the next transaction: whole engine steps, flushed every few hundred.
    private var pendingWrites = StoreBatch()
    private var pendingSteps = 0
    private var users: [UserState] = []
    /// Template data and the simulated coach, shared by the shard's users (immutable).
    private let content: ContentGenerator
    private let coach: SimulatedCoach
    private var queue = EventQueue()
    var stats = ShardStats()
    /// Per-user digests in user order, filled at the end.
    private(set) var digests: [UInt64] = []

    init(
        scenario: Scenario, zones: [String: ZoneRules], userRange: Range<Int>, eventsPath: String?, showProgress: Bool,
        store: (any EngagementStore)? = nil
    ) throws {
        self.store = store
        self.scenario = scenario
        let catalog = try TemplateCatalog.bundled()
        self.content = ContentGenerator(catalog: catalog)
        self.coach = SimulatedCoach(behaviour: scenario.coach, library: catalog.defaultLibrary)
        self.zones = zones
        self.userRange = userRange
        self.sink = try EventSink(path: eventsPath)
        self.showProgress = showProgress
    }

    func run() throws {
        let start = scenario.startInstant
        let permitted = Set(BackgroundJob.allCases.map(\.rawValue))
        let model = BackgroundLaunchModel(
            meanDelaySeconds: scenario.faults.backgroundMeanDelayMinutes * 60,
            neverRunProbability: scenario.faults.backgroundNeverRun,
            earlyExpirationProbability: scenario.faults.backgroundEarlyExpiration)
        users.reserveCapacity(userRange.count)
        var configuration = EngineConfiguration()
        configuration.holdoutShare = scenario.holdoutShare
        stats.decisionNanos.reserveCapacity(userRange.count * scenario.weeks * 7 * 8)
        for index in userRange {
            let traits = Population.traits(index: index, scenario: scenario)
            let zone = zones[traits.profile.timeZone]!
            var generator = SeededGenerator(seed: scenario.seed).derived(0xBE4A_0000 &+ UInt64(index))
            let roll = generator.nextUnit()
            let status: AuthorizationStatus = roll < 0.02 ? .denied : roll < 0.08 ? .provisional : .authorized
            var center = SimulatedNotificationCenter(timeZone: zone, authorizationStatus: status)
            center.setNotificationCategories(NotificationCategory.all)
            let background = SimulatedBackgroundTaskScheduler(
                permittedIdentifiers: permitted, model: model, generator: generator.derived(1))
            // Each user installs the app at a random moment of the first day.
            let installAt = start + Int64(generator.int(in: 0...86_399))
            users.append(
                UserState(
                    traits: traits,
                    engine: UserEngine(
                        profile: traits.profile, zone: zone, now: installAt, configuration: configuration,
                        contentSeed: generator.derived(2).state, content: content),
                    center: center, background: background, generator: generator, zone: zone,
                    coachRandom: generator.derived(3)))
            let local = Int32(users.count - 1)
            queue.push(time: installAt.secondsSinceEpoch, user: local, kind: .activity(.appOpened(sessionSeconds: 300)))
        }
        if store != nil { pendingWrites.profiles = users.map(\.traits.profile) }
        for local in users.indices {
            let state = users[local]
            let firstInstall = state.engine.lastActiveAt
            step(local, .appLaunched, at: firstInstall)
            scheduleNextDay(local, after: firstInstall)
            if state.traits.isTraveller { scheduleTravel(local, after: firstInstall) }
            for week in 0..<scenario.weeks {
                let end = start.secondsSinceEpoch + Int64(week + 1) * 7 * .secondsPerDay - 1
                queue.push(time: end, user: Int32(local), kind: .weekEnd(week: week))
            }
        }
        let end = scenario.endInstant.secondsSinceEpoch
        var progressDay = -1
        while let event = queue.pop() {
            guard event.time < end else { break }
            stats.events += 1
            if showProgress {
                let day = Int((event.time - start.secondsSinceEpoch) / .secondsPerDay)
                if day != progressDay {
                    progressDay = day
                    FileHandle.standardError.write(
                        Data("\rsimulating day \(day + 1)/\(scenario.weeks * 7) ".utf8))
                }
            }
            handle(event)
        }
        if showProgress { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
        for local in users.indices {
            if let start = users[local].lapseStartedAt,
                scenario.endInstant.secondsSinceEpoch - start >= 14 * .secondsPerDay
            {
                stats.lift.record(heldOut: users[local].engine.isHeldOut, returned: false)
            }
            for violation in users[local].notificationsBlocked
                ? [] : users[local].checker.finish(at: scenario.endInstant)
            {
                recordViolation(violation, local, at: scenario.endInstant, detail: "a folded item was never delivered")
            }
            flushDeliveryDay(local)
            stats.droppedByLimit += users[local].center.droppedByLimitCount
            stats.suppressedByAuthorization += users[local].center.suppressedByAuthorizationCount
        }
        flushStore()
        digests = users.map(\.digest)
        try sink.close()
    }

    // MARK: - Events

    private func handle(_ event: Event) {
        let local = Int(event.user)
        let now = Instant(secondsSinceEpoch: event.time)
        switch event.kind {
        case .dayStart:
            guard users[local].dayStartAt == event.time else { return }  // superseded by travel
            planDay(local, at: now)
            scheduleNextDay(local, after: now)
        case .activity(let activity):
            guard !users[local].isAway(at: event.time) else { return }
            log(local, now, "activity") { $0.id("activity", activity.name) }
            users[local].checker.observe(activity, at: now, zone: users[local].zone)
            users[local].weekActivity.append(
                ActivityEvent(userID: users[local].traits.profile.id, at: now, kind: activity))
            if let start = users[local].lapseStartedAt {
                users[local].lapseStartedAt = nil
                stats.lift.record(
                    heldOut: users[local].engine.isHeldOut, returned: event.time - start <= 14 * .secondsPerDay)
            }
            step(local, .activity(activity), at: now)
        case .fire:
            guard users[local].fireEventAt == event.time else { return }  // superseded
            users[local].fireEventAt = nil
            let delivered = users[local].center.fireDue(through: now)
            for notification in delivered { observeDelivery(local, notification, at: now) }
            rescheduleFire(local)
        case .launch:
            guard users[local].launchEventAt == event.time else { return }
            users[local].launchEventAt = nil
            let launches = users[local].background.launchDue(through: now)
            for launch in launches {
                guard let job = BackgroundJob(rawValue: launch.request.identifier) else { continue }
                let nanos = step(local, .backgroundTaskLaunched(job), at: now, background: true)
                stats.backgroundRuns += 1
                if Double(nanos) / 1e9 > launch.timeAllowedSeconds { stats.backgroundOverBudget += 1 }
                log(local, now, "backgroundRun") { $0.id("job", job.rawValue) }
            }
            rescheduleLaunch(local)
        case .response(let requestID, let kind, let action):
            stats.responsesByAction[action.rawValue, default: 0] += 1
            if action != .dismiss && !action.isSnooze {
                count(&stats.actedByKindWeek, kind, at: now)
                if let index = users[local].weekDeliveryIDs.lastIndex(of: requestID) {
                    users[local].weekDeliveries[index].opened = true
                    users[local].weekDeliveries[index].acted = action != .defaultTap
                }
            }
            log(local, now, "response") {
                $0.id("kind", kind.rawValue)
                $0.id("id", requestID)
                $0.id("action", action.rawValue)
            }
            if store != nil { recordLedger(local, requestID, kind, .responded, at: now) }
            step(local, .notificationResponse(requestID: requestID, kind: kind, action: action), at: now)
        case .travel:
            travel(local, at: now)
            scheduleTravel(local, after: now)
        case .weekEnd(let week):
            closeWeek(local, week: week, at: now)
        case .content(let requestID, let outcome):
            step(local, .contentGenerated(requestID: requestID, outcome: outcome), at: now)
        case .social(let social):
            log(local, now, "social") {
                $0.id("kind", social.kind.rawValue)
                $0.id("id", social.id)
            }
            step(local, .socialEvent(social), at: now)
        case .permission(let granted):
            users[local].center.setAuthorizationStatus(granted ? .authorized : .denied)
            if !granted { users[local].notificationsBlocked = true }
            log(local, now, "permission") { $0.id("status", granted ? "authorized" : "denied") }
            if !granted {
                queue.push(time: event.time + 3 * .secondsPerDay, user: event.user, kind: .permission(granted: true))
            }
        }
    }

    /// Runs the engine on one input, times it, and executes its effects.
    @discardableResult
    private func step(_ local: Int, _ input: EngineInput, at now: Instant, background: Bool = false) -> UInt64 {
        let started = threadCPUNanoseconds()
        let effects = users[local].engine.handle(input, at: now)
        let nanos = threadCPUNanoseconds() &- started
        let sample = UInt32(clamping: nanos)
        if background { stats.backgroundNanos.append(sample) } else { stats.decisionNanos.append(sample) }
        stats.engineCalls += 1
        for effect in effects { execute(effect, local, at: now) }
        let dropped = users[local].center.droppedByLimitCount
        for violation in users[local].checker.observePending(
            count: users[local].center.pendingNotificationRequests.count,
            droppedSinceLastCheck: dropped - users[local].droppedSeen)
        {
            recordViolation(violation, local, at: now, detail: "pending")
        }
        users[local].droppedSeen = dropped
        rescheduleFire(local)
        rescheduleLaunch(local)
        if store != nil { persist(input, effects: effects, local, at: now) }
        return nanos
    }

    // MARK: - Persistence

    /// Adds one engine step's writes (the input if it is an activity, the ledger transitions of
    /// its decisions, the user's lapse state after background runs) to the pending batch.
    private func persist(_ input: EngineInput, effects: [Effect], _ local: Int, at now: Instant) {
        let userID = users[local].traits.profile.id
        if case .activity(let activity) = input {
            pendingWrites.activityEvents.append(ActivityEvent(userID: userID, at: now, kind: activity))
        }
        if case .backgroundTaskLaunched = input {
            let engine = users[local].engine
            pendingWrites.engagementStates.append(
                EngagementState(
                    userID: userID, lapseStage: engine.lapseStage(at: now).rawValue,
                    reEngagementAttempts: engine.reEngagementAttemptsSent,
                    checkpoint: "\(now.secondsSinceEpoch)"))
        }
        for effect in effects {
            guard case .trace(let entry) = effect else { continue }
            let state: LedgerState
            switch entry.decision {
            case .scheduled, .deferred: state = .pending
            case .cancelled, .dropped, .suppressed: state = .cancelled
            case .folded: state = .planned
            }
            recordLedger(local, entry.requestID, entry.kind, state, at: now, reason: entry.reason)
        }
        pendingSteps += 1
        if pendingSteps >= 256 { flushStore() }
    }

    private func recordLedger(
        _ local: Int, _ requestID: String, _ kind: NotificationKind, _ state: LedgerState, at: Instant,
        reason: ReasonCode? = nil
    ) {
        // One row per request and state at a time: a daily series or a re-planned request
        // writes each transition once, and a replay of the same batch is a no-op.
        pendingWrites.ledgerEntries.append(
            LedgerEntry(
                userID: users[local].traits.profile.id, requestID: requestID, kind: kind, state: state, at: at,
                reason: reason,
                idempotencyKey: LedgerEntry.transitionKey(requestID: requestID, state: state)
                    + "@\(at.secondsSinceEpoch)"))
    }

    private func flushStore() {
        guard let store, !pendingWrites.isEmpty else { return }
        do {
            try store.apply(pendingWrites)
        } catch {
            FileHandle.standardError.write(Data("error: the store refused a batch: \(error)\n".utf8))
            exit(74)
        }
        pendingWrites = StoreBatch()
        pendingSteps = 0
    }

    private func execute(_ effect: Effect, _ local: Int, at now: Instant) {
        switch effect {
        case .schedule(let request, _):
            do {
                try users[local].center.add(request, at: now)
            } catch {
                stats.scheduleRejected += 1
                users[local].notificationsBlocked = true
            }
        case .cancel(let ids):
            users[local].center.removePendingNotificationRequests(withIdentifiers: ids)
        case .setBadge(let count):
            users[local].center.setBadgeCount(count)
        case .submitBackgroundTask(let request):
            do {
                try users[local].background.submit(request, at: now)
            } catch {
                stats.backgroundSubmitRejected += 1
            }
        case .openDeepLink:
            break
        case .generateContent(let requestID, let request):
            let outcome = coach.outcome(for: request, using: &users[local].coachRandom)
            let deadline = scenario.coach.deadlineMillis
            let millis: Int =
                switch outcome {
                case .text(_, let latency), .failed(_, let latency): min(latency, deadline)
                case .timedOut: deadline
                }
            stats.contentMillis.append(UInt32(millis))
            // A late answer is cut at the deadline: the app stops waiting then.
            let settled: CoachOutcome =
                if case .text(_, let latency) = outcome, latency > deadline { .timedOut } else { outcome }
            let seconds = Int64((millis + 999) / 1_000)
            queue.push(
                time: now.secondsSinceEpoch + max(1, seconds), user: Int32(local),
                kind: .content(requestID: requestID, outcome: settled))
        case .clearDeliveredNotifications:
            users[local].center.removeAllDeliveredNotifications()
        case .trace(let entry):
            stats.decisionsByType[entry.decision.rawValue, default: 0] += 1
            if entry.reason == .coachCopy {
                stats.contentBySource["ai", default: 0] += 1
            } else if entry.reason == .templateFallback {
                stats.contentBySource["templateFallback", default: 0] += 1
                stats.contentBySource[
                    String(entry.detail.split(separator: ":").last ?? "").trimmingCharacters(in: .whitespaces),
                    default: 0] += 1
            }
            for violation in users[local].checker.observe(entry) {
                recordViolation(violation, local, at: now, detail: entry.requestID)
            }
            let zone = users[local].zone
            log(local, now, entry.decision.eventName) {
                $0.id("kind", entry.kind.rawValue)
                $0.id("id", entry.requestID)
                if let level = entry.level { $0.id("level", level.rawValue) }
                $0.id("reason", entry.reason.rawValue)
                if let fireAt = entry.fireAt { $0.local(zone, fireAt, name: "fireAt") }
                if let group = entry.groupID { $0.id("group", group) }
                if let key = entry.groupKey { $0.field("groupKey", key) }
                if !entry.detail.isEmpty { $0.field("detail", entry.detail) }
            }
        }
    }

    // MARK: - Deliveries and behaviour

    private func observeDelivery(_ local: Int, _ notification: DeliveredNotification, at now: Instant) {
        let content = notification.request.content
        let id = notification.request.identifier
        stats.deliveries += 1
        stats.deliveriesByKind[content.kind, default: 0] += 1
        log(local, notification.deliveredAt, "delivered") {
            $0.id("kind", content.kind.rawValue)
            $0.id("id", id)
            $0.id("level", content.interruptionLevel.rawValue)
            if notification.presentation == .quiet { $0.id("presentation", "quiet") }
        }
        let observed = ObservedDelivery(
            id: id, kind: content.kind, level: content.interruptionLevel, at: notification.deliveredAt,
            repeats: notification.request.trigger.repeats)
        let broken = users[local].checker.observe(
            observed, profile: users[local].engine.profile, zone: users[local].zone)
        for violation in broken { recordViolation(violation, local, at: notification.deliveredAt, detail: id) }
        // Every delivered payload: within APNs' 4 KB and free of personal data the level forbids.
        let payload = PayloadBuilder.encode(content)
        stats.payloadBytesMax = max(stats.payloadBytesMax, payload.byteCount)
        if payload.byteCount > PayloadBuilder.maxBytes {
            recordViolation(
                .payloadWithin4KB, local, at: notification.deliveredAt, detail: "\(id) \(payload.byteCount) bytes")
        }
        let leaks = PrivacyAudit.violations(in: content, for: users[local].engine.recipient)
        if let leak = leaks.first {
            recordViolation(.noPersonalDataInPayload, local, at: notification.deliveredAt, detail: "\(id) \(leak)")
        }
        countDeliveryDay(local, at: notification.deliveredAt)
        count(&stats.deliveredByKindWeek, content.kind, at: notification.deliveredAt)
        users[local].weekDeliveries.append(
            DeliveryRecord(
                kind: content.kind, sentAt: notification.deliveredAt,
                deliveredAt: notification.presentation == .banner || notification.presentation == .quiet
                    ? notification.deliveredAt : nil, opened: false, acted: false))
        users[local].weekDeliveryIDs.append(id)
        if store != nil { recordLedger(local, id, content.kind, .delivered, at: notification.deliveredAt) }
        decideResponse(local, to: notification, at: now)
    }

    /// The persona's reaction: act, snooze, dismiss or ignore, by local hour and relevance.
    private func decideResponse(_ local: Int, to notification: DeliveredNotification, at now: Instant) {
        let content = notification.request.content
        let habits = users[local].traits.persona.habits
        let minute = users[local].zone.localDateTime(at: now).secondOfDay / 60
        var generator = users[local].generator
        defer { users[local].generator = generator }
        if users[local].isAway(at: now.secondsSinceEpoch) {
            guard content.kind == .reEngagement, !users[local].churned || generator.chance(0.05) else { return }
            let stronger = content.body.contains("days")
            guard generator.chance(stronger ? 0.3 : 0.2) else { return }
            users[local].lapsedUntil = now.secondsSinceEpoch
            users[local].churned = false
            stats.reEngagementReturns += 1
        } else if !habits.isAwake(minuteOfDay: minute) {
            return
        }
        let category = NotificationCategory.all.first { $0.id == content.category }
        let roll = generator.nextUnit()
        let actProbability = min(0.95, habits.actRate * (0.5 + content.relevanceScore))
        let action: NotificationActionID
        if content.kind == .reEngagement || roll < actProbability {
            action = category?.actions.first(where: { $0.options.contains(.foreground) })?.id ?? .defaultTap
        } else if roll < actProbability + 0.08, let snooze = category?.actions.first(where: { $0.id.isSnooze }) {
            action = snooze.id
        } else if roll < actProbability + 0.2, category?.reportsDismissal == true {
            action = .dismiss
        } else {
            return  // ignored
        }
        let delay = Int64(generator.exponential(mean: 420)) + 5
        queue.push(
            time: now.secondsSinceEpoch + delay, user: Int32(local),
            kind: .response(requestID: notification.request.identifier, kind: content.kind, action: action))
    }

    /// Draws the user's day: app opens, meals, a workout; or starts a lapse.
    private func planDay(_ local: Int, at now: Instant) {
        var generator = users[local].generator
        defer { users[local].generator = generator }
        let state = users[local]
        guard !state.isAway(at: now.secondsSinceEpoch) else { return }
        let habits = state.traits.persona.habits
        var lapseChance = habits.lapsePerDay
        if state.traits.persona == .churner && now - scenario.startInstant > 14 * .secondsPerDay { lapseChance *= 3 }
        if generator.chance(lapseChance) {
            let days = max(4.0, generator.exponential(mean: 8))
            users[local].lapsedUntil = now.secondsSinceEpoch + Int64(days * 86_400)
            users[local].lapseStartedAt = now.secondsSinceEpoch
            users[local].churned = !generator.chance(habits.returnRate)
            log(local, now, "lapseBegins") { $0.field("days", users[local].churned ? "forever" : "\(Int(days))") }
            return
        }
        let zone = state.zone
        let date = zone.localDate(at: now + 60)
        if let last = state.lastPlannedDate, date <= last { return }
        users[local].lastPlannedDate = date
        /// The instant of a local minute of the day; never in the past (the day may start late after travel).
        func at(_ minute: Int) -> Int64 {
            let wrapped = ((minute % 1_440) + 1_440) % 1_440
            let instant = zone.instant(for: LocalDateTime(date: date, secondOfDay: wrapped * 60)).secondsSinceEpoch
            return max(instant, now.secondsSinceEpoch)
        }
        let awakeMinutes = habits.wake < habits.sleep ? habits.sleep - habits.wake : habits.sleep + 1_440 - habits.wake
        let opens =
            Int(habits.opensPerDay) + (generator.chance(habits.opensPerDay.truncatingRemainder(dividingBy: 1)) ? 1 : 0)
        for _ in 0..<opens {
            let minute = habits.wake + generator.int(in: 0...max(0, awakeMinutes - 1))
            let session = Int(generator.exponential(mean: 240)) + 10
            queue.push(time: at(minute), user: Int32(local), kind: .activity(.appOpened(sessionSeconds: session)))
        }
        for meal in MealType.allCases where generator.chance(habits.mealLogging) {
            let minute = meal.defaultTime.minutesSinceMidnight + generator.int(in: -45...75)
            queue.push(time: at(minute), user: Int32(local), kind: .activity(.mealLogged(meal)))
        }
        if habits.workoutDays.contains(date.weekday), generator.chance(habits.adherence) {
            let minute = habits.workoutMinute + generator.int(in: -20...30) + 45
            queue.push(time: at(minute), user: Int32(local), kind: .activity(.workoutCompleted(durationMinutes: 45)))
        }
        // Other users' reactions, at any hour (they live in other zones).
        for (kind, perDay) in [
            (NotificationKind.workoutKudos, habits.socialPerDay), (.workoutComment, habits.socialPerDay / 4),
            (.newFollower, 0.1), (.mention, 0.05),
        ] {
            var count = Int(perDay)
            if generator.chance(perDay - Double(count)) { count += 1 }
            for _ in 0..<count {
                users[local].socialSequence += 1
                let topics = ["morning run", "evening lift", "yoga flow"]
                let event = SocialEvent(
                    id: "\(users[local].traits.profile.id)-s\(users[local].socialSequence)", kind: kind,
                    actorName: Population.firstNames[generator.int(in: 0...Population.firstNames.count - 1)]
                        + " Friend",
                    topic: topics[generator.int(in: 0...topics.count - 1)], isMutualFriend: generator.chance(0.5))
                queue.push(time: at(generator.int(in: 0...1_439)), user: Int32(local), kind: .social(event))
            }
        }
        if generator.chance(scenario.faults.permissionRevokedPerUserWeek / 7) {
            queue.push(time: at(generator.int(in: 0...1_439)), user: Int32(local), kind: .permission(granted: false))
        }
    }

    private func travel(_ local: Int, at now: Instant) {
        var generator = users[local].generator
        defer { users[local].generator = generator }
        let current = users[local].zone.identifier
        var next = scenario.timeZones.pick(&generator)
        for _ in 0..<4 where next == current { next = scenario.timeZones.pick(&generator) }
        guard next != current, let zone = zones[next] else { return }
        users[local].zone = zone
        users[local].center.setTimeZone(zone, at: now)
        log(local, now, "travel") { $0.id("timeZone", next) }
        step(local, .timeZoneChanged(zone), at: now)
        scheduleNextDay(local, after: now)
    }

    // MARK: - Scheduling world events

    private func scheduleNextDay(_ local: Int, after now: Instant) {
        let zone = users[local].zone
        let tomorrow = zone.localDate(at: now).adding(days: 1)
        let midnight = zone.instant(for: LocalDateTime(date: tomorrow, secondOfDay: 0))
        users[local].dayStartAt = midnight.secondsSinceEpoch
        queue.push(time: midnight.secondsSinceEpoch, user: Int32(local), kind: .dayStart)
    }

    private func scheduleTravel(_ local: Int, after now: Instant) {
        let rate = max(scenario.faults.travelPerTravellerDay, 1e-6)
        let days = users[local].generator.exponential(mean: 1 / rate)
        queue.push(time: now.secondsSinceEpoch + Int64(days * 86_400) + 1, user: Int32(local), kind: .travel)
    }

    private func rescheduleFire(_ local: Int) {
        guard let next = users[local].center.nextFireInstant?.secondsSinceEpoch else { return }
        if users[local].fireEventAt == next { return }
        users[local].fireEventAt = next
        queue.push(time: next, user: Int32(local), kind: .fire)
    }

    private func rescheduleLaunch(_ local: Int) {
        guard let next = users[local].background.nextLaunchInstant?.secondsSinceEpoch else { return }
        if users[local].launchEventAt == next { return }
        users[local].launchEventAt = next
        queue.push(time: next, user: Int32(local), kind: .launch)
    }

    // MARK: - Bookkeeping

    private func recordViolation(_ violation: Invariant, _ local: Int, at instant: Instant, detail: String) {
        stats.violations[violation, default: 0] += 1
        if stats.violationExamples.count < 20 {
            stats.violationExamples.append(
                "\(violation.rawValue): user \(users[local].traits.profile.id) at \(instant) (\(users[local].zone.formatted(instant))) \(detail)"
            )
        }
        log(local, instant, "violation") { $0.id("invariant", violation.rawValue) }
    }

    private func countDeliveryDay(_ local: Int, at instant: Instant) {
        let date = users[local].zone.localDate(at: instant)
        if users[local].deliveryDay != date {
            flushDeliveryDay(local)
            users[local].deliveryDay = date
        }
        users[local].deliveriesToday += 1
    }

    /// The user's engagement figures for one simulated week, from what they did and received.
    private func closeWeek(_ local: Int, week: Int, at now: Instant) {
        let state = users[local]
        let summary = UserEngagementSummary(
            activity: state.weekActivity, deliveries: state.weekDeliveries, optOuts: [],
            since: scenario.startInstant + Int64(week) * 7 * .secondsPerDay, now: now + 1, zone: state.zone,
            thresholds: LapseThresholds(configuration: state.engine.configuration))
        let persona = state.traits.persona.rawValue
        var weeks = stats.metricsByPersonaWeek[persona] ?? Array(repeating: EngagementMetrics(), count: scenario.weeks)
        weeks[week].add(summary)
        stats.metricsByPersonaWeek[persona] = weeks
        // Keep the last activity: "days since last active" reaches back across weeks.
        users[local].weekActivity = state.weekActivity.suffix(1)
        users[local].weekDeliveries.removeAll(keepingCapacity: true)
        users[local].weekDeliveryIDs.removeAll(keepingCapacity: true)
    }

    private func count(_ table: inout [String: [Int]], _ kind: NotificationKind, at instant: Instant) {
        let weeks = scenario.weeks
        let week = min(weeks - 1, max(0, Int((instant - scenario.startInstant) / (7 * .secondsPerDay))))
        table[kind.rawValue, default: Array(repeating: 0, count: weeks)][week] += 1
    }

    private func flushDeliveryDay(_ local: Int) {
        if users[local].deliveriesToday > 0 {
            stats.deliveriesPerUserDay[users[local].deliveriesToday, default: 0] += 1
        }
        users[local].deliveriesToday = 0
    }

    /// Writes one event line and chains it into the user's digest.
    private func log(_ local: Int, _ at: Instant, _ event: StaticString, _ fields: (EventSink) -> Void = { _ in }) {
        sink.begin(at: at, user: users[local].traits.profile.id, event: event)
        fields(sink)
        sink.local(users[local].zone, at)
        do {
            users[local].digest = try sink.end(chaining: users[local].digest)
        } catch {
            FileHandle.standardError.write(Data("error: writing events failed: \(error)\n".utf8))
            exit(74)
        }
    }
}

extension TraceDecision {
    var eventName: StaticString {
        switch self {
        case .scheduled: "scheduled"
        case .deferred: "deferred"
        case .dropped: "dropped"
        case .suppressed: "suppressed"
        case .cancelled: "cancelled"
        case .folded: "folded"
        }
    }
}

extension NotificationActionID {
    var isSnooze: Bool { self == .snooze30 || self == .snoozeReminder || self == .snooze }
}
