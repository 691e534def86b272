import Models
import Testing

@testable import Delivery

@Suite("Authorization")
struct AuthorizationTests {
    @Test(arguments: [AuthorizationStatus.notDetermined, .denied])
    func addThrowsWithoutPermission(status: AuthorizationStatus) {
        var center = SimulatedNotificationCenter(timeZone: .utc, authorizationStatus: status)
        #expect(throws: NotificationCenterError.notificationsNotAllowed) {
            try center.add(request("x", .date(base + 60)), at: base)
        }
        #expect(center.pendingNotificationRequests.isEmpty)
    }

    @Test(arguments: [
        (AuthorizationStatus.authorized, Presentation.banner),
        (.ephemeral, .banner),
        (.provisional, .quiet),
    ])
    func presentationFollowsTheStatus(status: AuthorizationStatus, presentation: Presentation) throws {
        var center = SimulatedNotificationCenter(timeZone: .utc, authorizationStatus: status)
        try center.add(request("x", .date(base + 60)), at: base)
        let delivered = center.fireDue(through: base + 60)
        #expect(delivered.map(\.presentation) == [presentation])
        #expect(center.deliveredNotifications == delivered)
        #expect(center.deliveredCount == 1)
    }

    struct PromptCase: Sendable, CustomTestStringConvertible {
        var from: AuthorizationStatus
        var options: AuthorizationOptions
        var userAllows: Bool
        var status: AuthorizationStatus
        var granted: AuthorizationOptions
        var testDescription: String { "\(from) + \(options.rawValue) allows \(userAllows) -> \(status)" }
    }

    static let promptCases: [PromptCase] = [
        PromptCase(
            from: .notDetermined, options: [.alert, .sound, .badge], userAllows: true, status: .authorized,
            granted: [.alert, .sound, .badge]),
        PromptCase(from: .notDetermined, options: [.alert, .badge], userAllows: false, status: .denied, granted: []),
        // Provisional is granted without a prompt, whatever the user would answer.
        PromptCase(
            from: .notDetermined, options: [.alert, .badge, .provisional], userAllows: false, status: .provisional,
            granted: [.alert, .badge]),
        PromptCase(
            from: .notDetermined, options: [.alert, .provisional], userAllows: true, status: .provisional,
            granted: [.alert]),
        // From provisional, asking for full authorization prompts.
        PromptCase(
            from: .provisional, options: [.alert, .sound], userAllows: true, status: .authorized,
            granted: [.alert, .sound]),
        PromptCase(from: .provisional, options: [.alert, .sound], userAllows: false, status: .denied, granted: []),
        PromptCase(
            from: .provisional, options: [.alert, .provisional], userAllows: false, status: .provisional,
            granted: [.sound]),
        // Once answered, no prompt: nothing changes.
        PromptCase(from: .denied, options: [.alert], userAllows: true, status: .denied, granted: [.sound]),
        PromptCase(
            from: .authorized, options: [.alert, .badge, .criticalAlert], userAllows: false, status: .authorized,
            granted: [.sound]),
        PromptCase(from: .ephemeral, options: [.alert], userAllows: false, status: .ephemeral, granted: [.sound]),
    ]

    @Test(arguments: promptCases)
    func requestAuthorization(_ item: PromptCase) {
        var center = SimulatedNotificationCenter(
            timeZone: .utc, authorizationStatus: item.from, grantedOptions: [.sound])
        let status = center.requestAuthorization(options: item.options, userAllows: item.userAllows)
        #expect(status == item.status)
        #expect(center.authorizationStatus == item.status)
        #expect(center.grantedOptions == item.granted)
    }

    @Test func provisionalFlowDeliversQuietlyThenBannersOnceAuthorized() throws {
        var center = SimulatedNotificationCenter(timeZone: zone("Europe/London"), authorizationStatus: .notDetermined)
        #expect(
            center.requestAuthorization(options: [.alert, .sound, .badge, .provisional], userAllows: false)
                == .provisional)
        try center.add(request("daily", daily(9, 0)), at: at("2027-05-01T00:00:00Z"))
        let first = center.fireDue(through: at("2027-05-01T23:00:00Z"))
        #expect(first.map(\.presentation) == [.quiet])
        #expect(center.requestAuthorization(options: [.alert, .sound, .badge], userAllows: true) == .authorized)
        let second = center.fireDue(through: at("2027-05-02T23:00:00Z"))
        #expect(second.map(\.presentation) == [.banner])
        #expect(center.deliveredNotifications.map(\.presentation) == [.banner])
    }

    @Test func revocationAfterSchedulingSuppressesDelivery() throws {
        var center = SimulatedNotificationCenter(timeZone: .utc)
        try center.add(request("once", .date(base + 60), badge: 3), at: base)
        try center.add(request("hourly", .timeInterval(seconds: 3_600, repeats: true), badge: 1), at: base)
        center.setAuthorizationStatus(.denied)
        #expect(center.pendingNotificationRequests.count == 2)  // pending requests survive revocation

        let delivered = center.fireDue(through: base + 3 * 3_600)
        #expect(delivered.isEmpty)
        #expect(center.deliveredNotifications.isEmpty)
        #expect(center.suppressedByAuthorizationCount == 4)
        #expect(center.deliveredCount == 0)
        #expect(center.badgeCount == 0)
        // Consumed: the one-shot is gone, the repeating one re-armed.
        #expect(center.pendingIdentifiers == ["hourly"])
        #expect(center.nextFireInstant == base + 4 * 3_600)

        // The user turns notifications back on in Settings.
        center.setAuthorizationStatus(.authorized)
        let after = center.fireDue(through: base + 4 * 3_600)
        #expect(after.map(\.request.identifier) == ["hourly"])
        #expect(center.suppressedByAuthorizationCount == 4)
        #expect(center.badgeCount == 1)
    }

    @Test func grantingInSettingsAfterDenialUsesDefaultOptions() throws {
        var center = SimulatedNotificationCenter(timeZone: .utc, authorizationStatus: .notDetermined)
        _ = center.requestAuthorization(options: [.alert, .badge], userAllows: false)
        #expect(center.grantedOptions.isEmpty)
        center.setAuthorizationStatus(.authorized)
        #expect(center.grantedOptions == [.alert, .sound, .badge])
        center.setAuthorizationStatus(.authorized, grantedOptions: [.alert])
        #expect(center.grantedOptions == [.alert])
        try center.add(request("x", .date(base + 60)), at: base)
    }

    @Test func optionsRawValuesMatchApple() {
        #expect(AuthorizationOptions.badge.rawValue == 1)
        #expect(AuthorizationOptions.sound.rawValue == 2)
        #expect(AuthorizationOptions.alert.rawValue == 4)
        #expect(AuthorizationOptions.carPlay.rawValue == 8)
        #expect(AuthorizationOptions.criticalAlert.rawValue == 16)
        #expect(AuthorizationOptions.providesAppNotificationSettings.rawValue == 32)
        #expect(AuthorizationOptions.provisional.rawValue == 64)
        #expect(AuthorizationStatus.allCases.filter(\.allowsNotifications) == [.authorized, .provisional, .ephemeral])
    }
}
