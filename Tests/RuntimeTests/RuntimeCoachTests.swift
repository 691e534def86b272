import Content
import Engagement
import Foundation
import Models
import Runtime
import Storage
import Synchronization
import TestSupport
import Testing

/// A coach that answers every request with `answer`, or throws, and counts what it was asked.
private final class CountingCoach: CoachEngine {
    let answer: String?
    let requests = Mutex<[CoachRequest]>([])

    init(answer: String?) { self.answer = answer }

    func generate(_ request: CoachRequest) async throws -> CoachResponse {
        requests.withLock { $0.append(request) }
        guard let answer else { throw CoachFailure(reason: "quota exceeded") }
        return CoachResponse(text: answer)
    }
}

@Suite("Engine runtime: the coach")
struct RuntimeCoachTests {
    static let start = Instant(iso8601: "2027-03-27T22:00:00Z")!

    func greetingPayloads(_ store: InMemoryEngagementStore) throws -> [String] {
        try store.pendingOutbox(userID: "u1").filter { $0.requestID.rawValue.hasPrefix("morningGreeting.") }.map(
            \.payload.storedText)
    }

    @Test func theCoachsCopyReplacesTheTemplateInTheOutbox() async throws {
        let store = InMemoryEngagementStore()
        let coach = CountingCoach(answer: "Sunrise run?|A fresh morning for a few easy miles.")
        // A deadline no loaded test machine reaches: this test is about where the copy goes.
        var content = bundledContent
        content.deadlineMillis = 600_000
        let runtime = EngineRuntime(store: store, clock: ManualClock(Self.start), content: content, coach: coach)
        try await runtime.putUser(profile())
        await runtime.coachAnswersSettled()
        #expect(try greetingPayloads(store).contains { $0.contains("Sunrise run?") })
        let asked = coach.requests.withLock { $0 }
        #expect(!asked.isEmpty)
        #expect(asked.allSatisfy { EngineConfiguration().coachKinds.contains($0.kind) })
    }

    @Test func aFailingCoachLeavesTheTemplateCopy() async throws {
        let store = InMemoryEngagementStore()
        let coach = CountingCoach(answer: nil)
        let runtime = EngineRuntime(
            store: store, clock: ManualClock(Self.start), content: bundledContent, coach: coach)
        try await runtime.putUser(profile())
        let before = try greetingPayloads(store)
        #expect(!before.isEmpty)
        await runtime.coachAnswersSettled()
        #expect(!coach.requests.withLock { $0 }.isEmpty)
        #expect(try greetingPayloads(store).allSatisfy { !$0.contains("quota") })
        #expect(try greetingPayloads(store).count == before.count)
    }
}
