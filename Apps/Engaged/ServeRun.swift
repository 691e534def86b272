import APNs
import AsyncHTTPClient
import Content
import Delivery
import Foundation
import Hummingbird
import Logging
import Metrics
import Models
import Runtime
import Storage

/// `serve`'s composition: the secrets, the store, the templates, the clock, the coach, the
/// transport and the listeners, handed to the runtime and the routes.
extension Serve {
    /// Composes the server from the options and runs it until SIGTERM or SIGINT.
    func serve() async throws {
        let environment = ProcessInfo.processInfo.environment
        let secrets: ServerSecrets
        do { secrets = try ServerSecrets(environment, legacyUserTokens: legacyUserTokens) } catch {
            throw Self.fail(error.description)
        }
        log.format.bootstrap()
        var logger = Logger(label: "engaged")
        logger.logLevel = .info

        guard
            let opened = try await Self.openStore(
                dataDirectory: dataDirectory, database: database, unreachable: .retry, logger: logger)
        else { return }
        let store = opened.store
        let templates: TemplateCatalog
        do {
            templates = try TemplateCatalog.bundled()
        } catch {
            throw Self.fail("the bundled templates do not load: \(error)", status: 66)
        }
        let manual = manualClock.flatMap(Instant.init(iso8601:)).map(ManualClock.init)
        let clock: any RuntimeClock = manual ?? SystemClock()
        // Validated in `validate()`: here it only reads what passed.
        let coach = (try? coachSettings(environment))?.map {
            CompletionsCoach(settings: $0, client: HTTPClient(eventLoopGroupProvider: .singleton))
        }
        let runtime = EngineRuntime(
            store: store, clock: clock, content: ContentGenerator(catalog: templates), coach: coach,
            socialIDRetentionSeconds: Int64(socialIDRetentionHours) * 3_600)
        let legacyUserTokens = secrets.legacyUserTokenSecret.map(LegacyUserTokens.init(secret:))
        do {
            // Readable at start, or exit 74 (the legacy tokens also learn their owners here).
            let userIDs = try store.userIDs()
            legacyUserTokens?.remember(userIDs)
        } catch {
            throw Self.fail("the store \(opened.name) cannot be read: \(error)", status: 74)
        }
        if legacyUserTokens != nil {
            logger.warning("--legacy-user-tokens: HMAC user tokens never expire; mint signed ones instead")
        }
        let apns = try self.apns.makeClient(environment, logger: logger)
        let metrics = ServerMetrics()
        let transport = channelTransport(apns, runtime: runtime, metrics: metrics, logger: logger)
        // Every connection holds a descriptor: the limit on them must leave room for the rest.
        let descriptors = DescriptorBudget.fit(maxConnections: maxConnections)
        Self.log(descriptors, logger: logger)
        var serverEnvironment = ServerEnvironment(
            runtime: runtime, apiKey: secrets.apiKey, userTokens: await UserTokenAuthority(keys: secrets.userTokenKeys),
            legacyUserTokens: legacyUserTokens, userTokenTTLSeconds: userTokenTTLSeconds, manualClock: manual,
            transport: transport,
            logger: logger, workersPerformDueWork: database != nil, metrics: metrics,
            idleTimeoutSeconds: idleTimeoutSeconds, bodyTimeoutSeconds: bodyTimeoutSeconds,
            maxConnections: descriptors.maxConnections,
            rateLimiter: RateLimiter(
                settings: RateLimitSettings(
                    apiKey: rateLimitAPIKey, user: rateLimitUser, address: rateLimitAddress,
                    failedAuthenticationCost: Double(failedAuthCost))))
        serverEnvironment.maxConnectionsPerAddress = maxConnectionsPerAddress
        serverEnvironment.headerTimeoutSeconds = headerTimeoutSeconds
        serverEnvironment.metricsAddress = (metricsHost, metricsPort)
        // Once per process, here only: libraries' own metrics land in the server's registry too.
        MetricsSystem.bootstrap(serverEnvironment.metrics.factory)
        // Both listeners' addresses before either starts: a busy one names its flag.
        try await ListenCheck.check(host: host, port: port, flag: "--port")
        try await ListenCheck.check(host: metricsHost, port: metricsPort, flag: "--metrics-port")
        let app = try EngagedServer.application(serverEnvironment, clock: clock, host: host, port: port)
        logger.info(
            "starting",
            metadata: [
                "store": "\(opened.name)", "host": "\(host)", "port": "\(port)",
                "clock": "\(manual.map { "manual at \($0.now().iso8601)" } ?? "system")",
                "apns": "\(apns.map { $0.client.configuration.endpoints[.production] ?? "" } ?? "off")",
                "coach": "\(coach.map { "\($0.settings.model) at \($0.settings.baseURL)" } ?? "templates only")",
            ])
        // Answers in flight land before the coach's client closes (each within the content
        // deadline), whether the service stopped or failed.
        func closeClients() async {
            await runtime.coachAnswersSettled()
            try? await apns?.client.shutdown()
            try? await coach?.client.shutdown()
        }
        do { try await app.runService() } catch {
            await closeClients()
            throw error
        }
        await closeClients()
        // In-flight requests have finished; fold the write-ahead log into the database.
        if let sqlite = store as? SQLiteEngagementStore {
            do { try sqlite.checkpoint() } catch {
                logger.warning("checkpoint failed", metadata: ["error": "\(error)"])
            }
        }
        logger.info("stopped")
    }

    /// Says how `--max-connections` fits the open-file limit: a warning when it was lowered.
    static func log(_ fit: DescriptorBudget.Fit, logger: Logger) {
        switch fit {
        case .fits(let connections, let openFiles):
            logger.info(
                "open-file limit fits --max-connections",
                metadata: ["max_connections": "\(connections)", "open_files": "\(openFiles)"])
        case .raised(let connections, let from, let to):
            logger.info(
                "raised the open-file soft limit to fit --max-connections",
                metadata: ["max_connections": "\(connections)", "open_files_from": "\(from)", "open_files": "\(to)"])
        case .lowered(let connections, let from, let openFiles):
            logger.warning(
                "lowered --max-connections to fit the open-file hard limit; raise it (ulimit -n) to serve more",
                metadata: [
                    "max_connections": "\(connections)", "max_connections_asked": "\(from)",
                    "open_files": "\(openFiles)", "headroom": "\(DescriptorBudget.headroom)",
                ])
        }
    }
}
