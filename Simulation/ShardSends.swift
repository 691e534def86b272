import Delivery
import Engagement
import LiveActivity
import Models
import Runtime
import Scheduling
import Storage

/// The server's sends in the world loop: a due row's push is prepared as
/// `APNsChannelTransport` prepares it (`PushSends`), sent through the simulated APNs with the
/// APNs client's bounded retries in virtual time, and its outcome reported as the transport
/// reports it (`SendReport`), so what follows is the runtime's own decision
/// (`OutboxSteps.afterSend`).
extension Shard {
    /// A send's step: the push is prepared as `APNsChannelTransport` prepares it (an alert the
    /// send rules hold back is withheld whether or not the user has a device) and its first
    /// attempt made. A user whose token was retired has no device left: nothing is sent, but a
    /// Live Activity's push goes to the activity's own token all the same.
    func startSend(_ local: Int, _ row: OutboxRow, at now: Instant) throws {
        let channel = row.countedChannel
        let unread = users[local].remote.inbox.unreadCount
        let address = users[local].remote.address
        let push: PushRequest
        let note: PushNote
        switch row.channel {
        case .liveActivity:
            guard let (prepared, command) = preparedLiveActivity(local, row, at: now) else { return }
            push = prepared
            note = .liveActivity(command)
        case .silent:
            let counts = InboxCounts(total: users[local].remote.inbox.total, unread: unread, unseen: unread)
            push = PushSends.sync(
                key: row.key, slot: row.dueAt, counts: counts, planVersion: users[local].engine.localPlanRevision,
                plan: RemoteChannel.silentPushes, topic: RemoteChannel.topic
            ).request(to: address)
            note = .sync(unread: unread, planVersion: users[local].engine.localPlanRevision)
        default:
            // The server's rows are readable (`OutboxSteps.step` discards any other).
            guard var request = row.payload.notification else { return }
            // The release the engine decided, at the time it chose.
            try judgeRelease(local, request, at: row.dueAt, shownNow: false)
            let rules = inPlace(local) { ShowingRules(profile: $0.engine.profile, zone: $0.zone) }
            switch PushSends.alert(
                request, key: row.key, plannedAt: row.dueAt, badge: unread, topic: RemoteChannel.topic, rules: rules,
                at: now)
            {
            case .success(let prepared): push = prepared.request(to: address)
            case .failure(let withheld):
                // The inbox holds it; the badge it would have carried goes by a sync.
                stats.channels[.remote].failed[withheld.reason, default: 0] += 1
                finish(local, row, .withheld(reason: withheld.reason), dispatchedAt: now)
                return
            }
            request.content.badge = unread
            note = .alert(request)
        }
        guard users[local].remote.retiredAt == nil || row.channel == .liveActivity else {
            stats.channels[channel].failed["NoDevice", default: 0] += 1
            finish(local, row, .accepted, dispatchedAt: now)
            return
        }
        try attempt(
            local,
            RemoteChannel.InFlight(
                row: row, push: push, note: note, attempts: 0, nextAttemptAt: now, dispatchedAt: now),
            at: now)
    }

    /// A Live Activity row's push, as `APNsChannelTransport` prepares it: an update or an end
    /// with the activity's push token; a start (the app starts its activities itself), a command
    /// without a token yet, or a payload over the limit is withheld (the row is finished, nil).
    private func preparedLiveActivity(_ local: Int, _ row: OutboxRow, at now: Instant)
        -> (PushRequest, LiveActivityCommand)?
    {
        guard case .liveActivity(let command) = row.payload else {
            finish(local, row, .refused(reason: "Unreadable"), dispatchedAt: now)
            return nil
        }
        guard command.event != .start, let token = command.pushToken else {
            finish(local, row, .withheld(reason: command.event == .start ? "AppStarts" : "NoToken"), dispatchedAt: now)
            return nil
        }
        let prepared: PreparedPush?
        do { prepared = try PushSends.liveActivity(command, key: row.key, topic: RemoteChannel.topic) } catch {
            stats.channels[.liveActivity].failed["PayloadTooLarge", default: 0] += 1
            finish(local, row, .withheld(reason: "PayloadTooLarge"), dispatchedAt: now)
            return nil
        }
        guard let prepared else {
            finish(local, row, .withheld(reason: "AppStarts"), dispatchedAt: now)
            return nil
        }
        return (prepared.request(to: PushAddress(token: token, environment: .production)), command)
    }

    /// The APNs client's retries due by `now`: the same request again, unless the device's token
    /// was retired meanwhile (the registry has no device left; a Live Activity's token is its own).
    func retryInFlight(_ local: Int, at now: Instant) throws {
        guard users[local].remote.inFlight.contains(where: { $0.nextAttemptAt <= now }) else { return }
        let ready = users[local].remote.inFlight.filter { $0.nextAttemptAt <= now }
        users[local].remote.inFlight.removeAll { $0.nextAttemptAt <= now }
        for flight in ready {
            if users[local].remote.retiredAt != nil, flight.row.channel != .liveActivity {
                finish(local, flight.row, .accepted, dispatchedAt: flight.dispatchedAt)
            } else {
                try attempt(local, flight, at: now)
            }
        }
    }

    /// One attempt of a send; a retryable answer is tried again after the client's back-off
    /// while attempts remain, and the final answer is reported as the transport reports it.
    private func attempt(_ local: Int, _ flight: RemoteChannel.InFlight, at now: Instant) throws {
        var flight = flight
        let channel = flight.row.countedChannel
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
            // As `APNsChannelTransport`: an alert the client retried is checked against the count now.
            let unreadNow = now > flight.dispatchedAt ? users[local].remote.inbox.unreadCount : nil
            if case .alert(let request) = flight.note, let carried = request.content.badge {
                report = SendReport.accepted.ofAlert(carrying: carried, unreadNow: unreadNow)
            } else {
                report = .accepted
            }
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
        if let tape {
            tape.record(
                .answered(apnsID: flight.push.id, answer.outcome(attempts: flight.attempts)),
                of: users[local].traits.profile.id, at: now)
        }
        finish(local, flight.row, report, dispatchedAt: flight.dispatchedAt)
    }

    /// What follows a send, as the runtime decides it (`OutboxSteps.afterSend`), at the instant
    /// of the dispatch that sent it, as the runtime does (its clock reading before the sends,
    /// whatever the client's retries took).
    func finish(_ local: Int, _ row: OutboxRow, _ report: SendReport, dispatchedAt: Instant) {
        let followUp = OutboxSteps.afterSend(
            row, report: report, zone: users[local].zone, silentPushes: RemoteChannel.silentPushes, at: dispatchedAt)
        for next in followUp.rows { users[local].remote.outbox.enqueue(next) }
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
        case .unregistered where channel == .liveActivity:
            // The activity ended on the device: its token is not the device's, nothing to retire.
            stats.channels[channel].failed["Unregistered", default: 0] += 1
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
            $0.field("reason", failure.description)
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
}

extension OutboxRow {
    /// The channel a send of this row counts under in the report: badge syncs as silent, Live
    /// Activity pushes as Live Activity, every other push as remote.
    var countedChannel: DeliveryChannel {
        switch channel {
        case .silent: .silent
        case .liveActivity: .liveActivity
        default: .remote
        }
    }
}

extension SimulatedAPNs.Answer {
    /// The outcome the APNs client reports for a send whose last attempt, the `attempts`th, got
    /// this answer.
    func outcome(attempts: Int) -> PushOutcome {
        switch self {
        case .accepted: .delivered
        case .unregistered(let since): .tokenRetired(PushFailure(status: 410, reason: "Unregistered"), since: since)
        case .refused(let failure): .rejected(failure)
        case .retryable(let failure): .failedAfterRetries(failure, attempts: attempts)
        }
    }
}
