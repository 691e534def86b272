import Content
import Models
import Scheduling
import Testing

@testable import Engagement

/// A lapse campaign is named by the UTC day of the last activity, so every active day starts a
/// new one: what the engine kept for an earlier campaign's nudges (the coach's copy, the last
/// traced decision) is dropped when the campaign moves, and the trace is the same as before.
@Suite struct CampaignMemoryTests {
    let london = ZoneRules(identifier: "Europe/London")!
    let t0 = Instant(iso8601: "2027-06-01T09:00:00+01:00")!

    /// Answers every coach request among `effects` with valid copy.
    func answerCoach(_ effects: [Effect], _ engine: inout UserEngine, at now: Instant) {
        for effect in effects {
            guard case .generateContent(let requestID, _) = effect else { continue }
            _ = engine.handle(
                .contentGenerated(
                    requestID: requestID, outcome: .text("Still with you, Ana|A short walk counts.", latencyMillis: 300)
                ),
                at: now)
        }
    }

    func campaignDays(_ ids: [OccurrenceID]) -> Set<Int64> {
        Set(ids.filter { $0.kind == .reEngagement }.map { Int64($0.day) })
    }

    @Test func anEarlierCampaignsCopyAndTraceMemoryAreDropped() {
        var engine = UserEngine(profile: makeProfile(absence: .checkInOnMe), zone: london, now: t0)
        answerCoach(engine.handle(.appLaunched, at: t0), &engine, at: t0 + 1)
        var previous = engine.campaignDay
        for day in 1..<10 {
            let now = t0 + Int64(day) * .secondsPerDay
            answerCoach(engine.handle(.activity(.appOpened(sessionSeconds: 60)), at: now), &engine, at: now + 1)
            let current = engine.campaignDay
            #expect(current == previous + 1)
            let copies = engine.state.copy.coachCopy.entries
            #expect(campaignDays(copies.map(\.id)) == [current], "day \(day)")
            // The coach answered this campaign's nudges: the test holds copy worth keeping.
            #expect(copies.contains { $0.id.kind == .reEngagement && $0.value.copy != nil }, "day \(day)")
            // The previous campaign's cancellations are kept until the next move, no longer.
            #expect(campaignDays(engine.state.plan.lastTraced.entries.map(\.id)).isSubset(of: [previous, current]))
            previous = current
        }
    }

    @Test func theMovedCampaignsNudgesAreStillCancelledAndTraced() throws {
        var engine = UserEngine(profile: makeProfile(absence: .checkInOnMe), zone: london, now: t0)
        let first = engine.handle(.appLaunched, at: t0)
        answerCoach(first, &engine, at: t0 + 1)
        let nudges = first.scheduled.map(\.request.identifier).filter { $0.rawValue.hasPrefix("reEngagement.") }
        try #require(nudges.count == 3)

        let returned = engine.handle(.activity(.appOpened(sessionSeconds: 60)), at: t0 + .secondsPerDay)
        #expect(Set(returned.cancelledIDs).isSuperset(of: nudges))
        let cancelTraces = returned.traces.filter {
            $0.decision == .cancelled && nudges.contains(RequestID($0.requestID))
        }
        #expect(cancelTraces.map(\.requestID).sorted() == nudges.map(\.rawValue).sorted())
        // The next campaign's nudges are planned and the coach is asked for them.
        let asked = returned.compactMap { effect -> RequestID? in
            if case .generateContent(let requestID, _) = effect { requestID } else { nil }
        }
        #expect(asked.filter { $0.rawValue.hasPrefix("reEngagement.") }.count == 3)
        #expect(Set(asked).isDisjoint(with: nudges))
    }
}
