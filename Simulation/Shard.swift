import Content
import Delivery
import Engagement
import Models
import Runtime
import Scheduling
import SimulatedPlatform
import Storage

/// The world of one thread's share of the population: a discrete-event loop in virtual time.
/// It owns the users, the event queue and the clock, hands each event to the room that deals
/// with it (the behaviour model, the engine and its effect executor, the store writer, the
/// invariant checker, the journal) and counts what happened in typed statistics.
final class Shard {
    let scenario: Scenario
    let zones: [String: ZoneRules]
    let userRange: Range<Int>
    let showProgress: Bool
    let journal: Journal
    /// Where the run's history is written through; nil: nowhere.
    var storeWriter: StoreWriter?
    var users: [UserState] = []

    /// Reads (or changes) user `local` where it lies. A method or computed property read through
    /// `users[local]` goes through Array's getter, which copies the whole `UserState` (dozens of
    /// references retained and released) or the part read, on every event. An inout
    /// access borrows it in place. `read` must not touch `users` itself.
    @inline(__always) func inPlace<T>(_ local: Int, _ read: (inout UserState) throws -> T) rethrows -> T {
        try read(&users[local])
    }
    /// Template data, shared by the shard's users (immutable).
    let content: ContentGenerator
    let executor: EffectExecutor
    var queue = EventQueue()
    /// Apple's push service as the scenario's faults shape it (one for the run: its outage
    /// windows are a function of the seed and the hour).
    var apns: SimulatedAPNs
    /// When the server's dispatch stalls (`FaultRates.serverStallsPerWeek`).
    var serverStalls: FaultWindows
    /// In the drain phase (`drain(from:first:)`), and how many notifications it still watches.
    var draining = false
    var watching = 0
    var sampler = DecisionSampler()
    var stats: ShardStats
    /// Records what the server side was asked and sent, when a test asks for it.
    let tape: ServerTape?
    /// Whether every step is held to a full planning pass (`RunOptions.checksIncrementalPlan`).
    let checksIncrementalPlan: Bool
    /// Per-user digests in user order, filled at the end.
    private(set) var digests: [UInt64] = []

    init(
        scenario: Scenario, zones: [String: ZoneRules], userRange: Range<Int>, eventsPath: String?, showProgress: Bool,
        templates: TemplateCatalog, store: (any EngagementStore)? = nil, tape: ServerTape? = nil,
        checksIncrementalPlan: Bool = false
    ) throws {
        self.tape = tape
        self.checksIncrementalPlan = checksIncrementalPlan
        self.storeWriter = store.map {
            StoreWriter(
                store: $0, failureRate: scenario.faults.storeWriteFailure,
                seed: scenario.seed &+ UInt64(userRange.lowerBound))
        }
        self.scenario = scenario
        self.content = ContentGenerator(catalog: templates)
        self.zones = zones
        self.userRange = userRange
        self.journal = Journal(sink: try EventSink(path: eventsPath))
        self.showProgress = showProgress
        self.executor = EffectExecutor(
            coach: scenario.coach, library: templates.defaultLibrary, deployment: scenario.deployment)
        self.stats = ShardStats(weeks: scenario.weeks)
        self.apns = SimulatedAPNs(conditions: scenario.faults.apns, seed: scenario.seed)
        serverStalls = FaultWindows(
            ratePerWeek: scenario.faults.serverStallsPerWeek,
            lengthSeconds: Int64(max(1, scenario.faults.serverStallMinutes) * 60), seed: scenario.seed,
            stream: 0x57A1)
    }

    /// Runs the shard to the end of the scenario. Throws `SimulationError` when the event log or
    /// the store cannot be written.
    func run() throws {
        let start = scenario.startInstant
        let model = BackgroundLaunchModel(
            meanDelaySeconds: scenario.faults.backgroundMeanDelayMinutes * 60,
            neverRunProbability: scenario.faults.backgroundNeverRun,
            earlyExpirationProbability: scenario.faults.backgroundEarlyExpiration)
        users.reserveCapacity(userRange.count)
        var configuration = EngineConfiguration()
        configuration.holdoutShare = scenario.holdoutShare
        configuration.attentionBudget = scenario.attention.budget
        configuration.budgetHoldoutShare = scenario.attention.holdoutShare
        for index in userRange {
            let (user, installAt) = UserState.install(
                index: index, scenario: scenario, zones: zones, configuration: configuration, content: content,
                background: model)
            users.append(user)
            queue.push(
                time: installAt.secondsSinceEpoch, user: Int32(users.count - 1),
                kind: .activity(.appOpened(sessionSeconds: 300)))
        }
        storeWriter?.recordProfiles(users.map(\.traits.profile))
        for local in users.indices {
            let state = users[local]
            let firstInstall = state.engine.lastActiveAt
            tape?.record(
                .installed(state.engine.profile, deviceToken: state.remote.device.token), of: state.traits.profile.id,
                at: firstInstall)
            try step(local, .appLaunched, at: firstInstall)
            if isServerDeployment {
                // The kit reports a permission the user refused at install (`DeviceReporter`).
                if users[local].center.authorizationStatus == .denied {
                    try step(local, .notificationPermission(allowed: false), at: firstInstall)
                }
                askForPlanRefresh(local, at: firstInstall)
            }
            scheduleNextDay(local, after: firstInstall)
            if state.traits.isTraveller { scheduleTravel(local, after: firstInstall) }
            for week in 0..<scenario.weeks {
                let end = start.secondsSinceEpoch + Int64(week + 1) * 7 * .secondsPerDay - 1
                queue.push(time: end, user: Int32(local), kind: .weekEnd(week: week))
            }
        }
        let end = scenario.endInstant.secondsSinceEpoch
        var progress = showProgress ? ProgressLine(start: start, days: scenario.weeks * 7) : nil
        var first: Event?
        while let event = queue.pop() {
            guard event.time < end else {
                first = event
                break
            }
            stats.events += 1
            progress?.show(at: event.time)
            try handle(event)
        }
        progress?.clear()
        try drain(from: end, first: first)
        try finish()
    }

    /// The end of the run: open lapses, folded items never delivered, the last delivery day,
    /// the platform's counters, the store's last batch and the event log.
    private func finish() throws {
        let endInstant = scenario.endInstant
        for local in users.indices {
            if let start = users[local].lapseStartedAt, endInstant.secondsSinceEpoch - start >= 14 * .secondsPerDay {
                stats.lift.record(heldOut: users[local].engine.isHeldOut, returned: false)
            }
            // Judged at the drain's end: the drain followed every item folded again into a new
            // group, and an item that waits in blocked digests past its time is dropped `stale`.
            let judgedAt = endInstant + Int64(scenario.drainDays) * .secondsPerDay
            for violation in users[local].notificationsBlocked ? [] : users[local].checker.finish(at: judgedAt) {
                try journal.violation(
                    violation, &users[local], at: judgedAt, detail: "a folded item was never delivered",
                    stats: &stats)
            }
            flushDeliveryDay(local)
            countAttentionGroup(local)
            stats.droppedByLimit += users[local].center.droppedByLimitCount
            stats.suppressedByAuthorization += users[local].center.suppressedByAuthorizationCount
            stats.channels.addDrops(of: users[local].remote.device)
        }
        try storeWriter?.flush()
        stats.storeBatchesRetried = storeWriter?.retried ?? 0
        stats.eventLogLines = journal.sink.lines
        digests = users.map(\.digest)
        stats.snapshotBytes = users.map { UInt32($0.engine.snapshot().count) }
        try journal.close()
    }

    // MARK: - Events

    func handle(_ event: Event) throws {
        let local = Int(event.user)
        let now = Instant(secondsSinceEpoch: event.time)
        switch event.kind {
        case .dayStart:
            guard users[local].dayStartAt == event.time else { return }  // superseded by travel
            try relaunchIfKilled(local, at: now)
            try planDay(local, at: now)
            if isServerDeployment { users[local].phone.forget(before: now) }
            scheduleNextDay(local, after: now)
            drawOfflineSpell(local, from: now)
            drawClockJumps(local, from: now)
        case .activity(let activity):
            guard !users[local].isAway(at: event.time) else { return }
            try journal.log(&users[local], now, "activity") { $0.id("activity", activity.name) }
            if case .appOpened = activity {
                // The app shows its inbox and sets its own badge (the engine's setBadge(0)).
                tape?.record(.readAll, of: users[local].traits.profile.id, at: now)
                let unread = users[local].remote.inbox.unreadCount
                users[local].remote.inbox.readAll()
                users[local].remote.lastSentUnread = 0
                // The server asks for a sync of the user's devices as for any read.
                if unread > 0 { try inboxChanged(local, at: now) }
            }
            users[local].checker.observe(activity, at: now, zone: users[local].zone)
            users[local].weekActivity.append(
                ActivityEvent(userID: users[local].traits.profile.id, at: now, kind: activity))
            if let start = users[local].lapseStartedAt {
                users[local].lapseStartedAt = nil
                stats.lift.record(
                    heldOut: inPlace(local) { $0.engine.isHeldOut }, returned: event.time - start <= 14 * .secondsPerDay
                )
            }
            try step(local, .activity(activity), at: now)
        case .fire:
            guard users[local].fireEventAt == event.time else { return }  // superseded
            users[local].fireEventAt = nil
            let delivered = users[local].center.fireDue(through: users[local].deviceTime(now))
            try deliverLocal(local, delivered, offsetSeconds: users[local].clockOffsetSeconds, at: now)
            rescheduleFire(local)
        case .launch:
            guard users[local].launchEventAt == event.time else { return }
            users[local].launchEventAt = nil
            let launches = users[local].background.launchDue(through: now)
            for launch in launches {
                if launch.request.identifier == Self.planRefreshIdentifier {
                    try pullPlan(local, reason: .refresh, at: now)
                    askForPlanRefresh(local, at: now)
                    continue
                }
                guard let job = BackgroundJob(rawValue: launch.request.identifier) else { continue }
                let nanos = try step(local, .backgroundTaskLaunched(job), at: now, timing: .backgroundRun).nanos ?? 0
                stats.backgroundRuns += 1
                if Double(nanos) / 1e9 > launch.timeAllowedSeconds { stats.backgroundOverBudget += 1 }
                try journal.log(&users[local], now, "backgroundRun") { $0.id("job", job.rawValue) }
            }
            rescheduleLaunch(local)
        case .response(let requestID, let kind, let action):
            try respond(local, requestID: requestID, kind: kind, action: action, at: now)
        case .travel:
            try travel(local, at: now)
            scheduleTravel(local, after: now)
        case .weekEnd(let week):
            closeWeek(local, week: week, at: now)
        case .remote:
            try handleRemote(local, at: now)
        case .liveActivity(let event):
            try handleLiveActivity(local, event, at: now)
        case .clockJump(let seconds):
            try jumpClock(local, bySeconds: Int64(seconds), at: now)
        case .planPull:
            try pullAfterReconnecting(local, at: now)
        case .content(let requestID, let outcome):
            // The copy chosen, and why the coach's answer was turned down, are tallied from the
            // engine's trace (`recordDecision`): the engine's own ruling, not a second one.
            try step(local, .contentGenerated(requestID: requestID, outcome: outcome), at: now)
        case .social(let social):
            try journal.log(&users[local], now, "social") {
                $0.id("kind", social.kind.rawValue)
                $0.field("id", social.id)
            }
            try step(local, .socialEvent(social), at: now)
        case .permission(let granted):
            users[local].center.setAuthorizationStatus(granted ? .authorized : .denied)
            if !granted { users[local].notificationsBlocked = true }
            try journal.log(&users[local], now, "permission") { $0.id("status", granted ? "authorized" : "denied") }
            // The app reads its settings when it comes to the foreground; the world tells the
            // engine at once. On the device a revoke is learnt from the next refused schedule; in
            // the server topology the kit reports it as an event (`DeviceReporter`).
            if granted || isServerDeployment { try step(local, .notificationPermission(allowed: granted), at: now) }
            if !granted {
                queue.push(time: event.time + 3 * .secondsPerDay, user: event.user, kind: .permission(granted: true))
            }
        }
    }

    /// Local notifications the device fired: shown, judged and answered. Their
    /// times are the device's clock's; `offsetSeconds` (the clock's error the app added them for)
    /// takes them back to the true times the engine planned. `releasedEarly`: fired ahead of
    /// their time by a jump of the clock (`DeviceClock`).
    func deliverLocal(
        _ local: Int, _ delivered: [DeliveredNotification], offsetSeconds: Int64, releasedEarly: Bool = false,
        at now: Instant
    ) throws {
        // At the true times the engine planned them.
        let fired = delivered.map { notification in
            var notification = notification
            notification.deliveredAt = notification.deliveredAt - offsetSeconds
            return notification
        }
        // All were released together: each is judged before the user reacts to any (an opt-out
        // the first one leads to does not rule on the others).
        if isServerDeployment { try judgeFreshness(local, fired) }
        for notification in fired {
            let id = notification.request.identifier
            if DeviceClock.isDailySeries(notification.request) {
                users[local].seriesShown[id] = notification.deliveredAt.secondsSinceEpoch
            } else if releasedEarly {
                users[local].releasedEarly[id] = notification.deliveredAt.secondsSinceEpoch
            }
            try judgeRelease(local, notification.request, at: notification.deliveredAt, releasedEarly: releasedEarly)
            // A series held one occurrence at a time (the clock is off): the app adds the next.
            if !notification.request.trigger.repeats && users[local].clockOffsetSeconds != 0 {
                rearmSeries(local, notification.request, after: notification.deliveredAt, at: now)
            }
        }
        // Shown now: a jump of the clock shows what it released at the jump, not at its time.
        let shown =
            releasedEarly
            ? fired.map { notification in
                var notification = notification
                notification.deliveredAt = now
                return notification
            } : fired
        // The server put each in the inbox when due, with a badge sync (`OutboxSteps.step`).
        for _ in shown {
            stats.channels[.local].sent += 1
            stats.channels[.local].shown += 1
        }
        for notification in shown { try observeDelivery(local, notification, on: .local, at: now) }
    }

    /// Which budget a step's time counts against: a scheduling decision (one in
    /// `DecisionSampler.every` timed), a background run or a Live Activity event (each timed).
    enum StepTiming {
        case sampledDecision, backgroundRun, liveActivity
    }
}
