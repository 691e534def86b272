import EngagedAPI
import EngagementKit
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Models
import Runtime
import Testing

@testable import engaged

/// The simulator measures what a pull carries with `PlanWire(plan).encodedAnswer()`, without a
/// server: these hold it to the bytes `engaged` sends, in two halves. The wire form a plan
/// becomes is the server's, field for field; and the server's body is that wire form as
/// `encodedAnswer` encodes it, byte for byte.
@Suite("engaged plan bytes")
struct PlanBytesTests {
    static let berlinZone = ZoneRules(identifier: "Europe/Berlin")!
    static let at = Instant(iso8601: "2027-03-01T10:00:00Z")!

    /// A plan with every shape a request takes: a subtitle and none, a sound and none, a date,
    /// a daily series and an interval, withdrawals and none.
    static var plan: LocalPlan {
        func entry(
            _ id: Models.RequestID, _ kind: NotificationKind, subtitle: String?, sound: NotificationSound?,
            trigger: NotificationTrigger, withdrawnBy: [Withdrawal]
        ) -> LocalPlan.Entry {
            let content = NotificationContent(
                kind: kind, title: "Lunch \"time\"", subtitle: subtitle, body: "Log it / now ü", sound: sound)
            return LocalPlan.Entry(
                request: NotificationRequest(identifier: id, content: content, trigger: trigger),
                nextFireAt: at + 3_600, withdrawnBy: withdrawnBy)
        }
        return LocalPlan(
            version: 1_803_952_800, zone: berlinZone, horizonEnd: at + 60 * 3_600,
            entries: [
                entry(
                    "mealReminder.2027-03-01.lunch", .mealReminder, subtitle: "Half past", sound: .reminder,
                    trigger: .date(at + 3_600), withdrawnBy: [Withdrawal(.mealLogged(.lunch), from: at - 600)]),
                entry(
                    "hydration.daily.1300", .hydration, subtitle: nil, sound: nil,
                    trigger: .calendar(.daily(at: LocalTimeOfDay(minutesSinceMidnight: 13 * 60)), repeats: true),
                    withdrawnBy: []),
                entry(
                    "checkInReminder.2027-03-01.r1-1200", .checkInReminder, subtitle: nil, sound: .urgent,
                    trigger: .timeInterval(seconds: 3_600, repeats: false),
                    withdrawnBy: [Withdrawal(.checkInCompleted, from: at, until: at + 7_200)]),
            ])
    }

    /// `plan` as a delta from an earlier version: its first request, and two removed.
    static var delta: LocalPlan {
        var delta = plan
        delta.entries = [plan.entries[0]]
        delta.delta = LocalPlan.Delta(since: 1_803_949_200, removed: ["hydration.daily.0700", "mood.2027-03-01"])
        return delta
    }

    @Test(arguments: [plan, delta])
    func aPlansWireFormIsTheServersFieldForField(plan: LocalPlan) throws {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        let server = try encoder.encode(try Components.Schemas.LocalPlan(plan))
        #expect(try JSONDecoder().decode(PlanWire.self, from: server) == PlanWire(plan))
        #expect(PlanWire(plan).requests.allSatisfy { $0.withdrawnBy != nil }, "an empty list, not absent")
        #expect((PlanWire(plan).since == nil) == (plan.delta == nil))
        // The kit comes to the server's digest from the JSON, for every shape of request.
        var served = ServedPlans()
        let whole = served.answer(Self.plan, since: nil, at: Self.at)
        let read = try ServerPlan.decode(try encoder.encode(try Components.Schemas.LocalPlan(whole)))
        #expect(read.unreadable.isEmpty && read.digest != nil && read.requestsDigest == read.digest)
    }

    @Test func theServersAnswerIsItsWireFormByteForByte() async throws {
        let server = try await TestServer()
        try await server.run { client in
            #expect(try await client.send(.put, "/v1/users/ana", berlin).status == .created)
            let answer = try await client.send(.get, "/v1/users/ana/plan")
            #expect(answer.status == .ok)
            let bytes = Array(answer.body.readableBytesView)
            let wire = try JSONDecoder().decode(PlanWire.self, from: Data(bytes))
            #expect(!wire.requests.isEmpty)
            #expect(try wire.encodedAnswer() == bytes, "\(answer.text.prefix(400))")
            // The kit comes to the server's digest from the plan it reads.
            let read = try ServerPlan.decode(Data(bytes))
            #expect(read.digest != nil && read.requestsDigest == read.digest)
            // A delta: lunch logged removes today's lunch reminder.
            #expect(
                try await client.send(.post, "/v1/users/ana/events", #"{"type": "mealLogged", "meal": "lunch"}"#).status
                    == .accepted)
            let delta = try await client.send(.get, "/v1/users/ana/plan?since=\(wire.version)")
            let deltaBytes = Array(delta.body.readableBytesView)
            let deltaWire = try JSONDecoder().decode(PlanWire.self, from: Data(deltaBytes))
            #expect(deltaWire.since == wire.version && deltaWire.removed?.isEmpty == false)
            #expect(deltaWire.digest != nil && deltaWire.digest != wire.digest)
            #expect(try deltaWire.encodedAnswer() == deltaBytes, "\(delta.text.prefix(400))")
        }
    }
}
