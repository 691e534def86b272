import Content
import Foundation
import Models
import Simulation

extension Simulate {
    /// The scenario file the flags name: a path, or a name in Simulation/Scenarios.
    var scenarioPath: String {
        FileManager.default.fileExists(atPath: scenario) ? scenario : "Simulation/Scenarios/\(scenario).json"
    }

    /// The scenario with the flags' overrides applied (the flags were checked against the same limits).
    func resolveScenario() throws(CommandFailure) -> Scenario {
        let path = scenarioPath
        guard FileManager.default.fileExists(atPath: path) else {
            throw CommandFailure(
                message: "--scenario: no scenario file \"\(scenario)\" (looked for \(path))", status: ExitStatus.usage)
        }
        var resolved: Scenario
        do {
            resolved = try Scenario.load(path: path)
        } catch {
            throw CommandFailure(message: error.description, status: ExitStatus.badScenario)
        }
        if let seed { resolved.seed = seed }
        if let users { resolved.users = users }
        if let weeks { resolved.weeks = weeks }
        if let threads { resolved.threads = threads }
        if let deployment = deployment.flatMap(Deployment.init(rawValue:)) { resolved.deployment = deployment }
        if swarm {
            do {
                resolved = try Swarm.draw(from: resolved)
            } catch {
                throw CommandFailure(message: "--swarm: \(error.description)", status: ExitStatus.badScenario)
            }
        }
        return resolved
    }

    /// `--out`, or `.simulate/<scenario name>` with the name made safe as a folder name.
    func outputPath(for scenario: Scenario) -> String {
        out ?? ".simulate/" + OutputFolder.folderName(forScenario: scenario.name)
    }

    /// The estimate of the run, refused when it needs more memory than allowed.
    func checkEstimate(of scenario: Scenario) throws(CommandFailure) -> RunEstimate {
        let estimate = RunEstimate(users: scenario.users, weeks: scenario.weeks, threads: scenario.threads)
        let limit = maxMemory.flatMap(RunEstimate.parseBytes) ?? RunEstimate.availableMemoryBytes()
        let source = maxMemory == nil ? "the memory available on this machine" : "--max-memory"
        if let limit, estimate.memoryBytes > limit {
            throw CommandFailure(
                message: "users x weeks = \(scenario.users) x \(scenario.weeks) needs about "
                    + "\(RunEstimate.text(bytes: estimate.memoryBytes)) of memory, more than \(source) "
                    + "(\(RunEstimate.text(bytes: limit))); lower --users or --weeks"
                    + (maxMemory == nil ? "" : ", or raise --max-memory"),
                status: ExitStatus.usage)
        }
        return estimate
    }

    func runSimulation() throws(CommandFailure) -> Int32 {
        let scenario = try resolveScenario()
        let templates: TemplateCatalog
        do {
            templates = try TemplateCatalog.bundled()
        } catch {
            throw CommandFailure(
                message: "the bundled templates do not load: \(error)", status: ExitStatus.templatesMissing)
        }
        if let user = explain {
            say("SEED=\(scenario.seed) scenario=\(scenario.name) weeks=\(scenario.weeks) start=\(scenario.start)")
            do {
                for line in try Explainer.timeline(of: user, scenario: scenario, templates: templates) { say(line) }
            } catch {
                throw CommandFailure(message: "--explain: \(error)", status: ExitStatus.usage)
            }
            return 0
        }
        let estimate = try checkEstimate(of: scenario)
        let outputDirectory = outputPath(for: scenario)
        let folder: OutputFolder
        do {
            folder = try OutputFolder.claim(outputDirectory)
        } catch {
            throw CommandFailure(message: error.description, status: ExitStatus.output)
        }
        printHeader(scenario, outputDirectory: outputDirectory, estimate: estimate)

        let report: Report
        do {
            report = try Simulator.run(
                RunOptions(
                    scenario: scenario, templates: templates, outputDirectory: folder.stagingPath, writeEvents: events,
                    showProgress: true, store: storeKind ?? .none, command: reproduceCommand(scenario),
                    checksIncrementalPlan: checkPlans))
            try folder.commit()
        } catch {
            folder.abandon()
            // Simulator.run throws only when an output (event log, store, report) cannot be written.
            throw CommandFailure(
                message: "the run's output could not be written in \(outputDirectory): \(Self.explain(error))",
                status: ExitStatus.output)
        }
        printSummary(report, outputDirectory: outputDirectory)
        if report.exitStatus != 0 {
            switch report.exitStatus {
            case 2: say("FAILED: invariant violated")
            case 3: say("FAILED: something was stuck after the drain (liveness)")
            default: say("FAILED: budget breached")
            }
            say("reproduce: \(reproduceCommand(scenario))")
        }
        return report.exitStatus
    }

    /// An output error as one readable line: the failing step and the system's reason.
    static func explain(_ error: any Error) -> String {
        switch error {
        case let folder as OutputFolderError: folder.description
        case SimulationError.eventLog(let underlying): "writing events.jsonl failed: \(OutputFolder.reason(underlying))"
        case SimulationError.store(let underlying): "the store refused a batch: \(OutputFolder.reason(underlying))"
        default: OutputFolder.reason(error)
        }
    }

    /// The command that runs exactly this scenario again.
    func reproduceCommand(_ scenario: Scenario) -> String {
        "\(CommandLine.arguments[0]) --scenario \(scenarioPath) --seed \(scenario.seed) --users \(scenario.users) "
            + "--weeks \(scenario.weeks) --threads \(scenario.threads) --deployment \(scenario.deployment.rawValue) "
            + "--store \(store)" + (events ? " --events" : "")
            + (swarm ? " --swarm" : "") + (checkPlans ? " --check-plans" : "")
    }
}
