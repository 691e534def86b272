import Models
import Scheduling
import TestSupport
import Testing

@testable import Engagement

/// The phone's other copies (`UserEngine.heldLater`) reach only the pushes' rules: a change of
/// them leaves the plan when no copy that differs lies where a push's rules read the ledger
/// (`heldLaterChangesLeaveThePlan`, `pushReadSpan`).
@Suite struct HeldLaterChangeTests {
    func engine(in zone: String) -> UserEngine {
        UserEngine(
            profile: makeProfile(zone: zone), zone: ZoneRules(identifier: zone)!,
            now: instant("2027-10-29T06:00:00Z"))
    }

    /// The span is the local days from the planned time to the deadline, and the hour each side.
    @Test func theSpanCoversTheLocalDaysAndAnHourEachSide() {
        // London's last Sunday of October lasts 25 hours: midnight BST to midnight GMT.
        let london = engine(in: "Europe/London")
        #expect(
            london.pushReadSpan(plannedAt: instant("2027-10-31T12:00:00Z"), deadline: instant("2027-10-31T13:00:00Z"))
                == instant("2027-10-30T23:00:00Z")...instant("2027-11-01T00:00:00Z"))
        // Kathmandu (+05:45): half an hour after local midnight, the hour before reaches into
        // the day before.
        let kathmandu = engine(in: "Asia/Kathmandu")
        let afterMidnight = instant("2027-03-09T18:45:00Z")
        #expect(
            kathmandu.pushReadSpan(plannedAt: afterMidnight, deadline: afterMidnight + 600)
                == afterMidnight - 3_600...instant("2027-03-10T18:15:00Z"))
        // Kiritimati (+14), across the date line: half an hour before local midnight, the hour
        // after reaches into the next day.
        let kiritimati = engine(in: "Pacific/Kiritimati")
        let beforeMidnight = instant("2027-03-10T09:30:00Z")
        #expect(
            kiritimati.pushReadSpan(plannedAt: beforeMidnight - 3_600, deadline: beforeMidnight)
                == instant("2027-03-09T10:00:00Z")...beforeMidnight + 3_600)
        // A deadline at local noon two days on: the span ends at that day's local midnight.
        #expect(
            kiritimati.pushReadSpan(plannedAt: beforeMidnight, deadline: instant("2027-03-11T22:00:00Z"))
                == instant("2027-03-09T10:00:00Z")...instant("2027-03-12T10:00:00Z"))
    }

    /// A copy that differs far from every push leaves the plan; one inside a push's span, or a
    /// pass with no candidates kept, does not.
    @Test func onlyACopyWhereAPushReadsMovesThePlan() throws {
        let t0 = instant("2027-03-01T07:00:00Z")
        var served = engineWithPulledPlan(in: ZoneRules(identifier: "Europe/London")!, at: t0)
        _ = served.handle(
            .socialEvent(
                SocialEvent(id: "s1", kind: .workoutKudos, actorName: "Ben", topic: "run", isMutualFriend: true)),
            at: t0 + 60)
        let order = try #require(served.state.plan.lastOrder)
        let pushes = order.filter { ChannelPolicy.channel(for: $0.kind) == .remote }
        #expect(!pushes.isEmpty, "a push among the candidates")
        let now = t0 + 120
        let spans = pushes.map {
            served.pushReadSpan(plannedAt: $0.plannedAt, deadline: max($0.plannedAt + $0.stalenessSeconds, now + 1))
        }
        let latest = try #require(spans.map(\.upperBound).max())
        let id = OccurrenceID(.morningGreeting, daysSinceEpoch: 20_000)
        let far = OccurrenceMap([(id, latest + 3_600)])
        let near = OccurrenceMap([(id, spans[0].lowerBound + 60)])
        let none = OccurrenceMap<Instant>()
        #expect(served.heldLaterChangesLeaveThePlan(from: none, to: far, at: now))
        #expect(served.heldLaterChangesLeaveThePlan(from: far, to: none, at: now))
        #expect(!served.heldLaterChangesLeaveThePlan(from: none, to: near, at: now))
        // The same copy at another instant differs at both.
        #expect(
            !served.heldLaterChangesLeaveThePlan(from: far, to: OccurrenceMap([(id, spans[0].upperBound)]), at: now))
        served.state.plan.lastOrder = nil
        #expect(!served.heldLaterChangesLeaveThePlan(from: none, to: far, at: now))
    }
}

extension HeldLaterChangeTests {
    /// End to end on a server's engine whose only push is a lapse nudge days ahead: the phone's
    /// copies come to be held later (it hears by a sync), then a pull takes one away; each next
    /// input skips the pass, a full pass would change nothing, and an engine restored from the
    /// snapshot taken before the input decides the same.
    @Test func heldCopiesAwayFromEveryPushSkipThePass() throws {
        let t0 = instant("2027-03-01T07:00:00Z")
        var served = engineWithPulledPlan(in: ZoneRules(identifier: "Europe/London")!, at: t0)
        let passAt = served.lastPlanPassAt
        let pushes = try #require(served.state.plan.lastOrder).filter {
            ChannelPolicy.channel(for: $0.kind) == .remote
        }
        #expect(pushes.map(\.kind) == [.reEngagement])
        let spans = pushes.map {
            served.pushReadSpan(plannedAt: $0.plannedAt, deadline: $0.plannedAt + $0.stalenessSeconds)
        }
        let held = served.state.plan.phoneHolds.entries
        #expect(!held.isEmpty && held.allSatisfy { entry in !spans.contains { $0.contains(entry.value) } })

        /// Handles a backend job at `now`, heard of by a sync half an hour on, and checks it
        /// skipped the pass as a full pass and a restored engine agree.
        func skipsThePass(at now: Instant) throws {
            let phone = PhoneHearing.by(now + 1_800)
            #expect(served.heldLater(at: now, phone: phone) != served.state.plan.lastKey?.heldLater)
            var restored = try UserEngine(
                restoring: served.snapshot(), profile: served.profile, zone: served.zone,
                configuration: served.configuration, content: bundledContent)
            let effects = served.handle(.backgroundTaskLaunched(.lapseDetection), at: now, phone: phone)
            #expect(served.lastPlanPassAt == passAt, "the pass is skipped")
            #expect(served.fullReplanChanges(at: now, phone: phone).isEmpty)
            #expect(restored.handle(.backgroundTaskLaunched(.lapseDetection), at: now, phone: phone) == effects)
        }
        // Held later now, where the pass at t0 took the phone to hear at once.
        try skipsThePass(at: t0 + 60)
        // A pull takes the last copy away.
        let pulled = held.dropLast().map { (requestID: $0.id.requestID, fireAt: $0.value) }
        let holdsChanged = served.phoneApplied(pulled, at: t0 + 90)
        #expect(holdsChanged)
        try skipsThePass(at: t0 + 120)
    }
}
