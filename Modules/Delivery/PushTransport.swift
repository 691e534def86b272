public import Models

/// One remote notification for one device token, as the provider hands it to APNs
/// (Apple's HTTP/2 provider API). A value: the same request sent twice is the same push.
public struct PushRequest: Hashable, Sendable {
    /// Which APNs service the token belongs to: a development build's tokens are sandbox ones.
    public enum Environment: String, CaseIterable, Codable, Hashable, Sendable {
        case sandbox, production
    }

    /// `apns-push-type`.
    public enum PushType: String, CaseIterable, Codable, Hashable, Sendable {
        /// A visible notification (alert, sound, badge).
        case alert
        /// A silent push (`content-available: 1` only); must use priority 5.
        case background
        /// A Live Activity update; the topic gets the `.push-type.liveactivity` suffix.
        case liveactivity
    }

    /// `apns-priority`.
    public enum Priority: Int, CaseIterable, Codable, Hashable, Sendable {
        /// 10: deliver now (alerts).
        case immediate = 10
        /// 5: when the device's power allows (background pushes must use it; low-value alerts may).
        case powerConsiderate = 5
        /// 1: lowest.
        case lowest = 1
    }

    /// `apns-expiration`: how long APNs keeps the push for an offline device. No value (nil
    /// on the request) leaves the header out, and APNs applies its own default.
    public enum Expiration: Hashable, Sendable {
        /// `0`: one attempt; an offline device never gets it.
        case nowOrNever
        /// Kept until this instant (seconds since the epoch in the header).
        case at(Instant)

        /// The header's value.
        public var headerValue: String {
            switch self {
            case .nowOrNever: "0"
            case .at(let instant): String(max(1, instant.secondsSinceEpoch))
            }
        }
    }

    /// The largest payload APNs takes for the push types this engine sends (VoIP's 5120 bytes
    /// is for VoIP pushes, which it never sends).
    public static let maxPayloadBytes = 4_096
    public static let maxCollapseIDBytes = 64

    /// `apns-id`: the outbox row's idempotency key, a lowercase UUID, so a push re-sent after a
    /// crash carries the id it had.
    public var id: String
    /// The device token in lowercase hex.
    public var deviceToken: String
    public var environment: Environment
    public var pushType: PushType
    /// The app's bundle id (`apnsTopic` adds the Live Activity suffix).
    public var topic: String
    public var priority: Priority
    public var expiration: Expiration?
    /// `apns-collapse-id`: pushes with the same one replace each other on the device (grouped
    /// social copy); at most 64 bytes.
    public var collapseID: String?
    /// The JSON payload as sent.
    public var payload: [UInt8]

    /// A request; the priority defaults to 10 for alerts and 5 otherwise.
    public init(
        id: String, deviceToken: String, environment: Environment, pushType: PushType, topic: String,
        priority: Priority? = nil, expiration: Expiration? = nil, collapseID: String? = nil, payload: [UInt8]
    ) {
        self.id = id
        self.deviceToken = deviceToken
        self.environment = environment
        self.pushType = pushType
        self.topic = topic
        self.priority = priority ?? (pushType == .alert ? .immediate : .powerConsiderate)
        self.expiration = expiration
        self.collapseID = collapseID
        self.payload = payload
    }

    /// `apns-topic`: the bundle id, with `.push-type.liveactivity` for Live Activity pushes.
    public var apnsTopic: String {
        pushType == .liveactivity ? topic + ".push-type.liveactivity" : topic
    }

    /// Why APNs would refuse the request, named as APNs names it, or nil when it is well formed.
    /// A transport refuses such a request before sending it (`PushOutcome.rejected`).
    public var invalidReason: PushFailure? {
        if payload.isEmpty { return PushFailure(status: 400, reason: "PayloadEmpty") }
        if payload.count > Self.maxPayloadBytes { return PushFailure(status: 413, reason: "PayloadTooLarge") }
        if !Self.isToken(deviceToken) { return PushFailure(status: 400, reason: "BadDeviceToken") }
        if !Self.isLowercaseUUID(id) { return PushFailure(status: 400, reason: "BadMessageId") }
        if topic.isEmpty || topic.utf8.contains(where: { $0 <= 0x20 || $0 >= 0x7F }) {
            return PushFailure(status: 400, reason: "BadTopic")
        }
        if let collapseID, collapseID.isEmpty || collapseID.utf8.count > Self.maxCollapseIDBytes {
            return PushFailure(status: 400, reason: "BadCollapseId")
        }
        if pushType == .background && priority != .powerConsiderate {
            return PushFailure(status: 400, reason: "BadPriority")
        }
        return nil
    }

    /// Lowercase hex, whole bytes, 32 to 100 of them. (Checked on every send: the bytes are
    /// read in place, not through the string's view one at a time.)
    public static func isToken(_ token: String) -> Bool {
        token.withUTF8Bytes { bytes in
            bytes.count >= 64 && bytes.count <= 200 && bytes.count % 2 == 0 && bytes.allSatisfy(isLowercaseHex)
        }
    }

    /// 8-4-4-4-12 lowercase hex digits.
    static func isLowercaseUUID(_ id: String) -> Bool {
        id.withUTF8Bytes { bytes in
            guard bytes.count == 36 else { return false }
            for index in bytes.indices {
                switch index {
                case 8, 13, 18, 23: guard bytes[index] == UInt8(ascii: "-") else { return false }
                default: guard isLowercaseHex(bytes[index]) else { return false }
                }
            }
            return true
        }
    }

    private static func isLowercaseHex(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte) || (0x61...0x66).contains(byte)
    }
}

/// Why a push did not go through: APNs' answer, or the transport's own refusal or failure.
public struct PushFailure: Hashable, Sendable, CustomStringConvertible {
    /// The HTTP status: APNs' answer, or the status APNs would give a request the transport
    /// refused before sending it; nil when there was no answer (connection failure, timeout).
    public var status: Int?
    /// APNs' `reason` (`BadDeviceToken`, `PayloadTooLarge`, ...), or what went wrong on the way.
    public var reason: String

    public init(status: Int?, reason: String) {
        self.status = status
        self.reason = reason
    }

    public var description: String { status.map { "\($0) \(reason)" } ?? reason }
}

/// What became of one push.
public enum PushOutcome: Hashable, Sendable {
    /// APNs accepted it (200). Not a promise that the device shows it.
    case delivered
    /// The token is no longer valid for the topic (400 BadDeviceToken or DeviceTokenNotForTopic,
    /// 410 Unregistered or ExpiredToken): stop sending to it. `since` is a 410's timestamp (the
    /// token is invalid from then; a registration of it after that instant is a new one and
    /// stands), nil for a 400.
    case tokenRetired(PushFailure, since: Instant?)
    /// Refused for good (413 PayloadTooLarge, the other 400s, 403s other than an expired
    /// provider token, 404, 405, or refused before sending): sending it again gives the same answer.
    case rejected(PushFailure)
    /// Still failing after the transport's bounded retries (429, 5xx, no answer): `failure` is
    /// the last attempt's; the push may succeed later.
    case failedAfterRetries(PushFailure, attempts: Int)
}

/// Sends remote notifications: the APNs HTTP/2 client in production, a model of APNs in the
/// simulator.
///
/// Contract:
/// - `send` delivers one request to one device token and returns its outcome; it never throws.
///   It is safe to call from many tasks at once, and concurrent sends share the transport's
///   connection and provider token.
/// - A request whose `invalidReason` is not nil is `rejected` with that failure, and nothing
///   is sent (a payload over `PushRequest.maxPayloadBytes`, a collapse id over 64 bytes, ...).
/// - `request.id` travels as `apns-id`. The caller passes the outbox row's idempotency key, so
///   a row performed twice (a crash between send and completion) sends the same id twice. The
///   transport does not drop such repeats itself, and APNs does not either: a repeat after a
///   crash may reach the device twice.
/// - Retries are the transport's, bounded: 429 and 5xx answers and failures without an answer
///   are retried with capped exponential back-off and jitter, then `failedAfterRetries`. An
///   expired provider token (403 ExpiredProviderToken) renews the token and retries once. Every
///   other answer is final: `delivered`, `tokenRetired`, `rejected`, and a transport never
///   retries those.
/// - When the calling task is cancelled, `send` stops retrying and returns `failedAfterRetries`.
/// - Not guaranteed: that a delivered push is shown (the device may be off, APNs keeps only the
///   latest push per app while it is, and may drop low-priority pushes), nor any order between
///   pushes sent concurrently.
public protocol PushTransport: Sendable {
    func send(_ request: PushRequest) async -> PushOutcome
}
