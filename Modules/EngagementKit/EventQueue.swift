public import Foundation
public import LiveActivity
public import Models

/// One event waiting to be sent, as the queue's store keeps it.
public struct QueuedEvent: Codable, Hashable, Sendable {
    /// Its place in the queue: one more than any event the store ever held, never reused.
    public var sequence: Int64
    /// The request body (`AppEvent.body`), the same bytes at every attempt.
    public var body: Data
    public var enqueuedAt: Instant
    /// Attempts made so far.
    public var attempts: Int
    /// Not sent again before this instant (the back-off).
    public var nextAttemptAt: Instant
    /// When the first attempt was made that was not answered with a 2xx or a refusal (no answer
    /// at all included): the server may have applied the event then, its answer lost, and it
    /// keeps the key for `EventQueue.keyLifetimeSeconds` from that attempt.
    public var firstAttemptAt: Instant?

    public init(
        sequence: Int64, body: Data, enqueuedAt: Instant, attempts: Int = 0, nextAttemptAt: Instant,
        firstAttemptAt: Instant? = nil
    ) {
        self.sequence = sequence
        self.body = body
        self.enqueuedAt = enqueuedAt
        self.attempts = attempts
        self.nextAttemptAt = nextAttemptAt
        self.firstAttemptAt = firstAttemptAt
    }
}

/// Where the queue keeps its events: durably, so an app killed at any instant loses none.
/// `SQLiteEventQueueStore` on the device, `InMemoryEventQueueStore` in tests.
///
/// A store holds one user's events (a queue per signed-in user: events of one user are never
/// sent as another's) and the installation id its idempotency keys are made of, made with the
/// store and kept with its sequences, so a key is never given twice: a new store (a reinstall,
/// a purged file) has a new installation id.
public protocol EventQueueStore: Sendable {
    /// The user whose events these are.
    var userID: UserID { get }
    /// The installation id of the store's keys (1 to 200 characters).
    var installation: String { get }
    /// Appends an event durably (written when this returns) with the next sequence.
    func append(body: Data, at instant: Instant) throws -> QueuedEvent
    /// The oldest events, at most `limit`, in order.
    func oldest(limit: Int) throws -> [QueuedEvent]
    /// Replaces the event of `event.sequence` (its attempts, back-off and first attempt).
    func update(_ event: QueuedEvent) throws
    /// Removes the event of `sequence` (sent, or refused for good).
    func remove(sequence: Int64) throws
    /// How many events wait.
    func count() throws -> Int
}

/// What the server answered one attempt (`POST /v1/users/{id}/events`), as a transport reports
/// it; a transport that got no answer (offline, a timeout) throws instead.
public struct EventAnswer: Hashable, Sendable {
    public var status: Int
    /// `Retry-After` in seconds, when the answer had one (429, 503).
    public var retryAfterSeconds: Int64?
    /// The answer's `planVersion` (2xx).
    public var planVersion: Int?
    /// The Live Activities the event started, updated or ended (2xx), by the engine's names.
    public var liveActivities: [LiveActivityChange]

    public init(
        status: Int, retryAfterSeconds: Int64? = nil, planVersion: Int? = nil, liveActivities: [LiveActivityChange] = []
    ) {
        self.status = status
        self.retryAfterSeconds = retryAfterSeconds
        self.planVersion = planVersion
        self.liveActivities = liveActivities
    }

    /// The answer of `status` with its JSON `body`: a 2xx body's `planVersion` and
    /// `liveActivities` are read; a body that does not hold them (an error's problem body, a
    /// server before them) leaves them empty.
    public init(status: Int, retryAfterSeconds: Int64? = nil, body: Data) {
        struct Wire: Decodable {
            var planVersion: Int?
            var liveActivities: [LiveActivityChange]?
        }
        let wire = (200..<300).contains(status) ? try? JSONDecoder().decode(Wire.self, from: body) : nil
        self.init(
            status: status, retryAfterSeconds: retryAfterSeconds, planVersion: wire?.planVersion,
            liveActivities: wire?.liveActivities ?? [])
    }
}

/// Sends one event's body with its idempotency key to the server, for `userID`, with that
/// user's token.
public protocol EventSender: Sendable {
    func send(_ body: Data, idempotencyKey: String, userID: UserID) async throws -> EventAnswer
}

/// An event the server refused for good, removed from the queue.
public struct DroppedEvent: Hashable, Sendable {
    public var sequence: Int64
    public var status: Int
}

/// What a flush did.
public struct FlushReport: Hashable, Sendable {
    /// Events the server accepted (or had accepted: a replay of the key).
    public var sent = 0
    /// Events the server refused for good (a 4xx that no retry can change), removed so they do
    /// not hold up the rest.
    public var dropped: [DroppedEvent] = []
    /// Events older than the server takes (`EventQueue.maximumAgeSeconds`), by sequence: removed
    /// unsent, since the server would refuse them (422).
    public var expired: [Int64] = []
    /// Events the server accepted at an attempt more than `EventQueue.keyLifetimeSeconds` after
    /// an unanswered one, by sequence: the server no longer knew the key, so it may have applied
    /// them twice.
    public var acceptedPastKeyLifetime: [Int64] = []
    /// The newest plan version an answer carried (`PlanSync.needsPull`).
    public var planVersion: Int?
    /// The Live Activities each sent event's step started, updated or ended, by the event's
    /// sequence (`QueuedEvent.sequence`, as `enqueue` returned it).
    public var liveActivities: [Int64: [LiveActivityChange]] = [:]
    /// When the next attempt is due, if events remain.
    public var nextAttemptAt: Instant?
    /// The server refused the token (401): the queue waits for `resume()` after a new one.
    public var needsToken = false
}

/// The app's events, kept in a persistent queue and sent in order, each with an idempotency key
/// made of the installation and the event's sequence (`<installation>-<sequence>`): the same key
/// at every attempt, so the server applies an event once however often an answer is lost.
///
/// In order: the oldest event is sent first and holds up the rest while it waits for a retry
/// (what the user did reaches the engine in the order they did it). An answer decides:
/// - 2xx: sent, removed;
/// - 401 or 403: the token is refused (expired, revoked, another user's, a deprecated kind that
///   may not send events): nothing more is sent until `resume()` (after the app gets a new
///   token), and no attempt is counted;
/// - 400, 413, 415, 422 (a body or an `at` the server will never take, such as one more than 7
///   days old): removed and reported in `FlushReport.dropped`;
/// - 404 (the backend has not created the user yet), 408, 409 (the same key still being
///   processed), 429, 5xx, or no answer at all: retried after a back-off that doubles from
///   `RetryDelays.firstSeconds` to `RetryDelays.maximumSeconds`, with jitter, and never before a
///   `Retry-After` (taken up to a day).
///
/// One flush runs at a time: a flush asked for while one is sending returns at once, empty.
///
/// The server's two bounds, and what the queue does past each:
/// - it refuses an `at` more than 7 days old (`maximumAgeSeconds`): the queue removes such an
///   event unsent, once it is older than that and the server's allowance for a device clock
///   that runs ahead (`clockSkewSeconds`), and reports it (`FlushReport.expired`); nearer the
///   bound the server's 422 decides (`FlushReport.dropped`). A user's deed that waited a week
///   on a phone that never reached the server no longer shapes what the engine plans;
/// - it keeps an idempotency key for 24 hours (`keyLifetimeSeconds`): an event whose answer was
///   lost and that is sent again more than a day later (the app was not run in between) goes
///   with its key all the same, since losing what the user did is worse than counting it twice,
///   and the report names it (`FlushReport.acceptedPastKeyLifetime`): the server may have
///   applied it twice.
public actor EventQueue {
    /// The oldest `at` the server takes, behind its clock: 7 days.
    public static let maximumAgeSeconds: Int64 = 7 * 86_400
    /// How long the server keeps an idempotency key: 24 hours.
    public static let keyLifetimeSeconds: Int64 = 86_400
    /// How far ahead of the server's clock an `at` may be: a device whose clock runs ahead sees
    /// its events older than the server does.
    public static let clockSkewSeconds: Int64 = 300

    /// The back-off between attempts of one event.
    public struct RetryDelays: Hashable, Sendable {
        public var firstSeconds: Int64
        public var maximumSeconds: Int64

        public init(firstSeconds: Int64 = 2, maximumSeconds: Int64 = 900) {
            self.firstSeconds = max(1, firstSeconds)
            self.maximumSeconds = max(self.firstSeconds, maximumSeconds)
        }

        /// The delay after the `attempts`-th failed attempt, jittered into its upper half.
        func seconds(after attempts: Int, unit: Double) -> Int64 {
            let doubled = firstSeconds << Int64(min(max(0, attempts - 1), 30))
            let capped = min(maximumSeconds, doubled)
            return max(1, capped / 2 + Int64(Double(capped / 2) * unit))
        }
    }

    let store: any EventQueueStore
    /// The user whose events these are (the store's).
    public nonisolated let userID: UserID
    /// The store's installation id, of which the idempotency keys are made.
    public nonisolated let installation: String
    public nonisolated let delays: RetryDelays
    private var random: SeededGenerator
    private var needsToken = false
    private var isFlushing = false

    /// A queue over `store`; the back-off's jitter is drawn from `seed` (an app seeds it with
    /// something of its own, so devices do not retry in step).
    public init(store: any EventQueueStore, delays: RetryDelays = RetryDelays(), seed: UInt64) {
        self.store = store
        userID = store.userID
        installation = store.installation
        self.delays = delays
        random = SeededGenerator(seed: seed)
    }

    /// The longest `Retry-After` taken: a day.
    static let maximumRetryAfterSeconds: Int64 = 86_400

    /// Keeps `event`, which happened at `instant`, until it is sent; written durably when this
    /// returns.
    @discardableResult
    public func enqueue(_ event: AppEvent, at instant: Instant) throws -> QueuedEvent {
        try store.append(body: event.body(at: instant), at: instant)
    }

    /// The idempotency key of the event of `sequence`.
    public nonisolated func idempotencyKey(of sequence: Int64) -> String { "\(installation)-\(sequence)" }

    /// After a new token: sending goes on.
    public func resume() { needsToken = false }

    /// How many events wait.
    public func count() throws -> Int { try store.count() }

    /// Sends the events due at `now` through `sender`, in order, until one must wait.
    public func flush(via sender: any EventSender, at now: Instant) async throws -> FlushReport {
        var report = FlushReport()
        guard !isFlushing else { return report }
        isFlushing = true
        defer { isFlushing = false }
        while !needsToken, let head = try store.oldest(limit: 1).first {
            guard head.nextAttemptAt <= now else {
                report.nextAttemptAt = head.nextAttemptAt
                break
            }
            if now - head.enqueuedAt > Self.maximumAgeSeconds + Self.clockSkewSeconds {
                try store.remove(sequence: head.sequence)
                report.expired.append(head.sequence)
                continue
            }
            let answer = try? await sender.send(
                head.body, idempotencyKey: idempotencyKey(of: head.sequence), userID: store.userID)
            switch answer.map(\.status) {
            case let status? where (200..<300).contains(status):
                try store.remove(sequence: head.sequence)
                report.sent += 1
                if let first = head.firstAttemptAt, now - first > Self.keyLifetimeSeconds {
                    report.acceptedPastKeyLifetime.append(head.sequence)
                }
                if let version = answer?.planVersion {
                    report.planVersion = max(report.planVersion ?? version, version)
                }
                if let changes = answer?.liveActivities, !changes.isEmpty {
                    report.liveActivities[head.sequence] = changes
                }
            case 401?, 403?:
                needsToken = true
                report.needsToken = true
            case let status? where [400, 413, 415, 422].contains(status):
                try store.remove(sequence: head.sequence)
                report.dropped.append(DroppedEvent(sequence: head.sequence, status: status))
            default:
                var retried = head
                retried.attempts += 1
                retried.firstAttemptAt = head.firstAttemptAt ?? now
                let backOff = delays.seconds(after: retried.attempts, unit: random.nextUnit())
                let retryAfter = min(Self.maximumRetryAfterSeconds, max(0, answer?.retryAfterSeconds ?? 0))
                retried.nextAttemptAt = now + max(backOff, retryAfter)
                try store.update(retried)
                report.nextAttemptAt = retried.nextAttemptAt
                return report
            }
        }
        return report
    }
}

/// The queue's events in memory: for tests, and for an app that wants no persistence.
public final class InMemoryEventQueueStore: EventQueueStore, @unchecked Sendable {
    public let userID: UserID
    public let installation: String
    private let lock = NSLock()
    private var events: [QueuedEvent] = []
    private var lastSequence: Int64 = 0

    /// An empty queue of `userID`'s events under the installation id `installation`.
    public init(userID: UserID, installation: String) {
        precondition((1...200).contains(installation.utf8.count), "an installation id is 1 to 200 characters")
        self.userID = userID
        self.installation = installation
    }

    public func append(body: Data, at instant: Instant) throws -> QueuedEvent {
        lock.withLock {
            lastSequence += 1
            let event = QueuedEvent(sequence: lastSequence, body: body, enqueuedAt: instant, nextAttemptAt: instant)
            events.append(event)
            return event
        }
    }

    public func oldest(limit: Int) throws -> [QueuedEvent] { lock.withLock { Array(events.prefix(max(0, limit))) } }

    public func update(_ event: QueuedEvent) throws {
        lock.withLock {
            if let index = events.firstIndex(where: { $0.sequence == event.sequence }) { events[index] = event }
        }
    }

    public func remove(sequence: Int64) throws { lock.withLock { events.removeAll { $0.sequence == sequence } } }

    public func count() throws -> Int { lock.withLock { events.count } }
}
