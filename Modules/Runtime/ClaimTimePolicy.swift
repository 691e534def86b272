import Foundation
public import Models
import Scheduling
public import Storage

/// What a shell does with one user's due rows at the moment it claims them (a worker's claim,
/// `engaged serve`'s dispatch, the simulator's server: `OutboxClaim`). The engine planned every
/// alert inside the user's rules, and an alert claimed within a minute of its due instant
/// (`isOnTime`) goes as planned, counted in the tally: merging or holding it would undo the
/// plan (two digests the engine put at 19:00 are two alerts). An ordinary one found inside
/// quiet hours waits for their end all the same. But a backlog (an outage, a server that
/// was stopped, a queue that fell behind) reaches the claim late; sending it as it stands would
/// burst several alerts onto a phone, possibly at 3 a.m. So at claim time, for a user with a
/// late alert (whose alerts on time then wait with it, in order):
/// - **Quiet hours, again.** An alert is deferred to the end of the user's quiet window when the
///   claim falls inside it (an alert on time too), or when the window starts within
///   `guardSeconds` (the alert would land in it). A critical alert goes through, as it does on
///   the phone.
/// - **Order survives a deferral.** Alerts moved to one instant come due together; the queue
///   orders them by the instant each was first due (`outbox.planned_at`), not by key.
/// - **Caps, again.** An alert is deferred to the next local hour when `maxPerHour` alerts were
///   sent in this one, and to the next local day when `maxPerDay` were sent today. An alert a
///   claim may have sent is not held by them: that claim counted it.
/// - **Coalescing.** The alerts still sendable are merged into one alert (the newest one's kind
///   and thread, a body that counts them): one claim sends a user at most one late alert.
/// - **Some alerts go alone.** An alert claimed before (its worker died or stalled after the
///   claim, maybe after the send) is sent again alone, under its own key (`apns-id`); merging it
///   would deliver it twice under two ids. A critical alert goes alone (its level must not
///   spread to others or be lost in a merge), and so does a repeating one (its series goes on
///   from its own row). What follows such an alert waits for the next claim, in order.
/// - **Stale alerts are not sent.** A late alert past its staleness deadline, counted from the
///   instant it was first due (`stalenessSeconds(of:)`), is completed unsent: shown now, it
///   would tell of something long past. The inbox keeps its item.
/// - **Rules that cannot be applied hold the alerts.** A zone the worker does not know defers
///   late alerts an hour; they are never sent unchecked.
///
/// Rows of other channels (inbox, badge syncs, Live Activities, jobs) pass unchanged: they do
/// not alert. A user without a profile passes unchanged too (the transport drops what it cannot
/// address). Pure: the same rows, profile, tally, rows claimed before, first due instants and
/// instant always decide the same.
public enum ClaimTimePolicy {
    /// The margin before quiet hours in which an alert is no longer started, in seconds.
    public static let defaultGuardSeconds: Int64 = 120

    /// The part of a user's profile the claim-time rules read (a queue can read just these
    /// fields, not the whole profile).
    public struct UserRules: Hashable, Sendable {
        public var userID: UserID
        public var timeZone: String
        public var quietHours: QuietHours?
        public var maxPerHour: Int
        public var maxPerDay: Int?

        public init(userID: UserID, timeZone: String, quietHours: QuietHours?, maxPerHour: Int, maxPerDay: Int?) {
            self.userID = userID
            self.timeZone = timeZone
            self.quietHours = quietHours
            self.maxPerHour = maxPerHour
            self.maxPerDay = maxPerDay
        }

        public init(_ profile: UserProfile) {
            self.init(
                userID: profile.id, timeZone: profile.timeZone, quietHours: profile.preferences.quietHours,
                maxPerHour: profile.preferences.maxPerHour, maxPerDay: profile.preferences.maxPerDay)
        }
    }

    public struct Decision: Hashable, Sendable {
        /// Rows to perform now, in due order: every non-alert row, and the alerts on time or at
        /// most one late alert (alone or merged).
        public var perform: [OutboxRow] = []
        /// Alert rows moved to a later instant (key and new due instant), untouched otherwise.
        public var deferred: [Deferral] = []
        /// Late alerts past their staleness deadline: completed unsent.
        public var expired: [OutboxKey] = []
        /// The alert that replaces several due alerts, with the keys it replaces (they are
        /// completed when the merged row is written, so a replay never brings them back).
        public var merged: Merge?
        /// The tally after the alerts in `perform` (an alert claimed before is not counted
        /// again), if there are any; nil when the zone is unknown (nothing can be counted).
        public var tallyAfter: AlertTally?
        /// When the user's next quiet hours begin, if an alert in `perform` is an ordinary one:
        /// a send that has not started well before then (a worker stalled after the claim) is
        /// given up, and the next claim decides again.
        public var sendBefore: Instant?
    }

    public typealias Deferral = OutboxDeferral
    public typealias Merge = OutboxMerge

    /// Decides what to do with `rows` (one user's due rows, in due order) at `now`.
    /// `firstDueAt` holds the instant each deferred row was first due.
    public static func decide(
        rows: [OutboxRow], rules: UserRules?, zone: ZoneRules?, tally: AlertTally, at now: Instant,
        guardSeconds: Int64 = defaultGuardSeconds, claimedBefore: Set<OutboxKey> = [],
        firstDueAt: [OutboxKey: Instant] = [:]
    ) -> Decision {
        var decision = Decision()
        let alerts = rows.filter { $0.channel == .push }
        guard let rules, !alerts.isEmpty else {
            decision.perform = rows
            return decision
        }
        func deferral(_ row: OutboxRow, until: Instant, reason: String) -> Deferral {
            Deferral(key: row.key, until: until, reason: reason, firstDueAt: firstDueAt[row.key] ?? row.dueAt)
        }
        // A user with a backlog is claimed as one: alerts on time behind late ones wait with
        // them, so the user's alerts keep their order.
        let isBacklog = alerts.contains { !isOnTime(firstDueAt[$0.key] ?? $0.dueAt, at: now) }
        let onTime = isBacklog ? [] : alerts
        let late = isBacklog ? alerts : []
        decision.perform = rows.filter { $0.channel != .push }
        defer { decision.perform.sort { ($0.dueAt, $0.key) < ($1.dueAt, $1.key) } }
        guard let zone else {
            // Rules that cannot be applied are not skipped: late alerts wait (an hour) for a
            // worker whose time-zone database knows the zone.
            decision.perform += onTime
            decision.deferred = late.map { deferral($0, until: now + 3_600, reason: "unknownTimeZone") }
            return decision
        }
        let local = zone.localDateTime(at: now)
        // The engine plans no ordinary alert inside quiet hours; one found there waits all the
        // same. The guard and the caps are for late alerts only: on time, the engine counted it.
        let quietNow = rules.quietHours.flatMap { $0.endOfWindow(containing: local) }.map {
            instant(of: $0, after: now, in: zone)
        }
        var tally = tally
        for row in onTime {
            if let quietNow, row.payload.notification?.content.interruptionLevel != .critical {
                decision.deferred.append(deferral(row, until: quietNow, reason: "quietHours"))
                continue
            }
            decision.perform.append(row)
            if !claimedBefore.contains(row.key) {
                tally = tally.adding(oneAt: local)
                decision.tallyAfter = tally
            }
        }
        let hold = holdUntil(rules, zone: zone, tally: tally, at: now, guardSeconds: guardSeconds)
        // An alert a claim may have sent was counted then: the caps do not hold it back again.
        let resendHold = holdUntil(rules, zone: zone, tally: .none, at: now, guardSeconds: guardSeconds)
        var sendable: [(row: OutboxRow, request: NotificationRequest?)] = []
        for row in late {
            let request = row.payload.notification
            if let request, now > (firstDueAt[row.key] ?? row.dueAt) + stalenessSeconds(of: request) {
                decision.expired.append(row.key)
            } else if request?.content.interruptionLevel == .critical {
                sendable.append((row, request))
            } else if let (until, reason) = claimedBefore.contains(row.key) ? resendHold : hold {
                decision.deferred.append(deferral(row, until: until, reason: reason))
            } else {
                sendable.append((row, request))
            }
        }
        // Alone: an alert that may have gone out (a rescue re-sends it under its own key), a
        // critical one (its level must not spread or be lost), a repeating one (its series goes
        // on from its own row). The leading run of the others is merged; the rest wait for the
        // next claim, so the user's alerts keep their order.
        func alone(_ alert: (row: OutboxRow, request: NotificationRequest?)) -> Bool {
            claimedBefore.contains(alert.row.key) || alert.request?.content.interruptionLevel == .critical
                || alert.row.payload.repeatingMatch != nil
        }
        if let first = sendable.first, alone(first) {
            sendable = [first]
        } else {
            sendable = Array(sendable.prefix { !alone($0) })
        }
        if let newest = sendable.last {
            // A re-send of an alert that may have gone out is not counted twice.
            if sendable.count > 1 || !claimedBefore.contains(newest.row.key) {
                decision.tallyAfter = tally.adding(oneAt: local)
            }
            if sendable.count == 1 {
                decision.perform.append(newest.row)
            } else {
                let merge = merged(sendable, userID: rules.userID)
                decision.merged = merge
                decision.perform.append(merge.row)
            }
        }
        let ordinary = decision.perform.contains {
            guard case .alert(let request) = $0.payload else { return false }
            return request.content.interruptionLevel != .critical
        }
        if ordinary, let quiet = rules.quietHours { decision.sendBefore = nextStart(of: quiet, after: now, in: zone) }
        return decision
    }

    /// How long after it was first due an alert may still be sent, in seconds: its kind's
    /// staleness (`KindPolicy`); a social kind's alert is a group's (a single, a batch or a
    /// digest), which waits up to a day.
    public static func stalenessSeconds(of request: NotificationRequest) -> Int64 {
        let kind = request.content.kind
        return kind.slotMeaning == .group ? .secondsPerDay : KindPolicy.standard(for: kind).stalenessSeconds
    }

    /// How late a claim may find an alert and still send it as planned, in seconds: workers
    /// and dispatch loops claim with seconds of lag.
    public static let onTimeSeconds: Int64 = 60

    /// Whether an alert first due at `dueAt` is on time at `now`: claimed less than
    /// `onTimeSeconds` after it.
    public static func isOnTime(_ dueAt: Instant, at now: Instant) -> Bool {
        now - dueAt < onTimeSeconds
    }

    /// The first instant of the local time `end` that is after `now`: on the night clocks fall
    /// back, a wall time comes twice, and the first may be past already.
    static func instant(of end: LocalDateTime, after now: Instant, in zone: ZoneRules) -> Instant {
        var candidate = zone.instant(for: end)
        if candidate <= now {
            candidate = candidate + Int64(zone.offsetSeconds(at: candidate) - zone.offsetSeconds(at: now))
        }
        return max(candidate, now + 1)
    }

    /// When an ordinary alert may go out, if not now: the end of quiet hours, the next local
    /// hour, or the next local day.
    static func holdUntil(
        _ rules: UserRules, zone: ZoneRules, tally: AlertTally, at now: Instant, guardSeconds: Int64
    ) -> (Instant, String)? {
        let local = zone.localDateTime(at: now)
        if let quiet = rules.quietHours {
            for probe in [local, zone.localDateTime(at: now + guardSeconds)] {
                if let end = quiet.endOfWindow(containing: probe) {
                    return (instant(of: end, after: now, in: zone), "quietHours")
                }
            }
        }
        if let maxPerDay = rules.maxPerDay, tally.localDay == local.daysSinceEpoch, tally.sentToday >= maxPerDay {
            let tomorrow = LocalDateTime(localSeconds: (local.daysSinceEpoch + 1) * .secondsPerDay)
            return (instant(of: tomorrow, after: now, in: zone), "maxPerDay")
        }
        let hour = local.localSeconds.floorDivided(by: 3_600)
        if tally.localHour == hour, tally.sentThisHour >= rules.maxPerHour {
            let nextHour = LocalDateTime(localSeconds: (hour + 1) * 3_600)
            return (instant(of: nextHour, after: now, in: zone), "maxPerHour")
        }
        return nil
    }

    /// The first instant after `now` at which `quiet` begins (within the next eight days).
    static func nextStart(of quiet: QuietHours, after now: Instant, in zone: ZoneRules) -> Instant? {
        let local = zone.localDateTime(at: now)
        for day in local.daysSinceEpoch...(local.daysSinceEpoch + 8) {
            let start = LocalDateTime(daysSinceEpoch: day, time: quiet.start)
            // On the night clocks fall back, a wall time comes twice: the first after `now`.
            if start > local, quiet.contains(start) { return instant(of: start, after: now, in: zone) }
        }
        return nil
    }

    /// One alert for several: the newest one's request, with a body that counts them. Its key
    /// and request id derive from the first replaced key, so the same merge always makes the
    /// same row (and `apns-id`).
    static func merged(_ alerts: [(row: OutboxRow, request: NotificationRequest?)], userID: UserID) -> Merge {
        let first = alerts[0].row
        let newest = alerts[alerts.count - 1]
        let requestID: RequestID = "merged/\(first.key)"
        let dueAt = newest.row.dueAt
        var payload = newest.row.payload
        if var request = newest.request {
            let titles = alerts.compactMap { $0.request?.content.title }.filter { !$0.isEmpty }
            var body = "\(alerts.count) updates: " + titles.joined(separator: " · ")
            if body.count > 180 { body = String(body.prefix(179)) + "…" }
            request.identifier = requestID
            request.content.body = body
            payload = .alert(request)
        }
        let row = OutboxRow(
            key: OutboxKey.make(userID, requestID, dueAt, .push), userID: userID, requestID: requestID, dueAt: dueAt,
            payload: payload)
        return Merge(row: row, replacedKeys: alerts.map(\.row.key))
    }
}
