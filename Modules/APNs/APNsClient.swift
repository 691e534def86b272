import AsyncHTTPClient
public import Delivery
public import Logging
public import Models
public import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

/// Why an `APNsClient` cannot be made.
public enum APNsConfigurationError: Error, Hashable, Sendable, CustomStringConvertible {
    /// An endpoint is not an `https://host[:port]` URL.
    case badEndpoint(String)
    /// A test trust root is not a PEM certificate.
    case badTrustRoot(String)

    public var description: String {
        switch self {
        case .badEndpoint(let url): "the APNs URL \"\(url)\" is not https://host or https://host:port"
        case .badTrustRoot(let reason): "the APNs trust root is not a PEM certificate: \(reason)"
        }
    }
}

/// The APNs provider API over HTTP/2 with token authentication: one HTTP/2 connection per
/// environment carrying many concurrent streams, one provider token for every sender
/// (`ProviderTokens`), and Apple's error semantics (`APNsDisposition`). A connection closed by
/// the server (GOAWAY, or a reset) is replaced when the next push needs it, and so is one the
/// client closes on an HTTP/2 connection error (`ConnectionErrorClosingHandler`); a push whose
/// stream the close refused is retried like a 5xx.
///
/// `shutdown()` must be awaited before the client is released.
public final class APNsClient: PushTransport {
    public struct Configuration: Sendable {
        /// Apple's servers.
        public static let appleEndpoints: [PushRequest.Environment: String] = [
            .production: "https://api.push.apple.com", .sandbox: "https://api.sandbox.push.apple.com",
        ]

        public var credentials: APNsCredentials
        /// Where each environment's pushes go: `https://host[:port]`, no path.
        public var endpoints: [PushRequest.Environment: String]
        public var retry: RetryPolicy
        /// The provider token's age at renewal (kept within Apple's 20...60 minutes).
        public var tokenRefreshAfterSeconds: Int64
        /// One attempt's limit, from sending to the answer's last byte.
        public var attemptTimeout: Duration
        /// A connection with pushes in flight that has sent nothing for this long is pinged
        /// (HTTP/2 PING), and closed when the answer takes longer than `pingTimeout`: its pushes
        /// are retried on a new one instead of each waiting out `attemptTimeout`
        /// (`ConnectionHealthHandler`).
        public var pingAfterSilence: Duration = .seconds(1)
        public var pingTimeout: Duration = .seconds(2)
        /// For tests only: trust these PEM certificates (a fake APNs's self-signed one) instead of
        /// the system's roots. Never set in a deployment.
        public var testingTrustRootsPEM: [String]?
        /// Where the deployment's processes share one provider token (`ProviderTokenSharing`);
        /// nil for a single process.
        public var sharedTokens: (any ProviderTokenSharing)? = nil
        /// The event loops the connections run on; nil for NIO's shared ones
        /// (`MultiThreadedEventLoopGroup.singleton`). Tests give a group of their own to stop it.
        public var eventLoopGroup: (any EventLoopGroup)? = nil

        public init(
            credentials: APNsCredentials, endpoints: [PushRequest.Environment: String] = appleEndpoints,
            retry: RetryPolicy = RetryPolicy(),
            tokenRefreshAfterSeconds: Int64 = ProviderTokens.defaultRefreshAfterSeconds,
            attemptTimeout: Duration = .seconds(10), testingTrustRootsPEM: [String]? = nil
        ) {
            self.credentials = credentials
            self.endpoints = endpoints
            self.retry = retry
            self.tokenRefreshAfterSeconds = tokenRefreshAfterSeconds
            self.attemptTimeout = attemptTimeout
            self.testingTrustRootsPEM = testingTrustRootsPEM
        }
    }

    /// Time and randomness, injected so that tests run renewal and back-off on their own clock
    /// (the composition root passes the system's).
    public struct Dependencies: Sendable {
        /// The wall clock: provider tokens' `iat` and their renewal.
        public var now: @Sendable () -> Instant
        /// Waits between attempts; throws when the task is cancelled.
        public var sleep: @Sendable (Duration) async throws -> Void
        /// A number in 0..<1 for back-off jitter.
        public var unitRandom: @Sendable () -> Double

        public init(
            now: @escaping @Sendable () -> Instant, sleep: @escaping @Sendable (Duration) async throws -> Void,
            unitRandom: @escaping @Sendable () -> Double
        ) {
            self.now = now
            self.sleep = sleep
            self.unitRandom = unitRandom
        }
    }

    public let configuration: Configuration
    /// The deployment's provider token.
    public let tokens: ProviderTokens
    private let dependencies: Dependencies
    private let logger: Logger
    private let http: HTTPClient
    private let timeout: TimeAmount
    /// `<endpoint>/3/device/` per environment.
    private let devicePaths: [PushRequest.Environment: String]

    public init(configuration: Configuration, dependencies: Dependencies, logger: Logger)
        throws(APNsConfigurationError)
    {
        var devicePaths: [PushRequest.Environment: String] = [:]
        for environment in PushRequest.Environment.allCases {
            let endpoint = configuration.endpoints[environment] ?? Configuration.appleEndpoints[environment]!
            guard Self.isValidEndpoint(endpoint) else { throw .badEndpoint(endpoint) }
            devicePaths[environment] = endpoint + "/3/device/"
        }
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.applicationProtocols = ["h2"]
        // A connection closed for not answering (`ConnectionHealthHandler`) would otherwise wait
        // NIO's 5 s for a close_notify that never comes before its streams fail and are retried.
        tls.shutdownTimeout = .seconds(1)
        if let pems = configuration.testingTrustRootsPEM {
            do {
                tls.trustRoots = .certificates(try pems.flatMap { try NIOSSLCertificate.fromPEMBytes(Array($0.utf8)) })
            } catch {
                throw .badTrustRoot("\(error)")
            }
        }
        var http = HTTPClient.Configuration(tlsConfiguration: tls)
        http.httpVersion = .automatic  // HTTP/2 by ALPN; APNs speaks nothing else
        // The first requests go out before ALPN has said HTTP/2: one connection, not eight.
        http.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = 1
        http.connectionPool.idleTimeout = .minutes(60)
        http.redirectConfiguration = .disallow
        http.decompression = .disabled
        let health = ConnectionHealthHandler.Timing(
            silenceBeforePing: Self.timeAmount(configuration.pingAfterSilence),
            pingTimeout: Self.timeAmount(configuration.pingTimeout))
        http.http2ConnectionDebugInitializer = {
            FlushCoalescingHandler.install(on: $0, health: health, logger: logger)
        }
        // No tracer: a span per push costs the client time even with the no-op tracer.
        http.tracing.tracer = nil
        self.http = HTTPClient(
            eventLoopGroup: configuration.eventLoopGroup ?? MultiThreadedEventLoopGroup.singleton,
            configuration: http, backgroundActivityLogger: logger)
        self.configuration = configuration
        self.dependencies = dependencies
        self.logger = logger
        self.devicePaths = devicePaths
        self.timeout = Self.timeAmount(configuration.attemptTimeout)
        self.tokens = ProviderTokens(
            credentials: configuration.credentials, refreshAfterSeconds: configuration.tokenRefreshAfterSeconds,
            shared: configuration.sharedTokens, now: dependencies.now)
    }

    /// Closes the connections; in-flight sends fail. Call once, before releasing the client.
    public func shutdown() async throws {
        try await http.shutdown()
    }

    public func send(_ request: PushRequest) async -> PushOutcome {
        if let failure = request.invalidReason { return .rejected(failure) }
        var renewedProviderToken = false
        var attempt = 0
        while true {
            attempt += 1
            let token: ProviderToken
            do { token = try await tokens.current() } catch {
                return .rejected(PushFailure(status: nil, reason: "the provider token cannot be signed: \(error)"))
            }
            let disposition = await attemptSend(request, token: token)
            switch disposition {
            case .delivered: return .delivered
            case .retireToken(let failure, let since): return .tokenRetired(failure, since: since)
            case .reject(let failure): return .rejected(failure)
            case .renewProviderToken(let failure):
                guard !renewedProviderToken else { return .failedAfterRetries(failure, attempts: attempt) }
                renewedProviderToken = true
                do { _ = try await tokens.renew(replacing: token) } catch {
                    return .rejected(PushFailure(status: nil, reason: "the provider token cannot be signed: \(error)"))
                }
            case .retry(let failure):
                guard attempt < configuration.retry.maxAttempts else {
                    return .failedAfterRetries(failure, attempts: attempt)
                }
                let delay = configuration.retry.delay(afterAttempt: attempt, unitRandom: dependencies.unitRandom())
                logger.debug(
                    "APNs push will be retried",
                    metadata: ["apns-id": "\(request.id)", "failure": "\(failure)", "delay": "\(delay)"])
                do { try await dependencies.sleep(delay) } catch {
                    return .failedAfterRetries(failure, attempts: attempt)
                }
            }
            if Task.isCancelled {
                return .failedAfterRetries(PushFailure(status: nil, reason: "cancelled"), attempts: attempt)
            }
        }
    }

    /// One POST, and what to do with its answer.
    private func attemptSend(_ push: PushRequest, token: ProviderToken) async -> APNsDisposition {
        var request = HTTPClientRequest(url: devicePaths[push.environment]! + push.deviceToken)
        request.method = .POST
        request.headers.reserveCapacity(8)
        request.headers.add(name: "authorization", value: "bearer " + token.jwt)
        request.headers.add(name: "apns-push-type", value: push.pushType.rawValue)
        request.headers.add(name: "apns-topic", value: push.apnsTopic)
        request.headers.add(name: "apns-priority", value: String(push.priority.rawValue))
        request.headers.add(name: "apns-id", value: push.id)
        if let expiration = push.expiration {
            request.headers.add(name: "apns-expiration", value: expiration.headerValue)
        }
        if let collapseID = push.collapseID { request.headers.add(name: "apns-collapse-id", value: collapseID) }
        request.body = .bytes(push.payload)
        do {
            let response = try await http.execute(request, timeout: timeout, logger: logger)
            let body = try await response.body.collect(upTo: 64 * 1024)
            return APNsDisposition.of(status: Int(response.status.code), body: Array(buffer: body))
        } catch {
            return APNsDisposition.noAnswer(error)
        }
    }

    private static func timeAmount(_ duration: Duration) -> TimeAmount {
        .nanoseconds(duration.components.seconds * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000)
    }

    /// `https://host` or `https://host:port`, with nothing after.
    public static func isValidEndpoint(_ url: String) -> Bool {
        guard url.hasPrefix("https://") else { return false }
        let rest = url.dropFirst(8)
        guard !rest.isEmpty, !rest.contains("/"), !rest.contains("?"), !rest.contains("#"), !rest.contains("@")
        else { return false }
        if let colon = rest.lastIndex(of: ":"), !rest.hasPrefix("[") || rest[..<colon].hasSuffix("]") {
            guard let port = Int(rest[rest.index(after: colon)...]), (1...65_535).contains(port) else { return false }
            return colon != rest.startIndex
        }
        return true
    }
}
