// The simulator: drives a synthetic population through weeks of virtual time against the real
// engine and reports budgets and invariants. This is the composition root: it picks the
// templates, the store and the simulated platform and hands them in.
import ArgumentParser
import Foundation
import Simulation

/// Exit statuses, as `simulate --help` lists them.
enum ExitStatus {
    static let budgetBreached: Int32 = 1
    static let invariantViolated: Int32 = 2
    static let usage: Int32 = 64
    static let badScenario: Int32 = 65
    static let templatesMissing: Int32 = 66
    static let output: Int32 = 74
}

/// A failure the command reports on standard error and exits with.
struct CommandFailure: Error, Equatable {
    var message: String
    var status: Int32
}

@main
struct Simulate: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "simulate",
        abstract: "Drive a synthetic population through weeks of virtual time against the real engine.",
        discussion: """
            Writes population.json, report.json (and events.jsonl with --events, store.sqlite with \
            --store sqlite) into the output folder. A run writes into a staging folder inside it and moves \
            the files into place when it completes; a second run on the same folder fails at once.

            Exit status: 0 all held, 1 a budget breached, 2 an invariant violated, 3 something stuck \
            after the drain (liveness), 64 bad usage (or a \
            run larger than the memory allowed), 65 bad scenario file, 66 the bundled templates do not \
            load, 74 output error (the folder is in use, or cannot be written).
            """)

    @Option(help: "A scenario file, or the name of one in Simulation/Scenarios.")
    var scenario = "default"

    // Numbers take the next word as their value even when it starts with "-", so `--users -3`
    // is refused as out of range rather than as a missing value.
    @Option(parsing: .unconditional, help: "The seed of the run (default: the scenario's), 0...\(UInt64.max).")
    var seed: UInt64?

    @Option(
        parsing: .unconditional,
        help: "Population size (default: the scenario's), \(Self.bounds(ScenarioLimits.users)).")
    var users: Int?

    @Option(
        parsing: .unconditional,
        help: "Weeks of virtual time (default: the scenario's), \(Self.bounds(ScenarioLimits.weeks)).")
    var weeks: Int?

    @Option(
        parsing: .unconditional,
        help:
            "Worker threads; the digest does not depend on it (default: the scenario's), \(Self.bounds(ScenarioLimits.threads))."
    )
    var threads: Int?

    @Option(
        help:
            "Where the engine runs: device (it plans into the phone's notification center) or server (the phone mirrors the server's plan through EngagementKit's plan sync); default: the scenario's."
    )
    var deployment: String?

    @Option(help: "Output folder (default: .simulate/<scenario name>).")
    var out: String?

    @Flag(
        inversion: .prefixedNo,
        help:
            "Write events.jsonl: each user's event lines in order, users in order (the digest is computed either way).")
    var events = false

    @Option(
        help: "Write the run's history through a store: none, memory, or sqlite (store.sqlite in the output folder).")
    var store = "none"

    @Flag(
        help:
            "Swarm testing: draw the faults, personas, zones and preferences from the seed (the scenario gives the seed, start, length, users and threads)."
    )
    var swarm = false

    @Flag(
        name: .customLong("check-plans"),
        help:
            "After every engine step, run a full planning pass on a copy of the engine and fail (exit 2) if it would schedule or cancel anything the incremental plan did not (slower; the digest is the same)."
    )
    var checkPlans = false

    @Option(help: "Print user U's timeline in local time, every decision with its rule, and exit.")
    var explain: String?

    @Option(
        name: .customLong("max-memory"),
        help: "Refuse a run estimated to need more memory than this (e.g. 500M, 4G; default: the memory available).")
    var maxMemory: String?

    static func bounds(_ range: ClosedRange<Int>) -> String { "\(range.lowerBound)...\(range.upperBound)" }

    func validate() throws {
        func check(_ value: Int?, _ flag: String, _ range: ClosedRange<Int>) throws {
            if let value, !range.contains(value) {
                throw ValidationError(
                    "\(flag) must be in \(Self.bounds(range)) (the scenario file's limit), got \(value)")
            }
        }
        try check(users, "--users", ScenarioLimits.users)
        try check(weeks, "--weeks", ScenarioLimits.weeks)
        try check(threads, "--threads", ScenarioLimits.threads)
        guard storeKind != nil else {
            throw ValidationError("--store must be none, memory or sqlite, got \"\(store)\"")
        }
        if let maxMemory, RunEstimate.parseBytes(maxMemory) == nil {
            throw ValidationError("--max-memory must be a size such as 500M, 4G or 1073741824, got \"\(maxMemory)\"")
        }
        if let deployment, Deployment(rawValue: deployment) == nil {
            throw ValidationError("--deployment: \(Deployment.problem(deployment))")
        }
        if let out, out.isEmpty { throw ValidationError("--out must not be empty") }
        if scenario.isEmpty { throw ValidationError("--scenario must not be empty") }
    }

    var storeKind: RunOptions.StoreKind? { RunOptions.StoreKind(rawValue: store) }

    func run() throws {
        let status: Int32
        do {
            status = try runSimulation()
        } catch let failure as CommandFailure {
            FileHandle.standardError.write(Data("simulate: \(failure.message)\n".utf8))
            throw ExitCode(failure.status)
        }
        if status != 0 { throw ExitCode(status) }
    }
}
