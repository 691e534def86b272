public import Content
import Dispatch
public import Engagement
import Foundation
import Models
import Scheduling
import SimulatedPlatform
import Storage

/// Why a run could not finish. `simulate` exits 74 on any of them.
public enum SimulationError: Error, CustomStringConvertible {
    /// An output file could not be created or written.
    case output(String)
    /// Writing the event log failed.
    case eventLog(any Error)
    /// The store refused a batch of the run's history.
    case store(any Error)

    public var description: String {
        switch self {
        case .output(let message): message
        case .eventLog(let error): "writing events failed: \(error)"
        case .store(let error): "the store refused a batch: \(error)"
        }
    }
}

/// How to run a scenario.
public struct RunOptions: Sendable {
    public var scenario: Scenario
    /// Output folder; nil writes nothing (tests).
    public var outputDirectory: String?
    /// Write events.jsonl (the digest is computed either way).
    public var writeEvents: Bool
    /// Show a progress line on standard error.
    public var showProgress: Bool
    /// Where the run's history is written through.
    public var store: StoreKind
    /// The copy the engine writes from, loaded by the composition root.
    public var templates: TemplateCatalog
    /// The command line that reproduces the run, shown in report.json and report.html; nil
    /// derives one from the scenario (`simulate --scenario NAME --seed ...`).
    public var command: String?
    /// Records what the simulated server was asked and sent (`ServerTape`); nil records nothing.
    public var tape: ServerTape?
    /// After every engine step, run a full planning pass on a copy of the engine
    /// (`UserEngine.fullReplanChanges`) and count the steps where it would schedule or cancel
    /// anything: the incremental plan held to a full one (`Report.incrementalPlan`). A second
    /// planning pass per step (its cost: docs/PERFORMANCE.md, "The incremental plan held to a
    /// full pass"); it changes nothing the run does.
    public var checksIncrementalPlan = false

    /// The store the simulator writes through.
    public enum StoreKind: String, Sendable, CaseIterable {
        /// Nothing is stored (the fastest; the digest does not depend on the store).
        case none
        /// The in-memory store.
        case memory
        /// SQLite (`store.sqlite` in the output folder, replaced at each run).
        case sqlite
    }

    public init(
        scenario: Scenario, templates: TemplateCatalog, outputDirectory: String?, writeEvents: Bool = true,
        showProgress: Bool = false, store: StoreKind = .none, command: String? = nil,
        checksIncrementalPlan: Bool = false
    ) {
        self.checksIncrementalPlan = checksIncrementalPlan
        self.command = command
        self.templates = templates
        self.store = store
        self.scenario = scenario
        self.outputDirectory = outputDirectory
        self.writeEvents = writeEvents
        self.showProgress = showProgress
    }
}

/// Runs a scenario across threads and writes its outputs.
public enum Simulator {
    /// The budget of one scheduling decision: 100 ms.
    public static let decisionBudgetMicros = 100_000.0
    /// The budget of one background run: 30 s.
    public static let backgroundBudgetMicros = 30_000_000.0
    /// The budget of one Live Activity update through the engine: 500 ms.
    public static let liveActivityBudgetMicros = 500_000.0

    public static func run(_ options: RunOptions) throws -> Report {
        let scenario = options.scenario
        var zones: [String: ZoneRules] = [:]
        for name in scenario.timeZones.names + ["UTC"] {
            zones[name] = name == "UTC" ? .utc : ZoneRules(identifier: name)
        }
        if let directory = options.outputDirectory {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            try writePopulation(scenario, to: directory + "/population.json")
        }
        let store: (any EngagementStore)?
        switch options.store {
        case .none: store = nil
        case .memory: store = InMemoryEngagementStore()
        case .sqlite:
            let path = (options.outputDirectory ?? NSTemporaryDirectory()) + "/store.sqlite"
            for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: path + suffix) {
                try FileManager.default.removeItem(atPath: path + suffix)
            }
            store = try SQLiteEngagementStore(path: path, options: .init(durability: .fsyncAtCheckpoint))
        }
        let threadCount = min(scenario.threads, scenario.users)
        let shards = try (0..<threadCount).map { shard in
            let range = (scenario.users * shard / threadCount)..<(scenario.users * (shard + 1) / threadCount)
            let path = options.outputDirectory.flatMap { options.writeEvents ? $0 + "/events.part\(shard).jsonl" : nil }
            return try Shard(
                scenario: scenario, zones: zones, userRange: range, eventsPath: path,
                showProgress: options.showProgress && shard == 0, templates: options.templates, store: store,
                tape: options.tape, checksIncrementalPlan: options.checksIncrementalPlan)
        }
        let box = ShardBox(shards)
        let started = DispatchTime.now().uptimeNanoseconds
        DispatchQueue.concurrentPerform(iterations: threadCount) { index in
            box.run(index)
        }
        let wallSeconds = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
        if let failure = box.failure { throw failure }

        var stats = ShardStats(weeks: scenario.weeks)
        var digest = EventDigest.initial
        for shard in shards {
            stats.merge(shard.stats)
            for userDigest in shard.digests { digest = EventDigest.mix(digest, userDigest) }
        }
        if let directory = options.outputDirectory, options.writeEvents {
            try concatenate(
                (0..<threadCount).map { directory + "/events.part\($0).jsonl" }, into: directory + "/events.jsonl")
        }
        let userDays = scenario.users * scenario.weeks * 7
        var perDay = Dictionary(uniqueKeysWithValues: stats.deliveriesPerUserDay.map { (String($0.key), $0.value) })
        perDay["0"] = max(0, userDays - stats.deliveriesPerUserDay.values.reduce(0, +))
        var report = Report(
            scenario: scenario.name, seed: scenario.seed, start: scenario.start.description, users: scenario.users,
            weeks: scenario.weeks, threads: threadCount, wallSeconds: wallSeconds, events: stats.events,
            eventsPerSecond: Double(stats.events) / max(wallSeconds, 1e-9), eventLogLines: stats.eventLogLines,
            engineCalls: stats.engineCalls,
            digest: String(digest, radix: 16, uppercase: false).leftPadded(to: 16), peakMemoryMB: peakMemoryMB(),
            budgets: [
                "schedulingDecision": BudgetFigures(
                    nanos: stats.decisionNanos, sampledOneIn: DecisionSampler.every, budgetMicros: decisionBudgetMicros),
                "backgroundRun": BudgetFigures(
                    nanos: stats.backgroundNanos, sampledOneIn: 1, budgetMicros: backgroundBudgetMicros),
                "liveActivityUpdate": BudgetFigures(
                    nanos: stats.liveActivityNanos, sampledOneIn: 1, budgetMicros: liveActivityBudgetMicros),
            ],
            invariantViolations: stats.violations.all,
            violationExamples: stats.violationExamples, deliveries: stats.deliveries,
            deliveriesByKind: stats.deliveriesByKind.seen, decisions: stats.decisions.seen,
            responses: stats.responses.seen, deliveriesPerUserDay: perDay,
            deliveriesByLocalHour: stats.deliveriesByLocalHour.byKind,
            command: options.command ?? defaultCommand(options),
            platform: [
                "droppedByPendingLimit": stats.droppedByLimit,
                "suppressedByAuthorization": stats.suppressedByAuthorization,
                "scheduleRejected": stats.scheduleRejected,
                "backgroundSubmitRejected": stats.backgroundSubmitRejected,
                "backgroundRuns": stats.backgroundRuns,
                "backgroundRunsOverTimeAllowed": stats.backgroundOverBudget,
                "appRelaunchesFromSnapshot": stats.relaunches,
                "appUpgradesFromPreviousSnapshot": stats.upgrades,
                "commitsFailedAndRetried": stats.commitsRetried,
                "storeBatchesFailedAndRetried": stats.storeBatchesRetried,
                "deviceClockJumps": stats.clockJumps,
                "releasedByClockJump": stats.releasedByClockJump,
                "serverRowsDispatchedLate": stats.rowsDispatchedLate,
            ],
            content: ContentFigures(
                millis: stats.contentMillis, bySource: stats.content.bySource,
                budgetMillis: scenario.coach.deadlineMillis, atDeadline: stats.contentAtDeadline),
            payloadBytesMax: stats.payloadBytesMax, snapshotBytesPerUser: SizeFigures(stats.snapshotBytes),
            lift: stats.lift,
            engagementByPersonaWeek: stats.engagementByPersonaWeek,
            responseRateByKindWeek: responseRates(delivered: stats.deliveredByKindWeek, acted: stats.actedByKindWeek))
        report.attention = AttentionReport(stats.attention, scenario: scenario)
        report.channels = stats.channels.report
        report.droppedByAPNs = stats.channels.droppedByAPNs
        report.uninstalls = stats.uninstalls
        report.drain = stats.drain
        if options.checksIncrementalPlan { report.incrementalPlan = stats.incrementalPlan }
        if scenario.deployment == .server {
            report.deployment = DeploymentFigures(
                stats.deployment, localDeliveries: stats.channels[.local].shown, userDays: userDays)
        }
        if let directory = options.outputDirectory {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            try encoder.encode(report).write(to: URL(fileURLWithPath: directory + "/report.json"))
            try Data(ReportPage.html(report).utf8).write(to: URL(fileURLWithPath: directory + "/report.html"))
        }
        return report
    }

    /// Per kind delivered at least once, per week: the share of deliveries acted on, to 3 places.
    static func responseRates(delivered: WeeklyTally, acted: WeeklyTally) -> [String: [Double]] {
        var table: [String: [Double]] = [:]
        for kind in delivered.seenKinds {
            let deliveredWeeks = delivered.weeks(of: kind)
            let actedWeeks = acted.weeks(of: kind)
            table[kind.rawValue] = deliveredWeeks.indices.map { week in
                deliveredWeeks[week] == 0
                    ? 0 : (Double(actedWeeks[week]) / Double(deliveredWeeks[week]) * 1_000).rounded() / 1_000
            }
        }
        return table
    }

    /// population.json: each user's traits, for independent audits of the event log.
    static func writePopulation(_ scenario: Scenario, to path: String) throws {
        struct Entry: Encodable {
            var id: UserID
            var persona: String
            var timeZone: String
            var quietHours: [String: String]?
            var absenceResponse: String
            var maxPerHour: Int
            var maxPerDay: Int?
            var disabledKinds: [String]
            var privacyLevel: String
            /// The language the user's copy is written in (BCP 47, such as `de-DE`).
            var locale: String
            var holdout: Bool
            /// The times slots and the local night are read from, `HH:MM`.
            var morningTime: String
            var wakeTime: String
            var sleepTime: String
            /// The user's devices as the server registers them (`RemoteChannel`): one phone.
            var devices: [[String: String]]

            func encode(to encoder: any Encoder) throws {
                enum Key: String, CodingKey {
                    case id, persona, timeZone, quietHours, absenceResponse, maxPerHour, maxPerDay, disabledKinds
                    case privacyLevel, locale, holdout, morningTime, wakeTime, sleepTime, devices
                }
                var container = encoder.container(keyedBy: Key.self)
                try container.encode(id, forKey: .id)
                try container.encode(persona, forKey: .persona)
                try container.encode(timeZone, forKey: .timeZone)
                try container.encode(quietHours, forKey: .quietHours)  // null when none
                try container.encode(absenceResponse, forKey: .absenceResponse)
                try container.encode(maxPerHour, forKey: .maxPerHour)
                try container.encode(maxPerDay, forKey: .maxPerDay)
                try container.encode(disabledKinds, forKey: .disabledKinds)
                try container.encode(privacyLevel, forKey: .privacyLevel)
                try container.encode(locale, forKey: .locale)
                try container.encode(holdout, forKey: .holdout)
                try container.encode(morningTime, forKey: .morningTime)
                try container.encode(wakeTime, forKey: .wakeTime)
                try container.encode(sleepTime, forKey: .sleepTime)
                try container.encode(devices, forKey: .devices)
            }
        }
        let users = (0..<scenario.users).map { index -> Entry in
            let traits = Population.traits(index: index, scenario: scenario)
            let preferences = traits.profile.preferences
            var quiet: [String: String]? = preferences.quietHours.map {
                ["start": $0.start.description, "end": $0.end.description]
            }
            if let weekdays = preferences.quietHours?.weekdays, !weekdays.isEmpty {
                quiet?["weekdays"] = weekdays.sorted().map { "\($0)" }.joined(separator: ",")
            }
            return Entry(
                id: traits.profile.id, persona: traits.persona.rawValue, timeZone: traits.profile.timeZone,
                quietHours: quiet, absenceResponse: traits.profile.communication.absenceResponse.rawValue,
                maxPerHour: preferences.maxPerHour, maxPerDay: preferences.maxPerDay,
                disabledKinds: preferences.disabledKinds.map(\.rawValue),
                privacyLevel: traits.profile.privacyLevel.rawValue, locale: traits.profile.locale,
                holdout: Holdout.isHeldOut(
                    userID: traits.profile.id, share: scenario.holdoutShare, salt: EngineConfiguration().holdoutSalt),
                morningTime: preferences.morningTime.description, wakeTime: preferences.wakeTime.description,
                sleepTime: preferences.sleepTime.description,
                devices: [
                    [
                        "token": RemoteChannel.token(of: traits.profile.id), "environment": "production",
                        "topic": RemoteChannel.topic,
                    ]
                ])
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        try encoder.encode(["users": users]).write(to: URL(fileURLWithPath: path))
    }

    /// Joins the shards' files in shard order: the first is renamed, the others appended.
    static func concatenate(_ parts: [String], into path: String) throws {
        let files = FileManager.default
        if files.fileExists(atPath: path) { try files.removeItem(atPath: path) }
        try files.moveItem(atPath: parts[0], toPath: path)
        guard let output = FileHandle(forWritingAtPath: path) else {
            throw SimulationError.output("cannot write \(path)")
        }
        defer { try? output.close() }
        try output.seekToEnd()
        for part in parts.dropFirst() {
            guard let input = FileHandle(forReadingAtPath: part) else { continue }
            while let chunk = try input.read(upToCount: 1 << 23), !chunk.isEmpty { try output.write(contentsOf: chunk) }
            try input.close()
            try FileManager.default.removeItem(atPath: part)
        }
    }

    /// Peak resident memory of this process (VmHWM), in MB; 0 where /proc is missing.
    static func peakMemoryMB() -> Double {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") })
        else { return 0 }
        let kilobytes = line.split(separator: " ").compactMap { Double($0) }.first ?? 0
        return (kilobytes / 1_024 * 10).rounded() / 10
    }
}

/// Hands each thread its own shard. Safe to share: thread `i` touches only `shards[i]`, and the
/// caller reads the shards only after `concurrentPerform` has joined every thread.
private final class ShardBox: @unchecked Sendable {
    let shards: [Shard]
    private let lock = NSLock()
    private(set) var failure: (any Error)?

    init(_ shards: [Shard]) { self.shards = shards }

    func run(_ index: Int) {
        do {
            try shards[index].run()
        } catch {
            lock.lock()
            failure = failure ?? error
            lock.unlock()
        }
    }
}

extension String {
    func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
