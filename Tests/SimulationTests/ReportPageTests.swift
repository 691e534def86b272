import Engagement
import Foundation
import Models
import TestSupport
import Testing

@testable import Simulation

/// A small run's report, the raw material of the page tests.
func smallReport(users: Int = 20, name: String = "test") throws -> Report {
    var scenario = try Scenario.parse(baseScenario(), file: "test.json")
    scenario.users = users
    scenario.name = name
    return try Simulator.run(RunOptions(scenario: scenario, templates: bundledTemplates, outputDirectory: nil))
}

/// A report of a run in which nothing was delivered, measured or lapsed: every ratio's
/// denominator is zero.
func emptyReport() throws -> Report {
    var report = try smallReport(users: 2)
    report.wallSeconds = 0
    report.eventsPerSecond = 0
    report.deliveries = 0
    report.deliveriesByKind = [:]
    report.deliveriesByLocalHour = [:]
    report.deliveriesPerUserDay = ["0": 14]
    report.decisions = [:]
    report.responses = [:]
    report.budgets = [
        "schedulingDecision": BudgetFigures(
            nanos: LatencyHistogram(), sampledOneIn: 64, budgetMicros: Simulator.decisionBudgetMicros),
        "backgroundRun": BudgetFigures(
            nanos: LatencyHistogram(), sampledOneIn: 1, budgetMicros: Simulator.backgroundBudgetMicros),
    ]
    report.content = ContentFigures(millis: LatencyHistogram(), bySource: [:], budgetMillis: 2_000)
    report.lift = ReturnLift()
    report.engagementByPersonaWeek = ["morningRunner": [EngagementMetrics()]]
    return report
}

struct PageTextTests {
    @Test func theFiveHTMLCharactersAreEscaped() {
        #expect(
            PageText.escape("<script>alert('x') & \"y\"</script>")
                == "&lt;script&gt;alert(&#39;x&#39;) &amp; &quot;y&quot;&lt;/script&gt;")
        #expect(PageText.escape("plain café") == "plain café")
    }

    @Test(arguments: [(0, "0"), (999, "999"), (1_000, "1,000"), (1_234_567, "1,234,567"), (-45_000, "-45,000")])
    func wholeNumbersAreGroupedByThousands(value: Int, text: String) {
        #expect(PageText.integer(value) == text)
    }

    @Test(arguments: [
        (0.85, "850 ns"), (12.34, "12.3 µs"), (4_500, "4.5 ms"), (100_000, "100 ms"), (2_000_000, "2 s"),
        (1_000, "1 ms"),
    ])
    func durationsAreShownInAReadableUnit(micros: Double, text: String) {
        #expect(PageText.duration(micros: micros) == text)
    }

    @Test func numbersThatAreNotFiniteBecomeADash() {
        #expect(PageText.decimal(.nan) == "–")
        #expect(PageText.decimal(.infinity) == "–")
        #expect(PageText.percent(nil) == "–")
        #expect(PageText.percent(0.1234) == "12.3 %")
        #expect(PageText.duration(micros: .nan) == "–")
        #expect(PageText.coordinate(.nan) == "0")
    }

    @Test func axisTicksAreRoundAndCoverTheRange() {
        #expect(AxisTicks.linear(upTo: 7) == [0, 2, 4, 6, 8])
        #expect(AxisTicks.linear(upTo: 0) == [0, 1])
        #expect(AxisTicks.linear(from: -3, upTo: 12) == [-5, 0, 5, 10, 15])
        #expect(AxisTicks.decades(from: 12, to: 100_000) == [10, 100, 1_000, 10_000, 100_000, 1_000_000])
    }
}

@Suite(.serialized) struct ReportPageTests {
    @Test func everySectionIsOnThePage() throws {
        let html = ReportPage.html(try smallReport())
        for id in ReportPage.sectionIDs {
            #expect(html.contains("<section id=\"\(id)\">"), "no section \(id)")
        }
        for heading in [
            "Invariants", "Budgets", "Deliveries by local hour, per kind", "Deliveries per user-day",
            "Engagement per persona, by week", "Re-engagement lift", "Reproduce this run",
        ] {
            #expect(html.contains(heading), "no heading \(heading)")
        }
        #expect(html.hasPrefix("<!doctype html>"))
        #expect(html.contains("<svg"))
    }

    @Test func aScenarioNameWithMarkupIsShownAsText() throws {
        var report = try smallReport(name: "<script>alert(\"owned\")</script>")
        report.command = "simulate --scenario '<b>bold</b>' --seed 7"
        report.violationExamples = ["<img src=x onerror=alert(1)>"]
        let html = ReportPage.html(report)
        #expect(!html.lowercased().contains("<script"))
        #expect(!html.contains("<b>bold"))
        #expect(!html.contains("<img"))
        #expect(html.contains("&lt;script&gt;alert(&quot;owned&quot;)&lt;/script&gt;"))
        #expect(html.contains("simulate --scenario &#39;&lt;b&gt;bold&lt;/b&gt;&#39; --seed 7"))
    }

    @Test func thePageForbidsScriptsAndNetworkUse() throws {
        let html = ReportPage.html(try smallReport())
        #expect(html.contains("Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\""))
        // Nothing to load: no source, link or stylesheet URL anywhere.
        #expect(!html.contains(" src="))
        #expect(!html.contains(" href="))
        #expect(!html.contains("url("))
        #expect(!html.contains("https://"))
    }

    @Test func numbersAreFormattedForPeople() throws {
        var report = try smallReport()
        report.users = 12_345
        report.events = 1_234_567
        let html = ReportPage.html(report)
        #expect(html.contains("<dt>users</dt><dd>12,345</dd>"))
        #expect(html.contains("<dt>world-loop events</dt><dd>1,234,567</dd>"))
    }

    @Test func invariantsShowTheirCountsHeldOrViolated() throws {
        var report = try smallReport()
        report.invariantViolations["perDayCapHeld"] = 3
        let html = ReportPage.html(report)
        #expect(
            html.contains(
                "<code>perDayCapHeld</code></td><td>no more than maxPerDay deliveries on a local day</td>"
                    + "<td class=\"number\">3</td><td class=\"bad\">violated</td>"))
        #expect(html.contains("<code>perHourCapHeld</code>"))
        #expect(html.contains("<td class=\"number\">0</td><td class=\"ok\">held</td>"))
        #expect(html.contains("An invariant was violated (exit 2)"))
    }

    @Test func anEmptyRunRendersWithoutNaNOrInfinity() throws {
        let html = ReportPage.html(try emptyReport())
        let words = html.lowercased().split { !$0.isLetter }
        #expect(!words.contains("nan"))
        #expect(!words.contains("inf"))
        #expect(!words.contains("infinity"))
        #expect(html.contains("No deliveries in this run."))
        #expect(html.contains("no samples in this run"))
        #expect(html.contains("No lift: one of the groups had no lapse to compare."))
        for id in ReportPage.sectionIDs { #expect(html.contains("<section id=\"\(id)\">")) }
    }

    @Test func theLiftIsShownWithItsInterval() throws {
        var report = try smallReport()
        var lift = ReturnLift()
        for index in 0..<200 { lift.record(heldOut: false, returned: index % 2 == 0) }
        for index in 0..<100 { lift.record(heldOut: true, returned: index % 4 == 0) }
        report.lift = lift
        let html = ReportPage.html(report)
        // 50 % - 25 % = 25 points; margin 1.96 * sqrt(.25/200 + .1875/100) = 10.96 points.
        #expect(html.contains("Lift +25.0 percentage points (95 % interval +14.0 to +36.0)</p>"))
        // An interval that includes zero says the lift is not significant.
        var unclear = ReturnLift()
        for index in 0..<40 { unclear.record(heldOut: false, returned: index % 2 == 0) }
        for index in 0..<20 { unclear.record(heldOut: true, returned: index % 5 < 2) }
        report.lift = unclear
        #expect(
            ReportPage.html(report).contains(
                "(95 % interval -16.5 to +36.5): not significant, the interval includes zero (no effect)"))
    }

    @Test func theHourlyTableAddsUpToTheDeliveries() throws {
        let report = try smallReport(users: 30)
        #expect(report.deliveries > 0)
        #expect(report.deliveriesByLocalHour.values.map { $0.reduce(0, +) }.reduce(0, +) == report.deliveries)
        for (kind, hours) in report.deliveriesByLocalHour {
            #expect(hours.count == 24)
            #expect(hours.reduce(0, +) == report.deliveriesByKind[kind], "\(kind)")
        }
    }

    @Test func aRunWritesReportHTMLBesideReportJSON() throws {
        var scenario = try Scenario.parse(baseScenario(), file: "test.json")
        scenario.users = 10
        let folder = NSTemporaryDirectory() + "engagement-report-html-\(getpid())"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let report = try Simulator.run(
            RunOptions(
                scenario: scenario, templates: bundledTemplates, outputDirectory: folder, writeEvents: false,
                command: "simulate --scenario test --seed 7"))
        let html = try String(contentsOfFile: folder + "/report.html", encoding: .utf8)
        #expect(html == ReportPage.html(report))
        let json =
            try JSONSerialization.jsonObject(
                with: Data(contentsOf: URL(fileURLWithPath: folder + "/report.json"))) as! [String: Any]
        #expect(json["command"] as? String == "simulate --scenario test --seed 7")
        #expect(json["deliveriesByLocalHour"] is [String: [Int]])
    }
}

@Suite struct SummaryTextTests {
    @Test func theLiftLineNamesItsCountsItsIntervalAndWhetherItIsSignificant() throws {
        var lift = ReturnLift()
        for index in 0..<40 { lift.record(heldOut: false, returned: index % 2 == 0, promptedByNudge: index % 4 == 0) }
        for index in 0..<20 { lift.record(heldOut: true, returned: index % 5 < 2) }
        #expect(
            SummaryText.lift(lift)
                == "re-engagement: returned within 14 days 20 of 40 nudged lapses (0.500; 10 of them by answering "
                + "a nudge) vs 8 of 20 holdout lapses (0.400); lift +10.0 points, 95 % interval -16.5 to +36.5: "
                + "not significant")
        #expect(SummaryText.lift(ReturnLift()) == nil)
    }

    @Test func countsComeInTheGivenOrderThenByName() {
        #expect(
            SummaryText.counts(["dropped": 2, "scheduled": 5, "zeta": 0, "alpha": 1], order: ["scheduled", "dropped"])
                == "scheduled=5 dropped=2 alpha=1 zeta=0")
    }
}
