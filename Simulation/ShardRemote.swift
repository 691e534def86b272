import Content
import Delivery
import Engagement
import Models
import Runtime
import Scheduling
import Storage

/// The server side in the world loop: the simulated server runs the runtime's own dispatch
/// over each user's pending rows. A step's effects become rows by `OutboxPlan.rows`, as the
/// runtime commits them; a due row takes its step by `OutboxSteps.step` (an inbox delivery, a
/// sync moved to its next slot, a send); a send is prepared by `PushSends` and goes through
/// the simulated APNs, with the APNs client's bounded retries, and its outcome becomes a
/// `SendReport` as `APNsChannelTransport` reports it; what follows is `OutboxSteps.afterSend`.
/// What reaches the device is shown by the simulated center and judged there.
extension Shard {
    /// Commits a step's server work as the runtime commits its outbox rows, for the effects the
    /// server performs in this topology: every notification's inbox item, the remote ones'
    /// pushes, and their withdrawals (the device fires its local notifications from its own
    /// pending list, runs its own background tasks and starts its own Live Activities). After
    /// a change of zone, the pending rows follow the engine's new fire times.
    func commitServer(_ local: Int, _ effects: [Effect], zoneChanged: Bool, at now: Instant) {
        guard zoneChanged || effects.contains(where: Self.isServed) else { return }
        var plan = OutboxPlan.rows(for: effects, userID: users[local].traits.profile.id, at: now)
        plan.rows.removeAll { $0.channel == .job || $0.channel == .liveActivity }
        if zoneChanged {
            plan.rows += inPlace(local) { user in
                OutboxSteps.moved(
                    user.remote.outbox.rows, plannedIDs: user.engine.plannedRequestIDs,
                    fireTimes: user.engine.plannedFireTimes,
                    touched: Set(plan.cancelled).union(plan.rows.map(\.requestID)), at: now)
            }
        }
        users[local].remote.outbox.commit(cancelled: plan.cancelled, rows: plan.rows)
    }

    /// Whether the server performs anything of `effect` in this topology.
    private static func isServed(_ effect: Effect) -> Bool {
        switch effect {
        case .schedule, .cancel: true
        default: false
        }
    }

    /// The `.remote` event: the APNs client's retries that are due, then the server's due rows,
    /// then what reached the device is shown.
    func handleRemote(_ local: Int, at now: Instant) throws {
        guard users[local].remote.eventAt == now.secondsSinceEpoch else { return }  // superseded
        users[local].remote.eventAt = nil
        try retryInFlight(local, at: now)
        let due = users[local].remote.outbox.takeDue(at: now)
        if !due.isEmpty { tape?.record(.dispatched, of: users[local].traits.profile.id, at: now) }
        for row in OutboxSteps.inboxFirst(due) {
            let zone = users[local].zone
            switch OutboxSteps.step(for: row, zone: zone, silentPushes: RemoteChannel.silentPushes, at: now) {
            case .deliverToInbox(let delivery, let next):
                try deliverToInbox(local, delivery, next: next, at: now)
            case .moveSync(let next):
                users[local].remote.outbox.enqueue(next)
            case .send:
                try startSend(local, row, at: now)
            case .runJob, .discard:
                // The simulated server holds no jobs (the device runs its own) and writes only
                // rows it reads: neither step can come up.
                assertionFailure("the simulated server took an unexpected step for \(row.key)")
            }
        }
        for arrival in users[local].remote.device.receive(through: now) {
            switch arrival.note {
            case .alert(let request):
                if !users[local].remote.inbox.holds(request.identifier) {
                    try journal.violation(
                        .inboxHoldsEveryVisibleNotification, &users[local], at: now, detail: request.identifier,
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
            case .sync(let unread):
                stats.channels[.silent].shown += 1
                users[local].center.setBadgeCount(unread)
            }
        }
        try checkBadge(local, at: now)
        rescheduleRemote(local)
    }

    /// Queues the channel's next event.
    func rescheduleRemote(_ local: Int) {
        guard let next = inPlace(local, { $0.remote.nextEventAt?.secondsSinceEpoch }),
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
        // Read in place: a copy of the whole channel costs more than the check.
        guard users[local].remote.retiredAt == nil, !users[local].remote.outbox.hasSync,
            users[local].remote.lastSentUnread != users[local].remote.inbox.unreadCount,
            users[local].remote.inFlight.isEmpty
        else { return }
        let detail = "sent \(users[local].remote.lastSentUnread), unread \(users[local].remote.inbox.unreadCount)"
        try journal.violation(.badgeEqualsUnread, &users[local], at: now, detail: detail, stats: &stats)
    }

    /// An inbox row's step: the item joins the inbox (an occurrence of a daily series as
    /// `id@dueAt`, as the app keys it), and the rows that follow it are made pending.
    private func deliverToInbox(_ local: Int, _ delivery: InboxDelivery, next: [OutboxRow], at now: Instant) throws {
        let row = delivery.row
        let item = row.payload.repeatingMatch == nil ? row.requestID : "\(row.requestID)@\(row.dueAt.secondsSinceEpoch)"
        users[local].remote.inbox.add(item, at: now)
        stats.channels[.inbox].sent += 1
        for row in next { users[local].remote.outbox.enqueue(row) }
    }

    /// A send's step: the push is prepared as `APNsChannelTransport` prepares it and its first
    /// attempt made. A user whose token was retired has no device: nothing is sent.
    private func startSend(_ local: Int, _ row: OutboxRow, at now: Instant) throws {
        let channel: DeliveryChannel = row.channel == .silent ? .silent : .remote
        if row.channel == .push, let request = row.payload.notification {
            // The release the engine decided, at the time it chose.
            try judgeRelease(local, request, at: row.dueAt, shownNow: false)
        }
        guard users[local].remote.retiredAt == nil else {
            stats.channels[channel].failed["NoDevice", default: 0] += 1
            finish(local, row, .accepted, at: now)
            return
        }
        let unread = users[local].remote.inbox.unreadCount
        let address = users[local].remote.address
        let push: PushRequest
        let note: PushNote
        switch row.channel {
        case .silent:
            let counts = InboxCounts(total: users[local].remote.inbox.total, unread: unread, unseen: unread)
            push = PushSends.sync(
                key: row.key, slot: row.dueAt, counts: counts, plan: RemoteChannel.silentPushes,
                topic: RemoteChannel.topic
            ).request(to: address)
            note = .sync(unread: unread)
        default:
            guard var request = row.payload.notification else {
                finish(local, row, .refused(reason: "Unreadable"), at: now)
                return
            }
            let rules = inPlace(local) { ShowingRules(profile: $0.engine.profile, zone: $0.zone) }
            switch PushSends.alert(
                request, key: row.key, plannedAt: row.dueAt, badge: unread, topic: RemoteChannel.topic, rules: rules,
                at: now)
            {
            case .success(let prepared): push = prepared.request(to: address)
            case .failure(let withheld):
                // The inbox holds it; the badge it would have carried goes by a sync.
                stats.channels[.remote].failed[withheld.reason, default: 0] += 1
                finish(local, row, .withheld(reason: withheld.reason), at: now)
                return
            }
            request.content.badge = unread
            note = .alert(request)
        }
        try attempt(
            local, RemoteChannel.InFlight(row: row, push: push, note: note, attempts: 0, nextAttemptAt: now), at: now)
    }

    /// The APNs client's retries due by `now`: the same request again, unless the token was
    /// retired meanwhile (the registry has no device left).
    private func retryInFlight(_ local: Int, at now: Instant) throws {
        guard users[local].remote.inFlight.contains(where: { $0.nextAttemptAt <= now }) else { return }
        let ready = users[local].remote.inFlight.filter { $0.nextAttemptAt <= now }
        users[local].remote.inFlight.removeAll { $0.nextAttemptAt <= now }
        for flight in ready {
            if users[local].remote.retiredAt != nil {
                finish(local, flight.row, .accepted, at: now)
            } else {
                try attempt(local, flight, at: now)
            }
        }
    }

    /// One attempt of a send; a retryable answer is tried again after the client's back-off
    /// while attempts remain, and the final answer is reported as the transport reports it.
    private func attempt(_ local: Int, _ flight: RemoteChannel.InFlight, at now: Instant) throws {
        var flight = flight
        let channel: DeliveryChannel = flight.row.channel == .silent ? .silent : .remote
        let answer = try send(local, flight.push, carrying: flight.note, on: channel, attempt: flight.attempts, at: now)
        flight.attempts += 1
        let report: SendReport
        switch answer {
        case .accepted:
            if let unread = flight.note.unread { users[local].remote.lastSentUnread = unread }
            if channel == .silent {
                for violation in users[local].channelChecker.observeSilentAccepted(at: now) {
                    try journal.violation(violation, &users[local], at: now, detail: flight.push.id, stats: &stats)
                }
            }
            report = .accepted
        case .unregistered:
            report = .accepted  // a retired token is no device's: nothing was missed
        case .refused(let failure):
            try failed(local, flight.push, failure, on: channel, at: now)
            report = .refused(reason: failure.reason)
        case .retryable(let failure):
            if flight.attempts < RemoteChannel.retryPolicy.maxAttempts {
                flight.nextAttemptAt = now + retryDelaySeconds(local, afterAttempt: flight.attempts)
                users[local].remote.inFlight.append(flight)
                return
            }
            try failed(local, flight.push, failure, on: channel, at: now)
            report = .failed(reason: failure.reason)
        }
        finish(local, flight.row, report, at: now)
    }

    /// What follows a send, as the runtime decides it (`OutboxSteps.afterSend`).
    private func finish(_ local: Int, _ row: OutboxRow, _ report: SendReport, at now: Instant) {
        let followUp = OutboxSteps.afterSend(
            row, report: report, zone: users[local].zone, silentPushes: RemoteChannel.silentPushes, at: now)
        for next in followUp.next { users[local].remote.outbox.enqueue(next) }
    }

    /// One attempt through the simulated APNs: counted, checked against the retired tokens, and a
    /// 410 retires the token in the server's registry.
    private func send(
        _ local: Int, _ push: PushRequest, carrying note: PushNote, on channel: DeliveryChannel, attempt: Int,
        at now: Instant
    ) throws -> SimulatedAPNs.Answer {
        for violation in users[local].channelChecker.observeSend(to: push.deviceToken, at: now) {
            try journal.violation(violation, &users[local], at: now, detail: push.id, stats: &stats)
        }
        if attempt == 0 {
            stats.channels[channel].sent += 1
            tape?.record(.sent(push), of: users[local].traits.profile.id, at: now)
        } else {
            stats.channels[channel].retries += 1
        }
        let answer = users[local].remote.send(push, carrying: note, through: apns, at: now)
        switch answer {
        case .accepted:
            stats.channels[channel].accepted += 1
        case .unregistered(let since):
            stats.channels[channel].tokensRetired += 1
            users[local].remote.retiredAt = since
            users[local].channelChecker.observeRetired(push.deviceToken)
            try journal.log(&users[local], now, "tokenRetired") {
                $0.id("channel", channel.rawValue)
                $0.id("reason", "410 Unregistered")
            }
        case .retryable, .refused:
            break
        }
        return answer
    }

    private func failed(
        _ local: Int, _ push: PushRequest, _ failure: PushFailure, on channel: DeliveryChannel, at now: Instant
    ) throws {
        stats.channels[channel].failed[failure.reason, default: 0] += 1
        try journal.log(&users[local], now, "pushFailed") {
            $0.id("channel", channel.rawValue)
            $0.id("reason", failure.description)
        }
    }

    /// The client's back-off after a refused attempt (`RetryPolicy`), rounded up to whole seconds,
    /// the world loop's resolution (the policy's 100-400 ms first waits become 1 s).
    private func retryDelaySeconds(_ local: Int, afterAttempt attempt: Int) -> Int64 {
        let delay = RemoteChannel.retryPolicy.delay(
            afterAttempt: attempt, unitRandom: users[local].remote.draws.nextUnit())
        return max(
            1, Int64((Double(delay.components.seconds) + Double(delay.components.attoseconds) / 1e18).rounded(.up)))
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
        // After an update, the snapshot on the device was written by the previous version.
        let upgrade =
            scenario.faults.upgradeShareOfRelaunches > 0
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
                restoring: stored, profile: engine.profile, zone: users[local].zone,
                configuration: engine.configuration, content: content)
        } catch {
            try journal.violation(
                .engineRestoresFromSnapshot, &users[local], at: now, detail: "\(error)", stats: &stats)
            return
        }
        stats.relaunches += 1
        if upgrade { stats.upgrades += 1 }
        try journal.log(&users[local], now, "relaunched") { $0.id("from", "snapshot") }
        try checkPlanMatchesPlatform(local, after: [], at: now, always: true)
    }

    /// The runtime's commit of a step failed (`storeWriteFailure`): the step is rolled back, the
    /// engine restored from `before` (what the runtime stored before the step: the snapshot, the
    /// profile and the zone), and the input applied again.
    /// The retry must decide exactly what the failed attempt did, or nothing would be lost or
    /// doubled only by luck; a difference breaks `engineRestoresFromSnapshot`. Returns the
    /// retry's effects, which are the ones executed.
    func retryAfterFailedCommit(
        _ local: Int, _ input: EngineInput, before: StoredEngine, failed: [Effect], at now: Instant
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
        let retried = users[local].engine.handle(input, at: now)
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
    }
}

/// A relaunch that found nothing to restore.
enum RelaunchFailure: Error, CustomStringConvertible {
    case nothingStored
    var description: String { "the store holds no snapshot of the user" }
}
