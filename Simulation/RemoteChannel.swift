import Content
import Delivery
import Engagement
import LiveActivity
import Models
import Runtime
import Scheduling
import SimulatedPlatform
import Storage

/// What travels with a push through the simulated APNs to the device: the notification an alert
/// shows, or the unread count a badge sync carries (what the app reads from the payload).
enum PushNote: Sendable {
    case alert(NotificationRequest)
    /// A badge sync, with the plan's version it carries (`PlanSignal`).
    case sync(unread: Int, planVersion: Int)
    /// A Live Activity's update or end, pushed to the activity's token.
    case liveActivity(LiveActivityCommand)

    /// The unread count it carries to the badge (an alert's badge, a sync's count); nil for a
    /// Live Activity push.
    var unread: Int? {
        switch self {
        case .alert(let request): request.content.badge
        case .sync(let unread, _): unread
        case .liveActivity: nil
        }
    }
}

/// One user's remote channel in the simulator, as `engaged` and APNs see it
/// (docs/ARCHITECTURE.md): the server's pending outbox rows of the user (every notification's
/// inbox row, the remote ones' push rows, badge syncs), the sends the APNs client is retrying, the device's token and what APNs
/// holds for it, the server's registry (a token retired by a 410 is never used again), and the
/// inbox with its unread count. What the server does with them is the runtime's own code
/// (`OutboxPlan`, `OutboxSteps`, `PushSends`); see `ShardRemote`.
struct RemoteChannel {
    /// A send the APNs client is retrying after a retryable answer (its bounded retries, in
    /// virtual time): every attempt sends the same request, as the client does. A simulated
    /// user has one phone, so a push has one target.
    struct InFlight {
        var row: OutboxRow
        var push: RowPush
        var target: RowPush.Target
        var note: PushNote
        /// Attempts made so far.
        var attempts: Int
        var nextAttemptAt: Instant
        /// The instant of the dispatch that first sent it: what follows is decided as of then.
        var dispatchedAt: Instant
    }

    static let topic = "com.example.fitness"
    static let retryPolicy = RetryPolicy()
    static let silentPushes = SilentPushPlan()
    /// How long the simulated server remembers a completed key. It never replays a commit, and a
    /// key names the instant its work is due, which the engine never plans before its step's
    /// instant: a key comes back only when a step at the instant it was completed makes it
    /// again, or, for a sync sent before its slot, until that slot. An early sync's budget reads
    /// the keys of the last slots too: `SilentPushPlan.historySeconds` covers both.
    static let completedKeyRetentionSeconds: Int64 = silentPushes.historySeconds

    var device: SimulatedPushDevice<PushNote>
    /// The phone's registration in the server's registry (the app registers its token once, at
    /// install).
    let registration: DeviceRegistration
    /// The server's registry: when a 410 retired the token (nil: live).
    var retiredAt: Instant?
    /// The server's pending rows of this user, with what its store keeps for the claim-time
    /// rules (`OutboxClaim`), kept as every store keeps them.
    var outbox = PendingOutbox(completedKeyRetentionSeconds: completedKeyRetentionSeconds)
    /// The plans the server answered the phone lately, which a pull's `since` names
    /// (`ServedPlans`): it answers with only what changed since.
    var servedPlans = ServedPlans()
    /// The request ids each merged alert stands for and when it was merged, until it is shown
    /// or two days have passed.
    var mergedParts: [RequestID: (parts: [RequestID], at: Instant)] = [:]
    /// Sends being retried by the APNs client.
    var inFlight: [InFlight] = []
    var inbox = SimulatedInbox()
    /// The unread count the device was last sent (by an alert's badge or a sync).
    var lastSentUnread = 0
    /// When the server's dispatch resumes after the stall that found rows due (nil: not stalled).
    var dispatchResumesAt: Instant?
    /// The pending `.remote` event of the world loop.
    var eventAt: Int64?
    /// The user's draws for APNs and the device's network (apart from the behaviour's, so a
    /// perfect APNs leaves the users' behaviour as it was).
    var draws: SeededGenerator

    init(userID: UserID, registeredAt: Instant, draws: SeededGenerator) {
        let token = Self.token(of: userID)
        device = SimulatedPushDevice(token: token)
        registration = DeviceRegistration(
            token: token, userID: userID, environment: .production, platform: "ios", registeredAt: registeredAt)
        self.draws = draws
    }

    /// The device token of a simulated user: 32 bytes of lowercase hex, derived from the id.
    static func token(of userID: UserID) -> String {
        (0..<4).map {
            String(FNV1a.hash(userID.rawValue, basis: 0xCBF2_9CE4_8422_2325 &+ UInt64($0)), radix: 16).leftPadded(
                to: 16)
        }
        .joined()
    }

    /// One attempt of `push` through `apns` to this user's device, with this user's draws.
    mutating func send(
        _ push: PushRequest, carrying note: PushNote, through apns: SimulatedAPNs, at now: Instant
    ) -> SimulatedAPNs.Answer {
        apns.send(push, carrying: note, to: &device, at: now, draws: &draws)
    }

    /// The user's devices as the server's registry holds them: none once a 410 retired the token.
    var devices: [DeviceRegistration] { retiredAt == nil ? [registration] : [] }

    /// The next instant the channel has something to do (no allocation: it is asked after every step).
    var nextEventAt: Instant? {
        var next = outbox.nextDueAt
        if let resumes = dispatchResumesAt, let due = next, due < resumes { next = resumes }
        for index in inFlight.indices {
            let at = inFlight[index].nextAttemptAt
            if next == nil || at < next! { next = at }
        }
        if let arrival = device.nextArrival, next == nil || arrival < next! { next = arrival }
        return next
    }

}

/// The in-app notification center of one user, as the runtime's inbox keeps it: every
/// user-visible notification becomes an item when its inbox row is due (so a user who turned
/// push off still finds it), keyed by the row's key; the badge is its unread count. Holds the
/// items of the last two days for `inboxHoldsEveryVisibleNotification`.
///
/// A simulated user reads what they look at: an opened notification reads its item, and an
/// opened app reads them all. No item is seen and left unread, so `unseen` equals `unread`.
struct SimulatedInbox {
    struct Item {
        /// The outbox row's key (`InboxItem.id`).
        var key: String
        var requestID: RequestID
        /// The request id's hash value, compared before the text (equal identifiers have equal hash
        /// values): the inbox is asked on every delivery (docs/PERFORMANCE.md, "Copies avoided").
        var requestHash: Int
        var at: Int64
    }

    /// Unread items, in the order they were delivered.
    private(set) var unread: [Item] = []
    /// The items of the last two days, in the order they were delivered.
    private(set) var recent: [Item] = []
    /// The earliest `at` in `recent` (`Int64.max` when it is empty).
    private var oldestRecentAt = Int64.max
    private(set) var total = 0

    var unreadCount: Int { unread.count }

    /// The counts a badge sync carries.
    var counts: InboxCounts { InboxCounts(total: total, unread: unread.count, unseen: unread.count) }

    /// Delivers the item of the row `key` showing `requestID`. The outbox performs a row once
    /// (`PendingOutbox`): a key comes here once.
    mutating func add(key: String, requestID: RequestID, at now: Instant) {
        // The earliest time among `recent` says whether any item is over two days old, without
        // a pass over them on every add.
        if !recent.isEmpty, now.secondsSinceEpoch - oldestRecentAt > 2 * .secondsPerDay {
            recent.removeAll { now.secondsSinceEpoch - $0.at > 2 * .secondsPerDay }
            oldestRecentAt = recent.lazy.map(\.at).min() ?? .max
        }
        let item = Item(key: key, requestID: requestID, requestHash: requestID.hashValue, at: now.secondsSinceEpoch)
        recent.append(item)
        oldestRecentAt = min(oldestRecentAt, item.at)
        unread.append(item)
        total += 1
    }

    /// Whether an item of `requestID` was delivered in the last two days.
    func holds(requestID: RequestID) -> Bool {
        let hash = requestID.hashValue
        return recent.contains { $0.requestHash == hash && $0.requestID == requestID }
    }

    /// Reads the earliest unread item of `requestID` (a daily series has one per occurrence);
    /// returns whether the unread count changed.
    mutating func read(_ requestID: RequestID) -> Bool {
        let hash = requestID.hashValue
        guard let index = unread.firstIndex(where: { $0.requestHash == hash && $0.requestID == requestID }) else {
            return false
        }
        unread.remove(at: index)
        return true
    }

    /// The app was opened: the inbox is read (the read-all watermark).
    mutating func readAll() { unread.removeAll() }
}
