// `scale-test`: several `engaged worker` processes over one PostgreSQL database, one of them
// killed mid-run, PostgreSQL restarted twice and another worker paused past its lease
// (ScaleFaults), judged from the fake APNs's record (ScaleJudge). `make scale-test` starts a
// throwaway PostgreSQL on loopback and runs it. Exit status: 0 every alert delivered exactly
// once, in order, outside quiet hours; 1 a rule broken (the report says which); 64 bad usage;
// 69 the database or the worker binary cannot be used; 75 the run did not finish in time.
import ArgumentParser
import Crypto
import FakeAPNs
import Foundation
import Logging
import Models
import PostgresNIO
import PostgresStore

@main
struct ScaleTest: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scale-test",
        abstract: "Workers over one PostgreSQL database, one killed mid-run: every alert exactly once?")

    @Option(help: "A PostgreSQL server's database to connect to first; the test creates and uses engaged_scale.")
    var database: String
    @Option(help: "The engaged binary whose `worker` runs.")
    var engaged: String
    @Option(help: "Users to load (1-1000000).")
    var users = 100_000
    @Option(help: "Worker processes (1-16).")
    var workers = 4
    @Option(
        name: .customLong("backlog-hours"),
        help: ArgumentHelp(
            "Overdue alerts are spread over this many hours before the start (at most 12: a claim "
                + "completes an alert a day late unsent)."))
    var backlogHours = 6
    @Option(name: .customLong("future-hours"), help: "The others over this many hours after it.")
    var futureHours = 2
    @Option(help: "Engine seconds per wall second.")
    var speed = 900.0
    @Option(name: .customLong("lease-seconds"), help: "The workers' lease.")
    var leaseSeconds = 5.0
    @Option(name: .customLong("kill-after"), help: "Kill worker 1 once this share of users had a push (0: no kill).")
    var killAfter = 0.3
    @Option(name: .customLong("timeout-seconds"), help: "Give up after this long (exit 75).")
    var timeoutSeconds = 900
    @Option(name: .customLong("work-dir"), help: "Where the report, keys and worker logs go.")
    var workDirectory = ".scale"
    @Option(
        name: .customLong("quiet-guard-seconds"),
        help: "The workers' margin before quiet hours, in engine seconds (at --speed 900, 600 s is 0.67 s of wall).")
    var quietGuardSeconds = 600
    @Option(name: .customLong("batch-users"), help: "Users each worker claims at once (1-10000).")
    var batchUsers = 256
    @Option(help: "Seed of the load.")
    var seed: UInt64 = 1
    @Option(
        name: .customLong("restart-command"),
        help: "A shell command that restarts PostgreSQL, given `fast` or `immediate` after it (none: no restarts).")
    var restartCommand: String?
    @Option(
        name: .customLong("restart-fast-after"), help: "Restart PostgreSQL (-m fast) at this share of pushes (0: no).")
    var restartFastAfter = 0.15
    @Option(
        name: .customLong("restart-immediate-after"),
        help: "Restart PostgreSQL (-m immediate) at this share of pushes (0: no).")
    var restartImmediateAfter = 0.45
    @Option(
        name: .customLong("pause-after"), help: "SIGSTOP the last worker past its lease at this share (0: no).")
    var pauseAfter = 0.6

    func validate() throws {
        guard (1...1_000_000).contains(users) else { throw ValidationError("--users must be in 1...1000000") }
        guard (1...16).contains(workers) else { throw ValidationError("--workers must be in 1...16") }
        guard (0...12).contains(backlogHours) else {
            throw ValidationError("--backlog-hours must be in 0...12 (an alert a day late is stale and not sent)")
        }
        guard (0...48).contains(futureHours) else { throw ValidationError("--future-hours must be in 0...48") }
        guard speed > 0, speed <= 100_000 else { throw ValidationError("--speed must be in (0, 100000]") }
        guard (1...600).contains(leaseSeconds) else { throw ValidationError("--lease-seconds must be in 1...600") }
        guard (1...10_000).contains(batchUsers) else { throw ValidationError("--batch-users must be in 1...10000") }
        guard (0...1).contains(killAfter) else { throw ValidationError("--kill-after must be in 0...1") }
        for (flag, share) in [
            ("--restart-fast-after", restartFastAfter), ("--restart-immediate-after", restartImmediateAfter),
            ("--pause-after", pauseAfter),
        ] where !(0...1).contains(share) {
            throw ValidationError("\(flag) must be in 0...1")
        }
        guard (10...86_400).contains(timeoutSeconds) else {
            throw ValidationError("--timeout-seconds must be in 10...86400")
        }
        do { _ = try PostgresURL(database) } catch { throw ValidationError(error.description) }
    }

    func run() async throws {
        // The judge's waits on PostgreSQL block their thread: not one of the cooperative pool's.
        let threads = DatabaseThreads(count: 4) { what in
            FileHandle.standardError.write(
                Data("scale-test: a wait on PostgreSQL (\(what)) ran off its threads\n".utf8))
        }
        try await threads.run { try await test() }
    }

    private func test() async throws {
        var logger = Logger(label: "scale-test")
        logger.logLevel = .warning
        // Unbuffered: progress lines appear as they happen, also in a file or a pipe.
        func say(_ line: String) { FileHandle.standardOutput.write(Data("scale-test: \(line)\n".utf8)) }
        guard FileManager.default.isExecutableFile(atPath: engaged) else {
            throw fail("no executable at \(engaged)", 69)
        }
        try FileManager.default.createDirectory(atPath: workDirectory, withIntermediateDirectories: true)

        var url = try PostgresURL(database)
        let admin = PostgresPool(url: url, size: 1, logger: logger)
        do {
            try admin.withConnection { connection in
                try PostgresPool.run(
                    "DROP DATABASE IF EXISTS engaged_scale WITH (FORCE)", on: connection, logger: logger)
                try PostgresPool.run("CREATE DATABASE engaged_scale", on: connection, logger: logger)
            }
        } catch { throw fail("cannot create the database engaged_scale at \(url): \(error)", 69) }
        admin.close()
        url.database = "engaged_scale"
        let databaseURL =
            "postgres://\(url.username)\(url.password.map { ":\($0)" } ?? "")@\(url.host):\(url.port)/engaged_scale"
        let pool = PostgresPool(url: url, size: 4, logger: logger)
        defer { pool.close() }
        let store = try PostgresRuntimeStore(pool: pool)

        let start = Instant(iso8601: "2027-03-01T12:00:00Z")!
        say("loading \(users) users")
        let load = try ScaleLoad.load(
            users: users, backlogHours: backlogHours, futureHours: futureHours, seed: seed, start: start, into: store,
            log: say)
        say("loaded \(load.notifications.count) alerts")

        // The fake APNs, and the key and certificate the workers need to reach it.
        let key = P256.Signing.PrivateKey()
        let keyID = "SCALE12345"
        let teamID = "TEAM123456"
        let topic = "com.example.fitness"
        let fake = try await FakeAPNs.start(.init(teamID: teamID, keys: [keyID: key.publicKey], topic: topic))
        let keyFile = workDirectory + "/AuthKey_scale.p8"
        let caFile = workDirectory + "/fake-apns.pem"
        try key.pemRepresentation.write(toFile: keyFile, atomically: true, encoding: .utf8)
        try fake.certificatePEM.write(toFile: caFile, atomically: true, encoding: .utf8)

        let databaseCPUBefore = Self.cpuSeconds(ofProcessesNamed: "postgres")
        let ownCPUBefore = Self.ownCPUSeconds()
        let originMilliseconds = Int64(Date().timeIntervalSince1970 * 1_000) + 1_000
        let engineTime = { (wall: Int64) in
            start + Int64((Double(wall - originMilliseconds) / 1_000 * speed).rounded(.down))
        }
        var processes: [Process] = []
        for number in 1...workers {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: engaged)
            process.arguments = [
                "worker", "--database", databaseURL, "--worker-id", "w\(number)", "--lease-seconds", "\(leaseSeconds)",
                "--idle-milliseconds", "50", "--batch-users", "\(batchUsers)", "--quiet-guard-seconds",
                "\(quietGuardSeconds)", "--apns-url", fake.url, "--apns-ca-file", caFile, "--apns-key-file", keyFile,
                "--apns-key-id", keyID, "--apns-team-id", teamID, "--apns-topic", topic,
                "--scaled-clock", "\(start.iso8601),\(speed),\(originMilliseconds)",
                "--stats-file", workDirectory + "/worker-\(number).json",
            ]
            let log = workDirectory + "/worker-\(number).log"
            FileManager.default.createFile(atPath: log, contents: nil)
            process.standardOutput = FileHandle(forWritingAtPath: log)
            process.standardError = FileHandle(forWritingAtPath: log)
            try process.run()
            processes.append(process)
        }
        say("\(workers) workers started")

        let faults = ScaleFaults(
            triggers: [
                .init(kind: .restartFast, share: restartFastAfter),
                .init(kind: .restartImmediate, share: restartImmediateAfter), .init(kind: .pause, share: pauseAfter),
            ], restartCommand: restartCommand, pauseSeconds: leaseSeconds * 2 + 2, url: url, log: say)
        let runStarted = Date()
        var killed: String?
        var finished = false
        while Date().timeIntervalSince(runStarted) < Double(timeoutSeconds) {
            try await Task.sleep(for: .milliseconds(250))
            let delivered = fake.delivered.count
            if killed == nil, killAfter > 0, Double(delivered) >= killAfter * Double(users), processes[0].isRunning {
                kill(processes[0].processIdentifier, SIGKILL)
                killed = "w1"
                say("SIGKILL w1 after \(delivered) pushes")
            }
            try await faults.step(deliveredShare: Double(delivered) / Double(users), workers: processes)
            // Whether any row is pending: cheap, unlike a count the database's CPU figure would carry.
            // While PostgreSQL restarts, the question fails (within its deadline) and is asked again.
            let pending = try? pool.withConnection { connection in
                try pool.query("SELECT 1 FROM outbox LIMIT 1", on: connection).count
            }
            if pending == 0, faults.isDone {
                finished = true
                break
            }
        }
        let runSeconds = Date().timeIntervalSince(runStarted)
        let databaseCPU = Self.cpuSeconds(ofProcessesNamed: "postgres") - databaseCPUBefore
        let ownCPU = Self.ownCPUSeconds() - ownCPUBefore
        for process in processes where process.isRunning { process.terminate() }
        for process in processes { process.waitUntilExit() }
        try await fake.shutdown()

        let merged = try pool.withConnection { connection in
            try pool.query("SELECT key, merged_into FROM outbox_merged", on: connection).map {
                try $0.decode((String, String).self)
            }
        }
        let judge = ScaleJudge(
            load: load, mergedInto: Dictionary(merged, uniquingKeysWith: { first, _ in first }), engineTime: engineTime)
        let verdict = judge.judge(fake.pushes)
        let sizesAfterRun = try tableSizes(pool)
        let pruned = try OutboxQueue(pool: pool, workerID: "scale-test").pruneDone(before: start + 365 * 86_400)
        // A plain VACUUM, as autovacuum runs it (no table lock): the space of done rows is free
        // again, and empty pages at the end of a table go back to the file system.
        try pool.withConnection { connection in try PostgresPool.run("VACUUM", on: connection, logger: logger) }
        let sizesAfterPrune = try tableSizes(pool)

        let perWorker = (1...workers).compactMap { number -> [String: Any]? in
            guard let data = FileManager.default.contents(atPath: workDirectory + "/worker-\(number).json") else {
                return nil
            }
            return try? JSONSerialization.jsonObject(with: data) as? [String: Any]
        }
        let recoveries = faults.recoveries(workerStats: perWorker, killed: killed)
        let p99 = perWorker.compactMap { $0["claimToSendP99Millis"] as? Double }.max() ?? 0
        let workerCPU = perWorker.compactMap { $0["cpuSeconds"] as? Double }.reduce(0, +)
        func perPush(_ seconds: Double) -> Double {
            verdict.pushes == 0 ? 0 : (seconds * 1e6 / Double(verdict.pushes)).rounded()
        }
        let cpuMicrosPerPush: [String: Double] = [
            "workers": perPush(workerCPU), "database": perPush(databaseCPU), "fakeAPNsAndJudge": perPush(ownCPU),
        ]
        let report: [String: Any] = [
            "users": users, "workers": workers, "notifications": verdict.notifications, "sent": verdict.delivered,
            "pushes": verdict.pushes, "mergedPushes": verdict.mergedPushes, "duplicates": verdict.duplicates,
            "missing": verdict.missing, "resentWithSameApnsID": verdict.resentWithSameApnsID,
            "orderViolations": verdict.orderViolations, "quietHoursViolations": verdict.quietHoursViolations,
            "earlyViolations": verdict.earlyViolations, "unknownPushes": verdict.unknownPushes,
            "sendsPerSecond": (verdict.sendsPerSecond * 10).rounded() / 10,
            "averageSendsPerSecond": (verdict.averageSendsPerSecond * 10).rounded() / 10,
            "claimToSendP99Millis": (p99 * 10).rounded() / 10, "perWorker": perWorker, "killed": killed ?? NSNull(),
            "finished": finished, "runSeconds": (runSeconds * 10).rounded() / 10, "speed": speed,
            "leaseSeconds": leaseSeconds, "tableBytesAfterRun": sizesAfterRun, "prunedDoneRows": pruned,
            "tableBytesAfterPrune": sizesAfterPrune, "examples": verdict.examples,
            "cores": ProcessInfo.processInfo.activeProcessorCount, "cpuMicrosPerPush": cpuMicrosPerPush,
            "batchUsers": batchUsers, "faults": recoveries,
        ]
        let data = try JSONSerialization.data(withJSONObject: report, options: [.prettyPrinted, .sortedKeys])
        try data.write(to: URL(fileURLWithPath: workDirectory + "/scale-report.json"))
        for key in [
            "users", "workers", "notifications", "sent", "pushes", "mergedPushes", "duplicates", "missing",
            "resentWithSameApnsID", "orderViolations", "quietHoursViolations", "earlyViolations", "sendsPerSecond",
            "averageSendsPerSecond", "claimToSendP99Millis", "runSeconds",
        ] {
            say("\(key)=\(report[key]!)")
        }
        say(
            "cpuMicrosPerPush=\(cpuMicrosPerPush.sorted { $0.key < $1.key }.map { "\($0.key):\(Int($0.value))" }.joined(separator: ","))"
        )
        for worker in perWorker { say("worker \(worker["worker"] ?? "?"): performed=\(worker["performed"] ?? 0)") }
        for example in verdict.examples { say("example: \(example)") }
        for fault in recoveries {
            let times = (fault["recoveryMillis"] as? [String: Any] ?? [:]).sorted { $0.key < $1.key }
                .map { "\($0.key):\($0.value is NSNull ? "never" : "\($0.value) ms")" }
            say(
                "fault \(fault["fault"]!)\(fault["worker"].map { " \($0)" } ?? ""): outage \(fault["outageMillis"]!) ms, "
                    + "sends again after \(times.joined(separator: ", "))")
        }
        say("report: \(workDirectory)/scale-report.json")
        guard finished else { throw fail("outbox not empty after \(timeoutSeconds) s", 75) }
        guard verdict.passed else { throw ExitCode(1) }
        // A worker that never sent again after PostgreSQL came back froze (a pause's worker
        // may find nothing left to send, so only the restarts count).
        let frozen = recoveries.filter { $0["fault"] as? String != ScaleFaults.Kind.pause.rawValue }
            .flatMap { ($0["recoveryMillis"] as? [String: Any] ?? [:]).filter { $0.value is NSNull }.keys }
        guard frozen.isEmpty else { throw fail("never sent again after a restart: \(frozen.sorted())", 1) }
    }

    /// Each table's bytes, indexes and TOAST included.
    func tableSizes(_ pool: PostgresPool) throws -> [String: Int] {
        try pool.withConnection { connection in
            var sizes: [String: Int] = [:]
            for row in try pool.query(
                "SELECT relname::text, pg_total_relation_size(relid) FROM pg_catalog.pg_statio_user_tables",
                on: connection)
            {
                let (name, bytes) = try row.decode((String, Int64).self)
                sizes[name] = Int(bytes)
            }
            return sizes
        }
    }

    /// User and system CPU seconds of every process whose name is `name` (from /proc), so far.
    static func cpuSeconds(ofProcessesNamed name: String) -> Double {
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        var total = 0.0
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] where Int(entry) != nil {
            guard let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                let open = stat.firstIndex(of: "("), let close = stat.lastIndex(of: ")"),
                stat[stat.index(after: open)..<close] == name
            else { continue }
            let fields = stat[stat.index(close, offsetBy: 2)...].split(separator: " ")
            if fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) {
                total += (user + system) / ticks
            }
        }
        return total
    }

    /// This process's user and system CPU seconds so far (the fake APNs's share of the run).
    static func ownCPUSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
            + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
    }

    func fail(_ message: String, _ status: Int32) -> ExitCode {
        FileHandle.standardError.write(Data("scale-test: \(message)\n".utf8))
        return ExitCode(status)
    }
}
