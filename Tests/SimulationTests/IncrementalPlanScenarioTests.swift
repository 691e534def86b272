import Engagement
import Foundation
import Models
import TestSupport
import Testing

@testable import Simulation

/// Every shipped scenario's personas, zones and faults drive the engine, and after every step a
/// full planning pass on a copy of the engine would schedule or cancel nothing: the incremental
/// plan (a pass skipped when its inputs match the last one's) is the full plan.
@Suite struct IncrementalPlanScenarioTests {
    static let scenarios = [
        "default", "smoke", "edges", "edge-dateline", "edge-dst-autumn", "edge-dst-spring", "edge-newyear",
        "edge-offsets", "edge-tight", "swarm",
    ]

    func run(_ name: String, seedOffset: UInt64, deployment: Deployment? = nil) throws -> Report {
        var scenario = try Scenario.load(path: scenariosFolder + "/\(name).json")
        scenario.seed &+= seedOffset
        scenario.users = min(scenario.users, 50)
        scenario.weeks = min(scenario.weeks, 2)
        scenario.threads = 1
        if let deployment { scenario.deployment = deployment }
        return try Simulator.run(
            RunOptions(
                scenario: scenario, templates: bundledTemplates, outputDirectory: nil, writeEvents: false,
                checksIncrementalPlan: true))
    }

    @Test(arguments: scenarios, [0, 1] as [UInt64])
    func aFullPassAfterEveryStepChangesNothing(scenario: String, seedOffset: UInt64) throws {
        let check = try #require(try run(scenario, seedOffset: seedOffset).incrementalPlan)
        #expect(check.checkedSteps > 500, "\(check.checkedSteps) steps checked")
        // The skip is what is checked: a run that never skipped would hold nothing.
        #expect(check.skippedSteps > 100, "\(check.skippedSteps) steps skipped the pass")
        #expect(check.differingSteps == 0, "\(check.examples)")
        // An unsettled step goes unchecked: only edge-tight's caps leave regrouping unfinished,
        // at most one step in twenty.
        if scenario == "edge-tight" {
            #expect(check.unsettledSteps * 20 <= check.checkedSteps, "\(check.unsettledSteps) unsettled")
        } else {
            #expect(check.unsettledSteps == 0, "\(check.unsettledSteps) unsettled")
        }
    }

    @Test func theServerTopologyToo() throws {
        let check = try #require(try run("default", seedOffset: 0, deployment: .server).incrementalPlan)
        #expect(check.checkedSteps > 500 && check.skippedSteps > 100 && check.unsettledSteps == 0)
        #expect(check.differingSteps == 0, "\(check.examples)")
        // Every pass is traced to at least one cause, each a cause's name; those alone are fewer.
        let passes = check.checkedSteps - check.skippedSteps
        #expect(check.passCauses.values.reduce(0, +) >= passes)
        #expect(check.passSoleCauses.values.reduce(0, +) <= passes)
        #expect(check.passCauses.keys.allSatisfy { PlanPassCause(rawValue: $0) != nil }, "\(check.passCauses)")
        #expect(check.passCauses["heldLater", default: 0] > 0, "the phone's copies move the server's plan")
    }

    /// Without the option the report holds no figures, so a run that did not check never reads
    /// as one that held.
    @Test func anUncheckedRunReportsNothing() throws {
        var scenario = try Scenario.parse(baseScenario(), file: "test.json")
        scenario.users = 5
        let report = try Simulator.run(
            RunOptions(scenario: scenario, templates: bundledTemplates, outputDirectory: nil))
        #expect(report.incrementalPlan == nil)
    }
}
