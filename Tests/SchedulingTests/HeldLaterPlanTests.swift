import Models
import Testing

@testable import Scheduling

/// The phone's other copies (`PlanningContext.heldLater`): a pass may move them, but a push is
/// placed around each where the phone holds it, since the phone fires it if it never hears.
@Suite("Planner: a push never takes the room of a copy the phone holds")
struct HeldLaterPlanTests {
    typealias T = PlannerTests
    typealias C = CommittedPlanTests
    static let noon = C.noon

    /// A held lunch reminder at noon and a more valuable candidate of `kind` fifteen minutes
    /// later, under `perHour`, with the reminder held beyond the committed when `held`.
    static func allocate(
        _ kind: NotificationKind, perHour: Int, held: Bool
    ) -> (meal: Candidate, rival: Candidate, allocation: Allocation) {
        let meal = T.candidate(.mealReminder, .meal(.lunch), at: 2 * 3_600, relevance: 0.2)
        let rival = T.candidate(kind, kind.isSocial ? .group(1) : .day, at: 2 * 3_600 + 900, relevance: 0.9)
        var context = T.context(preferences: C.preferences(perHour: perHour), previous: [T.planned(meal)])
        if held { context.heldLater = OccurrenceMap([(meal.id, noon)]) }
        var candidates = [meal, rival]
        Planner.order(&candidates)
        return (meal, rival, Planner.allocate(candidates, context: context))
    }

    static func fireAt(_ id: OccurrenceID, in allocation: Allocation) -> Instant? { C.fireAt(id, in: allocation) }

    @Test func aPushIsPlacedAroundACopyThePhoneHolds() throws {
        #expect(ChannelPolicy.channel(for: .workoutKudos) == .remote)
        let (meal, push, allocation) = Self.allocate(.workoutKudos, perHour: 1, held: true)
        #expect(Self.fireAt(meal.id, in: allocation) == Self.noon)
        // An hour after the copy, or folded into the kind's digest: never beside it.
        let outcome = allocation.decisions.first { $0.candidate.id == push.id }?.outcome
        if let pushAt = Self.fireAt(push.id, in: allocation) {
            #expect(pushAt >= Self.noon + 3_600)
        } else {
            #expect(outcome == .fold(reason: .capPerHour), "\(String(describing: outcome))")
        }
    }

    @Test func withoutACopyHeldThePushTakesTheHour() {
        let (meal, push, allocation) = Self.allocate(.workoutKudos, perHour: 1, held: false)
        #expect(Self.fireAt(push.id, in: allocation) == Self.noon + 900)
        #expect(Self.fireAt(meal.id, in: allocation) != Self.noon)
    }

    @Test func aLocalCandidateMayStillMoveAHeldCopy() {
        // The phone hears of the move before the copy's time, or fires the copy and not the
        // greeting, which it would only hold after the same pull: never both.
        #expect(ChannelPolicy.channel(for: .morningGreeting) == .local)
        let (meal, greeting, allocation) = Self.allocate(.morningGreeting, perHour: 1, held: true)
        #expect(Self.fireAt(greeting.id, in: allocation) == Self.noon + 900)
        #expect(Self.fireAt(meal.id, in: allocation) != Self.noon)
    }

    @Test func aCopyPlacedAgainAtItsInstantCountsOnceForThePush() {
        // The copy is worth more and placed first, where the phone holds it; two an hour leave
        // room for the push beside it, counted once.
        let meal = T.candidate(.mealReminder, .meal(.lunch), at: 2 * 3_600, relevance: 0.9)
        let push = T.candidate(.workoutKudos, .group(1), at: 2 * 3_600 + 900, relevance: 0.2)
        var context = T.context(preferences: C.preferences(perHour: 2), previous: [T.planned(meal)])
        context.heldLater = OccurrenceMap([(meal.id, Self.noon)])
        var candidates = [meal, push]
        Planner.order(&candidates)
        #expect(candidates.map(\.id) == [meal.id, push.id])
        let allocation = Planner.allocate(candidates, context: context)
        #expect(Self.fireAt(meal.id, in: allocation) == Self.noon)
        #expect(Self.fireAt(push.id, in: allocation) == Self.noon + 900)
    }

    /// A committed copy whose candidate is gone (the engine no longer proposes it) still fires
    /// on a phone that does not hear in time: a push is placed around it, a local one is not.
    @Test func aCommittedCopyWithoutItsCandidateStillHoldsAPushBack() {
        let meal = T.candidate(.mealReminder, .meal(.lunch), at: 2 * 3_600)
        let push = T.candidate(.workoutKudos, .group(1), at: 2 * 3_600 + 900, relevance: 0.9)
        let greeting = T.candidate(.morningGreeting, at: 2 * 3_600 + 900, relevance: 0.9)
        var context = T.context(preferences: C.preferences(perHour: 1), previous: [T.planned(meal)])
        context.committed = OccurrenceMap([(meal.id, Self.noon)])
        let pushed = Planner.allocate([push], context: context)
        #expect(Self.fireAt(push.id, in: pushed).map { $0 >= Self.noon + 3_600 } ?? true)
        #expect(Self.fireAt(push.id, in: pushed) != Self.noon + 900)
        let local = Planner.allocate([greeting], context: context)
        #expect(Self.fireAt(greeting.id, in: local) == Self.noon + 900)
    }
}
