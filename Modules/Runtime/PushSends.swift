public import Content
public import Delivery
public import LiveActivity
public import Models
public import Scheduling
public import Storage

/// A device a push is addressed to: its token and the APNs service that issued it.
public struct PushAddress: Hashable, Sendable {
    public var token: String
    public var environment: PushRequest.Environment

    public init(token: String, environment: PushRequest.Environment) {
        self.token = token
        self.environment = environment
    }
}

/// A push decided for every device of a user: everything of its APNs request but the address.
/// The same row always prepares the same push (its `apns-id` is the row's key), so a re-send
/// after a crash or a retry carries the same id and the same bytes.
public struct PreparedPush: Hashable, Sendable {
    public var id: String
    public var pushType: PushRequest.PushType
    public var topic: String
    public var priority: PushRequest.Priority
    public var expiration: PushRequest.Expiration
    public var collapseID: String?
    public var payload: [UInt8]

    /// The APNs request of this push to `device`.
    public func request(to device: PushAddress) -> PushRequest {
        PushRequest(
            id: id, deviceToken: device.token, environment: device.environment, pushType: pushType, topic: topic,
            priority: priority, expiration: expiration, collapseID: collapseID, payload: payload)
    }
}

/// What bounds how late a user's alert may be shown (`PushSends.showBy`) besides its kind:
/// the user's quiet hours, in their zone.
public struct ShowingRules: Hashable, Sendable {
    public var quietHours: QuietHours?
    public var zone: ZoneRules

    public init(quietHours: QuietHours?, zone: ZoneRules) {
        self.quietHours = quietHours
        self.zone = zone
    }

    public init(profile: UserProfile, zone: ZoneRules) {
        self.init(quietHours: profile.preferences.quietHours, zone: zone)
    }
}

/// The APNs requests the server sends for its outbox work, decided in one place for every
/// shell: `engaged` hands them to the HTTP/2 client, the simulator to its model of APNs. Pure:
/// the same row, counts, rules and instant always prepare the same push.
///
/// An alert is judged where the person meets it, on the phone, and APNs may show it late: it
/// holds a push for an offline phone until `apns-expiration`, and a low-priority one until the
/// phone's next power window. So an alert's expiration is the last instant at which showing
/// it still keeps the promises the plan made (`showBy`); an alert sent after that instant (a
/// backlog, which the claim-time rules have moved within the caps) goes "now or never":
/// offered once to a phone online, never stored for one offline. An ordinary alert is never
/// sent inside the user's quiet hours.
public enum PushSends {
    /// Why an alert is not sent.
    public enum Withheld: Error, Hashable, Sendable {
        /// It is an ordinary alert and the user's quiet hours hold now: shown now it would wake
        /// them (a retry after an outage that began before them, an alert the plan put there). The
        /// inbox keeps it.
        case inQuietHours
        /// The payload exceeds what APNs accepts.
        case payloadTooLarge(bytes: Int)

        /// The reason as metrics and counters name it.
        public var reason: String {
            switch self {
            case .inQuietHours: "InQuietHours"
            case .payloadTooLarge: "PayloadTooLarge"
            }
        }
    }

    /// The last instant at which an alert of `kind` and `level`, planned for `plannedAt`, may be
    /// shown, or nil when no later showing is allowed ("now or never"). The earliest of:
    /// - the kind's staleness deadline (`ChannelPolicy.expiration`); a kind dropped rather than
    ///   deferred allows none;
    /// - for an ordinary alert, the second before the user's next quiet hours begin after
    ///   `now`, or none when `now` is inside them: shown late, it must not wake anyone;
    /// - for a kind the caps count, the last second of the minute it was planned in. The hourly
    ///   cap holds over every 60 minutes, counted by the minute a notification is shown, and
    ///   the engine plans what follows around the minute it counted this one in: it cannot know
    ///   when APNs will show a push, so a push shown a minute late may share an hour with one
    ///   planned after it. Seconds in transit stay in the minute; a push held for an offline
    ///   phone is not shown (the inbox keeps it, the badge sync counts it). This also keeps it
    ///   on the local day whose daily cap counted it.
    public static func showBy(
        kind: NotificationKind, level: InterruptionLevel, plannedAt: Instant, rules: ShowingRules?, at now: Instant
    ) -> Instant? {
        guard var last = ChannelPolicy.expiration(of: kind, dueAt: plannedAt) else { return nil }
        if !kind.isTransactional {
            let minute = plannedAt.secondsSinceEpoch.floorDivided(by: .secondsPerMinute) * .secondsPerMinute
            last = min(last, Instant(secondsSinceEpoch: minute + .secondsPerMinute - 1))
        }
        if let rules, let quiet = rules.quietHours, !level.breaksThroughQuietHours {
            let from = max(plannedAt, now)
            if isQuiet(quiet, at: from, rules.zone) { return nil }
            if let start = ClaimTimePolicy.nextStart(of: quiet, after: from, in: rules.zone) {
                last = min(last, start - 1)
            }
        }
        return last >= now ? last : nil
    }

    /// The alert of `request`, planned for `plannedAt` and sent at `now` under `key`, carrying
    /// `badge`: priority 10 (APNs holds a priority-5 push for the phone's next power window, up
    /// to a quarter of an hour, and an alert's minute is part of the plan: even a passive one),
    /// `apns-expiration` at `showBy` ("now or never" when it allows no later showing), and a
    /// collapse id: grouped copy collapses by its group, any other alert by its own key, so a
    /// re-send replaces rather than doubles it on the phone. An ordinary alert is withheld while
    /// the user's quiet hours hold.
    public static func alert(
        _ request: NotificationRequest, key: OutboxKey, plannedAt: Instant, badge: Int, topic: String,
        rules: ShowingRules?, at now: Instant
    ) -> Result<PreparedPush, Withheld> {
        var content = request.content
        if let rules, let quiet = rules.quietHours, !content.interruptionLevel.breaksThroughQuietHours,
            isQuiet(quiet, at: now, rules.zone)
        {
            return .failure(.inQuietHours)
        }
        let last = showBy(
            kind: content.kind, level: content.interruptionLevel, plannedAt: plannedAt, rules: rules, at: now)
        content.badge = badge
        let payload = PayloadBuilder.encodedBytes(content)
        guard payload.count <= PayloadBuilder.maxBytes else { return .failure(.payloadTooLarge(bytes: payload.count)) }
        return .success(
            PreparedPush(
                id: key.rawValue, pushType: .alert, topic: topic, priority: .immediate,
                expiration: last.map { .at($0) } ?? .nowOrNever,
                collapseID: ChannelPolicy.collapseID(of: content.kind, requestID: request.identifier.rawValue)
                    ?? key.rawValue,
                payload: payload))
    }

    private static func isQuiet(_ quiet: QuietHours, at instant: Instant, _ zone: ZoneRules) -> Bool {
        quiet.contains(zone.localDateTime(at: instant))
    }

    /// The badge and inbox sync of the slot `slot` under `key`: a background push (priority 5,
    /// as Apple requires) with the counts and the local plan's version of the moment
    /// (`PlanSignal`), kept by APNs for a phone that is offline for a day
    /// (`SilentPushPlan.lifetimeSeconds`): APNs keeps only the latest push for an offline
    /// device and every later change of the counts sends a later sync, so an old count never
    /// lands after a newer one, while a phone back after hours offline may still hear that its
    /// plan moved (unless a later alert replaced the sync at APNs): a user who asked for space
    /// may get no other push for days.
    public static func sync(
        key: OutboxKey, slot: Instant, counts: InboxCounts, planVersion: Int, plan: SilentPushPlan, topic: String
    ) -> PreparedPush {
        let payload = PayloadBuilder.inboxSync(
            unread: counts.unread, unseen: counts.unseen, total: counts.total, planVersion: planVersion)
        return PreparedPush(
            id: key.rawValue, pushType: .background, topic: topic, priority: .powerConsiderate,
            expiration: .at(slot + SilentPushPlan.lifetimeSeconds), collapseID: SilentPushPlan.collapseID,
            payload: Array(payload.json.utf8))
    }

    /// A Live Activity's update or end under `key`, to the activity's own token: priority from
    /// the command, expiring when its content goes stale (a late update is worthless then).
    /// Nil for a start (the app starts its activities itself, in the foreground); a payload
    /// APNs would refuse throws.
    public static func liveActivity(_ command: LiveActivityCommand, key: OutboxKey, topic: String) throws
        -> PreparedPush?
    {
        guard command.event != .start else { return nil }
        return PreparedPush(
            id: key.rawValue, pushType: .liveactivity, topic: topic,
            priority: command.priority == .high ? .immediate : .powerConsiderate,
            expiration: command.content.staleDate.map(PushRequest.Expiration.at) ?? .nowOrNever, collapseID: nil,
            payload: try LiveActivityPush.payload(for: command))
    }
}
