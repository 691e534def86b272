import Delivery
import Engagement
import EngagementKit
import Models
import Runtime
import Scheduling
import SimulatedPlatform
import Storage

/// The phone in the server topology (`Deployment.server`): it holds a copy of the server's local
/// plan, pulled through EngagementKit's `PlanSync`, and every local notification it fires is
/// judged against the server's plan of that instant (a stale fire when the plan no longer held
/// it). What prompts a pull: the answer to the phone's own event (online), the plan signal's
/// background push, a background refresh, the network coming back after an event sent offline.
extension Shard {
    /// The background refresh's task identifier (listed as permitted, as an app lists it).
    static let planRefreshIdentifier = "com.example.fitness.plan-refresh"

    var isServerDeployment: Bool { scenario.deployment == .server }

    /// What the app believes planned when it moves requests onto a wrong clock (`DeviceClock`):
    /// the engine's plan where the engine runs on the phone, the last plan pulled where it runs
    /// on the server.
    func appBelieves(_ local: Int) -> [BelievedRequest] {
        if isServerDeployment { return users[local].phone.pulled }
        return users[local].engine.planned.map {
            BelievedRequest(id: $0.id.requestID, fireAt: $0.fireAt, repeatsDaily: $0.repeatsDaily)
        }
    }

    /// Who gives the server `input`, by the route a deployed app or backend would use: the
    /// phone posts its events (activity, responses, launches, permission, its time zone as the
    /// kit reports it, Live Activity events); the backend writes preferences and profile and
    /// sends social events; the server's own due work runs jobs, takes the coach's answers and
    /// the syncs that missed the phone.
    static func source(of input: EngineInput) -> InputSource {
        switch input {
        case .appLaunched, .activity, .notificationResponse, .unrecognizedResponse, .liveActivity,
            .notificationPermission, .timeZoneChanged:
            .device
        case .backgroundTaskLaunched, .preferencesChanged, .profileChanged, .socialEvent, .contentGenerated,
            .syncMissed:
            .backend
        }
    }

    /// After a step in the server topology that moved the plan from `revisionBefore`: a step not
    /// from the phone asked for the signal (the badge sync row its commit holds, `StepOutbox`);
    /// one from the phone is answered with the version, and the phone pulls when it differs from
    /// what it holds (offline: when the network comes back and the queued event is sent).
    func followPlanChange(_ local: Int, _ input: EngineInput, revisionBefore: Int, at now: Instant) throws {
        let revision = inPlace(local) { $0.engine.localPlanRevision }
        switch Self.source(of: input) {
        case .backend:
            guard revision != revisionBefore else { return }
            stats.deployment.signals += 1
        case .device:
            guard users[local].phone.sync.needsPull(signalled: revision) else { return }
            if users[local].remote.device.isOffline(at: now) {
                stats.deployment.pullsOffline += 1
                pullWhenOnline(local, at: now)
            } else {
                try pullPlan(local, reason: .event, at: now)
            }
        }
    }

    /// The phone sent an event offline: the queue sends it when the network is back, and the
    /// answer names the plan's version (`.planPull`). One such pull is queued at a time; one
    /// that finds the phone offline again waits for the end of that spell.
    func pullWhenOnline(_ local: Int, at now: Instant) {
        guard users[local].phone.pullQueuedAt == nil, let back = users[local].remote.device.onlineAgain(at: now)
        else { return }
        users[local].phone.pullQueuedAt = back.secondsSinceEpoch
        queue.push(time: back.secondsSinceEpoch, user: Int32(local), kind: .planPull)
    }

    /// The `.planPull` event: the network is back (or was lost again: wait once more). The kit's
    /// queue sends the events made offline first, in order, then the phone pulls if behind (any
    /// pull made online sends the queue first too, `pullPlan`).
    func pullAfterReconnecting(_ local: Int, at now: Instant) throws {
        guard users[local].phone.pullQueuedAt == now.secondsSinceEpoch else { return }
        users[local].phone.pullQueuedAt = nil
        if users[local].remote.device.isOffline(at: now) {
            pullWhenOnline(local, at: now)
        } else {
            try sendQueuedEvents(local, at: now)
            try pull(local, ifBehind: inPlace(local) { $0.engine.localPlanRevision }, reason: .event, at: now)
        }
    }

    /// Whether the phone keeps `input` in the kit's queue instead of sending it: in the server
    /// topology, the user's own activity and answers, and the zone the kit reports, made while
    /// the device is offline. The kit withdraws what the event makes moot at once
    /// (`phoneWithdraws`); the server hears of the event only when the network is back
    /// (`sendQueuedEvents`), as a deployed server does. App launches, the permission and Live
    /// Activity reports are sent as they happen.
    func queuesOffline(_ local: Int, _ input: EngineInput, at now: Instant) throws -> Bool {
        guard isServerDeployment, !users[local].phone.uninstalled else { return false }
        switch input {
        case .activity, .notificationResponse, .unrecognizedResponse, .timeZoneChanged: break
        default: return false
        }
        guard users[local].remote.device.isOffline(at: now) else { return false }
        try phoneWithdraws(local, after: input, at: now)
        // The kit's queued event says when it happened: an activity, so the server knows what
        // the kit withdrew for it; a move, what the phone fired in the new zone before it heard.
        switch input {
        case .activity(let activity, nil): users[local].phone.queuedEvents.append(.activity(activity, occurredAt: now))
        case .timeZoneChanged(let zone, nil):
            users[local].phone.queuedEvents.append(.timeZoneChanged(zone, movedAt: now))
        default: users[local].phone.queuedEvents.append(input)
        }
        stats.deployment.eventsQueuedOffline += 1
        try journal.log(&users[local], now, "queuedOffline")
        pullWhenOnline(local, at: now)
        return true
    }

    /// The network is back: the kit sends the events it queued, in order; the server applies
    /// each at `now`, when it receives it. The caller pulls after the last (`pullPlan`,
    /// `pullAfterReconnecting`), so no pull sees the server between two of them.
    func sendQueuedEvents(_ local: Int, at now: Instant) throws {
        let queued = users[local].phone.queuedEvents
        guard !queued.isEmpty else { return }
        users[local].phone.queuedEvents = []
        for input in queued { try step(local, input, at: now, sentLate: true) }
    }

    enum PullReason { case event, signal, refresh }

    /// The phone pulls when the version `signalled` (an event's answer, a sync push) is not the
    /// one it holds (`PlanSync.needsPull`).
    func pull(_ local: Int, ifBehind signalled: Int, reason: PullReason, at now: Instant) throws {
        guard users[local].phone.sync.needsPull(signalled: signalled) else { return }
        try pullPlan(local, reason: reason, at: now)
    }

    /// The phone pulls the plan at `now` and applies it (`PlanSync.apply`): 304 when it holds
    /// the version already. While the device's clock is off, the app then moves what it placed
    /// onto that clock, as it moves every request (`DeviceClock`), and holds back a one-off a
    /// jump of the clock showed already.
    func pullPlan(_ local: Int, reason: PullReason, at now: Instant) throws {
        guard !users[local].phone.uninstalled else { return }
        guard !users[local].remote.device.isOffline(at: now) else {
            stats.deployment.pullsOffline += 1
            try journal.log(&users[local], now, "planPull") { $0.id("outcome", "offline") }
            return
        }
        // Online, the kit's queue goes first: the plan answered then already heard of it.
        try sendQueuedEvents(local, at: now)
        switch reason {
        case .event: stats.deployment.pullsAfterEvent += 1
        case .signal: stats.deployment.pullsOnSignal += 1
        case .refresh: stats.deployment.pullsOnRefresh += 1
        }
        let started = users[local].phone.sync.startPull()
        let version = inPlace(local) { $0.engine.localPlanRevision }
        guard started.heldVersion != version else {
            users[local].phone.heardEverything(profile: users[local].engine.profile)
            stats.deployment.notModified += 1
            try journal.log(&users[local], now, "planPull") { $0.id("outcome", "notModified") }
            return
        }
        let served = inPlace(local) { user in
            // Read before the call, not through the engine inside the closure (which would copy
            // it). The server's zone, which lags the device's while a move waits offline.
            let zone = user.engine.zone
            let heard = user.engine.heardActivity
            return LocalPlan(
                pending: user.remote.outbox.rows, version: version, zone: zone, horizonEnd: user.engine.planHorizonEnd,
                withdrawals: { UserEngine.withdrawals(ofRequest: $0, zone: zone, heard: heard) },
                at: now)
        }
        // The server answers with only what changed since the version the phone holds, when
        // it still knows that version (`ServedPlans`).
        let answered = users[local].remote.servedPlans.answer(served, since: started.since, at: now)
        if DeploymentStats.measuresPlanBytes(
            answered: users[local].phone.plansAnswered, userIndex: users[local].traits.index),
            let answer = try? PlanWire(answered).encodedAnswer()
        {
            stats.deployment.planAnswerBytes.record(UInt64(answer.count))
        }
        users[local].phone.plansAnswered += 1
        stats.deployment.plansAnswered += 1
        if answered.delta != nil { stats.deployment.deltaAnswers += 1 }
        let plan = ServerPlan(answered)
        let outcome = inPlace(local) { user in
            user.phone.sync.apply(.plan(plan), to: &user.center, at: user.deviceTime(now), answering: started)
        }
        switch outcome {
        case .refusedOlder, .refusedDelta:
            // A pull is made and answered at one instant, against the one server's copy of the
            // version the phone holds: a refusal means the phone's plan and the server's differ.
            try journal.violation(
                .planMatchesPlatform, &users[local], at: now, detail: "the kit refused the answer: \(outcome)",
                stats: &stats)
            return
        case .unchanged, .applied: break
        }
        users[local].phone.horizonEnd = plan.horizonEnd
        // What the server observed: the plan it answered (the engine counts it as the phone's).
        users[local].engine.phoneApplied(served.entries.lazy.map { ($0.request.identifier, $0.nextFireAt) }, at: now)
        users[local].phone.heardEverything(profile: users[local].engine.profile)
        tape?.record(.planServed, of: users[local].traits.profile.id, at: now)
        users[local].phone.pulled = served.entries.map {
            BelievedRequest(id: $0.request.identifier, fireAt: $0.nextFireAt, repeatsDaily: $0.request.trigger.repeats)
        }
        try journal.log(&users[local], now, "planPull") {
            $0.field("version", "\(version)")
            if case .applied(let reconciliation, let refused, _) = outcome {
                $0.field("added", "\(reconciliation.add.count)")
                $0.field("removed", "\(reconciliation.remove.count)")
                if !refused.isEmpty { $0.field("refused", "\(refused.count)") }
            }
        }
        guard case .applied(let reconciliation, let refused, _) = outcome else { return }
        if refused.values.contains(.notificationsNotAllowed) { users[local].notificationsBlocked = true }
        let offset = users[local].clockOffsetSeconds
        let fireTimes = Dictionary(
            served.entries.map { ($0.request.identifier, $0.nextFireAt) }, uniquingKeysWith: { first, _ in first })
        for request in reconciliation.add where refused[request.identifier] == nil {
            let id = request.identifier
            if !request.trigger.repeats, users[local].releasedEarly[id] != nil {
                users[local].center.removePendingNotificationRequests(withIdentifiers: [id])
            } else if offset != 0, let fireAt = fireTimes[id] {
                if request.trigger.repeats { users[local].heldSeries[id] = request }
                let next = request.trigger.repeats ? users[local].seriesFire(id, plannedAt: fireAt) : fireAt
                addToDevice(
                    local,
                    DeviceClock.onDeviceClock(request, firingAt: next, offsetSeconds: offset, in: users[local].zone),
                    at: now)
            }
        }
        rescheduleFire(local)
        try reportRefusal(local, at: now)
        // The phone holds the whole plan: what the engine believes pending is what the device
        // holds, but for the one-offs it showed already (`PlanReconciliation`).
        guard users[local].phone.sync.state.version == version, offset == 0 else { return }
        var shown = users[local].releasedEarly
        for (id, at) in users[local].phone.sync.state.oneOffs where at <= now { shown[id] = at.secondsSinceEpoch }
        if let difference = PlatformAgreement.difference(
            planned: users[local].engine.planned, pending: users[local].center.pendingNotificationRequests,
            effects: [], now: now, releasedEarly: shown)
        {
            try journal.violation(.planMatchesPlatform, &users[local], at: now, detail: difference, stats: &stats)
        }
    }

    /// The phone asks iOS for its next background refresh (`PlanRefresh`), which runs late or
    /// never as the scenario's background faults say.
    func askForPlanRefresh(_ local: Int, at now: Instant) {
        let earliest = PlanRefresh().nextRefresh(at: now, horizonEnd: users[local].phone.horizonEnd)
        let request = BackgroundTaskRequest(
            identifier: Self.planRefreshIdentifier, kind: .appRefresh, earliestBegin: earliest,
            requiresNetworkConnectivity: true, requiresExternalPower: false)
        do { try users[local].background.submit(request, at: now) } catch { stats.backgroundSubmitRejected += 1 }
        rescheduleLaunch(local)
    }

    /// The phone's own event, as the app queues it (before the server hears of it, offline or
    /// not): the kit withdraws what the plan says it makes moot (`PlanSync.withdraw`), at true
    /// time: the app knows its clock's error (`DeviceClock`) and stamps its events without it.
    /// A setting the user changes in the app is withdrawn from as it changes
    /// (`PlanSync.withdraw(ruledOutBy:)`), while the app's backend writes it to the server.
    func phoneWithdraws(_ local: Int, after input: EngineInput, at now: Instant) throws {
        guard !users[local].phone.uninstalled else { return }
        let at = now
        var withdrawn: [RequestID] = []
        switch input {
        case .activity(let activity, _):
            let event = WithdrawingEvent(activity, at: at)
            withdrawn = inPlace(local) { user in user.phone.sync.withdraw(after: event, from: &user.center) }
        case .notificationResponse(_, _, let action):
            guard let event = WithdrawingEvent(answering: action, at: at) else { return }
            withdrawn = inPlace(local) { user in user.phone.sync.withdraw(after: event, from: &user.center) }
        case .preferencesChanged, .profileChanged:
            let old = users[local].engine.profile
            for change in Self.settingChanges(from: old, by: input) {
                withdrawn += inPlace(local) { user in
                    let zone = user.zone
                    return user.phone.sync.withdraw(ruledOutBy: change, zone: zone, from: &user.center)
                }
            }
        default: return
        }
        guard !withdrawn.isEmpty else { return }
        stats.deployment.withdrawnOnPhone += withdrawn.count
        // The app no longer holds a withdrawn series either: with the clock off, it would re-arm
        // it from the last plan it pulled (`holdSeries`), outside the kit's hands.
        for id in withdrawn { users[local].heldSeries[id] = nil }
        rescheduleFire(local)
        try journal.log(&users[local], now, "withdrawnOnPhone") {
            $0.field("ids", withdrawn.map(\.rawValue).joined(separator: " "))
        }
    }

    /// What `input` changes of `old`'s settings that rules requests out.
    static func settingChanges(from old: UserProfile, by input: EngineInput) -> [SettingChange] {
        let new: UserProfile
        switch input {
        case .preferencesChanged(let preferences):
            new = {
                var profile = old; profile.preferences = preferences; return profile
            }()
        case .profileChanged(let profile): new = profile
        default: return []
        }
        var changes: [SettingChange] = []
        if old.preferences.enabled && !new.preferences.enabled { changes.append(.notificationsOff) }
        let disabled = Set(new.preferences.disabledKinds).subtracting(old.preferences.disabledKinds)
        if !disabled.isEmpty { changes.append(.kindsDisabled(disabled)) }
        if let quiet = new.preferences.quietHours, quiet != old.preferences.quietHours {
            changes.append(.quietHours(quiet))
        }
        if new.communication.absenceResponse == .giveMeSpace && old.communication.absenceResponse != .giveMeSpace {
            changes.append(.giveMeSpace)
        }
        return changes
    }

    /// Counts `fired` (true times) that the server's plan no longer held when they fired.
    func judgeFreshness(_ local: Int, _ fired: [DeliveredNotification]) throws {
        for notification in fired
        where !users[local].phone.holds(notification.request, firedAt: notification.deliveredAt) {
            stats.deployment.staleFires += 1
            let changed = users[local].phone.changedAt[notification.request.identifier]
            let age = changed.map { max(0, notification.deliveredAt.secondsSinceEpoch - $0) } ?? 0
            stats.deployment.staleAgeSeconds.record(UInt64(age))
            let cause = staleFireCause(local, changedAt: changed, at: notification.deliveredAt)
            stats.deployment.staleFiresByCause[cause] += 1
            if cause.phoneCouldHear { stats.deployment.heardStaleAgeSeconds.record(UInt64(age)) }
            try journal.log(&users[local], notification.deliveredAt, "staleFire") {
                $0.id("id", notification.request.identifier.rawValue)
                $0.field("ageSeconds", "\(age)")
                $0.id("cause", cause.rawValue)
            }
        }
    }
}
