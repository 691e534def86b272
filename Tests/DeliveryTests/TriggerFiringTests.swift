import Models
import Testing

@testable import Delivery

/// A daily calendar trigger in a zone: when it is scheduled and the UTC instants of its first fires.
struct DailyCase: Sendable, CustomTestStringConvertible {
    var zone: String
    var hour: Int
    var minute: Int
    var scheduledAt: String
    var expected: [String]
    var note: String

    var testDescription: String { "\(zone) \(hour):\(minute) \(note)" }
}

@Suite("Trigger firing")
struct TriggerFiringTests {
    static let dailyCases: [DailyCase] = [
        DailyCase(
            zone: "America/New_York", hour: 2, minute: 30, scheduledAt: "2027-03-13T12:00:00-05:00",
            expected: ["2027-03-14T03:00:00-04:00", "2027-03-15T02:30:00-04:00", "2027-03-16T02:30:00-04:00"],
            note: "spring forward: 02:30 does not exist, fires at 03:00 EDT"),
        DailyCase(
            zone: "America/New_York", hour: 1, minute: 30, scheduledAt: "2027-11-06T12:00:00-04:00",
            expected: ["2027-11-07T01:30:00-04:00", "2027-11-08T01:30:00-05:00", "2027-11-09T01:30:00-05:00"],
            note: "fall back: 01:30 occurs twice, fires once (EDT)"),
        DailyCase(
            zone: "America/New_York", hour: 9, minute: 0, scheduledAt: "2027-03-13T12:00:00-05:00",
            expected: ["2027-03-14T09:00:00-04:00", "2027-03-15T09:00:00-04:00"],
            note: "ordinary time keeps its wall clock across the change"),
        DailyCase(
            zone: "Europe/London", hour: 1, minute: 30, scheduledAt: "2027-03-27T12:00:00Z",
            expected: ["2027-03-28T01:00:00Z", "2027-03-29T00:30:00Z"],
            note: "spring forward: 01:30 GMT does not exist, fires at 02:00 BST"),
        DailyCase(
            zone: "Europe/London", hour: 1, minute: 30, scheduledAt: "2027-10-30T12:00:00Z",
            expected: ["2027-10-31T00:30:00Z", "2027-11-01T01:30:00Z"],
            note: "fall back: 01:30 fires once (BST)"),
        DailyCase(
            zone: "Australia/Sydney", hour: 2, minute: 30, scheduledAt: "2027-04-03T12:00:00+11:00",
            expected: ["2027-04-04T02:30:00+11:00", "2027-04-05T02:30:00+10:00"],
            note: "April fall back: 02:30 fires once (AEDT)"),
        DailyCase(
            zone: "Australia/Sydney", hour: 2, minute: 30, scheduledAt: "2027-10-02T12:00:00+10:00",
            expected: ["2027-10-03T03:00:00+11:00", "2027-10-04T02:30:00+11:00"],
            note: "October spring forward: 02:30 does not exist, fires at 03:00 AEDT"),
        DailyCase(
            zone: "Asia/Kolkata", hour: 9, minute: 0, scheduledAt: "2027-03-13T12:00:00Z",
            expected: ["2027-03-14T03:30:00Z", "2027-03-15T03:30:00Z"],
            note: "+05:30, no DST"),
        DailyCase(
            zone: "Asia/Kathmandu", hour: 9, minute: 0, scheduledAt: "2027-03-13T12:00:00Z",
            expected: ["2027-03-14T03:15:00Z", "2027-03-15T03:15:00Z"],
            note: "+05:45, no DST"),
        DailyCase(
            zone: "Asia/Kathmandu", hour: 0, minute: 0, scheduledAt: "2027-03-13T12:00:00Z",
            expected: ["2027-03-13T18:15:00Z", "2027-03-14T18:15:00Z"],
            note: "+05:45 local midnight is the previous UTC day"),
    ]

    @Test(arguments: dailyCases)
    func dailyCalendarTriggerFiresAtTheRightInstants(_ item: DailyCase) throws {
        var center = SimulatedNotificationCenter(timeZone: zone(item.zone))
        let scheduledAt = at(item.scheduledAt)
        let expected = item.expected.map(at)
        try center.add(request("daily", daily(item.hour, item.minute)), at: scheduledAt)
        #expect(center.nextFireInstant == expected.first)

        // One day at a time, as the simulator advances: each day fires exactly once.
        var fired: [Instant] = []
        var now = scheduledAt
        while let last = expected.last, now < last {
            now = min(now + .secondsPerDay, last)
            let delivered = center.fireDue(through: now)
            #expect(delivered.count <= 1)
            fired += delivered.map(\.deliveredAt)
        }
        #expect(fired == expected)
        #expect(center.pendingIdentifiers == ["daily"])
        #expect(try #require(center.nextFireInstant) > expected.last!)
    }

    @Test func fallBackDayFiresOnceInOneSweep() throws {
        var center = SimulatedNotificationCenter(timeZone: zone("America/New_York"))
        try center.add(request("daily", daily(1, 30)), at: at("2027-11-07T00:00:00-04:00"))
        let delivered = center.fireDue(through: at("2027-11-07T23:59:00-05:00"))
        #expect(delivered.map(\.deliveredAt) == [at("2027-11-07T01:30:00-04:00")])
    }

    @Test func nonRepeatingCalendarTriggerFiresOnceAndLeaves() throws {
        var center = SimulatedNotificationCenter(timeZone: zone("Europe/London"))
        let match = CalendarMatch(year: 2027, month: 7, day: 1, hour: 18, minute: 45)
        try center.add(request("once", .calendar(match, repeats: false)), at: at("2027-06-01T00:00:00Z"))
        #expect(center.nextFireInstant == at("2027-07-01T17:45:00Z"))
        let delivered = center.fireDue(through: at("2028-01-01T00:00:00Z"))
        #expect(delivered.map(\.deliveredAt) == [at("2027-07-01T17:45:00Z")])
        #expect(center.pendingNotificationRequests.isEmpty)
    }

    @Test func weeklyCalendarTrigger() throws {
        var center = SimulatedNotificationCenter(timeZone: zone("America/New_York"))
        let sunday = CalendarMatch(weekday: .sunday, hour: 19, minute: 0)
        try center.add(request("review", .calendar(sunday, repeats: true)), at: at("2027-03-10T12:00:00-05:00"))
        let delivered = center.fireDue(through: at("2027-03-31T00:00:00-04:00"))
        #expect(
            delivered.map(\.deliveredAt)
                == ["2027-03-14T19:00:00-04:00", "2027-03-21T19:00:00-04:00", "2027-03-28T19:00:00-04:00"].map(at))
    }

    // MARK: - Time-interval triggers

    @Test(arguments: [
        (NotificationTrigger.timeInterval(seconds: 0, repeats: false), "time interval must be greater than 0"),
        (.timeInterval(seconds: 0, repeats: true), "time interval must be greater than 0"),
        (.timeInterval(seconds: -5, repeats: false), "time interval must be greater than 0"),
        (.timeInterval(seconds: 59, repeats: true), "time interval must be at least 60 s if repeating"),
        (.timeInterval(seconds: 1, repeats: true), "time interval must be at least 60 s if repeating"),
    ])
    func invalidTimeIntervalsAreRejected(trigger: NotificationTrigger, reason: String) {
        var center = SimulatedNotificationCenter(timeZone: .utc)
        #expect(throws: NotificationCenterError.invalidTrigger(reason)) {
            try center.add(request("x", trigger), at: base)
        }
        #expect(center.pendingNotificationRequests.isEmpty)
    }

    @Test(arguments: [
        NotificationTrigger.timeInterval(seconds: 1, repeats: false),
        .timeInterval(seconds: 59, repeats: false),
        .timeInterval(seconds: 60, repeats: true),
    ])
    func validTimeIntervalsAreAccepted(trigger: NotificationTrigger) throws {
        var center = SimulatedNotificationCenter(timeZone: .utc)
        try center.add(request("x", trigger), at: base)
        #expect(center.pendingIdentifiers == ["x"])
    }

    @Test func oneShotIntervalFiresOnce() throws {
        var center = SimulatedNotificationCenter(timeZone: .utc)
        try center.add(request("x", .timeInterval(seconds: 30, repeats: false)), at: base)
        #expect(center.fireDue(through: base + 29).isEmpty)
        #expect(center.fireDue(through: base + 30).map(\.deliveredAt) == [base + 30])
        #expect(center.pendingNotificationRequests.isEmpty)
        #expect(center.fireDue(through: base + 3_600).isEmpty)
    }

    @Test(arguments: [60, 90, 3_600] as [Int64])
    func repeatingIntervalFiresEveryInterval(seconds: Int64) throws {
        var center = SimulatedNotificationCenter(timeZone: zone("Asia/Kathmandu"))
        try center.add(request("x", .timeInterval(seconds: seconds, repeats: true)), at: base)
        // In one sweep...
        var sweep = center
        let all = sweep.fireDue(through: base + 10 * seconds)
        #expect(all.map(\.deliveredAt) == (1...10).map { base + $0 * seconds })
        // ...and step by step, with steps that do not line up with the interval.
        var fired: [Instant] = []
        var now = base
        while now < base + 10 * seconds {
            now = now + 37
            fired += center.fireDue(through: now).map(\.deliveredAt)
        }
        #expect(fired == (1...10).map { base + $0 * seconds })
        #expect(center.nextFireInstant == base + 11 * seconds)
        #expect(center.deliveredIdentifiers == ["x"])
        #expect(center.deliveredCount == 10)
    }

    @Test func firesInFireTimeThenIdentifierOrder() throws {
        var center = SimulatedNotificationCenter(timeZone: .utc)
        try center.add(request("c", .date(base + 120)), at: base)
        try center.add(request("b", .date(base + 60)), at: base)
        try center.add(request("a", .date(base + 120)), at: base)
        try center.add(request("tick", .timeInterval(seconds: 60, repeats: true)), at: base)
        try center.add(request("z", .date(base + 3_600)), at: base)
        let delivered = center.fireDue(through: base + 180)
        #expect(delivered.map(\.request.identifier) == ["b", "tick", "a", "c", "tick", "tick"])
        #expect(delivered.map(\.deliveredAt) == [60, 60, 120, 120, 120, 180].map { base + $0 })
        #expect(center.pendingIdentifiers == ["tick", "z"])
        #expect(center.deliveredIdentifiers == ["b", "a", "c", "tick"])
    }

    @Test func fireDueIsInclusiveOfNow() throws {
        var center = SimulatedNotificationCenter(timeZone: .utc)
        try center.add(request("x", .date(base + 60)), at: base)
        #expect(center.fireDue(through: base + 59).isEmpty)
        #expect(center.fireDue(through: base + 60).count == 1)
    }
}
