import Foundation
import Models
import TestSupport
import Testing

@testable import Simulation

/// The server topology (`Deployment.server`): the engine runs on the server and the phone
/// mirrors its local plan through EngagementKit's plan sync; the report counts pulls, signals
/// and stale fires.
@Suite(.serialized) struct ServerDeploymentTests {
    func run(_ deployment: Deployment, weeks: Int = 1, _ change: (inout Scenario) -> Void = { _ in }) throws
        -> Report
    {
        var scenario = try Scenario.parse(baseScenario(), file: "test.json")
        scenario.users = 40
        scenario.weeks = weeks
        scenario.deployment = deployment
        change(&scenario)
        return try Simulator.run(RunOptions(scenario: scenario, templates: bundledTemplates, outputDirectory: nil))
    }

    @Test func theServerTopologyIsTheDefaultAndTheDeviceOneReportsNoPulls() throws {
        #expect(try Scenario.parse(baseScenario(), file: "test.json").deployment == .server)
        var device = baseScenario()
        device["deployment"] = "device"
        #expect(try Scenario.parse(device, file: "test.json").deployment == .device)
        #expect(try run(.device).deployment == nil)
    }

    @Test func thePhoneFollowsTheServersPlanByItsEventsTheSignalAndRefreshes() throws {
        let report = try run(.server, weeks: 2)
        let figures = try #require(report.deployment)
        #expect(figures.pullsByReason["event", default: 0] > 0)
        #expect(figures.pullsByReason["signal", default: 0] > 0, "social events and jobs move the plan")
        #expect(figures.pullsByReason["refresh", default: 0] > 0)
        #expect(figures.signalsPerUserDay > 0)
        #expect(figures.pullsWhileOffline == 0, "no offline spells in this scenario")
        #expect(figures.eventsQueuedOfflinePerUserDay == 0, "online, the kit sends each event at once")
        // Local reminders reach the phone: it fires what it pulled.
        #expect(try #require(report.channels["local"]).shown > 0)
        // Pulls hold the whole plan: the device holds what the engine believes, at every pull.
        #expect(report.invariantViolations["planMatchesPlatform", default: 0] == 0, "\(report.violationExamples)")
        #expect(figures.staleShareOfLocalDeliveries < 0.05, "\(figures)")
        #expect(figures.staleFires == 0 || figures.staleAgeSecondsP99 > 0)
        // Some answers are measured, and a plan of a few reminders is more than a few bytes.
        #expect(figures.planAnswersMeasured > 0)
        #expect(figures.planAnswerBytesP50 > 500 && figures.planAnswerBytesP99 >= figures.planAnswerBytesP50)
    }

    @Test func aPlanAnswerIsMeasuredOnceInEveryHundredAndTwentyEightOrSo() {
        var measured = 0
        for user in 0..<200 {
            for answer in 0..<128 where DeploymentStats.measuresPlanBytes(answered: answer, userIndex: user) {
                measured += 1
            }
        }
        // 200 expected; a mix that favoured some answers or users would land far off.
        #expect((150...250).contains(measured), "\(measured)")
        let firstAnswers = (0..<12_800).count { DeploymentStats.measuresPlanBytes(answered: 0, userIndex: $0) }
        #expect((60...140).contains(firstAnswers), "\(firstAnswers)")
    }

    @Test func anOfflinePhoneMissesPullsAndCatchesUpWhenTheNetworkIsBack() throws {
        let report = try run(.server) { scenario in
            scenario.faults.deviceOfflinePerUserDay = 0.8
            scenario.faults.deviceOfflineMeanHours = 8
        }
        let figures = try #require(report.deployment)
        #expect(figures.pullsWhileOffline > 0)
        // The user's events made offline wait in the kit's queue: the server hears of them when
        // the network is back, and the phone withdrew what they made moot meanwhile.
        #expect(figures.eventsQueuedOfflinePerUserDay > 0)
        #expect(report.invariantViolations["planMatchesPlatform", default: 0] == 0, "\(report.violationExamples)")
        #expect(report.invariantViolations["noReminderForDoneThing", default: 0] == 0, "\(report.violationExamples)")
    }

    @Test func aDeletedAppFiresNothingMoreAndLeavesNothingStuck() throws {
        let report = try run(.server, weeks: 2) { scenario in
            scenario.personas = Weights([("churner", 1)])
            scenario.faults.uninstallOnChurn = 1
            scenario.drainDays = 8
        }
        #expect(report.uninstalls > 0)
        #expect(report.drain.stuck == 0, "\(report.drain.stuckExamples)")
        let figures = try #require(report.deployment)
        // A stale copy fires only until the app is deleted: never for days.
        #expect(figures.staleAgeSecondsP99 < 2 * 86_400, "\(figures)")
    }

    @Test func theServerTopologyGivesTheSameDigestOnOneAndTwoThreads() throws {
        func faulty(_ threads: Int) throws -> Report {
            try run(.server) { scenario in
                scenario.threads = threads
                scenario.faults.deviceOfflinePerUserDay = 0.3
                scenario.faults.clockCorrectionPerUserDay = 0.2
            }
        }
        let one = try faulty(1)
        let two = try faulty(2)
        #expect(one.digest == two.digest)
        #expect(one.deployment == two.deployment)
    }
}
