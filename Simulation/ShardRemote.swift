import Content
import Delivery
import Engagement
import Models
import Runtime
import Scheduling
import SimulatedPlatform
import Storage

/// The server side in the world loop: the simulated server runs the runtime's own dispatch
/// over each user's pending rows. A step's effects become rows by `OutboxPlan.rows`, as the
/// runtime commits them; a due row takes its step by `OutboxSteps.step` (an inbox delivery, a
/// sync moved to its next slot, a send); a send is prepared by `PushSends` and goes through
/// the simulated APNs, with the APNs client's bounded retries, and its outcome becomes a
/// `SendReport` as `PushChannelTransport` reports it (`RowSends`); what follows is `OutboxSteps.afterSend`.
/// What reaches the device is shown by the simulated center and judged there.
extension Shard {
    /// Commits a step's server work as the runtime commits its outbox rows (`StepOutbox`), for
    /// the effects the server performs: every notification's inbox item, the remote ones'
    /// pushes, and their withdrawals (the device fires its local notifications from its own
    /// pending list), and the Live Activity commands (the server pushes those with a token, the
    /// app performs the rest itself: `performLiveActivity`); on the server topology the jobs' rows
    /// too, which the server runs when due (on the device topology the app's background tasks
    /// run them), and the signal's badge sync when a step not from the phone moved the plan
    /// (a simulated user has one phone). After a change of zone, the pending rows follow the
    /// engine's new fire times. On the server topology the phone's judge of stale fires takes
    /// the same commit (`PhonePlan.commit`).
    func commitServer(
        _ local: Int, _ input: EngineInput, _ effects: [Effect], revisionBefore: Int, zoneChanged: Bool,
        at now: Instant
    ) {
        guard zoneChanged || effects.contains(where: { Self.isServed($0, onServer: isServerDeployment) }) else {
            return
        }
        // The caller's rule, as the runtime applies it; a simulated user has one phone. On the
        // device topology the engine is on the phone: nothing is signalled.
        let signals =
            isServerDeployment
            && (try? PlanSignal.asksForSync(source: Self.source(of: input), otherDevices: { false })) == true
        var plan = inPlace(local) { user in
            // Read before the call: a closure reading `user` while `user.engine` is borrowed
            // would make the compiler copy the whole engine for the call.
            let pending = zoneChanged ? user.remote.outbox.rows : []
            let outbox = signals ? user.remote.outbox : nil
            return StepOutbox.rows(
                for: effects, engine: user.engine, revisionBefore: revisionBefore, signals: { signals },
                phone: PhoneHearing.of(Self.source(of: input), silentPushes: RemoteChannel.silentPushes, at: now),
                syncHistory: { keys in
                    SilentPushPlan.SyncHistory(
                        pending: outbox?.rows ?? [], completed: Set(keys.filter { outbox?.wasCompleted($0) == true }))
                },
                zoneChanged: zoneChanged, pending: { pending }, silentPushes: RemoteChannel.silentPushes, at: now)
        }
        if !isServerDeployment { plan.rows.removeAll { $0.channel == .job } }
        users[local].remote.outbox.commit(
            userID: users[local].traits.profile.id, cancelled: plan.cancelled, rows: plan.rows)
        if isServerDeployment { users[local].phone.commit(cancelled: plan.cancelled, rows: plan.rows, at: now) }
    }

    /// Whether the server performs anything of `effect`: on the device topology its
    /// notifications and Live Activity commands only; on the server topology its jobs too.
    private static func isServed(_ effect: Effect, onServer: Bool) -> Bool {
        switch effect {
        case .schedule, .cancel, .liveActivity: true
        case .submitBackgroundTask: onServer
        default: false
        }
    }

    /// The `.remote` event: the APNs client's retries that are due, then the server's due rows,
    /// then what reached the device is shown.
    func handleRemote(_ local: Int, at now: Instant) throws {
        guard users[local].remote.eventAt == now.secondsSinceEpoch else { return }  // superseded
        users[local].remote.eventAt = nil
        try retryInFlight(local, at: now)
        // A stalled server performs no due row until the stall ends; APNs delivers meanwhile.
        if let stall = serverStalls.window(containing: now) {
            users[local].remote.dispatchResumesAt = stall.ends
        } else {
            users[local].remote.dispatchResumesAt = nil
            try dispatchDue(local, at: now)
        }
        for arrival in users[local].remote.device.receive(through: now) {
            switch arrival.note {
            case .alert(let request):
                let parts =
                    users[local].remote.mergedParts.removeValue(forKey: request.identifier)?.parts ?? [
                        request.identifier
                    ]
                if !parts.allSatisfy({ users[local].remote.inbox.holds(requestID: $0) }) {
                    try journal.violation(
                        .inboxHoldsEveryVisibleNotification, &users[local], at: now,
                        detail: request.identifier.rawValue,
                        stats: &stats)
                }
                if let shown = users[local].center.present(request, at: arrival.at) {
                    stats.channels[.remote].shown += 1
                    try judgeShown(local, request, at: arrival.at)
                    try observeDelivery(local, shown, on: .remote, at: now)
                } else {
                    // Notifications off: what the engine releases may never be seen.
                    users[local].notificationsBlocked = true
                }
            case .liveActivity(let command):
                try applyLiveActivity(local, command, byPush: true, at: arrival.at)
            case .sync(let unread, let planVersion):
                stats.channels[.silent].shown += 1
                users[local].center.setBadgeCount(unread)
                if isServerDeployment {
                    try journal.log(&users[local], now, "syncReceived") { $0.field("planVersion", "\(planVersion)") }
                    try pull(local, ifBehind: planVersion, reason: .signal, at: now)
                }
            }
        }
        try checkBadge(local, at: now)
        rescheduleRemote(local)
    }

    /// The server's due rows, as `EngineRuntime.dispatchDueBatch` performs them: claimed by the
    /// claim-time rules, then every step the server performs itself, then the sends.
    private func dispatchDue(_ local: Int, at now: Instant) throws {
        var due = Array(users[local].remote.outbox.due(through: now))
        guard !due.isEmpty else { return }
        tape?.record(.dispatched, of: users[local].traits.profile.id, at: now)
        stats.rowsDispatchedLate += due.count { !ClaimTimePolicy.isOnTime($0.dueAt, at: now) }
        due = claim(local, due, at: now)
        // Completed as they are taken: a send's retries run in virtual time, and a row a commit
        // makes again meanwhile is refused, as a store refuses it once the send is done.
        for row in due { users[local].remote.outbox.complete(row.key, at: now) }
        // As `EngineRuntime.dispatchDue`: every step the server performs itself first, then the sends.
        var sends: [OutboxRow] = []
        let zone = users[local].engine.zone
        for (row, dueStep) in OutboxSteps.steps(
            for: due, zone: { _ in zone }, silentPushes: RemoteChannel.silentPushes, at: now)
        {
            switch dueStep {
            case .deliverToInbox(let delivery, let next):
                try deliverToInbox(local, delivery, next: next, at: now)
            case .moveSync(let next):
                users[local].remote.outbox.enqueue(next)
            case .send:
                if RemoteChannel.silentPushes.isEarly(row) { stats.deployment.earlySyncs += 1 }
                sends.append(row)
            case .runJob(let job) where isServerDeployment:
                // As `EngineRuntime.dispatchDue`: the job's step commits its next run.
                try step(local, .backgroundTaskLaunched(job), at: now, timing: .backgroundRun)
                stats.backgroundRuns += 1
            case .runJob:
                // On the device topology the simulated server holds no jobs: the device runs its own.
                assertionFailure("the simulated server of the device topology ran the job of \(row.key)")
            case .discard(let reason):
                // As the runtime: completed unperformed (above), and logged.
                try journal.log(&users[local], now, "rowDiscarded") { $0.field("reason", reason) }
            }
        }
        for row in sends { try startSend(local, row, at: now) }
    }

    /// The claim-time rules over the due rows, as a store that lists rows as they stand has the
    /// runtime apply them (`EngineRuntime.claim`): the record is written to the pending rows
    /// (`PendingOutbox.apply`), and the rows to perform now are returned. Deferred rows are
    /// pending at their new instant, and the alerts left for the next claim at theirs; the next
    /// claim follows at once (`rescheduleRemote`).
    private func claim(_ local: Int, _ due: [OutboxRow], at now: Instant) -> [OutboxRow] {
        guard due.contains(where: { $0.channel == .push }) else { return due }
        let profile = users[local].engine.profile
        let zone = users[local].engine.zone
        let outcome = OutboxClaim.decide(
            due, rules: [profile.id: ClaimTimePolicy.UserRules(profile)], unreadable: [], zone: { _ in zone },
            state: users[local].remote.outbox.claims, at: now)
        for merge in outcome.record.merges {
            let parts = due.filter { merge.replacedKeys.contains($0.key) }.map(\.requestID)
            // No alert is shown a day past its due instant (the longest staleness): two days is ample.
            users[local].remote.mergedParts = users[local].remote.mergedParts.filter { now - $0.value.at < 2 * 86_400 }
            users[local].remote.mergedParts[merge.row.requestID] = (parts, now)
        }
        for key in outcome.record.expiredKeys {
            guard let row = due.first(where: { $0.key == key }) else { continue }
            // Completed unsent, as stale: the inbox keeps it, and nothing is owed any more.
            let id = row.requestID.rawValue
            drainResolvedWithItems(local, id)
            users[local].checker.observeExpired(id)
            stats.channels[.remote].failed["Stale", default: 0] += 1
        }
        users[local].remote.outbox.apply(outcome.record, at: now)
        return outcome.perform
    }

    /// Queues the channel's next event.
    func rescheduleRemote(_ local: Int) {
        // A follow-up decided as of an earlier dispatch may be due already: now, then.
        guard let due = inPlace(local, { $0.remote.nextEventAt?.secondsSinceEpoch }),
            case let next = max(due, queue.now),
            users[local].remote.eventAt != next
        else { return }
        users[local].remote.eventAt = next
        queue.push(time: next, user: Int32(local), kind: .remote)
    }

    /// The unread count changed at `now` (an item added or read) without an alert carrying it:
    /// a badge sync is asked for, as the runtime asks for one (`SilentPushPlan`), and the promise
    /// is checked.
    func inboxChanged(_ local: Int, at now: Instant) throws {
        let sync = RemoteChannel.silentPushes.row(for: users[local].traits.profile.id, changedAt: now)
        users[local].remote.outbox.enqueue(sync)
        try checkBadge(local, at: now)
        rescheduleRemote(local)
    }

    /// `badgeEqualsUnread`: the device was last sent the unread count of now, or a push that will
    /// carry it is pending or being retried (the badge is right within one silent push).
    private func checkBadge(_ local: Int, at now: Instant) throws {
        // Read in place, not through a copy of the channel (docs/PERFORMANCE.md, "Copies avoided").
        guard users[local].remote.retiredAt == nil, !users[local].remote.outbox.hasSync,
            users[local].remote.lastSentUnread != users[local].remote.inbox.unreadCount,
            !users[local].remote.inFlight.contains(where: { $0.note.unread != nil })
        else { return }
        let detail = "sent \(users[local].remote.lastSentUnread), unread \(users[local].remote.inbox.unreadCount)"
        try journal.violation(.badgeEqualsUnread, &users[local], at: now, detail: detail, stats: &stats)
    }

    /// An inbox row's step: the item joins the inbox, keyed by the row's key as the store keys
    /// it, and the rows that follow it are made pending.
    private func deliverToInbox(_ local: Int, _ delivery: InboxDelivery, next: [OutboxRow], at now: Instant) throws {
        let row = delivery.row
        users[local].remote.inbox.add(key: row.key.rawValue, requestID: row.requestID, at: now)
        stats.channels[.inbox].sent += 1
        for row in next { users[local].remote.outbox.enqueue(row) }
    }

    /// The device's day: an offline spell (airplane mode, no coverage) with the scenario's chance.
    func drawOfflineSpell(_ local: Int, from dayStart: Instant) {
        let faults = scenario.faults
        guard faults.deviceOfflinePerUserDay > 0,
            users[local].remote.draws.chance(faults.deviceOfflinePerUserDay)
        else { return }
        let from = dayStart + Int64(users[local].remote.draws.int(in: 0...86_399))
        let hours = users[local].remote.draws.exponential(mean: faults.deviceOfflineMeanHours)
        users[local].remote.device.goOffline(from: from, until: from + max(60, Int64(hours * 3_600)))
        rescheduleRemote(local)
    }

    /// The system kills the app now and then (memory pressure, an update): the engine is not
    /// kept in memory but restored from its snapshot, the bytes a runtime stores, when the app
    /// runs again; the device's pending list and the server's outbox survive. A snapshot that
    /// does not restore breaks `engineRestoresFromSnapshot` (the engine in memory runs on).
    func relaunchIfKilled(_ local: Int, at now: Instant) throws {
        let rate = scenario.faults.appKilledPerUserDay
        guard rate > 0, users[local].remote.draws.chance(rate) else { return }
        let engine = users[local].engine
        // After an update, the snapshot on the device was written by the previous version. On the
        // server topology the engine's snapshot is the server's, which an app update leaves alone.
        let upgrade =
            !isServerDeployment && scenario.faults.upgradeShareOfRelaunches > 0
            && users[local].remote.draws.chance(scenario.faults.upgradeShareOfRelaunches)
        let bytes = upgrade ? engine.snapshot(version: EngineSnapshot.version - 1) : engine.snapshot()
        // Through the runtime's store path: the app committed its engine after its last input (a
        // `RuntimeCommit`, retried while the store fails), and reads it back on relaunch.
        let userID = engine.profile.id
        let stored: [UInt8]?
        let store = InMemoryEngagementStore()
        do {
            // A failed commit is retried: refused before the write, or written and its answer lost
            // (then written again, which must change nothing).
            while scenario.faults.storeWriteFailure > 0
                && users[local].commitDraws.chance(scenario.faults.storeWriteFailure)
            {
                stats.commitsRetried += 1
                if users[local].commitDraws.chance(0.5) {
                    try store.commit(RuntimeCommit(userID: userID, snapshot: bytes))
                }
            }
            try store.commit(RuntimeCommit(userID: userID, snapshot: bytes))
            stored = try store.snapshot(userID: userID)
        } catch {
            try journal.violation(
                .engineRestoresFromSnapshot, &users[local], at: now, detail: "store: \(error)", stats: &stats)
            return
        }
        do {
            guard let stored else { throw RelaunchFailure.nothingStored }
            users[local].engine = try UserEngine(
                restoring: stored, profile: engine.profile, zone: engine.zone,
                configuration: engine.configuration, content: content)
        } catch {
            try journal.violation(
                .engineRestoresFromSnapshot, &users[local], at: now, detail: "\(error)", stats: &stats)
            return
        }
        stats.relaunches += 1
        if upgrade { stats.upgrades += 1 }
        try journal.log(&users[local], now, "relaunched") { $0.id("from", "snapshot") }
        if !isServerDeployment { try checkPlanMatchesPlatform(local, after: [], at: now, always: true) }
    }

    /// The runtime's commit of a step failed (`storeWriteFailure`): the step is rolled back, the
    /// engine restored from `before` (what the runtime stored before the step: the snapshot, the
    /// profile and the zone), and the input applied again.
    /// The retry must decide exactly what the failed attempt did, or nothing would be lost or
    /// doubled only by luck; a difference breaks `engineRestoresFromSnapshot`. Returns the
    /// retry's effects, which are the ones executed.
    func retryAfterFailedCommit(
        _ local: Int, _ input: EngineInput, before: StoredEngine, failed: [Effect], phone: PhoneHearing,
        at now: Instant
    ) throws -> [Effect] {
        stats.commitsRetried += 1
        let engine = users[local].engine
        do {
            users[local].engine = try UserEngine(
                restoring: before.snapshot, profile: before.profile, zone: before.zone,
                configuration: engine.configuration, content: content)
        } catch {
            try journal.violation(
                .engineRestoresFromSnapshot, &users[local], at: now, detail: "rollback: \(error)", stats: &stats)
            users[local].engine = engine
            return failed
        }
        let retried = users[local].engine.handle(input, at: now, phone: phone)
        if retried != failed {
            try journal.violation(
                .engineRestoresFromSnapshot, &users[local], at: now,
                detail: "the retried step decided otherwise (\(retried.count) effects, not \(failed.count))",
                stats: &stats)
        }
        return retried
    }

    /// What a runtime stores of a user's engine: enough to restore it.
    struct StoredEngine {
        var snapshot: [UInt8]
        var profile: UserProfile
        var zone: ZoneRules

        init(_ engine: UserEngine) {
            snapshot = engine.snapshot()
            profile = engine.profile
            zone = engine.zone
        }
    }

    /// A user who churns may delete the app; APNs learns of it some hours later.
    func drawUninstall(_ local: Int, at now: Instant) {
        let faults = scenario.faults
        guard faults.uninstallOnChurn > 0, users[local].remote.draws.chance(faults.uninstallOnChurn) else { return }
        let hours = users[local].remote.draws.exponential(mean: faults.apns.unregisteredAfterHours)
        users[local].remote.device.uninstall(at: now, unregisteredFrom: now + Int64(hours * 3_600))
        stats.uninstalls += 1
        if isServerDeployment {
            // Deleting an app deletes its pending notifications; the kit is gone, and pulls no more.
            users[local].center.removeAllPendingNotificationRequests()
            users[local].phone.uninstalled = true
            users[local].phone.pulled = []
            users[local].heldSeries = [:]
            rescheduleFire(local)
        }
    }
}

/// A relaunch that found nothing to restore.
enum RelaunchFailure: Error, CustomStringConvertible {
    case nothingStored
    var description: String { "the store holds no snapshot of the user" }
}
