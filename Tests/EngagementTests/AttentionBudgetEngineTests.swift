import Foundation
import Models
import Scheduling
import Testing

@testable import Engagement

/// The engine under the attention budget: what a busy user's day keeps, what is cut and why, the
/// user's own budget, the holdout, and opting out of a kind with items waiting.
@Suite struct AttentionBudgetEngineTests {
    let london = ZoneRules(identifier: "Europe/London")!
    let t0 = Instant(iso8601: "2027-06-01T05:00:00+01:00")!

    /// Greeting, four meals and hourly hydration from 07:00 to 22:00: 20 a day before any budget.
    func busyProfile(_ configure: (inout NotificationPreferences) -> Void = { _ in }) -> UserProfile {
        makeProfile { preferences in
            preferences.hydration = .hourly
            configure(&preferences)
        }
    }

    /// The plan's non-exempt fire times per local day.
    func perDay(_ engine: UserEngine) -> [Int64: Int] {
        var days: [Int64: Int] = [:]
        for planned in engine.state.plan.planned where !planned.kind.isTransactional {
            days[london.localDateTime(at: planned.fireAt).daysSinceEpoch, default: 0] += 1
        }
        return days
    }

    @Test func aBusyDayKeepsTheDefaultBudgetAndTracesEveryCut() {
        var engine = UserEngine(profile: busyProfile(), zone: london, now: t0)
        let effects = engine.handle(.appLaunched, at: t0)
        #expect(engine.attentionBudget == AttentionBudget())
        #expect(!perDay(engine).isEmpty)
        for (_, count) in perDay(engine) { #expect(count <= AttentionBudget.defaultInterruptionsPerDay) }
        let cuts = effects.traces.filter { $0.reason == .attentionBudget }
        #expect(!cuts.isEmpty)
        #expect(cuts.allSatisfy { $0.decision == .dropped && $0.detail.contains("attention budget of 8") })
        // Hydration (relevance 0.4) is what this user values least: it is cut before any meal.
        #expect(cuts.allSatisfy { $0.kind == .hydration })
    }

    @Test func withoutTheBudgetTheSameDayIsPlannedWhole() {
        var configuration = EngineConfiguration()
        configuration.attentionBudget = nil
        var engine = UserEngine(profile: busyProfile(), zone: london, now: t0, configuration: configuration)
        let effects = engine.handle(.appLaunched, at: t0)
        #expect(engine.attentionBudget == nil)
        #expect(!effects.traces.contains { $0.reason == .attentionBudget })
        // Hydration goes out as daily series (one slot each, firing every day).
        #expect(engine.state.plan.planned.contains { $0.repeatsDaily })
    }

    @Test func aUsersOwnBudgetIsTheirs() {
        var engine = UserEngine(profile: busyProfile { $0.interruptionBudgetPerDay = 3 }, zone: london, now: t0)
        _ = engine.handle(.appLaunched, at: t0)
        #expect(engine.attentionBudget == AttentionBudget(interruptionsPerDay: 3))
        for (_, count) in perDay(engine) { #expect(count <= 3) }
    }

    @Test func aUserInTheBudgetsHoldoutIsPlannedWithoutIt() {
        var configuration = EngineConfiguration()
        configuration.budgetHoldoutShare = 1
        var engine = UserEngine(profile: busyProfile(), zone: london, now: t0, configuration: configuration)
        let effects = engine.handle(.appLaunched, at: t0)
        #expect(engine.isHeldOutOfBudget)
        #expect(engine.attentionBudget == nil)
        #expect(!effects.traces.contains { $0.reason == .attentionBudget })
    }

    @Test func theHoldoutIsDrawnFromTheIdWithItsOwnSalt() {
        var configuration = EngineConfiguration()
        configuration.budgetHoldoutShare = 0.5
        configuration.holdoutShare = 0.5
        var budgetHeldOut = 0
        var both = 0
        for n in 0..<2_000 {
            var profile = busyProfile()
            profile.id = "user-\(n)"
            let engine = UserEngine(profile: profile, zone: london, now: t0, configuration: configuration)
            if engine.isHeldOutOfBudget { budgetHeldOut += 1 }
            if engine.isHeldOutOfBudget && engine.isHeldOut { both += 1 }
        }
        #expect((900...1_100).contains(budgetHeldOut))
        // Independent draws: about a quarter in both.
        #expect((400...600).contains(both))
    }

    @Test func singleSocialItemsOnAFullDayFoldIntoTheDigestWithTheBudgetsReason() {
        var engine = UserEngine(
            profile: busyProfile {
                $0.settings[.workoutKudos] = .enabled
                $0.interruptionBudgetPerDay = 2
            }, zone: london, now: t0)
        _ = engine.handle(.appLaunched, at: t0)
        let noon = Instant(iso8601: "2027-06-01T12:10:00+01:00")!
        let effects = engine.handle(.socialEvent(kudos(1)), at: noon)
        let folded = effects.traces.first { $0.requestID == "k1" && $0.decision == .folded }
        #expect(folded?.reason == .attentionBudget)
        // The digest itself is exempt: it is planned although the day is full.
        #expect(effects.scheduled.contains { $0.request.content.kind == .workoutKudos })
    }

    @Test func disablingAKindReleasesItsWaitingItemsAndCancelsWhatIsPending() {
        var engine = UserEngine(profile: busyProfile { $0.settings[.workoutKudos] = .daily }, zone: london, now: t0)
        _ = engine.handle(.appLaunched, at: t0)
        let noon = Instant(iso8601: "2027-06-01T12:00:00+01:00")!
        _ = engine.handle(.socialEvent(kudos(1)), at: noon)
        #expect(engine.state.plan.planned.contains { $0.kind == .workoutKudos })
        var preferences = engine.profile.preferences
        preferences.settings[.workoutKudos] = .disabled
        preferences.settings[.hydration] = .disabled
        let effects = engine.handle(.preferencesChanged(preferences), at: noon + 60)
        #expect(
            effects.traces.contains { $0.requestID == "k1" && $0.decision == .suppressed && $0.reason == .kindDisabled }
        )
        #expect(!engine.state.plan.planned.contains { $0.kind == .workoutKudos || $0.kind == .hydration })
        #expect(effects.traces.contains { $0.decision == .cancelled && $0.reason == .kindDisabled })
    }

    @Test func theValueFollowsTheUsersResponsesAtThatHour() {
        let candidate = Candidate(
            id: OccurrenceID(.mealReminder, date: LocalDate(year: 2027, month: 6, day: 1), .meal(.lunch)),
            kind: .mealReminder, plannedAt: Instant(iso8601: "2027-06-01T12:30:00+01:00")!, level: .active,
            policy: .standard(for: .mealReminder))
        var responses = ResponseStats()
        let fresh = AttentionValue.of(candidate, responses: responses, zone: london, now: t0)
        #expect(abs(fresh - 0.6) < 1e-9)
        for _ in 0..<8 { responses.record(.ignored, slot: LearningSlot(candidate.id), hour: 12) }
        let ignored = AttentionValue.of(candidate, responses: responses, zone: london, now: t0)
        #expect(ignored < fresh / 2)
        var acted = ResponseStats()
        for _ in 0..<8 { acted.record(.acted, slot: LearningSlot(candidate.id), hour: 12) }
        #expect(AttentionValue.of(candidate, responses: acted, zone: london, now: t0) > fresh)
        // Another hour's responses say nothing about this one.
        var elsewhere = ResponseStats()
        for _ in 0..<8 { elsewhere.record(.ignored, slot: LearningSlot(candidate.id), hour: 8) }
        #expect(AttentionValue.of(candidate, responses: elsewhere, zone: london, now: t0) == fresh)
        // Overdue: freshness falls over the staleness window, to a floor.
        let late = candidate.plannedAt + candidate.policy.stalenessSeconds / 2
        #expect(abs(AttentionValue.of(candidate, responses: ResponseStats(), zone: london, now: late) - 0.3) < 1e-9)
        let stale = candidate.plannedAt + 10 * candidate.policy.stalenessSeconds
        #expect(abs(AttentionValue.of(candidate, responses: ResponseStats(), zone: london, now: stale) - 0.15) < 1e-9)
    }

    @Test func aUsersBudgetOutsideItsRangeIsRefusedNamingTheKey() throws {
        let json = Data(#"{"interruptionBudgetPerDay": 0}"#.utf8)
        #expect(throws: (any Error).self) { try JSONDecoder().decode(NotificationPreferences.self, from: json) }
        do {
            _ = try JSONDecoder().decode(NotificationPreferences.self, from: json)
        } catch {
            #expect("\(error)".contains("interruptionBudgetPerDay"))
        }
        let valid = try JSONDecoder().decode(
            NotificationPreferences.self, from: Data(#"{"interruptionBudgetPerDay": 5}"#.utf8))
        #expect(valid.interruptionBudgetPerDay == 5)
        let roundTrip = try JSONDecoder().decode(NotificationPreferences.self, from: JSONEncoder().encode(valid))
        #expect(roundTrip == valid)
    }
}
