import Foundation
public import LiveActivity
public import Models
public import Scheduling

/// Where an outbox row's work goes: a case per kind of work the server performs. Stored as its
/// `name`; a name this build does not know (a row a newer version wrote) reads back as
/// `unknown`, its payload unreadable, and the dispatch completes that row unperformed
/// (`DueStep.discard`), holding up no other.
public enum OutboxChannel: Hashable, Sendable {
    /// An APNs alert: a remote kind's notification, when due.
    case push
    /// A badge and inbox sync: an APNs background push (`SilentPushPlan`).
    case silent
    /// An item of the user's in-app inbox, delivered when due.
    case inbox
    /// A background job the runtime applies to the user's engine.
    case job
    /// A Live Activity's start, update or end (an APNs `liveactivity` push).
    case liveActivity
    /// A stored name this build does not know.
    case unknown(String)

    /// The channels this build performs.
    public static let known: [OutboxChannel] = [.push, .silent, .inbox, .job, .liveActivity]

    /// The channel stored as `name`.
    public init(name: String) {
        self = Self.known.first { $0.name == name } ?? .unknown(name)
    }

    /// The name a store keeps.
    public var name: String {
        switch self {
        case .push: "push"
        case .silent: "silent"
        case .inbox: "inbox"
        case .job: "job"
        case .liveActivity: "liveActivity"
        case .unknown(let name): name
        }
    }
}

/// What an outbox row's work needs, a case per kind of work. The stores keep it as JSON
/// (`storedText`, keys sorted, so the same work is the same bytes) and read it back by the
/// row's channel (`stored(_:channel:)`).
///
/// Every case with a payload larger than a word is boxed (`indirect`): a row moves through the
/// outbox, the dispatcher and the phone's copy of it by value, and a boxed request, command or
/// unreadable text moves as one reference instead of a struct of a dozen fields with six
/// strings to retain. The enum is a word and a tag.
public enum OutboxPayload: Hashable, Sendable {
    /// A `push` row's alert.
    indirect case alert(NotificationRequest)
    /// An `inbox` row's item, with the channel that shows its notification on the phone, as the
    /// planning pass decided it (`Effect.schedule`): `.local`, the phone fires it from its own
    /// pending list; `.remote`, the `push` row of the same request sends it.
    indirect case inboxItem(NotificationRequest, shownBy: DeliveryChannel)
    /// A `silent` row's badge sync: the counts are read when it is sent.
    case sync
    /// A `job` row: the background job the runtime applies to the engine when it is due.
    case job(BackgroundJob)
    /// A `liveActivity` row's command.
    indirect case liveActivity(LiveActivityCommand)
    /// Stored text that does not read as its channel's payload (written by another version, or
    /// damaged; a job this build does not know), kept as it is with the channel it was stored
    /// under: reading it never fails a whole batch of due rows, and the dispatch completes such
    /// a row unperformed, whatever its channel (`DueStep.discard`).
    indirect case unreadable(String, channel: OutboxChannel)

    /// The channel whose work this is: a row's channel and its payload are one value.
    public var channel: OutboxChannel {
        switch self {
        case .alert: .push
        case .inboxItem: .inbox
        case .sync: .silent
        case .job: .job
        case .liveActivity: .liveActivity
        case .unreadable(_, let channel): channel
        }
    }

    /// The JSON a store keeps: an alert's request; an inbox item's request with its `shownBy`.
    public var storedText: String {
        switch self {
        case .alert(let request): Self.json(request)
        case .inboxItem(let request, let shownBy): Self.json(StoredInboxItem(request: request, shownBy: shownBy))
        case .sync: "{}"
        case .job(let job): Self.json(["job": job.rawValue])
        case .liveActivity(let command): Self.json(command)
        case .unreadable(let text, _): text
        }
    }

    /// The payload of a row of `channel` stored as `text`. An inbox item stored without
    /// `shownBy` (by a version before it was kept) is shown by its kind's channel
    /// (`ChannelPolicy`), the only rule those versions had.
    public static func stored(_ text: String, channel: OutboxChannel) -> OutboxPayload {
        let decoder = JSONDecoder()
        let data = Data(text.utf8)
        let payload: OutboxPayload? =
            switch channel {
            case .push: (try? decoder.decode(NotificationRequest.self, from: data)).map { .alert($0) }
            case .inbox:
                (try? decoder.decode(StoredInboxItem.self, from: data)).map { item in
                    .inboxItem(
                        item.request, shownBy: item.shownBy ?? ChannelPolicy.channel(for: item.request.content.kind))
                }
            case .silent: .sync
            case .job:
                (try? decoder.decode([String: String].self, from: data))?["job"].flatMap(BackgroundJob.init).map {
                    .job($0)
                }
            case .liveActivity: (try? decoder.decode(LiveActivityCommand.self, from: data)).map { .liveActivity($0) }
            case .unknown: nil
            }
        return payload ?? .unreadable(text, channel: channel)
    }

    /// The notification, for a `push` or `inbox` row.
    public var notification: NotificationRequest? {
        switch self {
        case .alert(let request), .inboxItem(let request, _): request
        default: nil
        }
    }

    /// The channel that shows an inbox item's notification on the phone; nil for other work.
    public var shownBy: DeliveryChannel? {
        if case .inboxItem(_, let shownBy) = self { shownBy } else { nil }
    }

    /// An inbox item as stored: the request's own keys and `shownBy` beside them, so the text of
    /// an item reads as the request it holds.
    private struct StoredInboxItem: Codable {
        private enum Key: String, CodingKey { case shownBy }
        var request: NotificationRequest
        var shownBy: DeliveryChannel?

        init(request: NotificationRequest, shownBy: DeliveryChannel) {
            self.request = request
            self.shownBy = shownBy
        }

        init(from decoder: any Decoder) throws {
            request = try NotificationRequest(from: decoder)
            shownBy = try decoder.container(keyedBy: Key.self).decodeIfPresent(DeliveryChannel.self, forKey: .shownBy)
        }

        func encode(to encoder: any Encoder) throws {
            try request.encode(to: encoder)
            var container = encoder.container(keyedBy: Key.self)
            try container.encodeIfPresent(shownBy, forKey: .shownBy)
        }
    }

    private static func json(_ value: some Encodable) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return (try? encoder.encode(value)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }
}

/// An outbox row's idempotency key (`OutboxRow.key`): the same work always has the same key,
/// and a push sends it as its `apns-id`.
public struct OutboxKey: StringIdentifier {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
}

/// Work the runtime must perform outside the database (a push to send, an inbox item to show),
/// written in the same transaction as the engine state that decided it: the transactional
/// outbox. A dispatcher performs due rows with their key and then completes them.
public struct OutboxRow: Hashable, Sendable {
    /// The idempotency key: the same work always has the same key (it becomes `apns-id` for a
    /// push), so a row performed twice after a crash is recognised downstream, and a replayed
    /// commit never brings back a completed row.
    public var key: OutboxKey
    public var userID: UserID
    /// The notification request the work is for.
    public var requestID: RequestID
    /// When to perform it.
    public var dueAt: Instant
    /// The work, typed, with its channel; JSON only in the stores (`OutboxPayload.storedText`).
    public var payload: OutboxPayload

    public init(key: OutboxKey, userID: UserID, requestID: RequestID, dueAt: Instant, payload: OutboxPayload) {
        self.key = key
        self.userID = userID
        self.requestID = requestID
        self.dueAt = dueAt
        self.payload = payload
    }

    /// Where it goes (one pending row per request and channel): its payload's channel, so a
    /// row of one channel cannot carry another's work.
    public var channel: OutboxChannel { payload.channel }

    /// A row as a store keeps it: its channel's name and its payload's text
    /// (`OutboxPayload.stored(_:channel:)`).
    public init(key: OutboxKey, userID: UserID, requestID: RequestID, dueAt: Instant, channelName: String, text: String)
    {
        self.init(
            key: key, userID: userID, requestID: requestID, dueAt: dueAt,
            payload: .stored(text, channel: OutboxChannel(name: channelName)))
    }
}

/// Where a pending row sits: a store holds at most one pending row per user, request and
/// channel (`RuntimeStore`'s outbox identity).
public struct OutboxSlot: Hashable, Sendable {
    public var userID: UserID
    public var requestID: RequestID
    public var channel: OutboxChannel
}

extension OutboxRow {
    /// The slot the row takes when it is pending.
    public var slot: OutboxSlot { OutboxSlot(userID: userID, requestID: requestID, channel: channel) }
}

/// One input applied by the runtime: everything it changes, committed in one transaction.
public struct RuntimeCommit: Hashable, Sendable {
    public var userID: UserID
    /// The engine's state after the input (`UserEngine.snapshot()`).
    public var snapshot: [UInt8]
    /// The history the step adds (activity, ledger rows, engagement state).
    public var batch: StoreBatch
    /// Pending rows of these requests are withdrawn (the engine cancelled them) before `outbox`
    /// is written.
    public var cancelledRequestIDs: [RequestID]
    /// New work; a row replaces the pending row of the same request and channel.
    public var outbox: [OutboxRow]
    /// The step's traced decisions (`TraceStore`); their ids are given by the store.
    public var trace: [TraceRecord]

    /// The field-group versions the step set (`UserVersionStore`), or nil when it set none.
    public var userVersions: UserVersions?
    /// The first answer of the keyed request this step applies (`IdempotencyStore`), or nil.
    public var idempotency: IdempotencyRecord?
    /// The social event this step took in, by its id (`SocialEventStore`), or nil.
    public var socialEvent: SocialEventRecord?

    public init(
        userID: UserID, snapshot: [UInt8], batch: StoreBatch = StoreBatch(), cancelledRequestIDs: [RequestID] = [],
        outbox: [OutboxRow] = [], userVersions: UserVersions? = nil, idempotency: IdempotencyRecord? = nil,
        trace: [TraceRecord] = [], socialEvent: SocialEventRecord? = nil
    ) {
        self.userID = userID
        self.snapshot = snapshot
        self.batch = batch
        self.cancelledRequestIDs = cancelledRequestIDs
        self.outbox = outbox
        self.userVersions = userVersions
        self.idempotency = idempotency
        self.trace = trace
        self.socialEvent = socialEvent
    }

    /// The first rule the commit breaks, or nil: every row belongs to the commit's user and has
    /// a key, and no two rows share a key or a request and channel.
    public var validationError: StoreError? {
        if let error = batch.validationError { return error }
        if userID.isEmpty { return .invalidBatch(field: "userID", problem: "empty") }
        if snapshot.isEmpty { return .invalidBatch(field: "snapshot", problem: "empty") }
        if let error = idempotency?.validationError(forCommitOf: userID) { return error }
        if let error = socialEvent?.validationError(forCommitOf: userID) { return error }
        var keys = Set<OutboxKey>()
        var slots = Set<OutboxSlot>()
        for (index, row) in outbox.enumerated() {
            let field = "outbox[\(index)]"
            if row.userID != userID { return .invalidBatch(field: "\(field).userID", problem: "not the commit's user") }
            if row.key.isEmpty { return .invalidBatch(field: "\(field).key", problem: "empty") }
            if !keys.insert(row.key).inserted { return .invalidBatch(field: "\(field).key", problem: "repeated") }
            if !slots.insert(row.slot).inserted {
                return .invalidBatch(field: "\(field)", problem: "a second row for the same request and channel")
            }
        }
        for (index, record) in trace.enumerated() {
            if record.userID != userID {
                return .invalidBatch(field: "trace[\(index)].userID", problem: "not the commit's user")
            }
            if record.requestID.isEmpty { return .invalidBatch(field: "trace[\(index)].requestID", problem: "empty") }
        }
        return nil
    }
}

/// The store a runtime runs on: the history of `EngagementStore`, plus each user's engine
/// snapshot and the outbox, and the notification centers the `inbox` channel fills
/// (`InboxStore`).
///
/// Contract (beyond `EngagementStore`'s, checked by the conformance suite):
/// - **One transaction per input.** `commit(_:)` writes the snapshot, the batch, the
///   withdrawals and the new outbox rows all together or not at all. `commitGroup(_:)` writes
///   several inputs (of one user or many) in order in one transaction, all or none: the runtime
///   groups concurrent inputs so that one write (and one fsync) serves them all.
/// - **Outbox identity.** At most one pending row per (user, request, channel); a new one
///   replaces it. One with the same key is the same work: it stays due at the earlier of the two
///   instants. A row whose key was completed is never pending again, whatever is replayed.
/// - **Due order.** `dueOutbox` lists pending rows due at or before the instant, by due time,
///   then key, at most `limit` of them.
/// - **Completion.** `completeOutbox` removes the rows from the pending set and remembers their
///   keys; completing a completed key again changes nothing, and a key completed before any row
///   had it is remembered too (a row with it is never made pending later).
/// - **User records.** The commit's field-group versions, idempotency record and social event
///   record are part of the same transaction (`UserVersionStore`, `IdempotencyStore`,
///   `SocialEventStore`); devices (`DeviceStore`) are
///   written on their own, and so are token revocations (`TokenRevocationStore`).
public protocol RuntimeStore: EngagementStore, InboxStore, UserVersionStore, IdempotencyStore, DeviceStore,
    TokenRevocationStore, TraceStore, ClaimRecordStore, SocialEventStore
{
    /// Whether `dueOutbox` already applied the claim-time rules (a worker's claim). When false,
    /// it lists rows as they stand and the runtime applies the rules itself, recording what they
    /// change through `ClaimRecordStore`.
    var claimsWithRules: Bool { get }
    /// Writes `commits` in order in one transaction; a commit that breaks a rule
    /// (`validationError`) fails the whole group before anything is written.
    func commitGroup(_ commits: [RuntimeCommit]) throws(StoreError)
    /// The user's last committed engine snapshot, or nil.
    func snapshot(userID: UserID) throws(StoreError) -> [UInt8]?
    func dueOutbox(through instant: Instant, limit: Int) throws(StoreError) -> [OutboxRow]
    func completeOutbox(keys: [OutboxKey], at instant: Instant) throws(StoreError)
    /// Pending rows, all users.
    func outboxDepth() throws(StoreError) -> Int
    /// The user's pending rows, by due time.
    func pendingOutbox(userID: UserID) throws(StoreError) -> [OutboxRow]
    /// Which of `keys` were completed, as far as the store remembers completed keys: what a
    /// sync's budget reads (the runtime's `SilentPushPlan.earlyRows`).
    func completedOutboxKeys(among keys: [OutboxKey]) throws(StoreError) -> Set<OutboxKey>
    /// Every user with a stored profile, sorted (a server's start-up reads it once).
    func userIDs() throws(StoreError) -> [UserID]
    /// Returns when the store answers a read and its schema is the one this build reads
    /// (`/readyz`); throws what is wrong otherwise (`.newerSchema` when a newer build migrated it).
    func checkReady() throws(StoreError)
}

extension StoreError {
    /// A schema older than the build's under a running server: its migration was undone (a
    /// restore from an older backup, a database rolled back) while the server ran.
    public static func olderSchema(found: Int, expected: Int) -> StoreError {
        .unavailable("the schema is at version \(found), this build reads \(expected); run `engaged migrate`")
    }
}

extension RuntimeStore {
    /// One input's commit in its own transaction.
    public func commit(_ commit: RuntimeCommit) throws(StoreError) { try commitGroup([commit]) }
}
