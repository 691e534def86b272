import Models
import Testing

@testable import Delivery

@Suite("Delivered list, badge and categories")
struct DeliveredAndBadgeTests {
    @Test func firingAgainReplacesTheDeliveredNotification() throws {
        var center = SimulatedNotificationCenter(timeZone: .utc)
        try center.add(request("a", .date(base + 60), title: "first"), at: base)
        try center.add(request("b", .date(base + 120)), at: base)
        _ = center.fireDue(through: base + 120)
        #expect(center.deliveredIdentifiers == ["a", "b"])

        try center.add(request("a", .date(base + 180), title: "second"), at: base + 130)
        #expect(center.deliveredIdentifiers == ["a", "b"])  // replaced only when it fires
        let again = center.fireDue(through: base + 180)
        #expect(again.map(\.request.identifier) == ["a"])
        #expect(center.deliveredIdentifiers == ["b", "a"])
        let last = try #require(center.deliveredNotifications.last)
        #expect(last.request.content.title == "second")
        #expect(last.deliveredAt == base + 180)
        #expect(center.deliveredCount == 3)
    }

    @Test func theDeliveredListKeepsTheMostRecentHundred() throws {
        var center = SimulatedNotificationCenter(timeZone: .utc)
        var now = base
        for batch in 0..<3 {
            for index in 0..<50 {
                let number = batch * 50 + index
                try center.add(request("d\(1_000 + number)", .date(now + 60 + Int64(index))), at: now)
            }
            now = now + 3_600
            #expect(center.fireDue(through: now).count == 50)
        }
        #expect(center.deliveredCount == 150)
        #expect(center.deliveredNotifications.count == SimulatedNotificationCenter.defaultDeliveredLimit)
        #expect(center.deliveredIdentifiers == (50..<150).map { "d\(1_000 + $0)" })
    }

    @Test func aSmallerDeliveredListKeepsTheMostRecentOnesAndAnEmptyOneKeepsNothing() throws {
        for limit in [0, 1, 3] {
            var center = SimulatedNotificationCenter(timeZone: .utc, deliveredLimit: limit)
            for index in 0..<5 {
                try center.add(request("d\(index)", .date(base + 60 + Int64(index)), badge: index), at: base)
            }
            let fired = center.fireDue(through: base + 3_600)
            // What the list keeps changes nothing else: every request is delivered, counted and
            // returned, and the badge follows the last one.
            #expect(fired.map(\.request.identifier) == (0..<5).map { "d\($0)" })
            #expect(center.deliveredCount == 5)
            #expect(center.deliveredIdentifiers == (5 - limit..<5).map { "d\($0)" })
            #expect(center.badgeCount == 4)
        }
    }

    @Test func removingDeliveredNotifications() throws {
        var center = SimulatedNotificationCenter(timeZone: .utc)
        for name: RequestID in ["a", "b", "c", "d"] { try center.add(request(name, .date(base + 60)), at: base) }
        _ = center.fireDue(through: base + 60)
        center.removeDeliveredNotifications(withIdentifiers: ["b", "d", "unknown"])
        center.removeDeliveredNotifications(withIdentifiers: [])
        #expect(center.deliveredIdentifiers == ["a", "c"])
        #expect(center.deliveredCount == 4)
    }

    @Test(arguments: [(5, 5), (0, 0), (-3, 0), (99_999, 99_999)])
    func setBadgeCount(count: Int, expected: Int) {
        var center = SimulatedNotificationCenter(timeZone: .utc)
        center.setBadgeCount(7)
        center.setBadgeCount(count)
        #expect(center.badgeCount == expected)
    }

    static let withoutBadgePermission: [(AuthorizationStatus, AuthorizationOptions)] = [
        (.authorized, [.alert, .sound]),
        (.provisional, [.alert]),
        (.denied, [.alert, .sound, .badge]),
        (.notDetermined, [.alert, .sound, .badge]),
    ]

    @Test(arguments: withoutBadgePermission)
    func setBadgeCountIsIgnoredWithoutBadgePermission(status: AuthorizationStatus, options: AuthorizationOptions) {
        var center = SimulatedNotificationCenter(timeZone: .utc, authorizationStatus: status, grantedOptions: options)
        center.setBadgeCount(4)
        #expect(center.badgeCount == 0)
    }

    @Test func provisionalWithBadgeMaySetTheBadge() {
        var center = SimulatedNotificationCenter(timeZone: .utc, authorizationStatus: .notDetermined)
        _ = center.requestAuthorization(options: [.badge, .provisional], userAllows: false)
        center.setBadgeCount(2)
        #expect(center.badgeCount == 2)
    }

    @Test func aContentBadgeSetsTheBadgeWhenDelivered() throws {
        var center = SimulatedNotificationCenter(timeZone: .utc)
        center.setBadgeCount(1)
        try center.add(request("three", .date(base + 60), badge: 3), at: base)
        try center.add(request("none", .date(base + 120)), at: base)
        try center.add(request("clear", .date(base + 180), badge: 0), at: base)
        try center.add(request("negative", .date(base + 240), badge: -2), at: base)

        #expect(center.badgeCount == 1)  // not before delivery
        _ = center.fireDue(through: base + 60)
        #expect(center.badgeCount == 3)
        _ = center.fireDue(through: base + 120)
        #expect(center.badgeCount == 3)  // nil leaves it unchanged
        _ = center.fireDue(through: base + 180)
        #expect(center.badgeCount == 0)
        center.setBadgeCount(5)
        _ = center.fireDue(through: base + 240)
        #expect(center.badgeCount == 0)
    }

    @Test func aContentBadgeIsIgnoredWithoutBadgePermission() throws {
        var center = SimulatedNotificationCenter(timeZone: .utc, grantedOptions: [.alert, .sound])
        try center.add(request("three", .date(base + 60), badge: 3), at: base)
        let delivered = center.fireDue(through: base + 60)
        #expect(delivered.count == 1)
        #expect(center.badgeCount == 0)
    }

    @Test func categoriesAreReplacedAsAWhole() {
        var center = SimulatedNotificationCenter(timeZone: .utc)
        #expect(center.notificationCategories.isEmpty)
        center.setNotificationCategories(NotificationCategory.all)
        #expect(center.notificationCategories == NotificationCategory.all)

        let meal = NotificationCategory(.meal, actions: [])
        let mealWithDismiss = NotificationCategory(.meal, actions: [], reportsDismissal: true)
        let hydration = NotificationCategory(.hydration, actions: [])
        center.setNotificationCategories([meal, hydration, mealWithDismiss])
        #expect(center.notificationCategories == [mealWithDismiss, hydration])
        center.setNotificationCategories([])
        #expect(center.notificationCategories.isEmpty)
    }

    @Test func worksThroughTheProtocol() throws {
        func schedule(_ center: inout some LocalNotificationCenter) throws {
            try center.add(request("p", .date(base + 60)), at: base)
            center.setBadgeCount(2)
        }
        var center = SimulatedNotificationCenter(timeZone: .utc)
        try schedule(&center)
        #expect(center.pendingIdentifiers == ["p"])
        #expect(center.badgeCount == 2)
        var existential: any LocalNotificationCenter = center
        existential.removeAllPendingNotificationRequests()
        #expect(existential.pendingNotificationRequests.isEmpty)
    }
}
