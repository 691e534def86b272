import Models
import Scheduling
import Testing

@testable import Engagement

/// The engine plans incrementally: an input whose plan inputs match the last pass's (`PlanKey`)
/// runs no pass. Held here against a full pass after every input of random streams, for users
/// with and without an attention budget, in zones with 30- and 45-minute offsets, DST, and
/// across the date line: a full pass would schedule or cancel nothing.
@Suite struct IncrementalPlanTests {
    static let zones = [
        "Europe/London", "Asia/Kathmandu", "America/St_Johns", "Pacific/Chatham", "Australia/Lord_Howe",
        "Pacific/Kiritimati", "Pacific/Pago_Pago",
    ]

    /// A user of `seed`: the snapshot tests' busy user (hourly hydration, batching, quiet
    /// hours), half of them with a budget of five interruptions a day.
    static func profile(seed: UInt64) -> UserProfile {
        var profile = SnapshotTests.profile(seed: seed)
        profile.timeZone = zones[Int(seed % UInt64(zones.count))]
        if seed % 2 == 1 { profile.preferences.interruptionBudgetPerDay = 5 }
        return profile
    }

    @Test(arguments: 0..<14)
    func aFullPassAfterAnyInputChangesNothing(seed: UInt64) {
        let profile = Self.profile(seed: seed)
        let start = Instant(iso8601: "2027-03-24T06:00:00Z")!
        var engine = UserEngine(profile: profile, zone: ZoneRules(identifier: profile.timeZone)!, now: start)
        var skipped = 0
        for (index, (input, at)) in SnapshotTests.inputs(seed: seed, count: 160, start: start).enumerated() {
            let passAt = engine.state.plan.lastPassAt
            _ = engine.handle(input, at: at)
            if engine.state.plan.lastPassAt == passAt { skipped += 1 }
            // An input that left regrouping unfinished plans again at the next one, whatever it is.
            guard engine.planIsSettled else { continue }
            let missed = engine.fullReplanChanges(at: at)
            #expect(missed.isEmpty, "input \(index) (\(input)) at \(at): \(missed)")
            if !missed.isEmpty { return }
        }
        // The check is about skipped passes: there must be some.
        #expect(skipped > 10, "\(skipped) inputs skipped the pass")
    }

    /// A session that held lunch back past its deadline (so it was cancelled) is replaced by a
    /// short one: lunch is planned again at once, not at whatever input comes next.
    @Test func aShorterSessionReleasesWhatTheLongerOneHeld() throws {
        let london = ZoneRules(identifier: "Europe/London")!
        let morning = Instant(iso8601: "2027-06-01T08:00:00+01:00")!
        var engine = UserEngine(profile: makeProfile(), zone: london, now: morning)
        _ = engine.handle(.appLaunched, at: morning)
        let lunch: RequestID = "mealReminder.2027-06-01.lunch"
        try #require(engine.plannedRequestIDs.contains(lunch))

        let long = Instant(iso8601: "2027-06-01T12:20:00+01:00")!
        let held = engine.handle(.activity(.appOpened(sessionSeconds: 2 * 3_600)), at: long)
        #expect(held.cancelledIDs.contains(lunch))
        #expect(engine.fullReplanChanges(at: long).isEmpty)

        let short = long + 5 * 60
        _ = engine.handle(.activity(.appOpened(sessionSeconds: 60)), at: short)
        #expect(engine.plannedRequestIDs.contains(lunch))
        #expect(engine.fullReplanChanges(at: short).isEmpty)
    }

    /// A plan that filled the slot budget: each firing frees a slot that the next input fills,
    /// whatever the input is. (Under the default budget an unanswered notification expiring
    /// also forces a pass, from the fourth hour on; the first three hours rest on the slot rule
    /// alone, and fail without it.)
    @Test func aFiringFromAFullPlanFreesASlotTheNextInputFills() {
        let london = ZoneRules(identifier: "Europe/London")!
        let morning = Instant(iso8601: "2027-06-01T06:00:00+01:00")!
        var configuration = EngineConfiguration()
        configuration.pendingLimit = 8
        configuration.reservedSlots = 2
        let profile = makeProfile { $0.hydration = .hourly }
        var engine = UserEngine(profile: profile, zone: london, now: morning, configuration: configuration)
        _ = engine.handle(.appLaunched, at: morning)
        #expect(engine.plannedRequestIDs.count == 6)
        var now = morning
        for _ in 0..<12 {
            now = now + 3_600
            // An input that changes nothing the plan reads.
            _ = engine.handle(.backgroundTaskLaunched(.engagementAnalysis), at: now)
            #expect(engine.plannedRequestIDs.count == 6, "at \(now)")
            #expect(engine.fullReplanChanges(at: now).isEmpty, "at \(now)")
        }
    }
}
