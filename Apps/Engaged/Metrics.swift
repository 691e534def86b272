import CoreMetrics
import EngagedAPI
import Engagement
import Foundation
import Hummingbird
import HummingbirdCore
import Logging
import Models
import OpenAPIRuntime
import Prometheus
import Runtime
import Scheduling
import ServiceLifecycle
import Storage

/// The server's metrics (swift-metrics, kept by swift-prometheus) and their `GET /metrics` text.
///
/// Each server has its own registry, so servers in one process (the tests) never share a
/// count; `engaged serve` also bootstraps swift-metrics' global system with the same factory,
/// which can happen once per process, so only the composition root does it.
///
/// Series:
/// - `engaged_http_requests_total{route, method, status}`: answered requests; `route` is the
///   route's pattern (`/v1/users/{id}/events`), `NotFound` when no route matched.
/// - `engaged_http_request_duration_seconds{route, method}`: a histogram of the time to answer.
/// - `engaged_outbox_depth`: pending outbox rows, read from the store at each scrape.
/// - `engaged_decisions_total{decision, reason}`: traced decisions, counted from each committed
///   step (events, user updates and background work alike).
/// - `engaged_events_applied_total{type}`: events applied through `POST /v1/users/{id}/events`
///   (a replayed Idempotency-Key is not applied again and not counted again).
/// - `engaged_deliveries_total{channel, outcome}`: delivery tracking per channel (`local`,
///   `remote`, `silent`, `inbox`): `inbox` `delivered` (an item added); `local` `due` (the
///   device fires it from its own plan; counted when its inbox item is due); `remote` and
///   `silent` `sent` (one per device), `accepted` (APNs 200), `rejected`, `failed` (after the
///   client's retries) and `token_retired`; `silent` `early` besides `sent` for a sync sent
///   before its slot (the runtime's early sync, `SilentPushPlan.earlyRows`).
/// - `engaged_delivery_failures_total{channel, outcome, reason}`: the last three by APNs'
///   `reason` (`BadDeviceToken`, `TooManyRequests`, ...).
/// - `engaged_responses_total{channel, response}`: what users did with notifications of each
///   channel, from the notification responses applied: `opened` (a tap), `acted` (an action
///   button), `dismissed`.
struct ServerMetrics: Sendable {
    static let requests = "engaged_http_requests_total"
    static let requestDuration = "engaged_http_request_duration_seconds"
    static let outboxDepth = "engaged_outbox_depth"
    static let decisions = "engaged_decisions_total"
    static let eventsApplied = "engaged_events_applied_total"
    static let rateLimited = "engaged_rate_limited_total"
    static let deliveries = "engaged_deliveries_total"
    static let deliveryFailures = "engaged_delivery_failures_total"
    static let responses = "engaged_responses_total"

    /// What became of a delivery, as `engaged_deliveries_total` counts it.
    enum DeliveryOutcome: String {
        case delivered, due, sent, early, accepted, rejected, failed
        case tokenRetired = "token_retired"
    }

    /// Finer than the default buckets at the low end: the aim is a p99 under 10 ms.
    static let durationBuckets: [Duration] = [
        .microseconds(250), .microseconds(500), .milliseconds(1), .milliseconds(2), .milliseconds(5),
        .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250),
        .milliseconds(500), .seconds(1), .seconds(2.5), .seconds(5), .seconds(10),
    ]

    let registry: PrometheusCollectorRegistry
    let factory: PrometheusMetricsFactory

    init(registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry()) {
        self.registry = registry
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.durationHistogramBuckets[Self.requestDuration] = Self.durationBuckets
        self.factory = factory
    }

    static let standardMethods: Set<String> = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]

    /// The method as a label: a standard one, or `other`.
    static func methodLabel(_ method: HTTPRequest.Method) -> String {
        standardMethods.contains(method.rawValue) ? method.rawValue : "other"
    }

    func requestAnswered(route: String, method: String, status: Int, duration: Duration) {
        CoreMetrics.Counter(
            label: Self.requests, dimensions: [("route", route), ("method", method), ("status", String(status))],
            factory: factory
        ).increment()
        CoreMetrics.Timer(
            label: Self.requestDuration, dimensions: [("route", route), ("method", method)], factory: factory
        )
        .recordNanoseconds(duration.nanoseconds)
    }

    func decided(_ records: [TraceRecord]) {
        for record in records {
            CoreMetrics.Counter(
                label: Self.decisions,
                dimensions: [("decision", record.decision.rawValue), ("reason", record.reason.rawValue)],
                factory: factory
            ).increment()
        }
    }

    /// A request refused with 429 by the bucket of `scope`.
    func rateLimited(_ scope: RateLimitScope) {
        CoreMetrics.Counter(label: Self.rateLimited, dimensions: [("scope", scope.rawValue)], factory: factory)
            .increment()
    }

    func eventApplied(_ input: EngineInput) {
        CoreMetrics.Counter(
            label: Self.eventsApplied, dimensions: [("type", StepRecords.inputName(input))], factory: factory
        )
        .increment()
        if case .notificationResponse(_, let kind, let action) = input {
            let response =
                switch action {
                case .defaultTap: "opened"
                case .dismiss: "dismissed"
                default: "acted"
                }
            CoreMetrics.Counter(
                label: Self.responses,
                dimensions: [("channel", ChannelPolicy.channel(for: kind).rawValue), ("response", response)],
                factory: factory
            ).increment()
        }
    }

    /// Counts one delivery outcome on `channel`; a failure's `reason` is counted too.
    func delivered(_ channel: DeliveryChannel, outcome: DeliveryOutcome, reason: String? = nil) {
        CoreMetrics.Counter(
            label: Self.deliveries, dimensions: [("channel", channel.rawValue), ("outcome", outcome.rawValue)],
            factory: factory
        ).increment()
        if let reason {
            CoreMetrics.Counter(
                label: Self.deliveryFailures,
                dimensions: [("channel", channel.rawValue), ("outcome", outcome.rawValue), ("reason", reason)],
                factory: factory
            ).increment()
        }
    }

    /// Counts the rows a dispatch completed: inbox items, and the local notifications among them.
    func dispatched(_ rows: [OutboxRow]) {
        for row in rows where row.channel == .inbox {
            delivered(.inbox, outcome: .delivered)
            if row.payload.shownBy == .local {
                delivered(.local, outcome: .due)
            }
        }
    }

    /// The Prometheus text of every series, after setting the outbox depth (left as it was when
    /// the store cannot be read).
    func exposition(outboxDepth: Int?) -> [UInt8] {
        if let outboxDepth { CoreMetrics.Gauge(label: Self.outboxDepth, factory: factory).record(outboxDepth) }
        return registry.emitToBuffer()
    }
}

extension Duration {
    fileprivate var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}

/// Counts and times every answered request, problems included: it runs outside
/// `ProblemMiddleware`, so it sees the status the client gets. Labels stay bounded: the route is
/// a pattern of the router (or `NotFound`), a method outside the standard ones is `other`.
struct RequestMetricsMiddleware<Context: RequestContext>: RouterMiddleware {
    let metrics: ServerMetrics

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let start = ContinuousClock.now
        let status: Int
        let response: Response
        do {
            response = try await next(request, context)
            status = response.status.code
        } catch {
            // Only when no problem middleware is below this one; counted with the status it gets.
            let answered = (error as? any HTTPResponseError)?.status.code ?? 500
            metrics.requestAnswered(
                route: context.endpointPath ?? "NotFound", method: ServerMetrics.methodLabel(request.method),
                status: answered,
                duration: ContinuousClock.now - start)
            throw error
        }
        metrics.requestAnswered(
            route: context.endpointPath ?? "NotFound", method: ServerMetrics.methodLabel(request.method),
            status: status,
            duration: ContinuousClock.now - start)
        return response
    }
}

extension Routes {
    /// `GET /metrics`: Prometheus' text format 0.0.4; no key, so it is served on a listener of
    /// its own (`EngagedServer.metricsApplication`), on loopback by default.
    func metrics(_ input: Operations.Metrics.Input) async throws -> Operations.Metrics.Output {
        .ok(.init(body: .textPlainVersion_0_0_4(HTTPBody(EngagedServer.metricsText(environment)))))
    }
}

extension EngagedServer {
    static let metricsContentType = "text/plain; version=0.0.4"

    /// Every series, the outbox depth read now (left as it was when the store cannot be read).
    static func metricsText(_ environment: ServerEnvironment) -> [UInt8] {
        let depth: Int?
        do {
            depth = try environment.runtime.outboxDepth()
        } catch {
            environment.logger.warning("outbox depth unreadable", metadata: ["error": "\(error)"])
            depth = nil
        }
        return environment.metrics.exposition(outboxDepth: depth)
    }

    /// `GET /metrics` on a listener of its own (`--metrics-host`, `--metrics-port`): the API's
    /// listener, its limits and its key stay for the API, and the series (outbox depth, refusal
    /// counts) are not shown to whoever reaches the API. Nothing else is served there.
    static func metricsApplication(_ environment: ServerEnvironment, host: String, port: Int) -> some Service {
        let router = Router()
        router.get("/metrics") { _, _ in
            JSONBody.response(.ok, bytes: metricsText(environment), contentType: metricsContentType)
        }
        // Quieter than the API's: Hummingbird's "listening on" line is the API's alone (scripts
        // read the API's port from it).
        var logger = environment.logger
        logger[metadataKey: "listener"] = "metrics"
        logger.logLevel = max(logger.logLevel, .warning)
        return Application(
            router: router,
            configuration: ApplicationConfiguration(
                address: .hostname(host, port: port), serverName: "engaged",
                availableConnectionsDelegate: MaximumAvailableConnections(64, logger: logger)),
            onServerRunning: { channel in
                let listening = channel.localAddress?.port ?? port
                environment.logger.info("metrics served at http://\(host):\(listening)/metrics")
                environment.metricsListening?(listening)
            },
            logger: logger)
    }
}
