import Content
import Engagement
import Models
import Storage
import TestSupport
import Testing

@testable import Runtime

/// What the phone was served (`EngineRuntime.phoneWasServed`) is committed for the steps the
/// phone hears of only with the next sync: a social push works around it and never moves it.
@Suite("Engine runtime: the phone's committed copies")
struct PhoneCommitmentTests {
    static let created = Instant(iso8601: "2027-03-01T18:00:00Z")!

    /// A friend comments on a workout: a remote kind the caps count (a mention is exempt).
    static let comment = EngineInput.socialEvent(
        SocialEvent(id: "c1", kind: .workoutComment, actorName: "Ben", topic: "run", isMutualFriend: true))

    /// One an hour, so a push in the hour of a held reminder would break the cap; comments at once.
    static func oneAnHour() -> UserProfile {
        var user = profile(zone: "Europe/Berlin")
        user.preferences.maxPerHour = 1
        user.preferences.settings[.workoutComment] = .immediate
        return user
    }

    /// The local requests' rows still ahead, and the comment's push rows, after a comment five
    /// minutes before the first held meal reminder; `served` says whether the phone pulled the plan.
    func run(served: Bool) async throws -> (held: LocalPlan.Entry, local: [OutboxRow], pushes: [OutboxRow]) {
        let store = InMemoryEngagementStore()
        let clock = ManualClock(Self.created)
        let runtime = EngineRuntime(
            store: store, clock: clock, content: bundledContent, configuration: withoutAttentionBudget)
        try await runtime.putUser(Self.oneAnHour())
        let plan = try await runtime.localPlan(of: "u1")
        // A meal reminder: a routine the engine plans as one-off requests, outside quiet hours.
        let held = try #require(plan.entries.first { $0.request.identifier.rawValue.hasPrefix("mealReminder.") })
        if served { try await runtime.phoneWasServed(plan, userID: "u1") }
        clock.advance(by: held.nextFireAt - 300 - Self.created)
        try await runtime.apply(Self.comment, to: "u1", from: .backend)
        let pending = try store.pendingOutbox(userID: "u1")
        return (
            held, pending.filter { $0.channel == .inbox && $0.requestID == held.request.identifier },
            pending.filter { $0.channel == .push && $0.requestID.rawValue.hasPrefix("workoutComment.") }
        )
    }

    @Test func aSocialPushWorksAroundWhatThePhoneHolds() async throws {
        let (held, local, pushes) = try await run(served: true)
        // The copy the phone fires stays where it is, and the push keeps the hourly cap with it.
        #expect(local.map(\.dueAt) == [held.nextFireAt])
        #expect(!pushes.isEmpty)
        #expect(
            pushes.allSatisfy { abs($0.dueAt - held.nextFireAt) >= 3_600 },
            "\(held.request.identifier) at \(held.nextFireAt), pushes at \(pushes.map(\.dueAt))")
    }

    /// The coach answers for a greeting the phone already holds and fires before it hears: the
    /// template stays, as the phone shows it; a greeting the phone was not served takes the copy.
    @Test(arguments: [true, false])
    func theCoachsCopyLeavesACopyThePhoneFiresFirst(served: Bool) async throws {
        let store = InMemoryEngagementStore()
        let clock = ManualClock(Self.created)
        let runtime = EngineRuntime(
            store: store, clock: clock, content: bundledContent, configuration: withoutAttentionBudget)
        try await runtime.putUser(profile(zone: "Europe/Berlin"))
        let plan = try await runtime.localPlan(of: "u1")
        let greeting = try #require(
            plan.entries.first { $0.request.identifier.rawValue.hasPrefix("morningGreeting.") })
        if served { try await runtime.phoneWasServed(plan, userID: "u1") }
        clock.advance(by: greeting.nextFireAt - 600 - Self.created)
        let coach = "Sunrise run?|A fresh morning for a few easy miles."
        let applied = try await runtime.apply(
            .contentGenerated(requestID: greeting.request.identifier, outcome: .text(coach, latencyMillis: 300)),
            to: "u1", from: .backend)
        let kept = applied.effects.contains { effect in
            guard case .trace(let entry) = effect else { return false }
            return entry.reason == .templateFallback && entry.why == .templateKept(code: ContentReason.heldByPhone.code)
        }
        #expect(kept == served)
        let after = try await runtime.localPlan(of: "u1").entries.first {
            $0.request.identifier == greeting.request.identifier
        }
        #expect((after?.request.content.title == "Sunrise run?") == !served)
    }

    @Test func servingAPlanToAnUnknownUserIsRefused() async throws {
        let runtime = EngineRuntime(
            store: InMemoryEngagementStore(), clock: ManualClock(Self.created), content: bundledContent)
        let empty = LocalPlan(version: 0, zone: .utc, horizonEnd: nil, entries: [])
        await #expect(throws: RuntimeError.unknownUser("nobody")) {
            try await runtime.phoneWasServed(empty, userID: "nobody")
        }
    }
}
