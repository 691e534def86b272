import Content
import Engagement
import Models
import SimulatedPlatform
import TestSupport
import Testing

@testable import Simulation

/// Shard statistics are typed tables that merge into the report whatever the number of shards.
@Suite struct StatisticsTests {
    func shard(deliveries: [NotificationKind], decisions: [TraceDecision], weeks: Int = 2) -> ShardStats {
        var stats = ShardStats(weeks: weeks)
        for kind in deliveries {
            stats.deliveries += 1
            stats.deliveriesByKind[kind] += 1
            stats.deliveredByKindWeek.add(kind, week: 0)
        }
        for decision in decisions { stats.decisions[decision] += 1 }
        return stats
    }

    @Test func aTallyCountsEachCaseAndReportsOnlyTheCasesItSaw() {
        var tally = Tally<NotificationKind>()
        tally[.hydration] += 2
        tally[.reEngagement] += 1
        #expect(tally[.hydration] == 2)
        #expect(tally[.morningGreeting] == 0)
        #expect(tally.total == 3)
        #expect(tally.seen == ["hydration": 2, "reEngagement": 1])
    }

    @Test func everyInvariantIsReportedEvenWhenItHeld() {
        var violations = Tally<Invariant>()
        violations[.perHourCapHeld] += 1
        let all = violations.all
        #expect(all.count == Invariant.allCases.count)
        #expect(all["perHourCapHeld"] == 1)
        #expect(all["noDuplicateDelivery"] == 0)
    }

    @Test(arguments: TraceDecision.allCases)
    func aDecisionHasItsOwnPosition(decision: TraceDecision) {
        #expect(TraceDecision.allCases[decision.position] == decision)
    }

    @Test func mergingShardsAddsTheirCountsInAnyOrder() {
        let first = shard(deliveries: [.hydration, .hydration, .mealReminder], decisions: [.scheduled, .deferred])
        let second = shard(deliveries: [.mealReminder, .reEngagement], decisions: [.scheduled, .dropped])
        var forward = first
        forward.merge(second)
        var backward = second
        backward.merge(first)
        #expect(forward.deliveries == 5)
        #expect(forward.deliveriesByKind.seen == ["hydration": 2, "mealReminder": 2, "reEngagement": 1])
        #expect(forward.decisions.seen == ["scheduled": 2, "deferred": 1, "dropped": 1])
        #expect(forward.deliveriesByKind == backward.deliveriesByKind)
        #expect(forward.decisions == backward.decisions)
        #expect(forward.deliveredByKindWeek == backward.deliveredByKindWeek)
        #expect(forward.deliveredByKindWeek.seenKinds == [.mealReminder, .hydration, .reEngagement])
    }

    @Test func mergingAddsTheTimingHistogramsAndKeepsAtMostTwentyExamples() {
        var first = ShardStats(weeks: 1)
        first.decisionNanos.record(1_000)
        first.decisionNanos.record(2_000)
        first.violationExamples = (0..<15).map { "first \($0)" }
        var second = ShardStats(weeks: 1)
        second.decisionNanos.record(3_000)
        second.violationExamples = (0..<15).map { "second \($0)" }
        first.merge(second)
        #expect(first.decisionNanos.count == 3)
        #expect(first.decisionNanos.max == 3_000)
        // Three significant digits: 2,000 ns reads back within 0.1 %.
        #expect(abs(first.decisionNanos.value(at: 0.5) - 2_000) <= 2)
        #expect(first.violationExamples.count == ShardStats.violationExampleLimit)
        #expect(first.violationExamples.last == "second 4")
    }

    @Test func personasWithoutUsersAreLeftOutOfTheReport() {
        var first = ShardStats(weeks: 2)
        var second = ShardStats(weeks: 2)
        let zone = ZoneRules.utc
        let start = Instant(secondsSinceEpoch: 1_803_859_200)
        let summary = UserEngagementSummary(
            activity: [], deliveries: [], optOuts: [], since: start, now: start + 7 * .secondsPerDay, zone: zone,
            thresholds: LapseThresholds(configuration: EngineConfiguration()))
        first.addWeek(summary, persona: .traveller, week: 1, of: 2)
        second.addWeek(summary, persona: .traveller, week: 1, of: 2)
        second.addWeek(summary, persona: .churner, week: 0, of: 2)
        first.merge(second)
        let table = first.engagementByPersonaWeek
        #expect(Set(table.keys) == ["traveller", "churner"])
        #expect(table["traveller"]?.count == 2)
        #expect(table["traveller"]?[1].totalUsers == 2)
        #expect(table["traveller"]?[0].totalUsers == 0)
    }

    @Test func fallbackReasonsAreReportedByTheirStableCode() {
        var first = ContentTally()
        first.ai = 3
        first.templateFallback = 2
        first.fallbackReasons[ContentReason.coachError("coach unavailable").code, default: 0] += 1
        first.fallbackReasons[ContentReason.coachTimeout.code, default: 0] += 1
        var second = ContentTally()
        second.templateFallback = 1
        second.fallbackReasons[ContentReason.coachError("connection reset").code, default: 0] += 1
        first.merge(second)
        #expect(
            first.bySource == ["ai": 3, "templateFallback": 3, "coachError": 2, "coachTimeout": 1])
    }

    /// The tally reads the engine's own ruling from its trace: every template fallback counts
    /// under exactly one reason, and the coach's failures, timeouts and malformed answers each
    /// show under their code.
    @Test func everyFallbackIsTalliedUnderTheReasonTheEngineTraced() throws {
        var scenario = try Scenario.parse(baseScenario(), file: "test.json")
        scenario.users = 40
        scenario.coach.slowShare = 0.2
        scenario.coach.failureShare = 0.2
        scenario.coach.malformedShare = 0.2
        let report = try Simulator.run(
            RunOptions(scenario: scenario, templates: bundledTemplates, outputDirectory: nil))
        let table = report.content.bySource
        let fallbacks = try #require(table["templateFallback"])
        let reasons = table.filter { $0.key != "ai" && $0.key != "templateFallback" }
        #expect(reasons.values.reduce(0, +) == fallbacks)
        #expect(reasons["coachError", default: 0] > 0)
        #expect(reasons["coachTimeout", default: 0] > 0)
        #expect(reasons.keys.contains { $0.hasPrefix("malformedOutput.") })
        #expect(table["ai", default: 0] + fallbacks == report.decisions["copyChosen"])
    }

    @Test func responseRatesAreComputedForDeliveredKindsOnly() {
        var delivered = WeeklyTally(weeks: 2)
        var acted = WeeklyTally(weeks: 2)
        for _ in 0..<3 { delivered.add(.hydration, week: 0) }
        acted.add(.hydration, week: 0)
        acted.add(.mealReminder, week: 1)
        let rates = Simulator.responseRates(delivered: delivered, acted: acted)
        #expect(rates == ["hydration": [0.333, 0]])
    }
}
