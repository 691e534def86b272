import Foundation
import Logging
import Models
import PostgresStore
import Runtime
import Storage
import Synchronization
import Testing

@testable import engaged

/// The worker's transport over its claims (`ClaimedTransport`): an alert withheld because the
/// user's quiet hours hold now stays pending (the worker was held up after its claim, and the
/// next claim defers it to their end); every other report goes on to be completed.
@Suite("engaged worker: the claim's transport")
struct ClaimedTransportTests {
    /// A transport that answers every row with `report`, counting its calls.
    final class Answering: ChannelTransport {
        let report: SendReport
        private let calls = Mutex(0)

        init(_ report: SendReport) { self.report = report }

        var performed: Int { calls.withLock { $0 } }

        func perform(_ row: OutboxRow) async throws -> SendReport {
            calls.withLock { $0 += 1 }
            return report
        }
    }

    static let now = Instant(iso8601: "2027-03-01T23:00:00Z")!

    static let row: OutboxRow = {
        let request = NotificationRequest(
            identifier: "a", content: NotificationContent(kind: .workoutReminder, title: "A", body: "Body"),
            trigger: .date(now))
        return OutboxRow(
            key: OutboxKey.make("u1", request.identifier, now, .push), userID: "u1", requestID: request.identifier,
            dueAt: now, payload: .alert(request))
    }()

    /// The transport over `base`. Its queue never connects: a row it did not claim is not looked up.
    static func transport(over base: Answering) throws -> ClaimedTransport {
        let pool = PostgresPool(
            url: try PostgresURL("postgres://engaged@127.0.0.1:1/none"), size: 1, logger: Logger(label: "test"))
        return ClaimedTransport(
            base: base, stats: WorkerStats(workerID: "w"), queue: OutboxQueue(pool: pool, workerID: "w"),
            clock: ManualClock(now))
    }

    @Test("An alert withheld inside quiet hours is thrown back: it stays pending, not completed unsent")
    func quietHoursLeaveItPending() async throws {
        let base = Answering(.withheld(reason: "InQuietHours"))
        let transport = try Self.transport(over: base)
        await #expect(throws: ClaimedTransport.QuietHoursTooClose.self) { try await transport.perform(Self.row) }
        #expect(base.performed == 1)
    }

    @Test(
        "Every other report is passed on, to be completed",
        arguments: [
            SendReport.accepted, .acceptedWithOutdatedBadge, .withheld(reason: "PayloadTooLarge"),
            .refused(reason: "BadDeviceToken"), .failed(reason: "ServiceUnavailable"),
        ])
    func otherReportsPass(_ report: SendReport) async throws {
        let transport = try Self.transport(over: Answering(report))
        #expect(try await transport.perform(Self.row) == report)
    }
}
