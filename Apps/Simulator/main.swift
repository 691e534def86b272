// The simulator: drives a synthetic population through weeks of virtual time against the real
// engine and reports budgets and invariants. Exit status: 0 all held, 1 a budget breached,
// 2 an invariant violated, 64 bad usage, 65 bad scenario file, 66 the bundled templates do not
// load, 74 output error. This is the composition root: it picks the templates, the store and the
// simulated platform and hands them in.
import Content
import Engagement
import Foundation
import Models
import Simulation

let usage = """
    usage: simulate [--scenario PATH|NAME] [--seed N] [--users N] [--weeks N] [--threads N] [--out DIR] [--no-events]
                    [--store none|memory|sqlite] [--explain USER]

      --scenario  a scenario file, or the name of one in Simulation/Scenarios (default: default)
      --seed      the seed of the run (default: the scenario's)
      --users     population size (default: the scenario's)
      --weeks     weeks of virtual time (default: the scenario's)
      --threads   worker threads; the digest does not depend on it (default: the scenario's)
      --out       output folder (default: .simulate/<scenario>/)
      --no-events skip events.jsonl (the digest is still computed)
      --store S   write the run's history through a store: none (default), memory, or sqlite
                  (store.sqlite in the output folder); the digest does not depend on it
      --explain U print user U's timeline in local time, every decision with its rule, and exit
    """

func fail(_ message: String, status: Int32) -> Never {
    FileHandle.standardError.write(Data("simulate: \(message)\n".utf8))
    if status == 64 { FileHandle.standardError.write(Data((usage + "\n").utf8)) }
    exit(status)
}

struct Flags {
    var scenario = "default"
    var seed: UInt64?
    var users: Int?
    var weeks: Int?
    var threads: Int?
    var out: String?
    var writeEvents = true
    var explain: String?
    var store = RunOptions.StoreKind.none
}

func parseFlags(_ arguments: [String]) -> Flags {
    var flags = Flags()
    var index = 0
    func value(_ name: String) -> String {
        index += 1
        guard index < arguments.count, !arguments[index].hasPrefix("--") else {
            fail("\(name) needs a value", status: 64)
        }
        return arguments[index]
    }
    func positive(_ name: String, minimum: Int = 1) -> Int {
        let text = value(name)
        guard let number = Int(text), number >= minimum else {
            fail("\(name) must be a whole number of at least \(minimum), got \"\(text)\"", status: 64)
        }
        return number
    }
    while index < arguments.count {
        switch arguments[index] {
        case "--scenario": flags.scenario = value("--scenario")
        case "--seed":
            let text = value("--seed")
            guard let seed = UInt64(text) else {
                fail("--seed must be a non-negative whole number, got \"\(text)\"", status: 64)
            }
            flags.seed = seed
        case "--users": flags.users = positive("--users")
        case "--weeks": flags.weeks = positive("--weeks")
        case "--threads": flags.threads = min(positive("--threads"), 64)
        case "--out": flags.out = value("--out")
        case "--no-events": flags.writeEvents = false
        case "--explain": flags.explain = value("--explain")
        case "--store":
            let text = value("--store")
            guard let kind = RunOptions.StoreKind(rawValue: text) else {
                fail("--store must be none, memory or sqlite, got \"\(text)\"", status: 64)
            }
            flags.store = kind
        case "--help", "-h":
            print(usage)
            exit(0)
        default: fail("unknown argument \"\(arguments[index])\"", status: 64)
        }
        index += 1
    }
    return flags
}

let flags = parseFlags(Array(CommandLine.arguments.dropFirst()))
let scenarioPath =
    FileManager.default.fileExists(atPath: flags.scenario)
    ? flags.scenario : "Simulation/Scenarios/\(flags.scenario).json"
guard FileManager.default.fileExists(atPath: scenarioPath) else {
    fail("no scenario file \"\(flags.scenario)\" (looked for \(scenarioPath))", status: 64)
}
var scenario: Scenario
do {
    scenario = try Scenario.load(path: scenarioPath)
} catch {
    fail("\(error)", status: 65)
}
if let seed = flags.seed { scenario.seed = seed }
if let users = flags.users { scenario.users = users }
if let weeks = flags.weeks { scenario.weeks = weeks }
if let threads = flags.threads { scenario.threads = threads }
let outputDirectory = flags.out ?? ".simulate/\(scenario.name)"
let reproduce =
    "\(CommandLine.arguments[0]) --scenario \(scenarioPath) --seed \(scenario.seed) --users \(scenario.users) --weeks \(scenario.weeks) --threads \(scenario.threads) --store \(flags.store.rawValue)"

// The copy the engine writes from; a template file that does not load is an install problem.
let templates: TemplateCatalog
do {
    templates = try TemplateCatalog.bundled()
} catch {
    fail("the bundled templates do not load: \(error)", status: 66)
}

if let user = flags.explain {
    do {
        print("SEED=\(scenario.seed) scenario=\(scenario.name) weeks=\(scenario.weeks) start=\(scenario.start)")
        for line in try Explainer.timeline(of: user, scenario: scenario, templates: templates) { print(line) }
        exit(0)
    } catch {
        fail("\(error)", status: 64)
    }
}

print("SEED=\(scenario.seed)")
print(
    "scenario=\(scenario.name) file=\(scenarioPath) users=\(scenario.users) weeks=\(scenario.weeks) threads=\(scenario.threads) start=\(scenario.start) end=\(scenario.endInstant) out=\(outputDirectory)"
)
print(
    "faults: backgroundNeverRun=\(scenario.faults.backgroundNeverRun) backgroundMeanDelayMinutes=\(scenario.faults.backgroundMeanDelayMinutes) backgroundEarlyExpiration=\(scenario.faults.backgroundEarlyExpiration) permissionRevokedPerUserWeek=\(scenario.faults.permissionRevokedPerUserWeek) travelPerTravellerDay=\(scenario.faults.travelPerTravellerDay)"
)

let report: Report
do {
    report = try Simulator.run(
        RunOptions(
            scenario: scenario, templates: templates, outputDirectory: outputDirectory, writeEvents: flags.writeEvents,
            showProgress: isatty(2) == 1, store: flags.store, command: reproduce))
} catch {
    // Simulator.run throws only when an output (event log, store, report) cannot be written.
    fail("the run's output could not be written: \(error)", status: 74)
}

func micros(_ value: Double) -> String { String(format: "%.1f", value) }
print("")
print(
    "digest=\(report.digest) events=\(report.events) wall=\(String(format: "%.2f", report.wallSeconds))s eventsPerSecond=\(Int(report.eventsPerSecond)) peakMemoryMB=\(report.peakMemoryMB)"
)
print(
    "deliveries=\(report.deliveries) droppedByPendingLimit=\(report.platform["droppedByPendingLimit"] ?? 0) reEngagementReturns=\(report.reEngagementReturns)"
)
print(
    "content: coachCalls=\(report.content.coachCalls) aiShare=\(String(format: "%.3f", report.content.aiShare)) "
        + "p50=\(Int(report.content.p50Millis))ms p99=\(Int(report.content.p99Millis))ms max=\(Int(report.content.maxMillis))ms "
        + "(budget \(Int(report.content.budgetMillis))ms, virtual) payloadBytesMax=\(report.payloadBytesMax)")
let snapshot = report.snapshotBytesPerUser
print("engine snapshot bytes per user: p50=\(snapshot.p50) p99=\(snapshot.p99) max=\(snapshot.max)")
if let treated = report.lift.treatedReturnRate, let held = report.lift.holdoutReturnRate {
    print(
        "re-engagement lift: return within 14 days \(String(format: "%.3f", treated)) nudged vs \(String(format: "%.3f", held)) holdout"
            + " (\(report.lift.treatedLapses) vs \(report.lift.holdoutLapses) lapses)")
}
print("")
print("budget               samples      p50 us      p99 us      max us   budget us  held")
for name in report.budgets.keys.sorted() {
    let figures = report.budgets[name]!
    print(
        name.padding(toLength: 20, withPad: " ", startingAt: 0)
            + String(figures.samples).leftJustified(10)
            + micros(figures.p50Micros).leftJustified(12) + micros(figures.p99Micros).leftJustified(12)
            + micros(figures.maxMicros).leftJustified(12) + micros(figures.budgetMicros).leftJustified(12)
            + (figures.breached ? "  NO" : "  yes"))
}
print("")
print("invariant                              violations")
for name in report.invariantViolations.keys.sorted() {
    print(
        name.padding(toLength: 38, withPad: " ", startingAt: 0)
            + String(report.invariantViolations[name]!).leftJustified(11))
}
for example in report.violationExamples { print("  " + example) }
print("")
print("report: \(outputDirectory)/report.json, \(outputDirectory)/report.html")
if report.exitStatus != 0 {
    print(report.exitStatus == 2 ? "FAILED: invariant violated" : "FAILED: budget breached")
    print("reproduce: \(reproduce)")
}
exit(report.exitStatus)

extension String {
    func leftJustified(_ width: Int) -> String {
        count >= width ? " " + self : String(repeating: " ", count: width - count) + self
    }
}
