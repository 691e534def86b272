import Content
import Delivery
import Engagement
import Models
import Runtime
import Scheduling
import Storage

/// The remote channel in the world loop: the engine's remote requests are sent through the
/// simulated APNs when due, prepared by the server's own `PushSends` (the badge of the moment,
/// the showing deadline as `apns-expiration`, the collapse id, the same `apns-id` across
/// retries); answers are handled as the APNs client and `APNsChannelTransport`
/// handle them; what reaches the device is shown by the simulated center.
extension Shard {
    /// The `.remote` event: due alerts and badge syncs are sent, and what reached the device is shown.
    func handleRemote(_ local: Int, at now: Instant) throws {
        guard users[local].remote.eventAt == now.secondsSinceEpoch else { return }  // superseded
        users[local].remote.eventAt = nil
        for planned in inPlace(local, { $0.remote.due(at: now) }) { try sendAlert(local, planned, at: now) }
        if let due = users[local].remote.syncDueAt, due <= now { try sendSync(local, at: now) }
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
    /// a badge sync is asked for, and the promise is checked.
    func inboxChanged(_ local: Int, at now: Instant) throws {
        users[local].remote.requestSync(after: now)
        try checkBadge(local, at: now)
        rescheduleRemote(local)
    }

    /// `badgeEqualsUnread`: the device was last sent the unread count of now, or a sync that will
    /// carry it is pending (the badge is right within one silent push).
    private func checkBadge(_ local: Int, at now: Instant) throws {
        // Read in place: a copy of the whole channel costs more than the check.
        guard users[local].remote.retiredAt == nil, users[local].remote.syncDueAt == nil,
            users[local].remote.lastSentUnread != users[local].remote.inbox.unreadCount,
            !users[local].remote.planned.values.contains(where: { $0.attempt > 0 })  // a retried alert will carry it
        else { return }
        let detail = "sent \(users[local].remote.lastSentUnread), unread \(users[local].remote.inbox.unreadCount)"
        try journal.violation(.badgeEqualsUnread, &users[local], at: now, detail: detail, stats: &stats)
    }

    private func sendAlert(_ local: Int, _ due: RemoteChannel.Planned, at now: Instant) throws {
        var planned = due
        let id = planned.request.identifier
        users[local].remote.planned[id] = nil
        if planned.attempt == 0 {
            users[local].remote.inbox.add(id, at: now)
            stats.channels[.inbox].sent += 1
            try judgeRelease(local, planned.request, at: planned.decidedAt, shownNow: false)
        }
        guard users[local].remote.retiredAt == nil else {
            stats.channels[.remote].failed["NoDevice", default: 0] += 1
            return
        }
        let userID = users[local].traits.profile.id
        let key = planned.key ?? OutboxKey.make(userID, id, planned.decidedAt, .push)
        let unread = users[local].remote.inbox.unreadCount
        let rules = inPlace(local) { ShowingRules(profile: $0.engine.profile, zone: $0.zone) }
        let prepared: PreparedPush
        switch PushSends.alert(
            planned.request, key: key, plannedAt: planned.decidedAt, badge: unread, topic: RemoteChannel.topic,
            rules: rules, at: now)
        {
        case .success(let push): prepared = push
        case .failure(let withheld):
            // The inbox holds it; the badge it would have carried goes by a sync.
            stats.channels[.remote].failed[withheld.reason, default: 0] += 1
            try inboxChanged(local, at: now)
            return
        }
        var request = planned.request
        request.content.badge = unread
        let push = prepared.request(to: users[local].remote.address)
        let answer = try send(local, push, carrying: .alert(request), on: .remote, attempt: planned.attempt, at: now)
        switch answer {
        case .accepted:
            users[local].remote.lastSentUnread = unread
        case .retryable(let failure):
            planned.attempt += 1
            if planned.attempt < RemoteChannel.retryPolicy.maxAttempts {
                planned.key = key
                planned.dueAt = now + retryDelaySeconds(local, afterAttempt: planned.attempt)
                users[local].remote.planned[id] = planned
            } else {
                try failed(local, push, failure, on: .remote, at: now)
                try inboxChanged(local, at: now)
            }
        case .refused(let failure):
            try failed(local, push, failure, on: .remote, at: now)
            try inboxChanged(local, at: now)
        case .unregistered:
            break
        }
    }

    private func sendSync(_ local: Int, at now: Instant) throws {
        guard let slot = users[local].remote.syncSlot, users[local].remote.retiredAt == nil else {
            users[local].remote.clearSync()
            return
        }
        let unread = users[local].remote.inbox.unreadCount
        let key = RemoteChannel.silentPushes.row(for: users[local].traits.profile.id, dueAt: slot).key
        let counts = InboxCounts(total: users[local].remote.inbox.total, unread: unread, unseen: unread)
        let push = PushSends.sync(
            key: key, slot: slot, counts: counts, plan: RemoteChannel.silentPushes, topic: RemoteChannel.topic
        ).request(to: users[local].remote.address)
        let attempt = users[local].remote.syncAttempt
        switch try send(local, push, carrying: .sync(unread: unread), on: .silent, attempt: attempt, at: now) {
        case .accepted:
            users[local].remote.clearSync()
            users[local].remote.lastSentUnread = unread
            for violation in users[local].channelChecker.observeSilentAccepted(at: now) {
                try journal.violation(violation, &users[local], at: now, detail: push.id, stats: &stats)
            }
        case .retryable(let failure):
            users[local].remote.syncAttempt += 1
            if users[local].remote.syncAttempt < RemoteChannel.retryPolicy.maxAttempts {
                users[local].remote.syncDueAt = now + retryDelaySeconds(local, afterAttempt: attempt + 1)
            } else {
                // The last change is always synced: the sync moves to the next slot.
                try failed(local, push, failure, on: .silent, at: now)
                users[local].remote.planSync(at: RemoteChannel.silentPushes.slot(after: now))
            }
        case .refused(let failure):
            try failed(local, push, failure, on: .silent, at: now)
            users[local].remote.clearSync()
        case .unregistered:
            users[local].remote.clearSync()
        }
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
        if attempt == 0 { stats.channels[channel].sent += 1 } else { stats.channels[channel].retries += 1 }
        let answer = users[local].remote.send(push, carrying: note, through: apns, at: now)
        switch answer {
        case .accepted:
            stats.channels[channel].accepted += 1
        case .unregistered(let since):
            stats.channels[channel].tokensRetired += 1
            users[local].remote.retiredAt = since
            users[local].remote.clearSync()
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
