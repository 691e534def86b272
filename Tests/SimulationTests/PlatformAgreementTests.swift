import Delivery
import Engagement
import Models
import Scheduling
import SimulatedPlatform
import TestSupport
import Testing

@testable import Simulation

/// `planMatchesPlatform`: the check itself, and a run where users turn notifications off and on.
@Suite struct PlatformAgreementTests {
    let london = ZoneRules(identifier: "Europe/London")!
    let t0 = Instant(iso8601: "2027-06-01T12:00:00+01:00")!

    /// An engine's first plan, put on a device the way the simulator's executor does.
    func launched() -> (engine: UserEngine, center: SimulatedNotificationCenter, effects: [Effect]) {
        let profile = UserProfile(id: "u1", displayName: "Ana", timeZone: london.identifier)
        var engine = UserEngine(profile: profile, zone: london, now: t0, content: bundledContent)
        let effects = engine.handle(.appLaunched, at: t0)
        var center = SimulatedNotificationCenter(timeZone: london, authorizationStatus: .authorized)
        for case .schedule(let request, _, .local) in effects {
            try? center.add(request, at: t0)
        }
        return (engine, center, effects)
    }

    func difference(_ engine: UserEngine, _ center: SimulatedNotificationCenter, _ effects: [Effect]) -> String? {
        PlatformAgreement.difference(
            planned: engine.planned, pending: center.pendingNotificationRequests, effects: effects, now: t0)
    }

    @Test func aDeviceHoldingThePlanAgrees() {
        let (engine, center, effects) = launched()
        #expect(center.pendingNotificationRequests.count > 3)
        #expect(difference(engine, center, effects) == nil)
    }

    @Test func aRequestLeftAtItsOldTimeIsADifference() throws {
        let (engine, center, effects) = launched()
        var stale = center
        let first = stale.pendingNotificationRequests.first { !$0.request.trigger.repeats }!
        var request = first.request
        request.trigger = .date(first.nextFire + 3_600)
        try stale.add(request, at: t0)
        #expect(difference(engine, stale, effects)?.contains("fires at") == true)
    }

    @Test func aMissingRequestAndACancelledOneStillHeldAreDifferences() {
        let (engine, center, effects) = launched()
        var missing = center
        let first = missing.pendingNotificationRequests.first { !$0.request.trigger.repeats }!
        missing.removePendingNotificationRequests(withIdentifiers: [first.request.identifier])
        #expect(difference(engine, missing, effects)?.contains("believes") == true)
        #expect(
            difference(engine, center, [.cancel(requestIDs: [first.request.identifier])])
                == "\(first.request.identifier) was cancelled but the device still holds it")
    }

    @Test func usersTurningNotificationsOffAndOnKeepThePlanOnTheDevice() throws {
        var scenario = try Scenario.parse(baseScenario(), file: "test.json")
        scenario.users = 40
        scenario.weeks = 2
        scenario.faults.permissionRevokedPerUserWeek = 0.6
        // Judged after every step: the engine plans straight into the phone's center.
        scenario.deployment = .device
        let report = try Simulator.run(
            RunOptions(scenario: scenario, templates: bundledTemplates, outputDirectory: nil))
        #expect(report.platform["scheduleRejected", default: 0] > 0)
        #expect(report.decisions["suppressed", default: 0] > 0)
        #expect(report.invariantViolations["planMatchesPlatform"] == 0)
        #expect(report.invariantsHeld, "\(report.violationExamples)")
    }
}

/// Swarm testing: each seed draws a valid world of its own, the same one every time.
@Suite struct SwarmTests {
    func base(seed: UInt64) throws -> Scenario {
        var scenario = try Scenario.parse(baseScenario(), file: "test.json")
        scenario.seed = seed
        scenario.users = 30
        return scenario
    }

    @Test func aSeedDrawsTheSameWorldEveryTimeAndAnotherSeedAnother() throws {
        let first = try Swarm.draw(from: base(seed: 11))
        #expect(try Swarm.draw(from: base(seed: 11)) == first)
        #expect(try Swarm.draw(from: base(seed: 12)) != first)
        #expect(first.users == 30 && first.seed == 11)
    }

    @Test func everyDrawIsAValidScenarioAndTheFaultsVary() throws {
        var killed = 0
        var quiet = 0
        for seed in UInt64(1)...300 {
            let world = try Swarm.draw(from: base(seed: seed))
            if world.faults.appKilledPerUserDay > 0 { killed += 1 }
            if world.faults.apns.outagesPerWeek == 0 && world.faults.storeWriteFailure == 0 { quiet += 1 }
        }
        // Each fault is off in about a third of the seeds: some seeds have it, some do not.
        #expect((150...250).contains(killed))
        #expect(quiet > 10)
    }

    @Test(arguments: [UInt64(3), 4])
    func aSwarmSeedKeepsEveryPromise(seed: UInt64) throws {
        var world = try Swarm.draw(from: base(seed: seed))
        world.drainDays = 8
        let report = try Simulator.run(RunOptions(scenario: world, templates: bundledTemplates, outputDirectory: nil))
        #expect(report.invariantsHeld, "\(report.violationExamples)")
        #expect(report.drain.stuck == 0, "\(report.drain.stuckExamples)")
    }
}
