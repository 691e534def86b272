import Content
import Delivery
import Engagement
import LiveActivity
import Models
import Runtime
import Scheduling

/// What travels with a push through the simulated APNs to the device: the notification an alert
/// shows, or the unread count a badge sync carries (what the app reads from the payload).
enum PushNote: Sendable {
    case alert(NotificationRequest)
    case sync(unread: Int)
    /// A Live Activity's update or end, pushed to the activity's token.
    case liveActivity(LiveActivityCommand)
}

/// The engine's remote requests not yet sent, keyed by their identifiers: a few at a time, so
/// an array searched in order (a dictionary of these large entries keeps half its buckets
/// empty).
struct PlannedRequests {
    /// In the order they were first planned.
    private(set) var values: [RemoteChannel.Planned] = []

    var isEmpty: Bool { values.isEmpty }

    private func index(of id: String) -> Int? { values.firstIndex { $0.request.identifier == id } }

    /// The request planned under `id`; setting replaces it (or adds it), nil removes it. A
    /// request is kept under its own identifier.
    subscript(id: String) -> RemoteChannel.Planned? {
        get { index(of: id).map { values[$0] } }
        set {
            assert(newValue.map { $0.request.identifier == id } ?? true, "a request is kept under its identifier")
            switch (index(of: id), newValue) {
            case (let index?, let entry?): values[index] = entry
            case (let index?, nil): values.remove(at: index)
            case (nil, let entry?): values.append(entry)
            case (nil, nil): break
            }
        }
    }

    @discardableResult mutating func removeValue(forKey id: String) -> RemoteChannel.Planned? {
        guard let index = index(of: id) else { return nil }
        return values.remove(at: index)
    }
}

/// One user's remote channel in the simulator, as `engaged` and APNs see it (docs/ARCHITECTURE.md): the
/// engine's remote requests waiting for their time (`ChannelPolicy.remote`), the device's token
/// and what APNs holds for it, the server's registry (a token retired by a 410 is never used
/// again), the inbox with its unread count, and the pending badge sync (`SilentPushPlan`).
struct RemoteChannel {
    /// A remote request of the engine: sent at `dueAt`; `attempt` counts sends refused with a
    /// retryable answer (the client's bounded retries, in virtual time).
    struct Planned {
        init(request: NotificationRequest, dueAt: Instant) {
            self.request = request
            self.dueAt = dueAt
            decidedAt = dueAt
        }

        var request: NotificationRequest
        var dueAt: Instant
        /// The instant the engine chose (`dueAt` moves with retries).
        var decidedAt: Instant
        var attempt = 0
        /// The key of the first attempt: `apns-id` stays the same across retries.
        var key: String?
    }

    static let topic = "com.example.fitness"
    static let retryPolicy = RetryPolicy()
    static let silentPushes = SilentPushPlan()

    var device: SimulatedPushDevice<PushNote>
    /// The server's registry: when a 410 retired the token (nil: live).
    var retiredAt: Instant?
    /// The engine's remote requests not yet sent, by identifier.
    var planned = PlannedRequests()
    /// The pending badge sync: its slot (its `apns-id` and expiration come from it), when it is
    /// next tried (the slot, or a retry's back-off after it), and its retry count.
    var syncSlot: Instant?
    var syncDueAt: Instant?
    var syncAttempt = 0
    var inbox = SimulatedInbox()
    /// The unread count the device was last sent (by an alert's badge or a sync).
    var lastSentUnread = 0
    /// The pending `.remote` event of the world loop.
    var eventAt: Int64?
    /// The user's draws for APNs and the device's network (apart from the behaviour's, so a
    /// perfect APNs leaves the users' behaviour as it was).
    var draws: SeededGenerator

    init(userID: String, draws: SeededGenerator) {
        device = SimulatedPushDevice(token: Self.token(of: userID))
        self.draws = draws
    }

    /// The device token of a simulated user: 32 bytes of lowercase hex, derived from the id.
    static func token(of userID: String) -> String {
        (0..<4).map {
            String(FNV1a.hash(userID, basis: 0xCBF2_9CE4_8422_2325 &+ UInt64($0)), radix: 16).leftPadded(to: 16)
        }
        .joined()
    }

    /// One attempt of `push` through `apns` to this user's device, with this user's draws.
    mutating func send(
        _ push: PushRequest, carrying note: PushNote, through apns: SimulatedAPNs, at now: Instant
    ) -> SimulatedAPNs.Answer {
        apns.send(push, carrying: note, to: &device, at: now, draws: &draws)
    }

    /// The device's address as the server's registry holds it.
    var address: PushAddress { PushAddress(token: device.token, environment: .production) }

    /// The next instant the channel has something to do (no allocation: it is asked after every step).
    var nextEventAt: Instant? {
        var next = syncDueAt
        // By index, reading only the time: a copy of each entry retained its request's strings.
        for index in planned.values.indices {
            let dueAt = planned.values[index].dueAt
            if next == nil || dueAt < next! { next = dueAt }
        }
        if let arrival = device.nextArrival, next == nil || arrival < next! { next = arrival }
        return next
    }

    /// Requests due at `now`, in time and identifier order.
    func due(at now: Instant) -> [Planned] {
        planned.values.filter { $0.dueAt <= now }.sorted {
            ($0.dueAt, $0.request.identifier) < ($1.dueAt, $1.request.identifier)
        }
    }

    /// After a change of zone, a request not yet sent moves to the time the engine now plans for
    /// it (a wall-clock time re-timed in the new zone), as the runtime moves its outbox rows
    /// (`EngineRuntime.movedRows`); a request being retried keeps its course.
    mutating func follow(plannedIDs: [String], fireTimes: [Instant], at now: Instant) {
        guard !planned.isEmpty else { return }
        for (id, fireAt) in zip(plannedIDs, fireTimes) {
            guard var entry = planned[id], entry.attempt == 0, fireAt > now, fireAt != entry.dueAt else { continue }
            entry.dueAt = fireAt
            entry.decidedAt = fireAt
            planned[id] = entry
        }
    }

    /// Asks for a badge sync at the next slot after `now`, unless one is pending (it will carry
    /// the counts of the moment it is sent).
    mutating func requestSync(after now: Instant) {
        guard syncDueAt == nil, lastSentUnread != inbox.unreadCount else { return }
        planSync(at: Self.silentPushes.slot(after: now))
    }

    /// The badge sync is due at `slot`, afresh.
    mutating func planSync(at slot: Instant) {
        syncSlot = slot
        syncDueAt = slot
        syncAttempt = 0
    }

    /// No badge sync is pending.
    mutating func clearSync() {
        syncSlot = nil
        syncDueAt = nil
        syncAttempt = 0
    }
}

/// The in-app notification center of one user: every user-visible notification is added when it
/// is due (so a user who turned push off still finds it); the badge is its unread count. Holds
/// the identifiers of the last two days for `inboxHoldsEveryVisibleNotification`.
struct SimulatedInbox {
    private(set) var unread: Set<String> = []
    /// Each item with its identifier's hash value, which a lookup compares before the text
    /// (equal strings have equal hash values): the inbox is asked on every delivery, and
    /// comparing a few dozen identifiers as strings cost more than the rest of its bookkeeping.
    private(set) var recent: [(id: String, at: Int64, hash: Int)] = []
    /// The earliest `at` in `recent` (`Int64.max` when it is empty).
    private var oldestRecentAt = Int64.max
    private(set) var total = 0

    var unreadCount: Int { unread.count }

    mutating func add(_ id: String, at now: Instant) {
        // The earliest time among `recent` says whether any item is over two days old, without
        // a pass over them on every add.
        if !recent.isEmpty, now.secondsSinceEpoch - oldestRecentAt > 2 * .secondsPerDay {
            recent.removeAll { now.secondsSinceEpoch - $0.at > 2 * .secondsPerDay }
            oldestRecentAt = recent.lazy.map(\.at).min() ?? .max
        }
        let hash = id.hashValue
        guard !holds(id, hash: hash) else { return }
        recent.append((id, now.secondsSinceEpoch, hash))
        oldestRecentAt = min(oldestRecentAt, now.secondsSinceEpoch)
        unread.insert(id)
        total += 1
    }

    func holds(_ id: String) -> Bool { holds(id, hash: id.hashValue) }

    private func holds(_ id: String, hash: Int) -> Bool {
        recent.contains { $0.hash == hash && $0.id == id }
    }

    /// Reads one item (a repeating request's occurrences are keyed `id@instant`: the earliest
    /// unread one is read); returns whether the unread count changed.
    mutating func read(_ id: String) -> Bool {
        if unread.remove(id) != nil { return true }
        let prefix = id + "@"
        guard let occurrence = unread.filter({ $0.hasPrefix(prefix) }).min() else { return false }
        unread.remove(occurrence)
        return true
    }

    /// The app was opened: the inbox is read (the read-all watermark).
    mutating func readAll() { unread.removeAll() }
}
