import Content
import Delivery
import Engagement
import Models
import Scheduling
import SimulatedPlatform

/// Executes the engine's platform effects for one user against the simulated platform: the
/// notification center, the background task scheduler and the coach. Traces are not platform
/// effects; the world journals them.
struct EffectExecutor {
    /// The simulated coach, shared by the shard's users (immutable; each user has its own draws).
    let coach: SimulatedCoach
    /// The app stops waiting for the coach at this point (virtual time).
    let deadlineMillis: Int
    /// In the server topology the engine's local requests and jobs are the server's rows: the
    /// phone's pending list follows its plan pulls, and its background scheduler runs the
    /// plan's refresh only.
    let onServer: Bool

    init(coach: CoachBehaviour, library: TemplateLibrary, deployment: Deployment = .device) {
        self.coach = SimulatedCoach(behaviour: coach, library: library)
        deadlineMillis = coach.deadlineMillis
        onServer = deployment == .server
    }

    /// Something the platform will do later because of an effect.
    struct FollowUp {
        var time: Int64
        var kind: EventKind
    }

    /// Executes `effect` on `user`'s platform at `now`; returns the event it leads to, if any.
    func execute(_ effect: Effect, on user: inout UserState, at now: Instant, stats: inout ShardStats) -> FollowUp? {
        switch effect {
        case .schedule(_, _, .remote):
            // Sent by the server when due (`Shard.commitServer`), not planned on the device.
            break
        case .schedule where onServer, .cancel where onServer, .submitBackgroundTask where onServer:
            // The server's rows (`Shard.commitServer`); the phone learns of them at its next pull.
            break
        case .schedule(let request, let fireAt, _):
            // A one-off a jump of the clock already showed is in the delivered list: not again.
            if !request.trigger.repeats, user.releasedEarly[request.identifier] != nil { return nil }
            do {
                // On the device's clock: moved by its error (`DeviceClock`).
                var moved = request
                if user.clockOffsetSeconds != 0 {
                    if request.trigger.repeats { user.heldSeries[request.identifier] = request }
                    let next = request.trigger.repeats ? user.seriesFire(request.identifier, plannedAt: fireAt) : fireAt
                    moved = DeviceClock.onDeviceClock(
                        request, firingAt: next, offsetSeconds: user.clockOffsetSeconds, in: user.zone)
                }
                try user.center.add(moved, at: user.addingTime(moved, at: now))
            } catch {
                stats.scheduleRejected += 1
                user.notificationsBlocked = true
                // The request it was meant to replace must not fire at its old time later: the
                // app withdraws it and tells the engine, which plans afresh when allowed again.
                if error == .notificationsNotAllowed { user.withdrawRefused(request.identifier) }
            }
        case .cancel(let ids):
            // The server withdraws its rows of them (`Shard.commitServer`).
            user.center.removePendingNotificationRequests(withIdentifiers: ids)
        case .setBadge(let count):
            user.center.setBadgeCount(count)
        case .submitBackgroundTask(let request):
            do {
                try user.background.submit(request, at: now)
            } catch {
                stats.backgroundSubmitRejected += 1
            }
        case .openDeepLink:
            break
        case .generateContent(let requestID, let request):
            let outcome = coach.outcome(for: request, using: &user.coachRandom)
            let millis: Int =
                switch outcome {
                case .text(_, let latency), .failed(_, let latency): min(latency, deadlineMillis)
                case .timedOut: deadlineMillis
                }
            stats.contentMillis.record(UInt64(millis))
            if millis >= deadlineMillis { stats.contentAtDeadline += 1 }
            // A late answer is cut at the deadline: the app stops waiting then.
            let settled: CoachOutcome =
                if case .text(_, let latency) = outcome, latency > deadlineMillis { .timedOut } else { outcome }
            let seconds = Int64((millis + 999) / 1_000)
            return FollowUp(
                time: now.secondsSinceEpoch + max(1, seconds),
                kind: .content(requestID: requestID, outcome: settled))
        case .clearDeliveredNotifications:
            user.center.removeAllDeliveredNotifications()
        case .trace:
            break
        case .liveActivity:
            // The simulated users start no workouts or meal windows in the app yet.
            break
        }
        return nil
    }
}
