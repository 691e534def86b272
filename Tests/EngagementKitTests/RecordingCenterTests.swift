import Delivery
import Models
import Testing

@testable import EngagementKit

/// `RecordingCenter`: planning against a snapshot of a center and performing the recorded
/// changes on it gives what applying the plan to the center itself gives.
@Suite("EngagementKit: the recording center")
struct RecordingCenterTests {
    /// Performs `operations` on `center`, as the platform adapter does on the real one.
    static func perform(
        _ operations: [RecordingCenter.Operation], on center: inout SimulatedNotificationCenter, at now: Instant
    ) {
        for operation in operations {
            switch operation {
            case .setCategories(let categories): center.setNotificationCategories(categories)
            case .add(let request): try? center.add(request, at: now)
            case .removePending(let identifiers): center.removePendingNotificationRequests(withIdentifiers: identifiers)
            case .removeAllPending: center.removeAllPendingNotificationRequests()
            case .removeDelivered(let identifiers): center.removeDeliveredNotifications(withIdentifiers: identifiers)
            case .removeAllDelivered: center.removeAllDeliveredNotifications()
            case .setBadge(let count): center.setBadgeCount(count)
            }
        }
    }

    @Test(arguments: [1, 2, 3] as [UInt64])
    func replayingTheRecordedChangesEqualsApplyingThePlanDirectly(seed: UInt64) throws {
        var random = SeededGenerator(seed: seed)
        let zone = PlanSyncTests.berlin
        var direct = SimulatedNotificationCenter(timeZone: zone)
        // The app's own requests, on both.
        for index in 0..<Int(random.next() % 20) {
            try direct.add(
                NotificationRequest(
                    identifier: "app.\(index)", content: NotificationContent(kind: .hydration, title: "Own", body: "x"),
                    trigger: .date(PlanSyncTests.now + Int64(index + 1) * 900)), at: PlanSyncTests.now)
        }
        var real = direct
        var directSync = PlanSync()
        var replayedSync = PlanSync()
        for version in 1...12 {
            let now = PlanSyncTests.now + Int64(version) * 60
            let entries = (0..<Int(random.next() % 70)).map { index in
                PlanSyncTests.entry(
                    "p\(random.next() % 80)", in: Int64(index + 2) * 15,
                    title: random.next() % 3 == 0 ? "New" : "Lunch",
                    repeats: random.next() % 5 == 0)
            }
            let answer = PlanSyncTests.plan(version, entries.sorted { $0.nextFireAt < $1.nextFireAt })
            let directOutcome = directSync.apply(answer, to: &direct, at: now)
            var recording = RecordingCenter(
                zone: zone, authorizationStatus: real.authorizationStatus,
                pending: real.pendingNotificationRequests.map(\.request), categories: real.notificationCategories,
                at: now)
            let recordedOutcome = replayedSync.apply(answer, to: &recording, at: now)
            Self.perform(recording.operations, on: &real, at: now)
            #expect(recordedOutcome == directOutcome, "version \(version)")
            #expect(
                real.pendingNotificationRequests.map(\.request) == direct.pendingNotificationRequests.map(\.request))
            #expect(replayedSync.state == directSync.state)
        }
    }

    @Test func theChangesAreRecordedInOrderAndNothingWhenNothingChanges() {
        let now = PlanSyncTests.now
        var recording = RecordingCenter(
            zone: PlanSyncTests.berlin, authorizationStatus: .authorized, pending: [], categories: [], at: now)
        var sync = PlanSync()
        _ = sync.apply(PlanSyncTests.plan(1, [PlanSyncTests.entry("a", in: 60)]), to: &recording, at: now)
        #expect(recording.operations.count == 2)
        #expect(recording.operations.first == .setCategories(NotificationCategory.all))
        #expect(recording.operations.last == .add(PlanSyncTests.entry("a", in: 60).request))
        var again = RecordingCenter(
            zone: PlanSyncTests.berlin, authorizationStatus: .authorized,
            pending: recording.pendingNotificationRequests.map(\.request), categories: NotificationCategory.all, at: now
        )
        _ = sync.apply(PlanSyncTests.plan(1, [PlanSyncTests.entry("a", in: 60)]), to: &again, at: now)
        #expect(again.operations.isEmpty)
    }

    @Test func aCenterThatRefusesPermissionRefusesTheAddsItRecords() {
        let now = PlanSyncTests.now
        var recording = RecordingCenter(
            zone: PlanSyncTests.berlin, authorizationStatus: .denied, pending: [], categories: [], at: now)
        var sync = PlanSync()
        let outcome = sync.apply(PlanSyncTests.plan(1, [PlanSyncTests.entry("a", in: 60)]), to: &recording, at: now)
        guard case .applied(_, let refused, _) = outcome else {
            Issue.record("expected applied, got \(outcome)")
            return
        }
        #expect(refused == ["a": .notificationsNotAllowed])
        #expect(!recording.operations.contains { if case .add = $0 { true } else { false } })
    }
}
