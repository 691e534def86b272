import Delivery
import Foundation
import Models
import Synchronization
import Testing

@testable import EngagementKit

@Suite("EngagementKit: the device's token, permission and zone reach the server")
struct DeviceReporterTests {
    static let now = Instant(secondsSinceEpoch: 1_800_000_000)
    static let first = Data(repeating: 0xab, count: 32)
    static let second = Data(repeating: 0x01, count: 32)
    static let firstHex = String(repeating: "ab", count: 32)
    static let secondHex = String(repeating: "01", count: 32)

    /// What `reporter` would say for ana with `token` and `permission` at `instant`.
    static func reports(
        _ reporter: DeviceReporter, userID: UserID = "ana", token: Data? = first,
        permission: AuthorizationStatus = .authorized, at instant: Instant = now
    ) async -> [DeviceReport] {
        await reporter.reports(
            userID: userID, pushToken: token, environment: .production, permission: permission, at: instant)
    }

    /// Confirms everything the reporter would say, as if the server took it all.
    static func settle(
        _ reporter: DeviceReporter, userID: UserID = "ana", token: Data = first,
        permission: AuthorizationStatus = .authorized
    ) async {
        for report in await reports(reporter, userID: userID, token: token, permission: permission) {
            await reporter.confirm(report, at: now)
        }
    }

    @Test func aTokenIsLowercaseHex() {
        #expect(DeviceReporter.hex(Data([0x00, 0x0f, 0xa0, 0xff])) == "000fa0ff")
        #expect(DeviceReporter.hex(Data()) == "")
    }

    @Test func aFreshInstallRegistersOnceAndAgainWhenTheRegistrationIsOld() async {
        let reporter = DeviceReporter(installation: "install-1", refreshSeconds: 86_400)
        #expect(
            await Self.reports(reporter) == [
                .register(userID: "ana", token: Self.firstHex, environment: .production),
                .permission(userID: "ana", allowed: true),
            ])
        await Self.settle(reporter)
        #expect(await Self.reports(reporter, at: Self.now + 86_399).isEmpty)
        let register = DeviceReport.register(userID: "ana", token: Self.firstHex, environment: .production)
        #expect(await Self.reports(reporter, at: Self.now + 86_400) == [register])
        // A registration dated after the device's clock (it was set back) is not fresh either.
        #expect(await Self.reports(reporter, at: Self.now - 60) == [register])
        // No token yet (APNs has not answered): nothing of tokens, the permission still.
        let fresh = DeviceReporter(installation: "install-1")
        #expect(
            await Self.reports(fresh, token: nil, permission: .denied) == [.permission(userID: "ana", allowed: false)])
    }

    @Test func aNewTokenIsRegisteredBeforeTheOldOneIsRemoved() async {
        let reporter = DeviceReporter(installation: "install-1")
        await Self.settle(reporter)
        let reports = await Self.reports(reporter, token: Self.second)
        #expect(
            reports == [
                .register(userID: "ana", token: Self.secondHex, environment: .production),
                .remove(userID: "ana", token: Self.firstHex),
            ])
        // The registration got through, the removal did not: the old token is removed next time.
        await reporter.confirm(reports[0], at: Self.now)
        #expect(await reporter.state.retiredTokens == [Self.firstHex])
        let next = await Self.reports(reporter, token: Self.second)
        #expect(next == [.remove(userID: "ana", token: Self.firstHex)])
        await reporter.confirm(next[0], at: Self.now)
        #expect(await reporter.state.retiredTokens.isEmpty)
        #expect(await reporter.state.pushToken == Self.secondHex)
    }

    @Test func aTokenHandedBackIsRegisteredAndNeverRemoved() async {
        let reporter = DeviceReporter(installation: "install-1")
        await Self.settle(reporter)
        await reporter.confirm(.register(userID: "ana", token: Self.secondHex, environment: .production), at: Self.now)
        #expect(await reporter.state.retiredTokens == [Self.firstHex])  // its removal failed
        // The platform hands the first token back: it is registered; the second is the one to go.
        #expect(
            await Self.reports(reporter) == [
                .register(userID: "ana", token: Self.firstHex, environment: .production),
                .remove(userID: "ana", token: Self.secondHex),
            ])
    }

    @Test func aStateRestoredFromAnotherPhoneKeepsNothingOfIt() async {
        let old = DeviceReporter(installation: "old-phone")
        await Self.settle(old)
        // The backup carries the state; the installation id stays with the old phone.
        let restored = DeviceReporter(state: await old.state, installation: "new-phone")
        let reports = await Self.reports(restored, token: Self.second)
        #expect(
            reports == [
                .register(userID: "ana", token: Self.secondHex, environment: .production),
                .permission(userID: "ana", allowed: true),
            ])
        // Only the registration got through: the permission is still to tell, whatever the old
        // phone had told.
        await restored.confirm(reports[0], at: Self.now)
        #expect(await restored.state.installation == "new-phone")
        let restoredState = await restored.state
        #expect(restoredState.permissionAllowed == nil && restoredState.retiredTokens.isEmpty)
        #expect(await Self.reports(restored, token: Self.second) == [.permission(userID: "ana", allowed: true)])
        #expect(await restored.signOutReports == [.remove(userID: "ana", token: Self.secondHex)])
        // Even when the platform happens to hand out the same token, it is registered again.
        let same = DeviceReporter(state: await old.state, installation: "new-phone")
        #expect(await Self.reports(same).count == 2)
    }

    @Test func anotherUserSigningInTakesTheTokenAndIsToldThePermission() async {
        let reporter = DeviceReporter(installation: "install-1")
        await Self.settle(reporter)
        #expect(
            await Self.reports(reporter, userID: "bob") == [
                .register(userID: "bob", token: Self.firstHex, environment: .production),
                .permission(userID: "bob", allowed: true),
            ])
    }

    @Test func signingOutRemovesTheTokensAndTheNextSignInIsToldEverything() async {
        let reporter = DeviceReporter(installation: "install-1")
        await Self.settle(reporter)
        await reporter.confirm(.register(userID: "ana", token: Self.secondHex, environment: .production), at: Self.now)
        let signOut = await reporter.signOutReports
        #expect(
            signOut == [.remove(userID: "ana", token: Self.secondHex), .remove(userID: "ana", token: Self.firstHex)])
        for report in signOut { await reporter.confirm(report, at: Self.now) }
        #expect(await reporter.signOutReports.isEmpty)
        #expect(await reporter.state.pushToken == nil)
        // ana signs in again: the token and the permission are told again.
        #expect(await Self.reports(reporter, token: Self.second).count == 2)
        #expect(await DeviceReporter(installation: "fresh").signOutReports.isEmpty)
    }

    @Test func thePermissionIsReportedWhenWhetherItAllowsChanges() async {
        let reporter = DeviceReporter(installation: "install-1")
        #expect(await Self.reports(reporter, token: nil, permission: .notDetermined).isEmpty)  // not asked yet
        #expect(
            await Self.reports(reporter, token: nil, permission: .provisional) == [
                .permission(userID: "ana", allowed: true)
            ])
        await reporter.confirm(.permission(userID: "ana", allowed: true), at: Self.now)
        #expect(await Self.reports(reporter, token: nil, permission: .authorized).isEmpty)  // still allowed
        #expect(await Self.reports(reporter, token: nil, permission: .ephemeral).isEmpty)
        #expect(
            await Self.reports(reporter, token: nil, permission: .denied) == [
                .permission(userID: "ana", allowed: false)
            ])
    }

    @Test func theTimeZoneIsReportedWhenItDiffersAndGoesThroughTheQueue() async throws {
        let reporter = DeviceReporter(installation: "install-1")
        func zone(_ identifier: String?, _ userID: UserID = "ana") async -> [DeviceReport] {
            await reporter.reports(
                userID: userID, pushToken: nil, environment: .production, permission: .notDetermined,
                timeZone: identifier, at: Self.now)
        }
        // An app whose backend alone writes the zone passes none: nothing to tell.
        #expect(await zone(nil).isEmpty)
        #expect(await zone("Europe/Berlin") == [.timeZone(userID: "ana", identifier: "Europe/Berlin")])
        let queue = EventQueue(store: InMemoryEventQueueStore(userID: "ana", installation: "install-1"), seed: 1)
        let sent = await reporter.send(await zone("Europe/Berlin"), via: ScriptedSender([]), queue: queue, at: Self.now)
        #expect(sent == .sent)
        let queued = try #require(try await queue.store.oldest(limit: 1).first)
        // It says when the phone moved: the server learns what the phone fired in the new zone.
        #expect(
            String(decoding: queued.body, as: UTF8.self)
                == #"{"at":"\#(Self.now.iso8601)","timeZone":"Europe/Berlin","type":"timeZoneChanged"}"#)
        #expect(await reporter.state.timeZone == "Europe/Berlin")
        // Told: not again while it stays; again when the phone moves, and for another user.
        #expect(await zone("Europe/Berlin").isEmpty)
        #expect(await zone("Pacific/Chatham") == [.timeZone(userID: "ana", identifier: "Pacific/Chatham")])
        #expect(await zone("Europe/Berlin", "bob") == [.timeZone(userID: "bob", identifier: "Europe/Berlin")])
        // Another user's queue takes none of ana's.
        let bobs = EventQueue(store: InMemoryEventQueueStore(userID: "bob", installation: "install-1"), seed: 1)
        let refused = await reporter.send(
            [.timeZone(userID: "ana", identifier: "Asia/Tokyo")], via: ScriptedSender([]), queue: bobs, at: Self.now)
        #expect(refused == .failed)
        #expect(try await bobs.count() == 0)
        #expect(await reporter.state.timeZone == "Europe/Berlin")
    }

    @Test func signingOutForgetsTheZoneTold() async {
        let reporter = DeviceReporter(installation: "install-1")
        await Self.settle(reporter)
        await reporter.confirm(.timeZone(userID: "ana", identifier: "Europe/Berlin"), at: Self.now)
        for report in await reporter.signOutReports { await reporter.confirm(report, at: Self.now) }
        #expect(await reporter.state.timeZone == nil)
        let again = await reporter.reports(
            userID: "ana", pushToken: nil, environment: .production, permission: .notDetermined,
            timeZone: "Europe/Berlin", at: Self.now)
        #expect(again == [.timeZone(userID: "ana", identifier: "Europe/Berlin")])
    }

    /// Answers each report with the next status of `statuses` (200 when they run out; nil: no
    /// answer, thrown), recording what was sent.
    final class ScriptedSender: DeviceReportSender {
        struct Offline: Error {}
        let statuses: Mutex<[Int?]>
        let sent = Mutex<[DeviceReport]>([])

        init(_ statuses: [Int?]) { self.statuses = Mutex(statuses) }

        func send(_ report: DeviceReport) async throws -> Int {
            sent.withLock { $0.append(report) }
            guard let status = statuses.withLock({ $0.isEmpty ? 200 : $0.removeFirst() }) else { throw Offline() }
            return status
        }
    }

    @Test func sendingConfirmsWhatTheServerTookAndStopsAtARefusedToken() async throws {
        let reporter = DeviceReporter(installation: "install-1")
        await Self.settle(reporter)
        let queue = EventQueue(store: InMemoryEventQueueStore(userID: "ana", installation: "install-1"), seed: 1)
        let reports = await Self.reports(reporter, token: Self.second, permission: .denied)
        #expect(reports.count == 3)

        // 403 on the registration: nothing is confirmed, nothing enqueued.
        #expect(await reporter.send(reports, via: ScriptedSender([403]), queue: queue, at: Self.now) == .needsToken)
        #expect(await reporter.state.pushToken == Self.firstHex)
        #expect(try await queue.count() == 0)

        // Registered; the old token is gone already (404); the permission goes into the queue.
        let sender = ScriptedSender([201, 404])
        #expect(await reporter.send(reports, via: sender, queue: queue, at: Self.now) == .sent)
        #expect(sender.sent.withLock { $0 } == Array(reports.prefix(2)))
        #expect(await reporter.state.pushToken == Self.secondHex)
        let state = await reporter.state
        #expect(state.retiredTokens.isEmpty && state.permissionAllowed == false)
        #expect(try await queue.count() == 1)

        // Another user's queue takes no permission of ana's.
        let bobs = EventQueue(store: InMemoryEventQueueStore(userID: "bob", installation: "install-1"), seed: 1)
        let permission = [DeviceReport.permission(userID: "ana", allowed: true)]
        #expect(await reporter.send(permission, via: sender, queue: bobs, at: Self.now) == .failed)
        #expect(try await bobs.count() == 0)
    }

    @Test(arguments: [409, 500, nil] as [Int?])
    func aFailedRegistrationHoldsBackTheRemovalsButNotThePermission(status: Int?) async throws {
        let reporter = DeviceReporter(installation: "install-1")
        await Self.settle(reporter)
        let queue = EventQueue(store: InMemoryEventQueueStore(userID: "ana", installation: "install-1"), seed: 1)
        let reports = await Self.reports(reporter, token: Self.second, permission: .denied)
        let sender = ScriptedSender([status])
        #expect(await reporter.send(reports, via: sender, queue: queue, at: Self.now) == .failed)
        // The old token stays on the server while the new one is not in; the permission went.
        #expect(sender.sent.withLock { $0 } == [reports[0]])
        #expect(await reporter.state.pushToken == Self.firstHex)
        #expect(try await queue.count() == 1)
        #expect(await Self.reports(reporter, token: Self.second, permission: .denied) == Array(reports.prefix(2)))
    }
}
