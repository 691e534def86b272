import Foundation
import Logging
import PostgresNIO
import PostgresStore

/// The faults the scale test injects while the workers run, each once the delivered pushes
/// reach its share of the users, one at a time:
/// - PostgreSQL restarted with a fast shutdown, then with an immediate one (the command given
///   with `--restart-command`, which returns once the server accepts connections again);
/// - the last worker stopped with SIGSTOP for longer than its lease, then resumed with SIGCONT:
///   its users go to the others meanwhile, and on waking it must not send what it no longer holds.
///
/// Each fault is an `Event` with the wall time it began and the time the system was whole
/// again (PostgreSQL answering a new connection, or the worker resumed); `recoveries` measures
/// from the latter to each worker's first send after it.
final class ScaleFaults {
    enum Kind: String {
        case restartFast = "restart-fast"
        case restartImmediate = "restart-immediate"
        case pause
    }

    struct Event {
        let kind: Kind
        let startedMillis: Int64
        var wholeMillis: Int64
        var worker: String?
    }

    struct Trigger {
        let kind: Kind
        let share: Double
    }

    private var pending: [Trigger]
    private(set) var events: [Event] = []
    private var paused: (process: Process, name: String, resumeAt: Date)?
    let restartCommand: String?
    let pauseSeconds: Double
    let url: PostgresURL
    let log: (String) -> Void

    init(
        triggers: [Trigger], restartCommand: String?, pauseSeconds: Double, url: PostgresURL,
        log: @escaping (String) -> Void
    ) {
        pending = triggers.filter { $0.share > 0 && ($0.kind == .pause || restartCommand != nil) }
            .sorted { $0.share < $1.share }
        self.restartCommand = restartCommand
        self.pauseSeconds = pauseSeconds
        self.url = url
        self.log = log
    }

    /// Notes a fault that was injected (and, for a restart, healed).
    func record(_ event: Event) { events.append(event) }

    /// Whether every fault has been injected and healed.
    var isDone: Bool { pending.isEmpty && paused == nil }

    /// Injects the next fault when `deliveredShare` reached its share, and resumes a paused
    /// worker when its pause is over. `workers` are the running processes, named w1, w2, ...
    func step(deliveredShare: Double, workers: [Process]) async throws {
        if let paused, Date() >= paused.resumeAt {
            kill(paused.process.processIdentifier, SIGCONT)
            events[events.count - 1].wholeMillis = Self.nowMillis()
            log("SIGCONT \(paused.name) after \(pauseSeconds) s")
            self.paused = nil
        }
        guard paused == nil, let next = pending.first, deliveredShare >= next.share else { return }
        pending.removeFirst()
        switch next.kind {
        case .restartFast: try await restart(mode: "fast", kind: next.kind)
        case .restartImmediate: try await restart(mode: "immediate", kind: next.kind)
        case .pause:
            guard let index = workers.lastIndex(where: \.isRunning) else { return }
            let name = "w\(index + 1)"
            kill(workers[index].processIdentifier, SIGSTOP)
            record(Event(kind: .pause, startedMillis: Self.nowMillis(), wholeMillis: 0, worker: name))
            paused = (workers[index], name, Date().addingTimeInterval(pauseSeconds))
            log("SIGSTOP \(name) for \(pauseSeconds) s")
        }
    }

    private func restart(mode: String, kind: Kind) async throws {
        guard let restartCommand else { return }
        let started = Self.nowMillis()
        log("restarting PostgreSQL (-m \(mode))")
        let status = try await Self.shell("\(restartCommand) \(mode)")
        guard status == 0 else { throw ScaleFaultError("the restart command failed (\(status)): \(restartCommand)") }
        // Whole again when a new connection runs a statement.
        let giveUp = Date().addingTimeInterval(60)
        var logger = Logger(label: "scale-test-probe")
        logger.logLevel = .critical
        while true {
            let probe = PostgresPool(
                url: url, size: 1, deadlines: .init(connectSeconds: 1, statementSeconds: 2, borrowSeconds: 2),
                logger: logger)
            defer { probe.close() }
            if (try? probe.withConnection { try probe.query("SELECT 1", on: $0) }) != nil { break }
            guard Date() < giveUp else { throw ScaleFaultError("PostgreSQL did not come back within 60 s") }
            try await Task.sleep(for: .milliseconds(50))
        }
        let whole = Self.nowMillis()
        record(Event(kind: kind, startedMillis: started, wholeMillis: whole))
        log("PostgreSQL accepts connections again after \(whole - started) ms (-m \(mode))")
    }

    /// Per event, each worker's milliseconds from the event's end to its first send after the
    /// silence that held then (`FaultRecovery`), from the workers' statistics files; killed
    /// workers are left out, and a worker that never sent again is JSON's null.
    func recoveries(workerStats: [[String: Any]], killed: String?) -> [[String: Any]] {
        let workers = workerStats.compactMap(WorkerSends.init(stats:))
        return events.map { event in
            let times = FaultRecovery.perWorker(wholeMillis: event.wholeMillis, workers: workers, killed: killed)
            var entry: [String: Any] = [
                "fault": event.kind.rawValue, "outageMillis": event.wholeMillis - event.startedMillis,
                "recoveryMillis": times.mapValues { $0.map { $0 as Any } ?? NSNull() },
            ]
            if let worker = event.worker { entry["worker"] = worker }
            return entry
        }
    }

    /// Runs `command` with /bin/sh, its output discarded, and returns its wait status. Spawned
    /// and reaped with POSIX calls: Foundation's `Process` did not always notice its exit here.
    static func shell(_ command: String) async throws -> Int32 {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        let words: [String] = ["/bin/sh", "-c", command]
        let argv = words.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, "/bin/sh", &actions, nil, argv, environ)
        guard spawned == 0 else { throw ScaleFaultError("cannot run /bin/sh: \(spawned)") }
        var status: Int32 = 0
        while waitpid(pid, &status, WNOHANG) == 0 { try await Task.sleep(for: .milliseconds(20)) }
        return status
    }

    static func nowMillis() -> Int64 { Int64(Date().timeIntervalSince1970 * 1_000) }
}

struct ScaleFaultError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
