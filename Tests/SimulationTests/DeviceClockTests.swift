import Delivery
import Models
import Scheduling
import TestSupport
import Testing

@testable import Simulation

/// The device's clock jumping (`DeviceClock`): requests held on the device's clock and back, a
/// series one occurrence at a time, and runs with the clock faults on keeping every promise.
@Suite struct DeviceClockTests {
    let newYork = ZoneRules(identifier: "America/New_York")!

    func request(_ id: RequestID, _ trigger: NotificationTrigger) -> NotificationRequest {
        NotificationRequest(
            identifier: id, content: NotificationContent(kind: .hydration, title: "Water", body: "A glass"),
            trigger: trigger)
    }

    @Test func aOneOffIsADateAtItsPlannedTimePlusTheErrorAndComesBackWhenTheClockIsRight() {
        let fireAt = Instant(iso8601: "2027-03-13T17:30:00Z")!
        let original = request("mealReminder.2027-03-13.lunch", TriggerChoice.trigger(for: fireAt, in: newYork))
        let off = DeviceClock.onDeviceClock(original, firingAt: fireAt, offsetSeconds: 7_237, in: newYork)
        #expect(off.trigger == .date(fireAt + 7_237))
        #expect(!DeviceClock.isDailySeries(off))
        let right = DeviceClock.onDeviceClock(off, firingAt: fireAt, offsetSeconds: 0, in: newYork)
        #expect(right.trigger == original.trigger)
    }

    @Test func aSeriesIsHeldOneOccurrenceAtATimeWhileTheClockIsOffAndRepeatsAgainAfter() {
        let series = request("hydration.daily.0700", .calendar(.daily(at: LocalTimeOfDay("07:00")!), repeats: true))
        let next = Instant(iso8601: "2027-03-13T07:00:00-05:00")!
        let off = DeviceClock.onDeviceClock(series, firingAt: next, offsetSeconds: -18_000, in: newYork)
        #expect(off.trigger == .date(next - 18_000))
        #expect(DeviceClock.isDailySeries(off))
        let right = DeviceClock.onDeviceClock(off, firingAt: next, offsetSeconds: 0, in: newYork)
        #expect(right.trigger == series.trigger)
    }

    @Test func theNextOccurrenceOfASeriesKeepsItsWallTimeAcrossTheSpringForward() {
        let saturday = Instant(iso8601: "2027-03-13T07:00:00-05:00")!
        #expect(
            DeviceClock.nextOccurrence(of: "hydration.daily.0700", after: saturday, in: newYork)
                == Instant(iso8601: "2027-03-14T07:00:00-04:00")!)
        #expect(DeviceClock.nextOccurrence(of: "mealReminder.2027-03-13.lunch", after: saturday, in: newYork) == nil)
    }

    @Test func clocksJumpingEitherWayKeepEveryPromiseAndThePlanOnTheDevice() throws {
        var scenario = try Scenario.parse(baseScenario(), file: "test.json")
        scenario.users = 40
        scenario.weeks = 2
        scenario.drainDays = 8
        scenario.faults.clockCorrectionPerUserDay = 0.5
        scenario.faults.clockSetByUserPerUserWeek = 1
        let report = try Simulator.run(
            RunOptions(scenario: scenario, templates: bundledTemplates, outputDirectory: nil))
        #expect(report.platform["deviceClockJumps", default: 0] > 200)
        #expect(report.platform["releasedByClockJump", default: 0] > 0)
        #expect(report.invariantsHeld, "\(report.violationExamples)")
        #expect(report.drain.stuck == 0)
    }
}
