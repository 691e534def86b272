import Delivery
import Foundation
import Models
import Synchronization
import Testing

@testable import EngagementKit

@Suite("EngagementKit: the device's token and permission reach the server")
struct DeviceReporterTests {
    static let now = Instant(secondsSinceEpoch: 1_800_000_000)
    static let first = Data(repeating: 0xab, count: 32)
    static let second = Data(repeating: 0x01, count: 32)
    static var firstHex: String { String(repeating: "ab", count: 32) }
    static var secondHex: String { String(repeating: "01", count: 32) }

    /// A reporter that told the server everything it said at `now`.
    static func settled(
        _ reporter: inout DeviceReporter, userID: String = "ana", token: Data = first,
        permission: AuthorizationStatus = .authorized
    ) {
        for report in reporter.reports(
            userID: userID, pushToken: token, environment: .production, permission: permission, at: now)
        {
            reporter.confirm(report, at: now)
        }
    }

    @Test func aTokenIsLowercaseHex() {
        #expect(DeviceReporter.hex(Data([0x00, 0x0f, 0xa0, 0xff])) == "000fa0ff")
        #expect(DeviceReporter.hex(Data()) == "")
    }

    @Test func aFreshInstallRegistersOnceAndAgainWhenTheRegistrationIsOld() {
        var reporter = DeviceReporter(installation: "install-1", refreshSeconds: 86_400)
        let reports = reporter.reports(
            userID: "ana", pushToken: Self.first, environment: .production, permission: .authorized, at: Self.now)
        #expect(
            reports == [
                .register(userID: "ana", token: Self.firstHex, environment: .production),
                .permission(userID: "ana", allowed: true),
            ])
        Self.settled(&reporter)
        #expect(
            reporter.reports(
                userID: "ana", pushToken: Self.first, environment: .production, permission: .authorized,
                at: Self.now + 86_399
            ).isEmpty)
        #expect(
            reporter.reports(
                userID: "ana", pushToken: Self.first, environment: .production, permission: .authorized,
                at: Self.now + 86_400
            ) == [.register(userID: "ana", token: Self.firstHex, environment: .production)])
        // No token yet (APNs has not answered): nothing of tokens, the permission still.
        let noToken = DeviceReporter(installation: "install-1").reports(
            userID: "ana", pushToken: nil, environment: .production, permission: .denied, at: Self.now)
        #expect(noToken == [.permission(userID: "ana", allowed: false)])
    }

    @Test func aNewTokenIsRegisteredBeforeTheOldOneIsRemoved() {
        var reporter = DeviceReporter(installation: "install-1")
        Self.settled(&reporter)
        let reports = reporter.reports(
            userID: "ana", pushToken: Self.second, environment: .production, permission: .authorized, at: Self.now)
        #expect(
            reports == [
                .register(userID: "ana", token: Self.secondHex, environment: .production),
                .remove(userID: "ana", token: Self.firstHex),
            ])
        // The registration got through, the removal did not: the old token is removed next time.
        reporter.confirm(reports[0], at: Self.now)
        #expect(reporter.state.retiredTokens == [Self.firstHex])
        let next = reporter.reports(
            userID: "ana", pushToken: Self.second, environment: .production, permission: .authorized, at: Self.now)
        #expect(next == [.remove(userID: "ana", token: Self.firstHex)])
        reporter.confirm(next[0], at: Self.now)
        #expect(reporter.state.retiredTokens.isEmpty && reporter.state.pushToken == Self.secondHex)
    }

    @Test func aStateRestoredFromAnotherPhoneNeverRemovesThatPhonesToken() {
        var old = DeviceReporter(installation: "old-phone")
        Self.settled(&old)
        // The backup carries the state; the installation id stays with the old phone.
        var restored = DeviceReporter(state: old.state, installation: "new-phone")
        let reports = restored.reports(
            userID: "ana", pushToken: Self.second, environment: .production, permission: .authorized, at: Self.now)
        #expect(
            reports == [
                .register(userID: "ana", token: Self.secondHex, environment: .production),
                .permission(userID: "ana", allowed: true),
            ])
        for report in reports { restored.confirm(report, at: Self.now) }
        #expect(restored.state.installation == "new-phone" && restored.state.retiredTokens.isEmpty)
        #expect(restored.signOutReports == [.remove(userID: "ana", token: Self.secondHex)])
        // Even when the platform happens to hand out the same token, it is registered again.
        let same = DeviceReporter(state: old.state, installation: "new-phone")
        #expect(
            same.reports(
                userID: "ana", pushToken: Self.first, environment: .production, permission: .authorized, at: Self.now
            ).count == 2)
    }

    @Test func anotherUserSigningInTakesTheTokenAndIsToldThePermission() {
        var reporter = DeviceReporter(installation: "install-1")
        Self.settled(&reporter)
        let reports = reporter.reports(
            userID: "bob", pushToken: Self.first, environment: .production, permission: .authorized, at: Self.now)
        #expect(
            reports == [
                .register(userID: "bob", token: Self.firstHex, environment: .production),
                .permission(userID: "bob", allowed: true),
            ])
    }

    @Test func signingOutRemovesTheTokenAndItsPredecessors() {
        var reporter = DeviceReporter(installation: "install-1")
        Self.settled(&reporter)
        reporter.confirm(.register(userID: "ana", token: Self.secondHex, environment: .production), at: Self.now)
        #expect(
            reporter.signOutReports == [
                .remove(userID: "ana", token: Self.secondHex), .remove(userID: "ana", token: Self.firstHex),
            ])
        for report in reporter.signOutReports { reporter.confirm(report, at: Self.now) }
        #expect(reporter.signOutReports.isEmpty && reporter.state.pushToken == nil)
        #expect(DeviceReporter(installation: "fresh").signOutReports.isEmpty)
    }

    @Test func thePermissionIsReportedWhenWhetherItAllowsChanges() {
        var reporter = DeviceReporter(installation: "install-1")
        func permissionReports(_ status: AuthorizationStatus) -> [DeviceReport] {
            reporter.reports(userID: "ana", pushToken: nil, environment: .production, permission: status, at: Self.now)
        }
        #expect(permissionReports(.notDetermined).isEmpty)  // not asked yet
        #expect(permissionReports(.provisional) == [.permission(userID: "ana", allowed: true)])
        reporter.confirm(.permission(userID: "ana", allowed: true), at: Self.now)
        #expect(permissionReports(.authorized).isEmpty)  // provisional to full: still allowed
        #expect(permissionReports(.ephemeral).isEmpty)
        #expect(permissionReports(.denied) == [.permission(userID: "ana", allowed: false)])
    }

    /// Answers each report with the next status of `statuses` (200 when they run out), recording
    /// what was sent.
    final class ScriptedSender: DeviceReportSender {
        let statuses: Mutex<[Int]>
        let sent = Mutex<[DeviceReport]>([])

        init(_ statuses: [Int]) { self.statuses = Mutex(statuses) }

        func send(_ report: DeviceReport) async throws -> Int {
            sent.withLock { $0.append(report) }
            return statuses.withLock { $0.isEmpty ? 200 : $0.removeFirst() }
        }
    }

    @Test func sendingConfirmsWhatTheServerTookAndStopsAtARefusedToken() async throws {
        var reporter = DeviceReporter(installation: "install-1")
        Self.settled(&reporter)
        let queue = EventQueue(store: InMemoryEventQueueStore(userID: "ana", installation: "install-1"), seed: 1)
        let reports = reporter.reports(
            userID: "ana", pushToken: Self.second, environment: .production, permission: .denied, at: Self.now)
        #expect(reports.count == 3)

        // 403 on the registration: nothing is confirmed, nothing enqueued.
        let refused = ScriptedSender([403])
        #expect(await reporter.send(reports, via: refused, queue: queue, at: Self.now) == .needsToken)
        #expect(reporter.state.pushToken == Self.firstHex)
        #expect(try await queue.count() == 0)

        // Registered; the old token is gone already (404); the permission goes into the queue.
        let sender = ScriptedSender([201, 404])
        #expect(await reporter.send(reports, via: sender, queue: queue, at: Self.now) == .sent)
        #expect(sender.sent.withLock { $0 } == Array(reports.prefix(2)))
        #expect(reporter.state.pushToken == Self.secondHex && reporter.state.retiredTokens.isEmpty)
        #expect(reporter.state.permissionAllowed == false)
        #expect(try await queue.count() == 1)

        // A 500 leaves the rest for next time; another user's queue takes no permission of ana's.
        let failing = ScriptedSender([500])
        let again = [DeviceReport.register(userID: "ana", token: Self.firstHex, environment: .sandbox)]
        #expect(await reporter.send(again, via: failing, queue: queue, at: Self.now) == .failed)
        #expect(reporter.state.pushToken == Self.secondHex)
        let bobs = EventQueue(store: InMemoryEventQueueStore(userID: "bob", installation: "install-1"), seed: 1)
        let permission = [DeviceReport.permission(userID: "ana", allowed: true)]
        #expect(await reporter.send(permission, via: sender, queue: bobs, at: Self.now) == .failed)
        #expect(try await bobs.count() == 0)
    }
}
