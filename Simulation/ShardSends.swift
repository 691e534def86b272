import Delivery
import Engagement
import LiveActivity
import Models
import Runtime
import Scheduling
import SimulatedPlatform
import Storage

/// The server's sends in the world loop: a due row's push is prepared as the runtime's
/// `PushChannelTransport` prepares it (`RowSends`), sent through the simulated APNs with the
/// APNs client's bounded retries in virtual time, and its outcome reported as the transport
/// reports it (`RowSends.report`), so what follows is the runtime's own decision
/// (`OutboxSteps.afterSend`).
extension Shard {
    /// A send's step: the push is prepared by `RowSends` from what the server holds of the
    /// user (an alert the send rules hold back is withheld whether or not the user has a
    /// device) and its first attempt made. A user whose token was retired has no device left:
    /// nothing is sent, but a Live Activity's push goes to the activity's own token all the same.
    func startSend(_ local: Int, _ row: OutboxRow, at now: Instant) throws {
        let channel = RowSends.channel(of: row)
        let work = RowSends.work(for: row)
        let unread = users[local].remote.inbox.unreadCount
        var facts = SendFacts(devices: users[local].remote.devices)
        let reads = work.reads
        if reads.contains(.counts) { facts.counts = users[local].remote.inbox.counts }
        if reads.contains(.planVersion) { facts.planVersion = users[local].engine.localPlanRevision }
        if reads.contains(.rules) {
            facts.rules = inPlace(local) { ShowingRules(profile: $0.engine.profile, zone: $0.engine.zone) }
        }
        // What the simulated device reads of the payload.
        let note: PushNote
        switch work {
        case .done(let report):
            try notSent(local, row, report, on: channel, at: now)
            return
        case .alert(var request):
            // The release the engine decided, at the time it chose.
            try judgeRelease(local, request, at: row.dueAt, shownNow: false)
            if let parts = users[local].remote.mergedParts[request.identifier]?.parts {
                // A merged alert releases its parts with it (`ClaimTimePolicy`).
                for part in parts { drainResolvedWithItems(local, part.rawValue) }
                for violation in users[local].checker.observeMergedParts(parts.map(\.rawValue), at: row.dueAt) {
                    try journal.violation(
                        violation, &users[local], at: row.dueAt, detail: request.identifier.rawValue, stats: &stats)
                }
            }
            request.content.badge = unread
            note = .alert(request)
        case .sync:
            note = .sync(unread: unread, planVersion: facts.planVersion ?? 0)
        case .liveActivity(let command, _):
            note = .liveActivity(command)
        }
        let push: RowPush
        switch RowSends.prepare(
            work, of: row, facts: facts, silentPushes: RemoteChannel.silentPushes, topic: RemoteChannel.topic, at: now)
        {
        case .push(let ready): push = ready
        case .notSent(let report):
            try notSent(local, row, report, on: channel, at: now)
            return
        }
        guard let target = push.targets.first else {
            stats.channels[channel].failed["NoDevice", default: 0] += 1
            try finish(local, row, RowSends.report(push, outcomes: [], unreadNow: nil), dispatchedAt: now, at: now)
            return
        }
        try attempt(
            local,
            RemoteChannel.InFlight(
                row: row, push: push, target: target, note: note, attempts: 0, nextAttemptAt: now, dispatchedAt: now),
            at: now)
    }

    /// A row done without a send (withheld by the send rules, or unreadable): counted by its
    /// reason, unless the app performs the work itself (a Live Activity's start, an update
    /// before its token), and what follows decided as for a send.
    private func notSent(
        _ local: Int, _ row: OutboxRow, _ report: SendReport, on channel: DeliveryChannel, at now: Instant
    )
        throws
    {
        switch report {
        case .withheld(let reason), .refused(let reason):
            if !RowSends.isLeftToTheApp(report) { stats.channels[channel].failed[reason, default: 0] += 1 }
        default: break
        }
        try finish(local, row, report, dispatchedAt: now, at: now)
    }

    /// The APNs client's retries due by `now`: the same request again, unless the device's token
    /// was retired meanwhile (the registry has no device left; a Live Activity's token is its own).
    func retryInFlight(_ local: Int, at now: Instant) throws {
        guard users[local].remote.inFlight.contains(where: { $0.nextAttemptAt <= now }) else { return }
        let ready = users[local].remote.inFlight.filter { $0.nextAttemptAt <= now }
        users[local].remote.inFlight.removeAll { $0.nextAttemptAt <= now }
        for flight in ready {
            if users[local].remote.retiredAt != nil, flight.target.device != nil {
                try finish(local, flight.row, .accepted, dispatchedAt: flight.dispatchedAt, at: now)
            } else {
                try attempt(local, flight, at: now)
            }
        }
    }

    /// One attempt of a send; a retryable answer is tried again after the client's back-off
    /// while attempts remain, and the final answer is reported as the transport reports it
    /// (`RowSends.report`); an answer that retires the token removes the device from the
    /// server's registry when `RowSends.retires` says so.
    private func attempt(_ local: Int, _ flight: RemoteChannel.InFlight, at now: Instant) throws {
        var flight = flight
        let channel = RowSends.channel(of: flight.row)
        let request = flight.target.request
        let answer = try send(local, request, carrying: flight.note, on: channel, attempt: flight.attempts, at: now)
        flight.attempts += 1
        switch answer {
        case .accepted:
            if let unread = flight.note.unread { users[local].remote.lastSentUnread = unread }
            if channel == .silent {
                for violation in users[local].channelChecker.observeSilentAccepted(at: now) {
                    try journal.violation(violation, &users[local], at: now, detail: request.id, stats: &stats)
                }
            }
        case .unregistered:
            break
        case .refused(let failure):
            try failed(local, request, failure, on: channel, at: now)
        case .retryable(let failure):
            if flight.attempts < RemoteChannel.retryPolicy.maxAttempts {
                flight.nextAttemptAt = now + retryDelaySeconds(local, afterAttempt: flight.attempts)
                users[local].remote.inFlight.append(flight)
                return
            }
            try failed(local, request, failure, on: channel, at: now)
        }
        let outcome = answer.outcome(attempts: flight.attempts)
        if RowSends.retires(flight.target, after: outcome), case .tokenRetired(_, let since) = outcome {
            try retire(local, request, since: since ?? now, on: channel, at: now)
        }
        if let tape { tape.record(.answered(apnsID: request.id, outcome), of: users[local].traits.profile.id, at: now) }
        // As the transport: an alert the client retried is checked against the count now.
        let unreadNow = now > flight.dispatchedAt ? users[local].remote.inbox.unreadCount : nil
        try finish(
            local, flight.row, RowSends.report(flight.push, outcomes: [outcome], unreadNow: unreadNow),
            dispatchedAt: flight.dispatchedAt, at: now)
    }

    /// What follows a send, as the runtime decides it (`OutboxSteps.afterSend`), at the instant
    /// of the dispatch that sent it, as the runtime does (its clock reading before the sends,
    /// whatever the client's retries took); a missed sync is the engine's step at `now`, when
    /// the send's report is known.
    func finish(_ local: Int, _ row: OutboxRow, _ report: SendReport, dispatchedAt: Instant, at now: Instant) throws {
        let followUp = OutboxSteps.afterSend(
            row, report: report, zone: users[local].engine.zone, silentPushes: RemoteChannel.silentPushes,
            at: dispatchedAt)
        for next in followUp.rows { users[local].remote.outbox.enqueue(next) }
        if followUp.syncMissed && users[local].engine.phoneHasNotHeard { try step(local, .syncMissed, at: now) }
    }

    /// One attempt through the simulated APNs: counted and checked against the retired tokens.
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
        case .unregistered, .retryable, .refused:
            break
        }
        return answer
    }

    /// APNs retired the phone's token: the server's registry forgets it.
    private func retire(
        _ local: Int, _ request: PushRequest, since: Instant, on channel: DeliveryChannel, at now: Instant
    ) throws {
        stats.channels[channel].tokensRetired += 1
        users[local].remote.retiredAt = since
        users[local].channelChecker.observeRetired(request.deviceToken)
        try journal.log(&users[local], now, "tokenRetired") {
            $0.id("channel", channel.rawValue)
            $0.id("reason", "410 Unregistered")
        }
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
