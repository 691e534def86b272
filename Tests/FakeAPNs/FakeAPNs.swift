public import Crypto
public import Foundation
import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOPosix
import NIOSSL
import Synchronization

/// A fake APNs for tests and the benchmark: the provider API over real HTTP/2 and TLS on
/// 127.0.0.1, on a port chosen when it starts, with a self-signed certificate made then
/// (`certificatePEM` is what a client must trust).
///
/// Each request is checked as APNs checks it, and answered with APNs' status and reason:
/// - the provider token (`authorization: bearer <jwt>`): ES256 signature by a known key id,
///   `iss` the team id, `iat` a number; 403 InvalidProviderToken or MissingProviderToken
///   otherwise, 403 ExpiredProviderToken when `iat` is an hour old, 429
///   TooManyProviderTokenUpdates for a new token within 20 minutes of the previous one (unless
///   the previous one was answered as expired);
/// - `POST /3/device/<hex token>` (405 MethodNotAllowed, 404 BadPath, 400 BadDeviceToken);
/// - the headers (`apns-push-type`, `apns-topic` with the Live Activity suffix, `apns-priority`
///   with 5 for background pushes, `apns-expiration`, `apns-collapse-id` <= 64 bytes,
///   `apns-id` a lowercase UUID), each with its 400 reason;
/// - the payload: 400 PayloadEmpty, 413 PayloadTooLarge past 4096 bytes, 400 BadPayload for
///   anything but a JSON object.
/// A request that passes is answered by the scripted faults (`answer(token:with:)`, then
/// `enqueue(_:)`), or 200. Every request is recorded (`pushes`), with the status it got.
public final class FakeAPNs: Sendable {
    public struct Configuration: Sendable {
        /// The team id tokens must name as `iss`.
        public var teamID: String
        /// The public keys that verify tokens, by key id (`kid`), in their raw (x, y) form (the
        /// key type is not `Sendable`).
        public var keys: [String: Data]
        /// The app's bundle id: the only topic accepted.
        public var topic: String
        /// SETTINGS_MAX_CONCURRENT_STREAMS announced to clients (APNs announces up to 1000).
        public var maxConcurrentStreams: Int
        /// The fake's wall clock in seconds since the epoch, for tokens' ages.
        public var now: @Sendable () -> Int64
        /// Whether pushes keep their payload and headers (the benchmark turns it off).
        public var recordsDetails: Bool

        public init(
            teamID: String, keys: [String: P256.Signing.PublicKey], topic: String, maxConcurrentStreams: Int = 1000,
            now: (@Sendable () -> Int64)? = nil, recordsDetails: Bool = true
        ) {
            self.teamID = teamID
            self.keys = keys.mapValues(\.rawRepresentation)
            self.topic = topic
            self.maxConcurrentStreams = maxConcurrentStreams
            self.now = now ?? { Int64(Date().timeIntervalSince1970) }
            self.recordsDetails = recordsDetails
        }
    }

    /// A scripted answer to one request that passed the checks.
    public enum Fault: Sendable, Hashable {
        /// This status and reason (and a 410's timestamp, in milliseconds).
        case answer(status: Int, reason: String, timestampMillis: Int64? = nil)
        /// 200, after this long.
        case delay(Duration)
        /// 200, then GOAWAY (last stream: this one) and the connection closed.
        case goAway
        /// The connection closed at once, the request unanswered.
        case closeConnection
        /// The connection stops reading, open: this request and everything after it on the
        /// connection (PINGs too) go unanswered, as on a connection a peer or a middlebox lost.
        case freezeConnection

        public static let badDeviceToken = Fault.answer(status: 400, reason: "BadDeviceToken")
        public static let deviceTokenNotForTopic = Fault.answer(status: 400, reason: "DeviceTokenNotForTopic")
        public static func unregistered(atMillis millis: Int64) -> Fault {
            .answer(status: 410, reason: "Unregistered", timestampMillis: millis)
        }
        public static let expiredProviderToken = Fault.answer(status: 403, reason: "ExpiredProviderToken")
        public static let tooManyRequests = Fault.answer(status: 429, reason: "TooManyRequests")
        public static let internalServerError = Fault.answer(status: 500, reason: "InternalServerError")
        public static let serviceUnavailable = Fault.answer(status: 503, reason: "ServiceUnavailable")
    }

    /// One request as the fake received it.
    public struct Push: Sendable, Hashable {
        /// Numbers the accepted connections from 1.
        public var connection: Int
        public var streamID: Int
        public var deviceToken: String
        /// The `apns-*` headers, and `authorization`'s token (without `bearer `) as `jwt`.
        public var headers: [String: String]
        public var payload: [UInt8]
        public var status: Int
        public var reason: String?
        /// When the request was answered, in milliseconds since the epoch (wall clock).
        public var receivedAtMilliseconds: Int64 = 0

        public var apnsID: String? { headers["apns-id"] }
        public var jwt: String? { headers["jwt"] }
    }

    private let core: FakeAPNsCore
    private let channel: any Channel
    /// The fake's own thread: a client under test keeps its event loops to itself, as it would
    /// with APNs on another machine.
    private let group: MultiThreadedEventLoopGroup
    /// The port it listens on, on 127.0.0.1.
    public let port: Int
    /// The self-signed certificate it presents (for 127.0.0.1 and localhost).
    public let certificatePEM: String

    /// `https://127.0.0.1:<port>`.
    public var url: String { "https://127.0.0.1:\(port)" }

    private init(core: FakeAPNsCore, group: MultiThreadedEventLoopGroup, channel: any Channel, certificatePEM: String) {
        self.core = core
        self.group = group
        self.channel = channel
        self.port = channel.localAddress?.port ?? 0
        self.certificatePEM = certificatePEM
    }

    /// Starts listening on 127.0.0.1 on a free port.
    public static func start(_ configuration: Configuration) async throws -> FakeAPNs {
        let identity = try SelfSignedIdentity.make()
        var tls = TLSConfiguration.makeServerConfiguration(
            certificateChain: [.certificate(try NIOSSLCertificate(bytes: identity.certificateDER, format: .der))],
            privateKey: .privateKey(try NIOSSLPrivateKey(bytes: identity.privateKeyDER, format: .der)))
        tls.applicationProtocols = ["h2"]
        let sslContext = try NIOSSLContext(configuration: tls)
        let core = FakeAPNsCore(configuration: configuration)
        let connection = {
            var connection = NIOHTTP2Handler.ConnectionConfiguration()
            connection.initialSettings = [
                HTTP2Setting(parameter: .maxConcurrentStreams, value: configuration.maxConcurrentStreams),
                HTTP2Setting(parameter: .maxHeaderListSize, value: 1 << 16),
            ]
            return connection
        }()
        let stream = NIOHTTP2Handler.StreamConfiguration()
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let connectionNumber = core.connectionOpened(channel)
                    let sync = channel.pipeline.syncOperations
                    try sync.addHandler(NIOSSLServerHandler(context: sslContext))
                    try sync.addHandler(FlushCoalescer())
                    _ = try sync.configureHTTP2Pipeline(
                        mode: .server, connectionConfiguration: connection, streamConfiguration: stream
                    ) { streamChannel in
                        streamChannel.eventLoop.makeCompletedFuture {
                            let streamSync = streamChannel.pipeline.syncOperations
                            try streamSync.addHandler(HTTP2FramePayloadToHTTP1ServerCodec())
                            try streamSync.addHandler(StreamHandler(core: core, connection: connectionNumber))
                        }
                    }
                    try sync.addHandler(ConnectionErrorHandler())
                }
            }
        let channel: any Channel
        do { channel = try await bootstrap.bind(host: "127.0.0.1", port: 0).get() } catch {
            try? await group.shutdownGracefully()
            throw error
        }
        return FakeAPNs(core: core, group: group, channel: channel, certificatePEM: identity.certificatePEM)
    }

    /// Stops listening and closes the open connections.
    public func shutdown() async throws {
        try await channel.close()
        let open = core.state.withLock { state in
            defer { state.openChannels.removeAll() }
            return Array(state.openChannels.values)
        }
        for connection in open { try? await connection.close() }
        try await group.shutdownGracefully()
    }

    // MARK: - Scripting

    /// The next requests that pass the checks get these answers, one each, in arrival order.
    public func enqueue(_ faults: [Fault]) {
        core.state.withLock { $0.queue += faults }
    }

    /// Every push to `token` that passes the checks gets this answer (nil: back to normal).
    /// Takes precedence over the queue.
    public func answer(token: String, with fault: Fault?) {
        core.state.withLock { $0.tokenFaults[token] = fault }
    }

    /// Every provider token seen so far is answered 403 ExpiredProviderToken from now on, as
    /// APNs does once a token is an hour old; a new token replacing one is then welcome at once.
    public func expireProviderTokens() {
        core.state.withLock { state in state.expired.formUnion(state.tokenOrder) }
    }

    // MARK: - What it saw

    /// Every request so far, in the order they were answered.
    public var pushes: [Push] { core.state.withLock { $0.pushes } }
    /// The requests answered 200.
    public var delivered: [Push] { pushes.filter { $0.status == 200 } }
    /// How many requests were answered.
    public var requestCount: Int { core.state.withLock { $0.requestCount } }
    /// Connections accepted so far.
    public var connectionCount: Int { core.state.withLock { $0.connectionCount } }
    /// The distinct provider tokens that verified, in the order first seen.
    public var providerTokens: [String] { core.state.withLock { $0.tokenOrder } }
    /// The most streams open at once on one connection.
    public var maxConcurrentStreamsSeen: Int { core.state.withLock { $0.maxOpenStreams } }
}

/// What the fake knows: everything behind one lock.
struct State {
    var pushes: [FakeAPNs.Push] = []
    var requestCount = 0
    var connectionCount = 0
    var openChannels: [Int: any Channel] = [:]
    var openStreams: [Int: Int] = [:]
    var maxOpenStreams = 0
    var queue: [FakeAPNs.Fault] = []
    var queueHead = 0
    var tokenFaults: [String: FakeAPNs.Fault] = [:]
    /// Tokens that verified: their key id and `iat`.
    var verified: [String: (keyID: String, issuedAt: Int64)] = [:]
    var tokenOrder: [String] = []
    /// The token each key id uses now, and when the fake first saw it (its clock).
    var currentToken: [String: (jwt: String, firstSeen: Int64)] = [:]
    /// Tokens the fake called expired: their replacement is not "too many updates".
    var expired: Set<String> = []
}

/// The decisions, shared by the connections' handlers.
final class FakeAPNsCore: Sendable {
    let state = Mutex(State())
    let configuration: FakeAPNs.Configuration

    init(configuration: FakeAPNs.Configuration) { self.configuration = configuration }

    /// Numbers a new connection and keeps it, to close it at shutdown.
    func connectionOpened(_ channel: any Channel) -> Int {
        let number = state.withLock { state in
            state.connectionCount += 1
            state.openChannels[state.connectionCount] = channel
            return state.connectionCount
        }
        channel.closeFuture.whenComplete { [self] _ in
            state.withLock { _ = $0.openChannels.removeValue(forKey: number) }
        }
        return number
    }

    func streamOpened(connection: Int) {
        state.withLock { state in
            state.openStreams[connection, default: 0] += 1
            state.maxOpenStreams = max(state.maxOpenStreams, state.openStreams[connection]!)
        }
    }

    func streamClosed(connection: Int) {
        state.withLock { $0.openStreams[connection, default: 1] -= 1 }
    }

    /// The answer to one whole request.
    func answer(
        method: HTTPMethod, uri: String, headers: HTTPHeaders, body: ByteBuffer, connection: Int, streamID: Int
    ) -> Reply {
        let now = configuration.now()
        var fields: [String: String] = [:]
        if configuration.recordsDetails {
            for (name, value) in headers where name.lowercased().hasPrefix("apns-") {
                fields[name.lowercased()] = value
            }
        }
        let jwt = Self.bearer(headers.first(name: "authorization"))
        if let jwt, configuration.recordsDetails { fields["jwt"] = jwt }
        let token = uri.hasPrefix("/3/device/") ? String(uri.dropFirst("/3/device/".count)) : ""
        let requestCheck = Self.check(
            method: method, uri: uri, headers: headers, body: body, topic: configuration.topic)

        return state.withLock { state in
            var reply: Reply
            if let failure = Self.checkToken(jwt, now: now, configuration: configuration, state: &state) {
                reply = failure
            } else if let failure = requestCheck {
                reply = failure
            } else if let fault = state.tokenFaults[token] {
                reply = Reply(fault)
            } else if state.queueHead < state.queue.count {
                reply = Reply(state.queue[state.queueHead])
                state.queueHead += 1
            } else {
                reply = Reply(status: 200)
            }
            if reply.status == 403 && reply.reason == "ExpiredProviderToken", let jwt { state.expired.insert(jwt) }
            reply.apnsID = headers.first(name: "apns-id")
            state.requestCount += 1
            state.pushes.append(
                FakeAPNs.Push(
                    connection: connection, streamID: streamID, deviceToken: token, headers: fields,
                    payload: configuration.recordsDetails ? Array(buffer: body) : [], status: reply.status,
                    reason: reply.reason, receivedAtMilliseconds: Int64(Date().timeIntervalSince1970 * 1_000)))
            return reply
        }
    }

    static func bearer(_ header: String?) -> String? {
        guard let header, header.utf8.count > 7, header.prefix(7).lowercased() == "bearer " else { return nil }
        return String(header.dropFirst(7))
    }

    /// The provider token's check, under the lock (a token verifies once, then is looked up).
    static func checkToken(
        _ jwt: String?, now: Int64, configuration: FakeAPNs.Configuration, state: inout State
    ) -> Reply? {
        guard let jwt else { return Reply(status: 403, reason: "MissingProviderToken") }
        if state.expired.contains(jwt) { return Reply(status: 403, reason: "ExpiredProviderToken") }
        let token: (keyID: String, issuedAt: Int64)
        if let known = state.verified[jwt] {
            token = known
        } else {
            guard let verified = FakeJWT.verify(jwt, keys: configuration.keys, teamID: configuration.teamID) else {
                return Reply(status: 403, reason: "InvalidProviderToken")
            }
            if let previous = state.currentToken[verified.keyID], !state.expired.contains(previous.jwt),
                now - previous.firstSeen < 20 * 60
            {
                return Reply(status: 429, reason: "TooManyProviderTokenUpdates")
            }
            state.verified[jwt] = verified
            state.tokenOrder.append(jwt)
            state.currentToken[verified.keyID] = (jwt, now)
            token = verified
        }
        if now - token.issuedAt >= 60 * 60 {
            state.expired.insert(jwt)
            return Reply(status: 403, reason: "ExpiredProviderToken")
        }
        if token.issuedAt - now > 5 * 60 { return Reply(status: 403, reason: "InvalidProviderToken") }
        return nil
    }

    /// The checks of the request itself, in the order APNs reports them.
    static func check(method: HTTPMethod, uri: String, headers: HTTPHeaders, body: ByteBuffer, topic: String) -> Reply?
    {
        guard method == .POST else { return Reply(status: 405, reason: "MethodNotAllowed") }
        guard uri.hasPrefix("/3/device/") else { return Reply(status: 404, reason: "BadPath") }
        let token = uri.utf8.dropFirst("/3/device/".count)
        guard token.count >= 64, token.count <= 200, token.count % 2 == 0,
            token.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) })
        else { return Reply(status: 400, reason: "BadDeviceToken") }
        let pushType = headers.first(name: "apns-push-type")
        guard let pushType, ["alert", "background", "liveactivity"].contains(pushType) else {
            return Reply(status: 400, reason: "InvalidPushType")
        }
        guard let sentTopic = headers.first(name: "apns-topic") else {
            return Reply(status: 400, reason: "MissingTopic")
        }
        let expectedTopic = pushType == "liveactivity" ? topic + ".push-type.liveactivity" : topic
        guard sentTopic == expectedTopic else {
            return Reply(status: 400, reason: sentTopic.hasPrefix(topic) ? "BadTopic" : "TopicDisallowed")
        }
        if let priority = headers.first(name: "apns-priority") {
            guard ["1", "5", "10"].contains(priority), pushType != "background" || priority == "5" else {
                return Reply(status: 400, reason: "BadPriority")
            }
        } else if pushType == "background" {
            return Reply(status: 400, reason: "BadPriority")  // the default, 10, is not allowed for background
        }
        if let expiration = headers.first(name: "apns-expiration"), Int64(expiration) == nil {
            return Reply(status: 400, reason: "BadExpirationDate")
        }
        if let collapseID = headers.first(name: "apns-collapse-id"), collapseID.utf8.count > 64 {
            return Reply(status: 400, reason: "BadCollapseId")
        }
        if let id = headers.first(name: "apns-id"), !isLowercaseUUID(id) {
            return Reply(status: 400, reason: "BadMessageId")
        }
        if body.readableBytes == 0 { return Reply(status: 400, reason: "PayloadEmpty") }
        if body.readableBytes > 4096 { return Reply(status: 413, reason: "PayloadTooLarge") }
        let bytes = body.readableBytesView
        guard (try? JSONSerialization.jsonObject(with: Data(bytes))) is [String: Any] else {
            return Reply(status: 400, reason: "BadPayload")
        }
        return nil
    }

    static func isLowercaseUUID(_ id: String) -> Bool {
        let bytes = Array(id.utf8)
        guard bytes.count == 36 else { return false }
        for (index, byte) in bytes.enumerated() {
            let isDash = index == 8 || index == 13 || index == 18 || index == 23
            if isDash != (byte == UInt8(ascii: "-")) { return false }
            if !isDash && !((0x30...0x39).contains(byte) || (0x61...0x66).contains(byte)) { return false }
        }
        return true
    }
}

/// How the fake answers one request.
struct Reply: Sendable {
    var status: Int
    var reason: String?
    var timestampMillis: Int64?
    var delay: Duration?
    var goAway = false
    var closeConnection = false
    var freezeConnection = false
    var apnsID: String?

    init(status: Int, reason: String? = nil, timestampMillis: Int64? = nil) {
        self.status = status
        self.reason = reason
        self.timestampMillis = timestampMillis
    }

    init(_ fault: FakeAPNs.Fault) {
        switch fault {
        case .answer(let status, let reason, let timestamp):
            self.init(status: status, reason: reason, timestampMillis: timestamp)
        case .delay(let delay):
            self.init(status: 200)
            self.delay = delay
        case .goAway:
            self.init(status: 200)
            goAway = true
        case .closeConnection:
            self.init(status: 0)
            closeConnection = true
        case .freezeConnection:
            self.init(status: 0)
            freezeConnection = true
        }
    }

    /// `{"reason":…}`, with a 410's timestamp; nothing for a 200.
    var body: String? {
        guard let reason else { return nil }
        if let timestampMillis { return #"{"reason":"\#(reason)","timestamp":\#(timestampMillis)}"# }
        return #"{"reason":"\#(reason)"}"#
    }
}
