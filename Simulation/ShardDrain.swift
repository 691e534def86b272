import Delivery
import Engagement
import Models
import Runtime
import Scheduling
import SimulatedPlatform
import Storage

/// The drain phase (after TigerBeetle's VOPR and FoundationDB's simulation): once the last week
/// is over, the world stands still (no new days, activity, answers, social events, travel or
/// permission changes) and APNs' faults and the server's stalls stop, while the platform and the engine run on (the
/// device fires what it holds, background tasks launch, the server sends what is due and runs
/// its daily job for each user, the coach answers). Every one-off notification waiting at the
/// end, on the device or at the server, due within `watchedHorizonSeconds` (a week), and every
/// item folded into a group due by then, is watched until it is delivered (an item: in whatever
/// group it ends in), cancelled, dropped or suppressed with a traced reason.
/// What is still waiting when the drain ends (the scenario's `drainDays`, 8 by default: a weekly
/// digest is due at most a week after its first item) is stuck: a liveness failure
/// (exit status 3), apart from the safety invariants (exit status 2). Each user's drain ends
/// when all they were waiting for has, so a run drains alike on any number of threads.
extension Shard {
    /// What is due within a week of the end is watched (a weekly digest included); a day of the
    /// drain is left for what is deferred past its time.
    static let watchedHorizonSeconds: Int64 = 7 * .secondsPerDay

    /// Runs the drain from `end`; `first` is the first event at or after it, already taken from
    /// the queue.
    func drain(from end: Int64, first: Event?) throws {
        guard scenario.drainDays > 0 else { return }
        draining = true
        apns.conditions.outagesPerWeek = 0
        apns.conditions.tooManyRequestsBurstsPerWeek = 0
        serverStalls.ratePerWeek = 0
        let horizon = Instant(
            secondsSinceEpoch: end + min(Self.watchedHorizonSeconds, Int64(scenario.drainDays - 1) * .secondsPerDay))
        for local in users.indices where !users[local].notificationsBlocked {
            var watched: Set<String> = []
            if isServerDeployment {
                // The server's local plan: what the phone should fire, whether or not it pulled it
                // (nothing, once the app is deleted), but for what a jump of the device's clock
                // already showed ahead of its time: the server learns of that only when its time
                // passes, as the device topology's centre no longer holds it either.
                for row in users[local].remote.outbox.rows
                where !users[local].phone.uninstalled && row.channel == .inbox && row.payload.repeatingMatch == nil
                    && row.dueAt <= horizon && users[local].releasedEarly[row.requestID] == nil
                {
                    if row.payload.shownBy == .local { watched.insert(row.requestID.rawValue) }
                }
            } else {
                for pending in users[local].center.pendingNotificationRequests
                where !DeviceClock.isDailySeries(pending.request) && pending.nextFire <= horizon {
                    watched.insert(pending.request.identifier.rawValue)
                }
            }
            for row in users[local].remote.outbox.rows where row.channel == .push && row.dueAt <= horizon {
                watched.insert(row.requestID.rawValue)
            }
            for flight in users[local].remote.inFlight where flight.row.channel == .push {
                watched.insert(flight.row.requestID.rawValue)
            }
            // Each item folded into a group due by then is owed by whatever group it ends in: a
            // digest the caps block moves its items to the next one.
            watched.formUnion(users[local].checker.owedItems(dueBy: horizon))
            users[local].drainWatch = watched
            stats.drain.watched += watched.count
            watching += watched.count
        }
        let limit = end + Int64(scenario.drainDays) * .secondsPerDay
        var lastTime = end
        var next = first
        while watching > 0, let event = next ?? queue.pop() {
            next = nil
            guard event.time < limit else { break }
            // A user's drain ends when all they were waiting for has: their events after that are
            // not handled, so the drain is the same whatever users share the thread.
            guard !users[Int(event.user)].drainWatch.isEmpty else { continue }
            switch event.kind {
            case .fire, .launch, .remote, .content, .clockJump, .planPull:
                lastTime = event.time
                stats.drain.events += 1
                try handle(event)
            case .dayStart:
                // No new day for the user, but the server runs its job rows on time whatever the
                // device's background scheduler does (`EngineRuntime` applies
                // `backgroundTaskLaunched(job)`): a daily pass, so what waits beyond the plan's
                // horizon (a digest days ahead) is planned. Timed as a background run. On the
                // server topology the job rows run themselves (`handleRemote`).
                let local = Int(event.user)
                guard users[local].dayStartAt == event.time else { continue }
                lastTime = event.time
                stats.drain.events += 1
                let now = Instant(secondsSinceEpoch: event.time)
                if !isServerDeployment {
                    try step(local, .backgroundTaskLaunched(.lapseDetection), at: now, timing: .backgroundRun)
                }
                scheduleNextDay(local, after: now)
            case .activity, .response, .travel, .weekEnd, .social, .permission, .liveActivity:
                continue  // the world stands still
            }
        }
        stats.drain.virtualSeconds = max(stats.drain.virtualSeconds, lastTime - end)
        for local in users.indices {
            for id in users[local].drainWatch.sorted() {
                stats.drain.stuck += 1
                if stats.drain.stuckExamples.count < ShardStats.violationExampleLimit {
                    stats.drain.stuckExamples.append("\(users[local].traits.profile.id) \(id)")
                }
            }
        }
    }

    /// During the drain: `id` (a request, or a folded item) reached an end: delivered (an item:
    /// its group was), cancelled, dropped or suppressed.
    func drainResolved(_ local: Int, _ id: String) {
        guard draining, users[local].drainWatch.remove(id) != nil else { return }
        watching -= 1
    }

    /// `drainResolved` for `id` and, when it is a group, for the folded items still in it.
    func drainResolvedWithItems(_ local: Int, _ id: String) {
        drainResolved(local, id)
        guard draining else { return }
        for item in users[local].checker.items(ofGroup: id) { drainResolved(local, item) }
    }
}

/// The drain phase's figures (`Shard.drain`).
public struct DrainFigures: Codable, Equatable, Sendable {
    /// Virtual time from the end of the last week to the last event the drain handled (the
    /// longest of the shards).
    public var virtualSeconds: Int64 = 0
    /// World-loop events handled during the drain.
    public var events = 0
    /// One-off notifications and folded items waiting at the end, watched until they reached an end.
    public var watched = 0
    /// Notifications shown during the drain.
    public var delivered = 0
    /// Watched notifications that never reached an end: liveness failures.
    public var stuck = 0
    public var stuckExamples: [String] = []

    public init() {}

    mutating func merge(_ other: DrainFigures) {
        virtualSeconds = max(virtualSeconds, other.virtualSeconds)
        events += other.events
        watched += other.watched
        delivered += other.delivered
        stuck += other.stuck
        stuckExamples += other.stuckExamples.prefix(max(0, ShardStats.violationExampleLimit - stuckExamples.count))
    }
}
