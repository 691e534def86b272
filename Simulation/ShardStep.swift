import Content
import Delivery
import Engagement
import Models
import Runtime
import Scheduling
import Storage

/// One step of a user's engine in the world loop: the input applied, timed and committed, its
/// effects executed, and each of its decisions counted, checked and journaled.
extension Shard {
    /// Runs the engine on one input, times it (every background run, one scheduling decision in
    /// `DecisionSampler.every`), executes its effects, checks the pending list and records the
    /// step's writes. `nanos` is nil for a call that was not timed.
    /// `sentLate` marks an event the phone queued offline and sends now (`sendQueuedEvents`).
    @discardableResult
    func step(
        _ local: Int, _ input: EngineInput, at now: Instant, timing: StepTiming = .sampledDecision,
        sentLate: Bool = false
    ) throws -> (nanos: UInt64?, effects: [Effect]) {
        if !sentLate, try queuesOffline(local, input, at: now) { return (nil, []) }
        let failure = scenario.faults.storeWriteFailure
        let before =
            failure > 0 && users[local].commitDraws.chance(failure) ? StoredEngine(users[local].engine) : nil
        if let tape {
            // On the device topology the phone holds its engine: no step asks for the signal.
            let source = isServerDeployment ? Self.source(of: input) : .device
            tape.record(.input(input, from: source), of: users[local].traits.profile.id, at: now)
        }
        if isServerDeployment && !sentLate { try phoneWithdraws(local, after: input, at: now) }
        let revisionBefore = isServerDeployment ? inPlace(local) { $0.engine.localPlanRevision } : 0
        let zoneBefore = inPlace(local) { $0.engine.zone.identifier }
        let engineBefore = checksIncrementalPlan ? users[local].engine : nil
        let phone = phoneHearing(of: input, at: now)
        let timed = timing != .sampledDecision || sampler.next()
        let started = timed ? threadCPUNanoseconds() : 0
        var effects = users[local].engine.handle(input, at: now, phone: phone)
        let nanos = timed ? threadCPUNanoseconds() &- started : nil
        if let before {
            effects = try retryAfterFailedCommit(
                local, input, before: before, failed: effects, phone: phone, at: now)
        }
        if let nanos {
            switch timing {
            case .sampledDecision: stats.decisionNanos.record(nanos)
            case .backgroundRun: stats.backgroundNanos.record(nanos)
            case .liveActivity: stats.liveActivityNanos.record(nanos)
            }
        }
        stats.engineCalls += 1
        if let engineBefore {
            stats.incrementalPlan.check(users[local].engine, before: engineBefore, after: input, phone: phone, at: now)
        }
        for effect in effects {
            if case .trace(let entry) = effect {
                try recordDecision(entry, local, at: now)
            } else if case .liveActivity(let command) = effect {
                try performLiveActivity(local, command, at: now)
            } else if let followUp = executor.execute(effect, on: &users[local], at: now, stats: &stats) {
                queue.push(time: followUp.time, user: Int32(local), kind: followUp.kind)
            }
        }
        let dropped = users[local].center.droppedByLimitCount
        for violation in users[local].checker.observePending(
            count: users[local].center.pendingNotificationRequests.count,
            droppedSinceLastCheck: dropped - users[local].droppedSeen)
        {
            try journal.violation(violation, &users[local], at: now, detail: "pending", stats: &stats)
        }
        users[local].droppedSeen = dropped
        // As the runtime decides it: the engine's zone is not the one it had before the step.
        let zoneChanged = inPlace(local) { $0.engine.zone.identifier != zoneBefore }
        commitServer(local, input, effects, revisionBefore: revisionBefore, zoneChanged: zoneChanged, at: now)
        // Events the kit sends from its queue are answered together: the phone pulls after the last.
        if isServerDeployment && !sentLate {
            try followPlanChange(local, input, revisionBefore: revisionBefore, at: now)
        }
        rescheduleFire(local)
        rescheduleLaunch(local)
        rescheduleRemote(local)
        try storeWriter?.recordStep(input, effects: effects, engine: users[local].engine, at: now)
        // With the clock off, the app moves its date triggers onto the re-timed plan, and holds
        // the next occurrence of each series (each adds its fire event).
        if case .timeZoneChanged = input, !isServerDeployment { resyncAfterZoneChange(local, at: now) }
        holdSeries(local, at: now)
        // A refusal: the engine learns it at once, and that step checks the plan against the device.
        if try reportRefusal(local, at: now) { return (nanos, effects) }
        let deviceMoved: Bool
        switch input {
        case .timeZoneChanged, .notificationPermission: deviceMoved = true
        default: deviceMoved = false
        }
        // In the server topology the device follows the plan at pulls, and is judged there.
        if !isServerDeployment { try checkPlanMatchesPlatform(local, after: effects, at: now, always: deviceMoved) }
        return (nanos, effects)
    }

    /// When the phone hears of a change an input makes at `now` (`PhoneHearing`), as the server
    /// knows it: at once on the device topology (the engine is on the phone) and for the phone's
    /// own input (its answer carries the plan's version); otherwise with the next sync.
    func phoneHearing(of input: EngineInput, at now: Instant) -> PhoneHearing {
        isServerDeployment
            ? PhoneHearing.of(Self.source(of: input), silentPushes: RemoteChannel.silentPushes, at: now) : .atOnce
    }

    /// Tells the engine the device refused a request (`UserState.withdrawRefused`), if it did;
    /// returns whether it did. On the server topology the kit reported the change of permission
    /// when it happened (`DeviceReporter`): a refused request tells the server nothing new.
    @discardableResult
    func reportRefusal(_ local: Int, at now: Instant) throws -> Bool {
        guard users[local].refusalToReport else { return false }
        users[local].refusalToReport = false
        guard !isServerDeployment else { return false }
        try step(local, .notificationPermission(allowed: false), at: now)
        return true
    }

    /// One decision of the engine: counted, checked and journaled.
    func recordDecision(_ entry: TraceEntry, _ local: Int, at now: Instant) throws {
        if draining {
            switch entry.decision {
            case .cancelled, .dropped, .suppressed:
                // Counted items (watched by their own ids) reach their end with their group.
                guard entry.countedItems != nil else {
                    drainResolved(local, entry.requestID)
                    break
                }
                for item in users[local].checker.items(ofGroup: entry.requestID) { drainResolved(local, item) }
            case .scheduled, .deferred, .copyChosen, .folded: break
            }
        }
        stats.decisions[entry.decision] += 1
        switch entry.reason {
        case .coachCopy: stats.content.ai += 1
        case .templateFallback:
            stats.content.templateFallback += 1
            if case .templateKept(let code) = entry.why { stats.content.fallbackReasons[code, default: 0] += 1 }
        default: break
        }
        for violation in users[local].checker.observe(entry, zone: users[local].engine.zone) {
            try journal.violation(violation, &users[local], at: now, detail: entry.requestID, stats: &stats)
        }
        try journal.decision(entry, &users[local], at: now)
    }
}
