import Delivery
import Engagement
import LiveActivity
import Models
import Runtime
import Scheduling
import SimulatedPlatform
import Storage

/// One user's Live Activities on the simulated device: ActivityKit's center (Apple's limits:
/// 8 h active, 4 KB, stale dates, the hourly budget of priority-10 pushes) and the engine's
/// names of its activities (`workout-1`) mapped to the center's.
struct LiveActivityDevice {
    var center = SimulatedLiveActivityCenter()
    /// The engine's activity id -> the center's.
    var deviceIDs: [String: String] = [:]
    /// Push tokens already reported to the engine, by the engine's activity id.
    var reportedTokens: [String: String] = [:]
    /// The sequence of the last command applied to each running activity (older pushes are ignored).
    var lastApplied: [String: Int] = [:]
}

/// Live Activities in the world loop: a simulated user's workout starts, updates and ends its
/// activity through the engine (`LiveActivityTracker`); the app runs the start itself (in the
/// foreground, as ActivityKit requires), updates and ends go by push through the simulated APNs
/// once the activity's push token reached the engine, and locally before. Anything the device's
/// center refuses breaks `liveActivityWithinLimits`: the engine must stay within Apple's limits.
extension Shard {
    /// Seconds between the workout's updates from the app (elapsed time, heart rate, calories).
    static let workoutUpdateSeconds: Int64 = 300

    /// Queues the Live Activity events of a workout that ends at `end` after `minutes`.
    func scheduleWorkoutActivity(_ local: Int, endingAt end: Int64, minutes: Int) {
        let start = end - Int64(minutes) * 60
        let user = Int32(local)
        queue.push(time: start, user: user, kind: .liveActivity(.workoutStarted(workoutType: "Run")))
        var at = start + Self.workoutUpdateSeconds
        while at < end - 1 {
            queue.push(time: at, user: user, kind: .liveActivity(.workoutUpdated(Self.workoutState(at - start))))
            at += Self.workoutUpdateSeconds
        }
        queue.push(time: end - 1, user: user, kind: .liveActivity(.workoutEnded(Self.workoutState(end - 1 - start))))
    }

    /// A workout's figures after `elapsed` seconds (a steady run: no draws, so the behaviour's
    /// random stream is untouched).
    static func workoutState(_ elapsed: Int64) -> WorkoutActivityAttributes.ContentState {
        let minutes = Int(elapsed / 60)
        return .init(
            elapsedSeconds: Int(elapsed), heartRate: 120 + minutes % 35, activeCalories: minutes * 11,
            currentExercise: "Run")
    }

    /// The `.liveActivity` event: the app reports the workout to the engine, every call timed
    /// against the 500 ms budget, after handing it any push token that arrived meanwhile.
    func handleLiveActivity(_ local: Int, _ event: LiveActivityEvent, at now: Instant) throws {
        guard !users[local].isAway(at: now.secondsSinceEpoch) else { return }
        try reportPushTokens(local, at: now)
        try step(local, .liveActivity(event), at: now, timing: .liveActivity)
    }

    /// Hands the engine the push tokens the system issued since the last event.
    private func reportPushTokens(_ local: Int, at now: Instant) throws {
        users[local].liveActivities.center.advance(to: now)
        // In name order: a dictionary's order changes from process to process, the digest must not.
        let activities = inPlace(local) { $0.liveActivities.deviceIDs.sorted(by: { $0.key < $1.key }) }
        for (engineID, deviceID) in activities {
            // A new or changed token is noted as reported, then reported (in place: see `inPlace`).
            let changed = inPlace(local) { user -> String? in
                guard let token = user.liveActivities.center.activity(id: deviceID)?.pushToken,
                    user.liveActivities.reportedTokens[engineID] != token
                else { return nil }
                user.liveActivities.reportedTokens[engineID] = token
                return token
            }
            guard let token = changed else { continue }
            try step(local, .liveActivity(.pushTokenReceived(activityID: engineID, token: token)), at: now)
        }
    }

    /// Performs one command of the engine on the device: the app's start, and its updates and
    /// end before the activity's push token reached the engine. The server pushes the others:
    /// the command's outbox row (`OutboxPlan`) is sent by the server's own send
    /// (`Shard.startSend`), and what arrives is applied here (`applyLiveActivity`).
    func performLiveActivity(_ local: Int, _ command: LiveActivityCommand, at now: Instant) throws {
        guard command.event == .start || command.pushToken == nil else { return }
        stats.channels[.liveActivity].sent += 1
        try applyLiveActivity(local, command, byPush: false, at: now)
    }

    /// Applies a command on the device: the app's own start, update or end, or a push that
    /// arrived. A push older than what the activity shows, or for an activity already gone, is
    /// ignored as ActivityKit ignores it (APNs' `timestamp`); anything else the center refuses
    /// breaks `liveActivityWithinLimits`.
    func applyLiveActivity(_ local: Int, _ command: LiveActivityCommand, byPush: Bool, at now: Instant) throws {
        var refusal: String?
        do {
            refusal = try apply(local, command, byPush: byPush, at: now)
        } catch let error {
            refusal = "\(error)"
        }
        if let refusal {
            try journal.violation(
                .liveActivityWithinLimits, &users[local], at: now, detail: "\(command.activityID): \(refusal)",
                stats: &stats)
        }
    }

    /// The command applied; a refusal's words, or nil.
    private func apply(
        _ local: Int, _ command: LiveActivityCommand, byPush: Bool, at now: Instant
    ) throws(LiveActivityError) -> String? {
        if command.event == .start {
            let id = try users[local].liveActivities.center.start(command.attributes, content: command.content, at: now)
            users[local].liveActivities.deviceIDs[command.activityID] = id
            users[local].liveActivities.lastApplied[command.activityID] = command.sequence
            stats.channels[.liveActivity].shown += 1
            return nil
        }
        guard let id = inPlace(local, { $0.liveActivities.deviceIDs[command.activityID] }),
            command.sequence > inPlace(local, { $0.liveActivities.lastApplied[command.activityID] ?? 0 })
        else {
            if byPush {
                stats.channels[.liveActivity].failed["LateOrEnded", default: 0] += 1
                return nil
            }
            return "no running activity \(command.activityID) on the device"
        }
        switch command.event {
        case .start:
            return nil
        case .update:
            if byPush {
                let result = try users[local].liveActivities.center.receivePushUpdate(
                    id: id, content: command.content, priority: command.priority, at: now)
                if result == .throttled { return "a priority-10 update over the activity's hourly budget" }
            } else {
                try users[local].liveActivities.center.update(id: id, content: command.content, at: now)
            }
            users[local].liveActivities.lastApplied[command.activityID] = command.sequence
        case .end:
            try users[local].liveActivities.center.end(
                id: id, content: command.content, dismissal: command.dismissal ?? .default, at: now)
            users[local].liveActivities.deviceIDs[command.activityID] = nil
            users[local].liveActivities.reportedTokens[command.activityID] = nil
            users[local].liveActivities.lastApplied[command.activityID] = nil
        }
        stats.channels[.liveActivity].shown += 1
        return nil
    }
}
