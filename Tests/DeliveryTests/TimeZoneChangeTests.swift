import Models
import Testing

@testable import Delivery

@Suite("Time zone changes")
struct TimeZoneChangeTests {
    let scheduled = at("2027-06-01T12:00:00-04:00")
    let travel = at("2027-06-01T20:00:00Z")

    func newYorkCenter() throws -> SimulatedNotificationCenter {
        var center = SimulatedNotificationCenter(timeZone: zone("America/New_York"))
        try center.add(request("daily", daily(9, 0)), at: scheduled)
        try center.add(request("date", .date(at("2027-06-02T10:00:00Z"))), at: scheduled)
        try center.add(request("interval", .timeInterval(seconds: .secondsPerDay, repeats: false)), at: scheduled)
        return center
    }

    @Test func calendarTriggersFollowTheDeviceZoneDateAndIntervalKeepTheirInstant() throws {
        var center = try newYorkCenter()
        #expect(center.pendingIdentifiers == ["date", "daily", "interval"])
        #expect(center.pendingNotificationRequests[1].nextFire == at("2027-06-02T09:00:00-04:00"))

        center.setTimeZone(zone("Europe/London"), at: travel)
        #expect(center.timeZone.identifier == "Europe/London")
        #expect(center.pendingIdentifiers == ["daily", "date", "interval"])
        #expect(
            center.pendingNotificationRequests.map(\.nextFire)
                == [at("2027-06-02T09:00:00+01:00"), at("2027-06-02T10:00:00Z"), at("2027-06-02T16:00:00Z")])
        #expect(center.pendingIsSorted)

        // Later fires of the daily trigger stay on London's wall clock.
        let delivered = center.fireDue(through: at("2027-06-04T00:00:00Z"))
        #expect(
            delivered.filter { $0.request.identifier == "daily" }.map(\.deliveredAt)
                == [at("2027-06-02T08:00:00Z"), at("2027-06-03T08:00:00Z")])
    }

    @Test func travelToKathmandu() throws {
        var center = try newYorkCenter()
        center.setTimeZone(zone("Asia/Kathmandu"), at: travel)  // 01:45 on 2 June there
        #expect(center.pendingIdentifiers == ["daily", "date", "interval"])
        #expect(center.pendingNotificationRequests[0].nextFire == at("2027-06-02T03:15:00Z"))
    }

    @Test func aOneShotCalendarMatchThatHasPassedInTheNewZoneIsRemoved() throws {
        var center = SimulatedNotificationCenter(timeZone: zone("America/New_York"))
        let match = CalendarMatch(year: 2027, month: 6, day: 1, hour: 23, minute: 0)
        try center.add(request("tonight", .calendar(match, repeats: false)), at: scheduled)
        try center.add(request("date", .date(at("2027-06-02T10:00:00Z"))), at: scheduled)
        #expect(center.pendingIdentifiers == ["tonight", "date"])
        center.setTimeZone(zone("Asia/Kathmandu"), at: travel)
        #expect(center.pendingIdentifiers == ["date"])
        #expect(center.droppedByLimitCount == 0)
    }

    @Test func aRequestAlreadyDueKeepsItsInstant() throws {
        var center = try newYorkCenter()
        let late = at("2027-06-02T14:00:00Z")  // 09:00 New York (13:00Z) has passed, not yet fired
        center.setTimeZone(zone("Europe/London"), at: late)
        let delivered = center.fireDue(through: late)
        #expect(delivered.map(\.request.identifier) == ["date", "daily"])
        #expect(delivered.map(\.deliveredAt) == [at("2027-06-02T10:00:00Z"), at("2027-06-02T13:00:00Z")])
        #expect(center.nextFireInstant == at("2027-06-02T16:00:00Z"))
        #expect(center.pendingNotificationRequests.last?.nextFire == at("2027-06-03T08:00:00Z"))
    }

    @Test func sameZoneChangesNothing() throws {
        var center = try newYorkCenter()
        let before = center
        center.setTimeZone(zone("America/New_York"), at: travel)
        #expect(center == before)
    }
}
