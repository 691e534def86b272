import Delivery
import Models
import Scheduling
import TestSupport
import Testing

@testable import Simulation

/// The device's clock jumping (`DeviceClock`): triggers moved onto the device's clock and back,
/// and runs with the clock faults on keeping every promise.
@Suite struct DeviceClockTests {
    let newYork = ZoneRules(identifier: "America/New_York")!

    func request(_ trigger: NotificationTrigger) -> NotificationRequest {
        NotificationRequest(
            identifier: "mealReminder.2027-03-13.lunch",
            content: NotificationContent(kind: .mealReminder, title: "Lunch", body: "Log it"),
            trigger: trigger)
    }

    @Test(arguments: [Int64(-29), 29, 31, -31, 3_600, -43_200])
    func theShiftOfASeriesIsTheOffsetToTheNearestMinute(offset: Int64) {
        let shift = DeviceClock.triggerShift(offset)
        #expect(shift % 60 == 0)
        #expect(abs(shift - offset) <= 30)
    }

    @Test func aOneOffFiresAtItsPlannedTimeOnTheDevicesClockAndComesBackWhenTheClockIsRight() {
        let fireAt = Instant(iso8601: "2027-03-13T17:30:00Z")!
        let original = request(TriggerChoice.trigger(for: fireAt, in: newYork))
        let ahead = DeviceClock.onDeviceClock(original, firingAt: fireAt, offsetSeconds: 7_237, in: newYork)
        #expect(ahead.trigger == .date(fireAt + 7_237))
        #expect(
            DeviceClock.trueTime(
                of: fireAt + 7_237, id: ahead.identifier, repeats: false, offsetSeconds: 7_237, in: newYork)
                == fireAt)
        let right = DeviceClock.onDeviceClock(
            ahead, firingAt: fireAt, offsetSeconds: 0, previousOffsetSeconds: 7_237, in: newYork)
        #expect(right.trigger == original.trigger)
    }

    @Test func aDailySeriesMovesItsTimeOfDayAcrossMidnightWithItsWeekday() {
        let series = request(.calendar(CalendarMatch(weekday: .monday, hour: 23, minute: 30), repeats: true))
        let moved = DeviceClock.onDeviceClock(
            series, firingAt: Instant(secondsSinceEpoch: 0), offsetSeconds: 3_600, in: newYork)
        #expect(moved.trigger == .calendar(CalendarMatch(weekday: .tuesday, hour: 0, minute: 30), repeats: true))
        let back = DeviceClock.onDeviceClock(
            moved, firingAt: Instant(secondsSinceEpoch: 0), offsetSeconds: 0, previousOffsetSeconds: 3_600, in: newYork)
        #expect(back.trigger == series.trigger)
    }

    @Test func aSeriesFiringIsJudgedAtItsOccurrenceAcrossTheSpringForward() {
        // 07:00 on the day New York springs forward, fired an hour off by a clock hours off.
        let planned = Instant(iso8601: "2027-03-14T07:00:00-04:00")!
        let firedOnDevice = planned + 3_600 - 5 * 3_600
        let judged = DeviceClock.trueTime(
            of: firedOnDevice, id: "hydration.daily.0700", repeats: true, offsetSeconds: -5 * 3_600, in: newYork)
        #expect(judged == planned)
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
