import Foundation
import Models
import Storage
import TestSupport
import Testing

@testable import Simulation

/// The store and upgrade faults: a failed commit rolled back and retried, history batches failing
/// before or after they were written, and a snapshot from the previous app version.
@Suite struct StoreFaultTests {
    func scenario(users: Int = 25) throws -> Scenario {
        var scenario = try Scenario.parse(baseScenario(), file: "test.json")
        scenario.users = users
        return scenario
    }

    @Test func aFailedCommitIsRolledBackAndRetriedAndChangesNothing() throws {
        let calm = try scenario()
        var failing = calm
        failing.faults.storeWriteFailure = 0.2
        let expected = try Simulator.run(RunOptions(scenario: calm, templates: bundledTemplates, outputDirectory: nil))
        let report = try Simulator.run(RunOptions(scenario: failing, templates: bundledTemplates, outputDirectory: nil))
        #expect(report.platform["commitsFailedAndRetried", default: 0] > 100)
        #expect(report.invariantsHeld, "\(report.violationExamples)")
        #expect(report.digest == expected.digest)
    }

    @Test func historyBatchesFailingBeforeOrAfterTheWriteNeitherLoseNorDoubleARow() throws {
        let calm = try scenario(users: 12)
        var failing = calm
        failing.faults.storeWriteFailure = 0.5
        let base = NSTemporaryDirectory() + "engagement-store-faults-\(getpid())"
        defer { try? FileManager.default.removeItem(atPath: base) }
        var stores: [SQLiteEngagementStore] = []
        for (name, scenario) in [("calm", calm), ("failing", failing)] {
            let report = try Simulator.run(
                RunOptions(
                    scenario: scenario, templates: bundledTemplates, outputDirectory: "\(base)/\(name)",
                    writeEvents: false, store: .sqlite))
            #expect(report.invariantsHeld)
            if name == "failing" { #expect(report.platform["storeBatchesFailedAndRetried", default: 0] > 0) }
            stores.append(try SQLiteEngagementStore(path: "\(base)/\(name)/store.sqlite"))
        }
        let from = Instant(secondsSinceEpoch: 0)
        let to = Instant(secondsSinceEpoch: 4_000_000_000)
        var rows = 0
        for index in 0..<calm.users {
            let user = Population.userID(index)
            let ledger = try stores[0].ledger(userID: user, from: from, to: to)
            #expect(try stores[1].ledger(userID: user, from: from, to: to) == ledger, "\(user)")
            #expect(
                try stores[1].activityEvents(userID: user, since: from)
                    == stores[0].activityEvents(userID: user, since: from), "\(user)")
            rows += ledger.count
        }
        #expect(rows > 100)
    }

    @Test func anAppUpdatedBetweenRunsReadsThePreviousVersionsSnapshot() throws {
        var scenario = try scenario(users: 20)
        // The engine's snapshot is the app's own where the engine runs in the app.
        scenario.deployment = .device
        scenario.faults.appKilledPerUserDay = 0.5
        scenario.faults.upgradeShareOfRelaunches = 1
        let report = try Simulator.run(
            RunOptions(scenario: scenario, templates: bundledTemplates, outputDirectory: nil))
        let relaunches = report.platform["appRelaunchesFromSnapshot", default: 0]
        #expect(relaunches > 20)
        #expect(report.platform["appUpgradesFromPreviousSnapshot"] == relaunches)
        #expect(report.invariantsHeld, "\(report.violationExamples)")
    }
}
