import Models
import Testing

@testable import Engagement

/// A social event id already waiting in a group is counted once (a retried webhook).
@Suite("Social duplicates")
struct SocialDuplicateTests {
    static func kudos(_ id: String, from actor: String = "Ben") -> EngineInput {
        .socialEvent(SocialEvent(id: id, kind: .workoutKudos, actorName: actor, topic: "run", isMutualFriend: true))
    }

    @Test func anIDWaitingInABatchIsCountedOnce() {
        let start = instant("2027-06-01T12:00:00Z")
        // Kudos are batched by default.
        var engine = UserEngine(profile: makeProfile(), zone: ZoneRules(identifier: "Europe/London")!, now: start)
        _ = engine.handle(.appLaunched, at: start)
        // The item's own lines (the re-plan that follows may trace the batch's notification too).
        func lines(_ id: String, _ effects: [Effect]) -> [TraceEntry] { effects.traces.filter { $0.requestID == id } }
        let first = lines("k1", engine.handle(Self.kudos("k1"), at: start + 60))
        #expect(first.map(\.reason) == [.batched])
        let again = engine.handle(Self.kudos("k1", from: "Someone Else"), at: start + 120)
        #expect(lines("k1", again).map(\.reason) == [.duplicateEvent])
        #expect(lines("k1", again).first?.decision == .suppressed)
        #expect(!again.contains { if case .schedule = $0 { true } else { false } })
        let other = lines("k2", engine.handle(Self.kudos("k2"), at: start + 180))
        #expect(other.first?.reason == .batched)
        #expect(other.first?.detail.hasPrefix("batch of 2") == true, "\(other)")
    }
}
