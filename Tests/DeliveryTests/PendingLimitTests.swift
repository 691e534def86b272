import Models
import Testing

@testable import Delivery

@Suite("64 pending limit and replacement")
struct PendingLimitTests {
    /// 70 date-triggered requests, one a minute from base + 1 h, identifiers in fire order.
    static let seventy: [NotificationRequest] = (0..<70).map { index in
        request("r\(100 + index)", .date(base + 3_600 + Int64(index) * 60))
    }

    @Test(arguments: [1, 2, 3, 42] as [UInt64])
    func keepsTheSixtyFourSoonestWhateverTheOrder(seed: UInt64) throws {
        var generator = SeededGenerator(seed: seed)
        var center = SimulatedNotificationCenter(timeZone: .utc)
        for item in Self.seventy.shuffled(using: &generator) {
            try center.add(item, at: base)
        }
        #expect(center.pendingNotificationRequests.count == 64)
        #expect(center.pendingIdentifiers == Self.seventy.prefix(64).map(\.identifier))
        #expect(center.droppedByLimitCount == 6)
        #expect(center.pendingIsSorted)
        #expect(center.nextFireInstant == base + 3_600)
    }

    @Test func addingASoonerRequestDropsTheLatest() throws {
        var center = SimulatedNotificationCenter(timeZone: .utc)
        for item in Self.seventy { try center.add(item, at: base) }
        let latestKept = center.pendingIdentifiers.last
        #expect(latestKept == "r163")

        try center.add(request("sooner", .date(base + 60)), at: base)
        #expect(center.pendingNotificationRequests.count == 64)
        #expect(center.droppedByLimitCount == 7)
        #expect(center.pendingIdentifiers.first == "sooner")
        #expect(!center.pendingIdentifiers.contains("r163"))
        #expect(center.pendingIdentifiers.last == "r162")
        #expect(center.nextFireInstant == base + 60)
    }

    @Test func addingALaterRequestWhenFullDropsItSilently() throws {
        var center = SimulatedNotificationCenter(timeZone: .utc)
        for item in Self.seventy.prefix(64) { try center.add(item, at: base) }
        #expect(center.droppedByLimitCount == 0)
        let before = center.pendingNotificationRequests

        try center.add(request("later", .date(base + 86_400)), at: base)  // no error
        #expect(center.pendingNotificationRequests == before)
        #expect(center.droppedByLimitCount == 1)
    }

    @Test func tiesAtTheLimitAreBrokenByIdentifier() throws {
        var center = SimulatedNotificationCenter(timeZone: .utc)
        let fire = base + 600
        let identifiers = (0..<66).map { RequestID("t\(1_000 + $0)") }
        for identifier in identifiers.reversed() { try center.add(request(identifier, .date(fire)), at: base) }
        #expect(center.pendingIdentifiers == Array(identifiers.prefix(64)))
        #expect(center.droppedByLimitCount == 2)
    }

    @Test func aRepeatingRequestCountsAsOne() throws {
        var center = SimulatedNotificationCenter(timeZone: .utc)
        try center.add(request("daily", daily(8, 0)), at: base)
        try center.add(request("interval", .timeInterval(seconds: 3_600, repeats: true)), at: base)
        for item in Self.seventy.prefix(62) { try center.add(item, at: base) }
        #expect(center.pendingNotificationRequests.count == 64)
        #expect(center.droppedByLimitCount == 0)

        // Two weeks of daily and hourly firings: each stays one pending request.
        let delivered = center.fireDue(through: base + 14 * .secondsPerDay)
        #expect(delivered.filter { $0.request.identifier == "daily" }.count == 14)
        #expect(delivered.filter { $0.request.identifier == "interval" }.count == 14 * 24)
        #expect(center.pendingIdentifiers.sorted() == ["daily", "interval"])
        #expect(center.droppedByLimitCount == 0)
    }

    @Test func addingAPendingIdentifierReplacesIt() throws {
        var center = SimulatedNotificationCenter(timeZone: .utc)
        try center.add(request("a", .date(base + 600), title: "first"), at: base)
        try center.add(request("b", .date(base + 900)), at: base)
        try center.add(request("a", .date(base + 1_200), title: "second"), at: base + 60)

        #expect(center.pendingIdentifiers == ["b", "a"])
        let replaced = try #require(center.pendingNotificationRequests.last)
        #expect(replaced.request.content.title == "second")
        #expect(replaced.scheduledAt == base + 60)
        #expect(replaced.nextFire == base + 1_200)
        #expect(center.droppedByLimitCount == 0)
    }

    @Test func replacingWhenFullIsNotADrop() throws {
        var center = SimulatedNotificationCenter(timeZone: .utc)
        for item in Self.seventy.prefix(64) { try center.add(item, at: base) }
        // Move the soonest to the end of the list and back.
        var moved = Self.seventy[0]
        moved.trigger = .date(base + .secondsPerDay)
        try center.add(moved, at: base)
        #expect(center.pendingNotificationRequests.count == 64)
        #expect(center.pendingIdentifiers.last == moved.identifier)
        try center.add(Self.seventy[0], at: base)
        #expect(center.pendingIdentifiers == Self.seventy.prefix(64).map(\.identifier))
        #expect(center.droppedByLimitCount == 0)
    }

    @Test func aTimeIntervalRequestCountsFromItsReplacement() throws {
        var center = SimulatedNotificationCenter(timeZone: .utc)
        try center.add(request("snooze", .timeInterval(seconds: 1_800, repeats: false)), at: base)
        try center.add(request("snooze", .timeInterval(seconds: 1_800, repeats: false)), at: base + 600)
        #expect(center.nextFireInstant == base + 2_400)
    }

    @Test(arguments: [
        NotificationTrigger.date(base - 60),
        .date(base),
        .calendar(CalendarMatch(year: 2026, month: 5, day: 1, hour: 9, minute: 0), repeats: false),
    ])
    func aTriggerThatNeverFiresIsNotKept(trigger: NotificationTrigger) throws {
        var center = SimulatedNotificationCenter(timeZone: .utc)
        try center.add(request("keep", .date(base + 60)), at: base)
        try center.add(request("never", trigger), at: base)
        #expect(center.pendingIdentifiers == ["keep"])
        #expect(center.droppedByLimitCount == 0)

        // It still replaces a pending request with its identifier.
        try center.add(request("keep", trigger), at: base)
        #expect(center.pendingNotificationRequests.isEmpty)
    }

    @Test func removingPendingRequests() throws {
        var center = SimulatedNotificationCenter(timeZone: .utc)
        for item in Self.seventy.prefix(10) { try center.add(item, at: base) }
        center.removePendingNotificationRequests(withIdentifiers: ["r101"])
        center.removePendingNotificationRequests(withIdentifiers: ["r103", "r105", "unknown"])
        center.removePendingNotificationRequests(withIdentifiers: [])
        #expect(center.pendingIdentifiers == ["r100", "r102", "r104", "r106", "r107", "r108", "r109"])
        #expect(center.pendingIsSorted)
        center.removeAllPendingNotificationRequests()
        #expect(center.pendingNotificationRequests.isEmpty)
        #expect(center.nextFireInstant == nil)
        #expect(center.fireDue(through: base + .secondsPerDay).isEmpty)
    }

    @Test func invalidRequestsThrowAndChangeNothing() {
        var center = SimulatedNotificationCenter(timeZone: .utc)
        #expect(throws: NotificationCenterError.emptyIdentifier) {
            try center.add(request("", .date(base + 60)), at: base)
        }
        #expect(throws: NotificationCenterError.invalidTrigger("hour 24 out of range")) {
            try center.add(request("x", daily(24, 0)), at: base)
        }
        #expect(throws: NotificationCenterError.invalidTrigger("minute 60 out of range")) {
            try center.add(request("x", daily(8, 60)), at: base)
        }
        #expect(center.pendingNotificationRequests.isEmpty)
    }
}
