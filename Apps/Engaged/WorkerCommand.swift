import APNs
import ArgumentParser
import Content
import Delivery
import Foundation
import Logging
import Models
import PostgresStore
import Runtime
import ServiceLifecycle
import Storage
import Synchronization
import UnixSignals

/// `engaged worker`: one of several stateless processes that perform the due work of a
/// PostgreSQL database (docs/ARCHITECTURE.md). Its composition root: the shared store, the
/// claiming queue (`OutboxQueue`), a runtime over them, and the APNs transport with the
/// deployment's shared provider token. A database it cannot reach, at start or later, is logged
/// and tried again with a back-off (`DatabaseRetry`); its store calls run on `DatabaseThreads`,
/// never on Swift's cooperative pool, so a stalled database never stops it from hearing SIGTERM.
/// Exit status: 0 after a graceful stop (SIGTERM, SIGINT; its leases are given back), 64 bad
/// usage, 66 the bundled templates do not load, 74 the database holds what this build cannot
/// use (a newer schema), 78 the APNs key cannot be used.
struct Worker: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Perform due work (pushes, inbox items, background jobs) from a PostgreSQL database.",
        discussion: """
            Run as many as needed, on any machines, against the database of `engaged serve --database`. \
            Each claims a batch of users with due work (FOR UPDATE SKIP LOCKED, a lease), re-checks their quiet \
            hours and caps, merges a backlog into one alert, performs the rows and gives the users back. A \
            worker that dies holds its users until its lease runs out; any other worker then takes them.
            """)

    @Option(
        name: .customLong("database"), help: "The PostgreSQL database, postgres://user[:password]@host[:port]/name.")
    var database: String

    @OptionGroup var apns: APNsOptions

    @OptionGroup var configFile: ConfigFileOption

    @OptionGroup var log: LogFormatOption

    @Option(
        name: .customLong("worker-id"),
        help: "This worker's name in the queue, unique among running workers (default: host-pid-random).")
    var workerID: String?

    @Option(name: .customLong("lease-seconds"), help: "How long a claim keeps other workers off its users (1-3600).")
    var leaseSeconds: Double = 30

    @Option(name: .customLong("batch-users"), help: "Users claimed at once (1-10000).")
    var batchUsers = 256

    @Option(name: .customLong("idle-milliseconds"), help: "Wait before asking again when nothing was due (10-60000).")
    var idleMilliseconds = 200

    @Option(
        name: .customLong("quiet-guard-seconds"),
        help: "An alert is not started this close before the user's quiet hours (0-3600).")
    var quietGuardSeconds: Int64 = ClaimTimePolicy.defaultGuardSeconds

    @Option(
        name: .customLong("done-retention-hours"),
        help: "Completed rows are remembered this long, then pruned (2-8760: an early sync reads the last 1.5 hours).")
    var doneRetentionHours = 168

    @Option(
        name: .customLong("scaled-clock"),
        help: ArgumentHelp(
            "For the scale test: START,SPEED,ORIGIN_MS: engine time is START plus SPEED times the wall time since "
                + "ORIGIN_MS (milliseconds since the epoch), the same in every worker.", visibility: .hidden))
    var scaledClock: String?

    @Option(
        name: .customLong("stats-file"),
        help: ArgumentHelp(
            "For the scale test: write this worker's figures here as JSON every second.", visibility: .hidden))
    var statsFile: String?

    func validate() throws {
        do { _ = try PostgresURL(database) } catch { throw ValidationError(error.description) }
        guard (1...3_600).contains(leaseSeconds) else { throw ValidationError("--lease-seconds must be in 1...3600") }
        guard (0...3_600).contains(quietGuardSeconds) else {
            throw ValidationError("--quiet-guard-seconds must be in 0...3600")
        }
        guard (1...10_000).contains(batchUsers) else { throw ValidationError("--batch-users must be in 1...10000") }
        guard (10...60_000).contains(idleMilliseconds) else {
            throw ValidationError("--idle-milliseconds must be in 10...60000")
        }
        guard (2...8_760).contains(doneRetentionHours) else {
            throw ValidationError("--done-retention-hours must be in 2...8760")
        }
        if let workerID, workerID.isEmpty || workerID.count > 200 {
            throw ValidationError("--worker-id must be 1-200 characters")
        }
        if let scaledClock { _ = try ScaledClock(parsing: scaledClock) }
        try apns.validate()
    }

    func run() async throws {
        let threads = DatabaseThreads(count: Self.poolSize + 2, onStrayWait: Serve.logStrayWait)
        try await threads.run { try await work() }
    }

    /// Connections of the worker's pool.
    static let poolSize = 8

    private func work() async throws {
        log.format.bootstrap()
        var logger = Logger(label: "engaged-worker")
        logger.logLevel = .info
        let environment = ProcessInfo.processInfo.environment
        let url = try PostgresURL(database)
        // Unique per process start: two containers can share a host name and a pid.
        let name =
            workerID
            ?? "\(ProcessInfo.processInfo.hostName)-\(ProcessInfo.processInfo.processIdentifier)-"
            + UUID().uuidString.prefix(8).lowercased()
        let pool = PostgresPool(url: url, size: Self.poolSize, logger: logger)
        let opened: PostgresRuntimeStore?
        do {
            opened = try await DatabaseRetry.untilOpened("the store at \(url)", logger: logger) {
                () throws(StoreError) in try PostgresRuntimeStore(pool: pool)
            }
        } catch {
            throw Serve.fail("the database \(url) cannot be opened: \(error)", status: 74)
        }
        guard let base = opened else { return }
        let templates: TemplateCatalog
        do { templates = try TemplateCatalog.bundled() } catch {
            throw Serve.fail("the bundled templates do not load: \(error)", status: 66)
        }
        let queue = OutboxQueue(
            pool: pool, workerID: name, leaseSeconds: leaseSeconds, guardSeconds: quietGuardSeconds)
        let store = ClaimingRuntimeStore(base: base, queue: queue)
        let clock: any RuntimeClock = try scaledClock.map { try ScaledClock(parsing: $0) } ?? SystemClock()
        let runtime = EngineRuntime(store: store, clock: clock, content: ContentGenerator(catalog: templates))
        let client = try apns.makeClient(environment, logger: logger, sharedTokens: PostgresProviderTokens(pool: pool))
        let metrics = ServerMetrics()
        let transport = channelTransport(client, runtime: runtime, metrics: metrics, logger: logger)
        let stats = WorkerStats(workerID: name)
        let loop = WorkerLoop(
            runtime: runtime, queue: queue,
            transport: ClaimedTransport(base: transport, stats: stats, queue: queue, clock: clock),
            batchUsers: batchUsers, idle: .milliseconds(idleMilliseconds),
            retentionSeconds: Int64(doneRetentionHours) * 3_600, stats: stats, statsFile: statsFile, logger: logger)
        logger.info(
            "worker starting",
            metadata: [
                "worker": "\(name)", "database": "\(url)", "leaseSeconds": "\(leaseSeconds)",
                "apns": "\(client.map { $0.client.configuration.endpoints[.production] ?? "" } ?? "off")",
            ])
        let group = ServiceGroup(
            configuration: .init(services: [loop], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
        do { try queue.releaseAll() } catch { logger.warning("leases not given back", metadata: ["error": "\(error)"]) }
        stats.write(to: statsFile)
        try? await client?.client.shutdown()
        pool.close()
        logger.info("worker stopped", metadata: ["worker": "\(name)", "performed": "\(stats.performed)"])
    }
}

/// The worker's loop: claim and perform until nothing is due, wait a little, again; prune the
/// record of done rows every minute; stop after the round in progress at graceful shutdown.
struct WorkerLoop: Service {
    let runtime: EngineRuntime
    let queue: OutboxQueue
    let transport: any ChannelTransport
    let batchUsers: Int
    let idle: Duration
    let retentionSeconds: Int64
    let stats: WorkerStats
    let statsFile: String?
    let logger: Logger

    func run() async throws {
        var lastPrune = ContinuousClock.now
        var lastStats = ContinuousClock.now
        var backoff = Backoff()
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            var performed = 0
            var retryInSeconds: Double?
            do {
                performed = try await runtime.dispatchDue(limit: batchUsers, through: transport).count
                if backoff.failures > 0 {
                    logger.info("claiming works again", metadata: ["failedRounds": "\(backoff.failures)"])
                }
                backoff.succeeded()
            } catch {
                // The database unreachable, most likely: wait longer after each failed round, up
                // to the back-off's ceiling, so a restart is noticed within seconds.
                let wait = backoff.failed()
                logger.error(
                    "claiming or performing due work failed; trying again",
                    metadata: [
                        "error": "\(error)", "failedRounds": "\(backoff.failures)", "retryInSeconds": "\(wait)",
                    ])
                retryInSeconds = wait
            }
            // Engines are loaded per claim: another process may change a user between claims, and
            // a worker serving millions of users must not keep them all.
            await runtime.evictCache()
            if ContinuousClock.now - lastStats > .seconds(1) {
                stats.write(to: statsFile)
                lastStats = .now
            }
            if ContinuousClock.now - lastPrune > .seconds(60) {
                lastPrune = .now
                let cutoff = runtime.clock.now() - retentionSeconds
                do { try queue.pruneDone(before: cutoff) } catch {
                    logger.warning("pruning done rows failed", metadata: ["error": "\(error)"])
                }
            }
            if let retryInSeconds {
                try? await cancelWhenGracefulShutdown {
                    try await Task.sleep(for: .milliseconds(Int(retryInSeconds * 1_000)))
                }
            } else if performed == 0 {
                try? await cancelWhenGracefulShutdown { try await Task.sleep(for: idle) }
            }
        }
    }
}

/// Engine time running `speed` times faster than the wall from `start`, counted from the wall
/// instant `originMilliseconds`: every worker of a scale test given the same three numbers has
/// the same engine time. Never goes backwards.
final class ScaledClock: RuntimeClock {
    let start: Instant
    let speed: Double
    let originMilliseconds: Int64
    private let forward = NeverBackwards()

    init(parsing text: String) throws(ValidationError) {
        let parts = text.split(separator: ",").map(String.init)
        guard parts.count == 3, let start = Instant(iso8601: parts[0]), let speed = Double(parts[1]),
            speed > 0, speed <= 100_000, let origin = Int64(parts[2]), origin > 0
        else {
            throw ValidationError(
                "--scaled-clock must be START,SPEED,ORIGIN_MS such as 2027-03-01T06:00:00Z,600,1790000000000 "
                    + "(SPEED in (0, 100000]), got \"\(text)\"")
        }
        self.start = start
        self.speed = speed
        originMilliseconds = origin
    }

    func now() -> Instant {
        let wallMilliseconds = Int64(Date().timeIntervalSince1970 * 1_000)
        let elapsed = Double(wallMilliseconds - originMilliseconds) / 1_000 * speed
        return forward.clamp(start + Int64(elapsed.rounded(.down)))
    }
}

/// What a worker did, for the scale test's report: rows performed, and the time from a row's
/// claim to the end of its send (a reservoir of the latest samples).
final class WorkerStats: Sendable {
    let workerID: String
    private let state = Mutex(State())

    struct State {
        var performed = 0
        var claimToSendMilliseconds: [Double] = []
        /// Wall milliseconds of the latest send, and of the first send after each silence of
        /// `silenceMilliseconds` or more with the send that began it (the scale test's time to
        /// recover from a fault: a silence that held when the fault was over).
        var lastSendMillis: Int64 = 0
        var resumedAtMillis: [Int64] = []
        var silentSinceMillis: [Int64] = []
    }

    static let silenceMilliseconds: Int64 = 500

    init(workerID: String) { self.workerID = workerID }

    var performed: Int { state.withLock { $0.performed } }

    func record(claimToSendMilliseconds: Double) {
        let now = Int64(Date().timeIntervalSince1970 * 1_000)
        state.withLock { state in
            state.performed += 1
            if now - state.lastSendMillis >= Self.silenceMilliseconds, state.resumedAtMillis.count < 10_000 {
                state.resumedAtMillis.append(now)
                state.silentSinceMillis.append(state.lastSendMillis)
            }
            state.lastSendMillis = max(state.lastSendMillis, now)
            if state.claimToSendMilliseconds.count < 1_000_000 {
                state.claimToSendMilliseconds.append(claimToSendMilliseconds)
            }
        }
    }

    /// Writes `{"worker", "performed", "claimToSendP50Millis", "claimToSendP99Millis", "cpuSeconds",
    /// "lastSendMillis", "resumedAtMillis", "silentSinceMillis"}` (`cpuSeconds`: the process's user
    /// and system CPU so far) atomically.
    func write(to path: String?) {
        guard let path else { return }
        let (performed, samples, lastSend, resumed, silentSince) = state.withLock {
            (
                $0.performed, $0.claimToSendMilliseconds.sorted(), $0.lastSendMillis, $0.resumedAtMillis,
                $0.silentSinceMillis
            )
        }
        func percentile(_ p: Double) -> Double {
            samples.isEmpty ? 0 : samples[min(samples.count - 1, Int(Double(samples.count) * p))]
        }
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        let cpuSeconds =
            Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
            + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
        let object: [String: Any] = [
            "worker": workerID, "performed": performed, "claimToSendP50Millis": percentile(0.5),
            "claimToSendP99Millis": percentile(0.99), "cpuSeconds": cpuSeconds, "lastSendMillis": lastSend,
            "resumedAtMillis": resumed, "silentSinceMillis": silentSince,
        ]
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) else { return }
        try? data.write(to: URL(fileURLWithPath: path), options: .atomic)
    }
}

/// The claim's transport: an alert whose user's quiet hours came too close while it waited is
/// not sent (it stays pending; the next claim defers it), and each row's time from its claim
/// (`OutboxQueue.claimedAt`) to the end of its send is recorded.
///
/// An alert the push transport withheld because the user's quiet hours hold now stays pending
/// too, rather than being completed unsent: the claim found it outside them, so the worker was
/// held up after the claim (stopped, or its lease ran out while it waited). Completed, the
/// alert would be lost, even when another worker took the user over after the lease and
/// deferred it to the end of quiet hours; pending, it keeps that deferral, or the next claim
/// makes it.
struct ClaimedTransport: ChannelTransport {
    let base: any ChannelTransport
    let stats: WorkerStats
    let queue: OutboxQueue
    let clock: any RuntimeClock

    struct QuietHoursTooClose: Error {}

    /// The push transport's reason for an alert withheld inside the user's quiet hours.
    static let quietHoursReason = PushSends.Withheld.inQuietHours.reason

    func perform(_ row: OutboxRow) async throws -> SendReport {
        guard queue.maySend(key: row.key, at: clock.now()) else { throw QuietHoursTooClose() }
        let report = try await base.perform(row)
        if report == .withheld(reason: Self.quietHoursReason) { throw QuietHoursTooClose() }
        if let claimed = queue.claimedAt(key: row.key) {
            let elapsed = ContinuousClock.now - claimed
            stats.record(
                claimToSendMilliseconds: Double(elapsed.components.seconds) * 1_000
                    + Double(elapsed.components.attoseconds) / 1e15)
        }
        return report
    }
}
