public import Delivery
public import LiveActivity
public import Models
public import Scheduling
public import Storage

/// What a due send row asks for, read from its channel and payload alone
/// (`RowSends.work(for:)`).
public enum SendWork: Hashable, Sendable {
    /// An alert showing this notification.
    case alert(NotificationRequest)
    /// A badge and inbox sync.
    case sync
    /// A Live Activity's update or end, pushed to the activity's own token.
    case liveActivity(LiveActivityCommand, token: String)
    /// Nothing to send: the row is done with this report.
    case done(SendReport)
}

/// What a send reads of its user when it is prepared, each read only when the row's work
/// needs it (`SendWork.reads`): a shell reads its store, the simulator its model.
public struct SendFacts: Sendable {
    /// The inbox's counts: the badge an alert carries, the counts a sync carries.
    public var counts: InboxCounts?
    /// The local plan's version a sync carries.
    public var planVersion: Int?
    /// The rules an alert is checked against when it is sent (quiet hours).
    public var rules: ShowingRules?
    /// The user's devices, as the registry holds them now.
    public var devices: [DeviceRegistration]

    public init(
        counts: InboxCounts? = nil, planVersion: Int? = nil, rules: ShowingRules? = nil,
        devices: [DeviceRegistration]
    ) {
        self.counts = counts
        self.planVersion = planVersion
        self.rules = rules
        self.devices = devices
    }

    /// The facts of the user a send may read (a set without an allocation: a send asks for it).
    public struct Reads: OptionSet, Hashable, Sendable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        public static let counts = Reads(rawValue: 1)
        public static let planVersion = Reads(rawValue: 2)
        public static let rules = Reads(rawValue: 4)
    }
}

extension SendWork {
    /// The facts its send reads beside the user's devices: an alert, the counts and the rules;
    /// a sync, the counts and the plan's version; a Live Activity's push, none.
    public var reads: SendFacts.Reads {
        switch self {
        case .alert: [.counts, .rules]
        case .sync: [.counts, .planVersion]
        case .liveActivity, .done: []
        }
    }
}

/// A due send row prepared: its push, or the report of a row done without a send.
public enum RowSend: Hashable, Sendable {
    case push(RowPush)
    case notSent(SendReport)
}

/// A due send row made ready for APNs: one request per target, and what its report needs.
public struct RowPush: Hashable, Sendable {
    /// One request and where it goes.
    public struct Target: Hashable, Sendable {
        public var request: PushRequest
        /// The user's device it goes to; nil for a Live Activity's own token (no device of the
        /// user's: an answer about it retires nothing).
        public var device: DeviceRegistration?
    }

    public var prepared: PreparedPush
    public var targets: [Target]
    /// The badge an alert or a badge sync carries (the inbox's unread count when it was
    /// prepared); nil for a Live Activity's push.
    public var carriedBadge: Int?
}

/// How the server sends a due row on its channel, decided in one place for every shell: the
/// runtime's `PushChannelTransport` over the APNs client, and the simulator over its model of
/// APNs. Pure: the same row and the same facts of the user always give the same requests, and
/// the same answers the same report.
///
/// A shell reads the facts each channel needs (`work(for:)` says which channel), prepares the
/// push, sends each target's request (retrying as the APNs client does, `RetryPolicy`), and
/// reports the answers with `report(_:outcomes:unreadNow:)`; an answer that retires a token
/// removes the device when `retires(_:after:)` says so. What follows is
/// `OutboxSteps.afterSend`.
public enum RowSends {
    /// The channel a row's send counts under: badge syncs as silent, Live Activity pushes as
    /// Live Activity, every other push as remote.
    public static func channel(of row: OutboxRow) -> DeliveryChannel {
        switch row.channel {
        case .silent: .silent
        case .liveActivity: .liveActivity
        default: .remote
        }
    }

    /// What `row` asks for. A Live Activity's start is withheld (`appStarts`: the app starts its
    /// activities itself, in the foreground), and so is an update before the activity has a
    /// token (`noToken`). A row with nothing to send (an inbox item or a job, which the runtime
    /// performs itself, or unreadable work, which the dispatch discards before a send,
    /// `OutboxSteps.step`) is refused ("Unreadable") should a shell hand it over all the same.
    public static func work(for row: OutboxRow) -> SendWork {
        switch row.payload {
        case .alert(let request):
            return .alert(request)
        case .sync:
            return .sync
        case .liveActivity(let command):
            guard command.event != .start else { return .done(.withheld(reason: appStarts)) }
            guard let token = command.pushToken else { return .done(.withheld(reason: noToken)) }
            return .liveActivity(command, token: token)
        case .inboxItem, .job, .unreadable:
            return .done(.refused(reason: "Unreadable"))
        }
    }

    /// The reasons a Live Activity row is withheld because the app performs it itself: its
    /// start, and an update before the activity reported its token. Not a failure of the send.
    public static let appStarts = "AppStarts"
    public static let noToken = "NoToken"

    /// Whether `report` leaves the row's work to the app (`appStarts`, `noToken`), rather than
    /// holding back or refusing a push the server should have sent.
    public static func isLeftToTheApp(_ report: SendReport) -> Bool {
        guard case .withheld(let reason) = report else { return false }
        return reason == appStarts || reason == noToken
    }

    /// The push of `row` doing `work`, from the facts its work reads (`SendWork.reads`); a fact
    /// it needs and was not given reads as nothing (a badge of 0, plan version 0, no rules).
    public static func prepare(
        _ work: SendWork, of row: OutboxRow, facts: SendFacts, silentPushes: SilentPushPlan, topic: String,
        at now: Instant
    ) -> RowSend {
        switch work {
        case .done(let report):
            return .notSent(report)
        case .alert(let request):
            return alert(
                request, of: row, badge: facts.counts?.badge ?? 0, rules: facts.rules, devices: facts.devices,
                topic: topic, at: now)
        case .sync:
            return .push(
                sync(
                    of: row, counts: facts.counts ?? InboxCounts(total: 0, unread: 0, unseen: 0),
                    planVersion: facts.planVersion ?? 0, devices: facts.devices, silentPushes: silentPushes,
                    topic: topic))
        case .liveActivity(let command, let token):
            return liveActivity(command, token: token, of: row, devices: facts.devices, topic: topic)
        }
    }

    /// The alert of `row` to each of `devices`, carrying `badge`, as `PushSends.alert` decides
    /// it; withheld (the report says why) inside the user's quiet hours or over APNs' size.
    public static func alert(
        _ request: NotificationRequest, of row: OutboxRow, badge: Int, rules: ShowingRules?,
        devices: [DeviceRegistration], topic: String, at now: Instant
    ) -> RowSend {
        switch PushSends.alert(
            request, key: row.key, plannedAt: row.dueAt, badge: badge, topic: topic, rules: rules, at: now)
        {
        case .success(let prepared):
            let targets = devices.map { RowPush.Target(request: prepared.request(to: $0.address), device: $0) }
            return .push(RowPush(prepared: prepared, targets: targets, carriedBadge: badge))
        case .failure(let withheld):
            return .notSent(.withheld(reason: withheld.reason))
        }
    }

    /// The badge and inbox sync of `row` to each of `devices` (`PushSends.sync`).
    public static func sync(
        of row: OutboxRow, counts: InboxCounts, planVersion: Int, devices: [DeviceRegistration],
        silentPushes: SilentPushPlan, topic: String
    ) -> RowPush {
        let prepared = PushSends.sync(
            key: row.key, slot: row.dueAt, counts: counts, planVersion: planVersion, plan: silentPushes, topic: topic)
        return RowPush(
            prepared: prepared, targets: devices.map { .init(request: prepared.request(to: $0.address), device: $0) },
            carriedBadge: counts.unread)
    }

    /// A Live Activity's update or end to the activity's `token`, at the APNs service of the
    /// user's most recently registered device (production without one); withheld when the
    /// payload is over APNs' limit ("PayloadTooLarge").
    public static func liveActivity(
        _ command: LiveActivityCommand, token: String, of row: OutboxRow, devices: [DeviceRegistration],
        topic: String
    ) -> RowSend {
        let prepared: PreparedPush?
        do { prepared = try PushSends.liveActivity(command, key: row.key, topic: topic) } catch {
            return .notSent(.withheld(reason: "PayloadTooLarge"))
        }
        guard let prepared else { return .notSent(.withheld(reason: appStarts)) }
        let environment = devices.max { $0.registeredAt < $1.registeredAt }?.address.environment ?? .production
        let target = RowPush.Target(
            request: prepared.request(to: PushAddress(token: token, environment: environment)), device: nil)
        return .push(RowPush(prepared: prepared, targets: [target], carriedBadge: nil))
    }

    /// The report of `push` given one outcome per target (`SendReport(outcomes:)`). An alert
    /// that reached a device and whose send took time (the client retried) is checked against
    /// the inbox's unread count of now, `unreadNow` (nil when it was not read again): if the
    /// count moved, the badge it carried is outdated and a badge sync follows. One that reached
    /// no device (every token retired) set no badge: nothing to mend.
    public static func report(_ push: RowPush, outcomes: [PushOutcome], unreadNow: Int?) -> SendReport {
        let report = SendReport(outcomes: outcomes)
        guard let carried = push.carriedBadge, outcomes.contains(.delivered) else { return report }
        return report.ofBadge(carrying: carried, unreadNow: unreadNow)
    }

    /// Whether `outcome` of a send to `target` removes the target's device from the user's
    /// registry: APNs retired the token (400 BadDeviceToken or DeviceTokenNotForTopic, 410), it
    /// is a device's (a Live Activity's own token is not), and it was not registered again after
    /// the 410's timestamp (a registration after that instant is a new one and stands).
    public static func retires(_ target: RowPush.Target, after outcome: PushOutcome) -> Bool {
        guard case .tokenRetired(_, let since) = outcome, let device = target.device else { return false }
        guard let since else { return true }
        return device.registeredAt <= since
    }
}

extension DeviceRegistration {
    /// Where a push to this device goes: its token, at the APNs service of the token.
    public var address: PushAddress {
        PushAddress(token: token, environment: environment == .production ? .production : .sandbox)
    }
}
