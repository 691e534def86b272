import Content
import EngagedAPI
import Engagement
import Foundation
import Hummingbird
import HummingbirdCore
import Logging
import Models
import NIOCore
import OpenAPIHummingbird
import Runtime
import ServiceLifecycle
import Synchronization

/// What the server runs on, chosen by the composition root (`engaged serve`, or a test).
struct ServerEnvironment: Sendable {
    var runtime: EngineRuntime
    /// The backends' key for `/v1`.
    var apiKey: String
    /// Mints and verifies the user tokens the inbox routes also accept (`ENGAGED_USER_TOKEN_KEYS`).
    var userTokens: UserTokenAuthority
    /// The deprecated HMAC tokens, taken too with `--legacy-user-tokens` (`ENGAGED_USER_TOKEN_SECRET`).
    var legacyUserTokens: LegacyUserTokens?
    /// A minted token's lifetime when the request names none (`--user-token-ttl-seconds`).
    var userTokenTTLSeconds: Int64 = 3_600
    /// Set with `--manual-clock`: the clock moves only through `POST /v1/admin/clock`, which then
    /// runs the due work. Without it the due-work loop runs on the runtime's (system) clock.
    var manualClock: ManualClock?
    var transport: any ChannelTransport
    var logger: Logger
    /// Set with `--database`: `engaged worker` processes claim and perform the due work, so the
    /// server runs no due-work loop of its own.
    var workersPerformDueWork = false
    var metrics = ServerMetrics()
    /// How long a connection may send nothing before it is closed (`--idle-timeout-seconds`): a
    /// client that sends half a header, or stalls in a body, holds a file descriptor no longer
    /// than this, so thousands of them cannot starve the server of descriptors.
    var idleTimeoutSeconds: Int64 = 30
    /// How long a request's body may take to arrive after its headers (`--body-timeout-seconds`).
    var bodyTimeoutSeconds: Int64 = 10
    /// Connections open at once (`--max-connections`); past it the server accepts no more until
    /// one closes (the rest wait in the listen backlog), so clients cannot exhaust its descriptors.
    var maxConnections = 4_096
    /// Connections open at once from one address (`--max-connections-per-address`; an IPv6 /64
    /// is one address); past it a new one is closed as soon as it is accepted. 0: no cap.
    var maxConnectionsPerAddress = 64
    /// How long a request's head may take to arrive after its first byte
    /// (`--header-timeout-seconds`): 408, then closed (`EngagedHTTP1Channel`).
    var headerTimeoutSeconds: Int64 = 5
    /// Where `/metrics` is served (`--metrics-host`, `--metrics-port`): a listener of its own,
    /// and then not on the API's. Nil: on the API's listener (in-process tests only).
    var metricsAddress: (host: String, port: Int)?
    /// Told the metrics listener's port once it listens (a test's port 0).
    var metricsListening: (@Sendable (Int) -> Void)?
    /// The token buckets of `--rate-limit-*` (off in tests unless a test sets them).
    var rateLimiter = RateLimiter(settings: .off)
}

/// The server's request context: Hummingbird's basic one, and the client's address for the
/// per-address rate limit.
struct EngagedRequestContext: RequestContext, RemoteAddressRequestContext {
    var coreContext: CoreRequestContextStorage
    let remoteAddress: SocketAddress?

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
    }
}

enum EngagedServer {
    /// The application: routes, and the due-work loop when the clock is the system's.
    static func application(
        _ environment: ServerEnvironment, clock: any RuntimeClock, host: String, port: Int
    ) throws -> some ApplicationProtocol {
        let dispatcher = Dispatcher(
            runtime: environment.runtime, transport: environment.transport, metrics: environment.metrics,
            logger: environment.logger)
        // Decisions are counted from what each step committed, whoever caused the step.
        environment.runtime.committedTrace.set { [metrics = environment.metrics] in metrics.decided($0) }
        var services: [any Service] = []
        if environment.manualClock == nil && !environment.workersPerformDueWork {
            services.append(DueWorkLoop(dispatcher: dispatcher, clock: clock))
        }
        if let metricsAddress = environment.metricsAddress {
            services.append(metricsApplication(environment, host: metricsAddress.host, port: metricsAddress.port))
        }
        let http1 = HTTP1Channel.Configuration(idleTimeout: .seconds(environment.idleTimeoutSeconds))
        let headerTimeoutSeconds = environment.headerTimeoutSeconds
        return Application(
            router: try router(environment, dispatcher: dispatcher),
            server: HTTPServerBuilder { responder in
                EngagedHTTP1Channel(
                    base: HTTP1Channel(responder: responder, configuration: http1),
                    headerTimeoutSeconds: headerTimeoutSeconds)
            },
            configuration: ApplicationConfiguration(
                address: .hostname(host, port: port), serverName: "engaged", backlog: listenBacklog,
                availableConnectionsDelegate: MaximumAvailableConnections(
                    environment.maxConnections, logger: environment.logger)),
            services: services,
            onServerRunning: { [environment] channel in
                await guardListener(channel, maxPerAddress: environment.maxConnectionsPerAddress, environment.logger)
            },
            logger: environment.logger)
    }

    /// Connections the kernel completes while the server is busy: deep enough that a burst of
    /// connections refused by the per-address cap does not crowd out other clients' handshakes.
    static let listenBacklog = 4_096

    /// Connections accepted per wake-up of the listener (NIO's default is 4).
    static let acceptsPerRead: UInt = 64

    /// Puts `ListenerGuard` in front of the listener's pipeline.
    static func guardListener(_ channel: any Channel, maxPerAddress: Int, _ logger: Logger) async {
        do {
            try await channel.eventLoop.submit {
                try channel.pipeline.syncOperations.addHandler(
                    ListenerGuard(maxPerAddress: maxPerAddress, logger: logger), position: .first)
                // Accepts taken per wake-up of the listener: a burst of connections (most of them
                // closed at once by the guard) drains in fewer trips through the event loop.
                try channel.syncOptions?.setOption(ChannelOptions.maxMessagesPerRead, value: acceptsPerRead)
            }.get()
        } catch {
            logger.error("the listener's guard could not be installed", metadata: ["error": "\(error)"])
        }
    }

    static func router(_ environment: ServerEnvironment, dispatcher: Dispatcher) throws -> Router<EngagedRequestContext>
    {
        let routes = Routes(environment: environment, dispatcher: dispatcher)
        let router = Router(context: EngagedRequestContext.self)
        let routeTable = RouteTable()
        // Outermost: one line per request with the status the client gets, and its id (no
        // headers: keys and tokens stay out of logs).
        router.add(middleware: AccessLogMiddleware())
        // It counts every answer with the status the client gets.
        router.add(middleware: RequestMetricsMiddleware(metrics: environment.metrics))
        // First, so that every error below it, the router's own 404 included, is a problem body.
        router.add(middleware: ProblemMiddleware())
        // A path the router knows, asked with a method it does not take: 405 naming those it takes.
        router.add(middleware: MethodNotAllowedMiddleware(routes: routeTable))
        router.add(
            middleware: AddressRateLimitMiddleware(
                apiKey: environment.apiKey, limiter: environment.rateLimiter, metrics: environment.metrics))
        router.add(middleware: RequestBodyMiddleware(timeoutSeconds: environment.bodyTimeoutSeconds))
        // The operations generated from the document (Generated/Server.swift): each one's credential
        // (`OperationAccess`), its query's and body's strict form, then its typed input to `Routes`.
        try routes.registerHandlers(
            on: RecordingTransport(
                router: router, table: routeTable, metricsServedElsewhere: environment.metricsAddress != nil),
            serverURL: URL(string: "/")!, configuration: .engaged,
            middlewares: [
                AuthenticationMiddleware(users: UserCredentials(environment)),
                RawRequestMiddleware(
                    checks: Routes.preflightChecks(environment), now: { environment.runtime.clock.now() }),
                EventReplayMiddleware(runtime: environment.runtime), JSONBodyMiddleware(),
            ])
        return router
    }
}

/// The backends' credential, `Authorization: Bearer <api key>`, compared in constant time.
enum APIKey {
    /// The credential of `Bearer <credential>`, or nil for another scheme or an empty credential.
    /// The scheme is case-insensitive (RFC 9110 section 11.1); the credential is taken exactly.
    static func bearerCredential(_ header: String) -> Substring? {
        guard header.utf8.count > 7, header.prefix(7).lowercased() == "bearer " else { return nil }
        return header.dropFirst(7)
    }

    /// Whether `credential` is `apiKey`, compared in constant time.
    static func isAPIKey(_ credential: Substring, _ apiKey: String) -> Bool {
        constantTimeEqual(Array(credential.utf8), apiKey)
    }

    /// Whether the request's `Authorization` is `Bearer <apiKey>`.
    static func carriedBy(_ request: Request, _ apiKey: String) -> Bool {
        request.headers[.authorization].flatMap(bearerCredential).map { isAPIKey($0, apiKey) } ?? false
    }

    /// Compares without an early exit, so the time taken does not tell how much of a guess matched.
    static func constantTimeEqual(_ given: [UInt8], _ expected: String) -> Bool {
        let expected = Array(expected.utf8)
        var difference = UInt8(truncatingIfNeeded: given.count ^ expected.count)
        for index in 0..<expected.count {
            difference |= expected[index] ^ (index < given.count ? given[index] : 0)
        }
        return difference == 0 && given.count == expected.count
    }
}

/// The handlers of the operations generated from the document (`APIProtocol`).
struct Routes: APIProtocol, Sendable {
    let environment: ServerEnvironment
    let dispatcher: Dispatcher
    let readiness: Readiness

    init(environment: ServerEnvironment, dispatcher: Dispatcher) {
        self.environment = environment
        self.dispatcher = dispatcher
        readiness = Readiness(runtime: environment.runtime, logger: environment.logger)
    }

    var runtime: EngineRuntime { environment.runtime }

    /// The user id of the path: 1 to 64 of `A-Z a-z 0-9 _ . -`.
    static func userID(_ id: String) throws(Problem) -> UserID {
        guard Self.isIdentifier(id) else {
            throw Problem.badRequest("a user id is 1 to 64 characters of A-Z, a-z, 0-9, _, . and -", field: "id")
        }
        return UserID(id)
    }

    /// 1 to 64 of `A-Z a-z 0-9 _ . -`: a user id (in a path, or a token's subject) and a key id.
    static func isIdentifier(_ text: some StringProtocol) -> Bool {
        !text.isEmpty && text.utf8.count <= 64
            && text.utf8.allSatisfy { byte in
                (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                    || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                    || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "_")
                    || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "-")
            }
    }

    /// With `--manual-clock` only: moves the clock and runs the due work on the way.
    func advanceClock(_ input: Operations.AdvanceClock.Input) async throws -> Operations.AdvanceClock.Output {
        guard let clock = environment.manualClock else {  // refused before the body too (`preflightChecks`)
            throw Problem.notFound("the clock is the system's; this route exists only with --manual-clock")
        }
        let body =
            switch input.body {
            case .json(let body): body
            }  // the only media type the document takes
        // A month at most: the server walks through every due instant on the way.
        guard (0...Self.maxClockAdvanceSeconds).contains(body.advanceSeconds) else {
            throw Problem.invalidField(
                "advanceSeconds", "must be in 0...\(Self.maxClockAdvanceSeconds), got \(body.advanceSeconds)")
        }
        let dispatched = await dispatcher.advance(clock, bySeconds: Int64(body.advanceSeconds))
        return .ok(.init(body: .json(.init(now: clock.now().date, dispatched: dispatched))))
    }

    static let maxClockAdvanceSeconds = 31 * 86_400

    /// Liveness: the process answers.
    func health(_ input: Operations.Health.Input) async throws -> Operations.Health.Output {
        .ok(.init(body: .json(.init(status: .ok))))
    }

    /// Readiness: the server can serve (a load balancer sends it traffic); 503 otherwise.
    func ready(_ input: Operations.Ready.Input) async throws -> Operations.Ready.Output {
        guard readiness.isReady() else {
            throw Problem.notReady("the store does not answer or its schema is not this build's")
        }
        return .ok(.init(body: .json(.init(status: .ready))))
    }

    /// What each operation checks of its query and headers before its body is read, so that the
    /// problem named is the same whatever the body holds.
    static func preflightChecks(_ environment: ServerEnvironment) -> [String: RawRequestMiddleware.Check] {
        [
            "getInbox": { _ = try InboxQuery($0.queryItems) },
            "getPlan": { _ = try PlanQuery($0.queryItems) },
            "explain": { _ = try ExplainQuery($0.queryItems, now: $0.now) },
            "revokeUserTokens": { _ = try RevokeQuery($0.queryItems, now: $0.now) },
            "postEvent": { _ = try EventKey.scoped($0.headerFields, from: EventKey.source(of: RequestScope.caller)) },
            "advanceClock": { _ in
                guard environment.manualClock != nil else {
                    throw Problem.notFound("the clock is the system's; this route exists only with --manual-clock")
                }
            },
        ]
    }

    /// Runs a runtime call, turning its refusals into problems (nothing of a refused input was
    /// committed, so a rejected request changes nothing).
    func perform<T: Sendable>(_ call: () async throws -> T) async throws -> T {
        do {
            return try await call()
        } catch let error as RuntimeError {
            switch error {
            case .unknownUser(let id): throw Problem.notFound("no user \"\(id)\"")
            case .unknownTimeZone(let zone):
                throw Problem.invalidField("timeZone", "unknown IANA time zone \"\(zone)\"")
            case .invalidInput(let field, let problem): throw Problem.invalidField(field, problem)
            case .heldByAnotherUser(let what):
                throw Problem.heldByAnotherUser(
                    "\(what) is registered to another user: it moves when that user's app removes it, or with the API key"
                )
            case .store, .snapshot:
                environment.logger.error("runtime failure", metadata: ["error": "\(error)"])
                throw Problem.internalError("the server failed to answer; the request may be retried")
            }
        }
    }
}

/// `/readyz`'s answer, asked of the store at most once a second: the probe is not rate limited,
/// and each answer is a blocking store read, so a flood of probes must not become a flood of
/// reads. What is wrong is logged, never sent (the probe needs no key).
final class Readiness: Sendable {
    private let runtime: EngineRuntime
    private let logger: Logger
    private let last = Mutex<(at: ContinuousClock.Instant, ready: Bool)?>(nil)

    init(runtime: EngineRuntime, logger: Logger) {
        self.runtime = runtime
        self.logger = logger
    }

    func isReady() -> Bool {
        let now = ContinuousClock.now
        if let known = last.withLock({ $0 }), now - known.at < .seconds(1) { return known.ready }
        var ready = true
        do { try runtime.checkStoreReady() } catch {
            ready = false
            logger.warning("not ready", metadata: ["error": "\(error)"])
        }
        last.withLock { $0 = (now, ready) }
        return ready
    }
}
