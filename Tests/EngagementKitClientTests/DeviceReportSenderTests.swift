import Delivery
import EngagementKit
import EngagementKitClient
import Foundation
import HTTPTypes
import Models
import Testing

/// `EngagedDeviceReportSender`, with the reporter it serves: registrations and removals on their
/// routes with the user's token, answered by status.
@Suite("EngagementKitClient: device reports")
struct DeviceReportSenderTests {
    static let now = Instant(iso8601: "2027-03-01T06:00:00Z")!
    static let token = String(repeating: "5a", count: 32)

    @Test func aRegistrationAndARemovalGoToTheirRoutes() async throws {
        let server = FakeEngaged()
        let sender = EngagedDeviceReportSender(connection(to: server))
        #expect(try await sender.send(.register(userID: "ana", token: Self.token, environment: .sandbox)) == 201)
        #expect(try await sender.send(.remove(userID: "ana", token: "0f0f")) == 204)
        let (register, remove) = (server.requests[0], server.requests[1])
        #expect(register.request.method == .post && register.request.path == "/v1/users/ana/devices")
        #expect(
            String(decoding: register.body, as: UTF8.self)
                == #"{"environment":"sandbox","token":"\#(Self.token)"}"#)
        #expect(remove.request.method == .delete && remove.request.path == "/v1/users/ana/devices/0f0f")
        #expect([register, remove].allSatisfy { $0.bearer == "good" })
    }

    @Test func theReporterSendsThroughItAndConfirmsWhatTheServerTook() async throws {
        let server = FakeEngaged()
        let reporter = DeviceReporter(installation: "phone-1")
        let queue = EventQueue(store: InMemoryEventQueueStore(userID: "ana", installation: "phone-1"), seed: 7)
        let reports = await reporter.reports(
            userID: "ana", pushToken: Data(repeating: 0x5a, count: 32), environment: .production,
            permission: .authorized, at: Self.now)
        let outcome = await reporter.send(
            reports, via: EngagedDeviceReportSender(connection(to: server)), queue: queue, at: Self.now)
        #expect(outcome == .sent)
        let state = await reporter.state
        #expect(state.pushToken == Self.token && state.registeredAt == Self.now)
        #expect(server.requests.map(\.operationID) == ["registerDevice"])
        // The permission went into the queue, as an event.
        #expect(try await queue.count() == 1)
    }

    @Test(arguments: [
        (["fresh"], "fresh" as String?, DeviceSendOutcome.sent, ["expired", "fresh"]),
        (["fresh"], nil, .needsToken, ["expired"]),
        (["other"], "fresh", .needsToken, ["expired", "fresh"]),
    ])
    func aRefusedTokenIsRenewedOnce(
        valid: [String], renewed: String?, outcome: DeviceSendOutcome, bearers: [String]
    ) async throws {
        let server = FakeEngaged(validTokens: Set(valid))
        let reporter = DeviceReporter(installation: "phone-1")
        let queue = EventQueue(store: InMemoryEventQueueStore(userID: "ana", installation: "phone-1"), seed: 7)
        let reports = [DeviceReport.register(userID: "ana", token: Self.token, environment: .production)]
        let sender = EngagedDeviceReportSender(connection(to: server, token: "expired", renewed: renewed))
        #expect(await reporter.send(reports, via: sender, queue: queue, at: Self.now) == outcome)
        #expect(server.requests.map(\.bearer) == bearers)
    }

    /// A token another user holds (409), a server error with an HTML page, no answer: the
    /// registration is said again next time.
    @Test(arguments: [
        FakeEngaged.Scripted.problem(.conflict), .answer(.badGateway, body: "<html/>", contentType: "text/html"),
        .noAnswer,
    ])
    func aFailedRegistrationIsReportedFailed(_ scripted: FakeEngaged.Scripted) async throws {
        let server = FakeEngaged(script: ["registerDevice": [scripted]])
        let reporter = DeviceReporter(installation: "phone-1")
        let queue = EventQueue(store: InMemoryEventQueueStore(userID: "ana", installation: "phone-1"), seed: 7)
        let reports = [DeviceReport.register(userID: "ana", token: Self.token, environment: .production)]
        let sender = EngagedDeviceReportSender(connection(to: server))
        #expect(await reporter.send(reports, via: sender, queue: queue, at: Self.now) == .failed)
        #expect(await reporter.state.pushToken == nil)
    }

    @Test func aRemovalOfATokenTheServerNoLongerHasIsAnswered404() async throws {
        let server = FakeEngaged(script: ["removeDevice": [.problem(.notFound)]])
        let status = try await EngagedDeviceReportSender(connection(to: server)).send(
            .remove(userID: "ana", token: "0f0f"))
        #expect(status == 404)
    }

    @Test func aPermissionIsNeverSentAsADeviceReport() async {
        let server = FakeEngaged()
        await #expect(throws: EngagedDeviceReportSender.ReportIsAnEvent.self) {
            try await EngagedDeviceReportSender(connection(to: server)).send(.permission(userID: "ana", allowed: true))
        }
        #expect(server.requests.isEmpty)
    }
}
