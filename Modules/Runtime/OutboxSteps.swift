public import Delivery
public import Engagement
public import Models
public import Scheduling
public import Storage

/// What the server does with one due outbox row (`OutboxSteps.step`).
public enum DueStep: Hashable, Sendable {
    /// Apply the background job to the user's engine; the job's own commit replaces the row.
    case runJob(BackgroundJob)
    /// Add the item to the user's inbox, complete the row and make `next` pending, in one
    /// transaction (`InboxStore.deliverToInbox`).
    case deliverToInbox(InboxDelivery, next: [OutboxRow])
    /// A badge sync past its slot's grace: not sent; `next` (the next slot's row) replaces it.
    case moveSync(next: OutboxRow)
    /// Send it through the channel's transport, then report how it went (`OutboxSteps.afterSend`).
    case send
    /// Complete it unperformed: this build cannot read its payload (another version wrote it,
    /// or it is damaged) or does not know its job, and nothing would make it readable later.
    /// Left pending, it would come back at every dispatch and, past a batch's worth, hold up
    /// every row behind it. `reason` names why, for the log.
    case discard(reason: String)
}

/// How a send went, summed over the user's devices: what the server's next step depends on.
public enum SendReport: Hashable, Sendable {
    /// Every device took it, or the user has none left to take it (retired tokens included).
    case accepted
    /// An alert or a badge sync every device took, but the badge it carried is no longer the
    /// inbox's unread count: the count changed while it was being sent (the client's retries
    /// take seconds), so a push sent meanwhile may have shown the newer count before this one
    /// set the older one (`ofBadge(carrying:unreadNow:)`).
    case acceptedWithOutdatedBadge
    /// Not sent: the send rules held it back (`PushSends.Withheld`); the reason names which.
    case withheld(reason: String)
    /// Some device refused it for good: sending it again would get the same answer.
    case refused(reason: String)
    /// Some device did not get it after the client's retries: it may get through later.
    case failed(reason: String)

    /// The summary of one outcome per device (none: nothing to deliver to): a failure that may
    /// pass later outweighs a refusal, which outweighs acceptance.
    public init(outcomes: [PushOutcome]) {
        var report = SendReport.accepted
        for outcome in outcomes {
            switch outcome {
            case .delivered, .tokenRetired: continue
            case .rejected(let failure):
                if case .accepted = report { report = .refused(reason: failure.reason) }
            case .failedAfterRetries(let failure, _):
                report = .failed(reason: failure.reason)
            }
        }
        self = report
    }

    /// This report of an alert or a badge sync that carried `carried` as its badge, now that the
    /// inbox's unread count is `unreadNow` (nil when it was not read again: no time passed since
    /// the push was prepared, so the count it carried is the count).
    public func ofBadge(carrying carried: Int, unreadNow: Int?) -> SendReport {
        guard case .accepted = self, let unreadNow, unreadNow != carried else { return self }
        return .acceptedWithOutdatedBadge
    }
}

/// What follows a send, as rows to make pending (each replacing the pending row of its request
/// and channel). A shell commits `series` before it completes the sent row (the series must not
/// end; if the commit fails, the row stays pending and is sent again under the same `apns-id`);
/// `badgeSync` is asked for at best (if it cannot be committed, the next change asks again,
/// and the sent row is completed all the same: sending it again would not mend the badge).
public struct SendFollowUp: Hashable, Sendable {
    /// A daily series' next row.
    public var series: OutboxRow?
    /// A badge sync, or a failed sync's row at the next slot.
    public var badgeSync: OutboxRow?
    /// The sync did not reach the phone: the user's engine takes `EngineInput.syncMissed` when the
    /// phone has a change still to hear of (`UserEngine.phoneHasNotHeard`), so it plans at once
    /// around what the phone holds instead of waiting for the phone to hear.
    public var syncMissed: Bool

    public init(series: OutboxRow? = nil, badgeSync: OutboxRow? = nil, syncMissed: Bool = false) {
        self.series = series
        self.badgeSync = badgeSync
        self.syncMissed = syncMissed
    }

    /// Every row, the series' first.
    public var rows: [OutboxRow] { [series, badgeSync].compactMap { $0 } }
}

/// The server's dispatch decisions, as values and pure steps: which step a due row takes, what
/// follows a send, and where pending rows move when a user's zone changes. The shells own the
/// clock, the store, the transports and concurrency, and carry these out: `EngineRuntime` (the
/// `engaged` server) and the simulator's server side, so a simulation runs the server's rules.
public enum OutboxSteps {
    /// The step of `row`, due at `now`. `zone` is the user's (it places a daily series' next
    /// row; nil leaves a series without one). Of rows due at one instant, inbox rows go first
    /// (`inboxFirst`), so an alert counts its own item in the badge it carries.
    /// - a `job` row runs its background job (a job this build does not know is discarded);
    /// - an `inbox` row delivers its notification to the inbox; a daily series' row is due
    ///   again at its next match, and a badge sync follows (`SilentPushPlan`) unless an alert
    ///   carries the new count (`alertCarriesCount`): a notification the phone shows itself
    ///   (`shownBy` local) carries no badge from the server; one whose payload cannot be read is
    ///   discarded;
    /// - a `silent` row past its slot's grace moves to the next slot unsent (an early sync's
    ///   grace runs from the slot it names, `SilentPushPlan.isSendable`);
    /// - a row whose payload this build cannot read, whatever its channel, is discarded;
    /// - anything else is sent.
    public static func step(
        for row: OutboxRow, zone: ZoneRules?, silentPushes: SilentPushPlan, at now: Instant,
        alertCarriesCount: Bool = true
    ) -> DueStep {
        switch row.payload {
        case .unreadable(_, let channel):
            return .discard(reason: channel == .job ? "UnknownJob" : "Unreadable")
        case .job(let job):
            return .runJob(job)
        case .inboxItem:
            guard let delivery = InboxDelivery(row) else { return .discard(reason: "NotANotification") }
            var next = zone.flatMap { nextRepeat(of: row, in: $0) }.map { [$0] } ?? []
            if row.payload.shownBy == .local || !alertCarriesCount {
                next.append(silentPushes.row(for: row.userID, changedAt: now))
            }
            return .deliverToInbox(delivery, next: next)
        case .sync where !silentPushes.isSendable(row, at: now):
            return .moveSync(next: silentPushes.row(for: row.userID, following: row, at: now))
        case .alert, .sync, .liveActivity:
            return .send
        }
    }

    /// The steps of one claim's rows to perform (`OutboxClaim`), in the order a shell takes them:
    /// each instant's inbox rows before its other rows (`inboxFirst`). An inbox item the server
    /// shows by its alert counts on the badge that alert carries; when no alert of its user is
    /// performed with it (the claim deferred or expired the alert), a badge sync follows, so the
    /// badge does not wait for the alert. `zone` gives a row's zone (`step`).
    public static func steps(
        for rows: [OutboxRow], zone: (OutboxRow) -> ZoneRules?, silentPushes: SilentPushPlan, at now: Instant
    ) -> [(row: OutboxRow, step: DueStep)] {
        // Built only when an inbox item counts on an alert's badge: a set per dispatch otherwise.
        let waitsOnAlert = rows.contains { $0.channel == .inbox && $0.payload.shownBy != .local }
        let alerted: Set<UserID> = waitsOnAlert ? Set(rows.lazy.filter { $0.channel == .push }.map(\.userID)) : []
        return inboxFirst(rows).map { row in
            let carried = row.channel != .inbox || alerted.contains(row.userID)
            return (
                row, step(for: row, zone: zone(row), silentPushes: silentPushes, at: now, alertCarriesCount: carried)
            )
        }
    }

    /// What follows the send of `row` at `now`, reported as `report`:
    /// - a daily series' alert is due again at its next match in `zone`;
    /// - an alert withheld, refused or failed leaves the inbox's count off the device's badge, and
    ///   an alert or a sync that got through carrying a count that changed meanwhile may have set
    ///   an older one than a push sent while it was retried: a badge sync follows at the next
    ///   slot (for a sync, the next after the slot it names, whose key it holds);
    /// - a badge sync that failed after the client's retries moves to the next slot, as above:
    ///   the last change is always synced (a refused one would be refused again);
    /// - a badge sync that failed, was withheld or was refused did not tell the phone of the plan's
    ///   change: the engine is told the sync was missed (`SendFollowUp.syncMissed`).
    public static func afterSend(
        _ row: OutboxRow, report: SendReport, zone: ZoneRules?, silentPushes: SilentPushPlan, at now: Instant
    ) -> SendFollowUp {
        var followUp = SendFollowUp(series: zone.flatMap { nextRepeat(of: row, in: $0) })
        switch (row.channel, report) {
        case (_, .accepted), (.liveActivity, _), (.unknown, _), (.job, _), (.inbox, _):
            break
        case (.push, .withheld), (.push, .refused), (.push, .failed), (.push, .acceptedWithOutdatedBadge):
            followUp.badgeSync = silentPushes.row(for: row.userID, changedAt: now)
        case (.silent, .acceptedWithOutdatedBadge):
            followUp.badgeSync = silentPushes.row(for: row.userID, following: row, at: now)
        case (.silent, .failed):
            followUp.badgeSync = silentPushes.row(for: row.userID, following: row, at: now)
            followUp.syncMissed = true
        case (.silent, .withheld), (.silent, .refused):
            followUp.syncMissed = true
        }
        return followUp
    }

    /// The row of a daily series' next firing after `row`, in `zone`; nil for anything else.
    public static func nextRepeat(of row: OutboxRow, in zone: ZoneRules) -> OutboxRow? {
        guard let match = row.payload.repeatingMatch, let fireAt = match.nextMatch(after: row.dueAt, in: zone) else {
            return nil
        }
        var next = row
        next.dueAt = fireAt
        next.key = OutboxKey.make(row.userID, row.requestID, fireAt, row.channel)
        return next
    }

    /// After a change of zone the engine follows the device, which re-matches wall-clock
    /// triggers in the new zone without being asked again: each of `pending` (one user's
    /// pending rows) whose request the engine now plans at another time after `now` moves there
    /// (same payload, the key of the new time). Jobs stay, and so do the requests the step
    /// itself scheduled or cancelled (`touched`).
    public static func moved(
        _ pending: [OutboxRow], plannedIDs: [RequestID], fireTimes: [Instant], touched: Set<RequestID>, at now: Instant
    ) -> [OutboxRow] {
        guard !pending.isEmpty else { return [] }
        let fireTimes = Dictionary(zip(plannedIDs, fireTimes), uniquingKeysWith: { first, _ in first })
        var moved: [OutboxRow] = []
        for row in pending where row.channel != .job && !touched.contains(row.requestID) {
            guard let fireAt = fireTimes[row.requestID], fireAt != row.dueAt, fireAt > now else { continue }
            var next = row
            next.dueAt = fireAt
            next.key = OutboxKey.make(row.userID, row.requestID, fireAt, row.channel)
            moved.append(next)
        }
        return moved
    }

    /// `rows` (in due order) with each instant's inbox rows before its other rows.
    public static func inboxFirst(_ rows: [OutboxRow]) -> [OutboxRow] {
        guard rows.count > 1 else { return rows }
        return rows.enumerated().sorted { a, b in
            if a.element.dueAt != b.element.dueAt { return a.offset < b.offset }
            let aInbox = a.element.channel == .inbox
            let bInbox = b.element.channel == .inbox
            return aInbox != bInbox ? aInbox : a.offset < b.offset
        }.map(\.element)
    }
}
