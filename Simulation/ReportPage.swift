import Engagement
import Foundation
import Models

/// report.html: one self-contained page a person can read, rendered from the `Report` that is
/// also written as report.json (no second computation). It loads nothing: the charts are inline
/// SVG, there is no script, and a Content-Security-Policy forbids any network use or script, so
/// even text that escaped escaping could not run. Every inserted text (the scenario name is user
/// input) is escaped.
public enum ReportPage {
    /// The section identifiers, in page order (tests look for each one).
    static let sectionIDs = [
        "summary", "reproduce", "invariants", "budgets", "deliveries-by-hour", "deliveries-per-day", "engagement",
        "lift", "attention",
    ]

    /// The page for `report`.
    public static func html(_ report: Report) -> String {
        let name = PageText.escape(report.scenario)
        let sections = [
            summary(report), reproduce(report), invariants(report), budgets(report), deliveriesByHour(report),
            deliveriesPerDay(report), engagement(report), lift(report), attention(report),
        ]
        return """
            <!doctype html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>Simulation report: \(name), seed \(report.seed)</title>
            <style>\(style)</style>
            </head>
            <body>
            <h1>Simulation report: <span class="name">\(name)</span></h1>
            \(sections.joined(separator: "\n"))
            <footer>Rendered from report.json in the same folder. Hover a bar, cell or point for its value.</footer>
            </body>
            </html>

            """
    }

    // MARK: - Sections

    static func summary(_ report: Report) -> String {
        let verdict: String
        switch report.exitStatus {
        case 0: verdict = "<p class=\"verdict ok\">Every invariant and every budget held (exit 0).</p>"
        case 2: verdict = "<p class=\"verdict bad\">An invariant was violated (exit 2).</p>"
        case 3:
            verdict =
                "<p class=\"verdict bad\">Something was stuck after the drain (liveness, exit 3): "
                + "\(report.drain.stuck) notifications.</p>"
        default: verdict = "<p class=\"verdict bad\">A budget was breached (exit \(report.exitStatus)).</p>"
        }
        let facts: [(String, String)] = [
            ("seed", String(report.seed)), ("start", report.start), ("users", PageText.integer(report.users)),
            ("weeks", PageText.integer(report.weeks)), ("threads", PageText.integer(report.threads)),
            ("world-loop events", PageText.integer(report.events)),
            ("event log lines", PageText.integer(report.eventLogLines)),
            ("engine calls", PageText.integer(report.engineCalls)),
            (
                "deliveries in the run's weeks (with the drain's: the local and remote shown)",
                PageText.integer(report.deliveries) + " ("
                    + PageText.integer(report.deliveries + report.drain.delivered) + ")"
            ),
            ("wall time", PageText.decimal(report.wallSeconds, places: 2) + " s"),
            (
                "world-loop events per second",
                PageText.integer(Int(report.eventsPerSecond.isFinite ? report.eventsPerSecond : 0))
            ),
            ("peak memory", PageText.decimal(report.peakMemoryMB) + " MB"),
            (
                "snapshot bytes per user (p50 / p99 / max)",
                "\(report.snapshotBytesPerUser.p50) / \(report.snapshotBytesPerUser.p99) / \(report.snapshotBytesPerUser.max)"
            ),
            ("largest push payload", PageText.integer(report.payloadBytesMax) + " bytes"),
            ("digest", report.digest),
        ]
        let decisions = report.decisions.sorted { $0.key < $1.key }
            .map { "\(PageText.escape($0.key)) \(PageText.integer($0.value))" }.joined(separator: ", ")
        let platform = report.platform.sorted { $0.key < $1.key }
            .map { "\(PageText.escape($0.key)) \(PageText.integer($0.value))" }.joined(separator: ", ")
        return section("summary", "Summary") {
            verdict + "<dl class=\"facts\">"
                + facts.map { "<dt>\(PageText.escape($0.0))</dt><dd>\(PageText.escape($0.1))</dd>" }.joined()
                + "</dl><p>Rule decisions (the engine's trace; dropped means a rule dropped it): "
                + "\(decisions.isEmpty ? "none" : decisions).</p>"
                + "<p>Platform (the simulated device; droppedByPendingLimit must be 0): "
                + "\(platform.isEmpty ? "nothing recorded" : platform).</p>"
        }
    }

    static func reproduce(_ report: Report) -> String {
        section("reproduce", "Reproduce this run") {
            "<p>The same seed gives the same digest (<code>\(PageText.escape(report.digest))</code>) on any number "
                + "of threads:</p><pre><code>\(PageText.escape(report.command))</code></pre>"
        }
    }

    static func invariants(_ report: Report) -> String {
        func row(_ name: String, _ meaning: String, _ count: Int) -> String {
            let status = count == 0 ? "<td class=\"ok\">held</td>" : "<td class=\"bad\">violated</td>"
            return "<tr><td><code>\(PageText.escape(name))</code></td><td>\(meaning)</td>"
                + "<td class=\"number\">\(PageText.integer(count))</td>\(status)</tr>"
        }
        var rows = report.invariantViolations.sorted { $0.key < $1.key }.map { name, count in
            row(name, meaning(ofInvariant: name), count)
        }
        var exampleLines = report.violationExamples
        if let check = report.incrementalPlan {
            rows.append(
                row(
                    "incrementalPlanMatchesFullPass",
                    "after each of \(PageText.integer(check.checkedSteps)) steps (\(PageText.integer(check.skippedSteps)) "
                        + "of them skipping the pass), a full planning pass would schedule or cancel nothing "
                        + "(--check-plans); the passes by what changed: "
                        + PageText.escape(check.causesText), check.differingSteps))
            exampleLines += check.examples
        }
        let examples =
            exampleLines.isEmpty
            ? ""
            : "<h3>Examples</h3><ul class=\"examples\">"
                + exampleLines.map { "<li><code>\(PageText.escape($0))</code></li>" }.joined() + "</ul>"
        return section("invariants", "Invariants (checked after every event)") {
            "<table><thead><tr><th>invariant</th><th>meaning</th><th>violations</th><th>status</th></tr></thead>"
                + "<tbody>\(rows.joined())</tbody></table>" + examples
        }
    }

    static func budgets(_ report: Report) -> String {
        var parts: [String] = []
        for name in report.budgets.keys.sorted() {
            let figures = report.budgets[name]!
            parts.append(
                budget(
                    title: budgetTitles[name] ?? name, samples: figures.samples,
                    bars: [("p50", figures.p50Micros), ("p99", figures.p99Micros), ("max", figures.maxMicros)],
                    budgetMicros: figures.budgetMicros))
        }
        let content = report.content
        let cut =
            content.p99AtDeadline
            ? " The p99 is the deadline itself, not a measured latency: \(PageText.integer(content.atDeadline)) of "
                + "\(PageText.integer(content.coachCalls)) calls were cut there." : ""
        parts.append(
            budget(
                title: "Content: virtual time until the copy was settled (coach latency, capped at the deadline)\(cut)",
                samples: content.coachCalls,
                bars: [
                    ("p50", content.p50Millis * 1_000), ("p99", content.p99Millis * 1_000),
                    ("max", content.maxMillis * 1_000),
                ], budgetMicros: content.budgetMillis * 1_000))
        return section("budgets", "Budgets") {
            "<p>Percentiles of every measured call against its budget (dashed red line). Engine calls "
                + "are timed as the calling thread's CPU time, outside the digest.</p>" + parts.joined()
        }
    }

    static func deliveriesByHour(_ report: Report) -> String {
        let rows = NotificationKind.allCases.compactMap { kind -> (label: String, counts: [Int])? in
            report.deliveriesByLocalHour[kind.rawValue].map { (kind.rawValue, $0) }
        }
        let known = Set(NotificationKind.allCases.map(\.rawValue))
        let others = report.deliveriesByLocalHour.filter { !known.contains($0.key) }.sorted { $0.key < $1.key }
            .map { (label: $0.key, counts: $0.value) }
        let all = rows + others
        return section("deliveries-by-hour", "Deliveries by local hour, per kind") {
            all.isEmpty
                ? "<p class=\"note\">No deliveries in this run.</p>"
                : "<p>The hour of each delivery in the recipient's own time zone. Each row is shaded against its "
                    + "busiest hour; the total is at the right.</p>"
                    + Charts.heatMap(
                        rows: all, columns: (0..<24).map { $0 < 10 ? "0\($0)" : "\($0)" },
                        xTitle: "local hour of delivery (00 is 00:00 to 00:59)")
        }
    }

    static func deliveriesPerDay(_ report: Report) -> String {
        let counts = report.deliveriesPerUserDay.compactMap { key, value in Int(key).map { ($0, value) } }
        let largest = counts.map(\.0).max() ?? 0
        let table = Dictionary(counts, uniquingKeysWith: +)
        let bars = (0...max(largest, 0)).map { (label: String($0), count: table[$0] ?? 0) }
        let userDays = bars.reduce(0) { $0 + $1.count }
        let mean = userDays == 0 ? 0 : Double(report.deliveries) / Double(userDays)
        return section("deliveries-per-day", "Deliveries per user-day") {
            "<p>How many local days of a user had N deliveries, over \(PageText.integer(userDays)) user-days "
                + "(mean \(PageText.decimal(mean, places: 2)) per day).</p>"
                + Charts.bars(bars, xTitle: "deliveries in one local day", yTitle: "user-days")
        }
    }

    static func engagement(_ report: Report) -> String {
        let personas = Persona.allCases.map(\.rawValue).filter { report.engagementByPersonaWeek[$0] != nil }
        let weeks = (1...max(report.weeks, 1)).map { "week \($0)" }
        func series(_ figure: (EngagementMetrics) -> Double?) -> [(name: String, values: [Double?])] {
            personas.map { persona in
                let table = report.engagementByPersonaWeek[persona] ?? []
                return (persona, weeks.indices.map { $0 < table.count ? figure(table[$0]) : nil })
            }
        }
        return section("engagement", "Engagement per persona, by week") {
            personas.isEmpty
                ? "<p class=\"note\">No users in this run.</p>"
                : "<h3>Engagement rate: active users at the end of the week</h3>"
                    + Charts.lines(
                        series { $0.engagementRate.map { $0 * 100 } }, xLabels: weeks, xTitle: "simulated week",
                        yTitle: "active users (%)", yLabel: { PageText.decimal($0, places: 0) + " %" })
                    + "<h3>Sessions per user per week</h3>"
                    + Charts.lines(
                        series(\.sessionsPerWeek), xLabels: weeks, xTitle: "simulated week",
                        yTitle: "sessions per user-week", yLabel: PageText.compact)
        }
    }

    static func lift(_ report: Report) -> String {
        let lift = report.lift
        let counts =
            "<p>Lapses that ended in a return within 14 days: nudged users "
            + "\(PageText.integer(lift.treatedReturns)) of \(PageText.integer(lift.treatedLapses)) "
            + "(\(PageText.percent(lift.treatedReturnRate)); \(PageText.integer(lift.treatedReturnsPromptedByNudge)) "
            + "of them by answering a nudge), holdout (no nudges) "
            + "\(PageText.integer(lift.holdoutReturns)) of \(PageText.integer(lift.holdoutLapses)) "
            + "(\(PageText.percent(lift.holdoutReturnRate))).</p>"
        guard let estimate = lift.lift, let interval = lift.liftInterval95 else {
            return section("lift", "Re-engagement lift") {
                counts + "<p class=\"note\">No lift: one of the groups had no lapse to compare.</p>"
            }
        }
        let points = (estimate * 100, interval.low * 100, interval.high * 100)
        return section("lift", "Re-engagement lift") {
            counts
                + "<p class=\"headline\">Lift \(signed(points.0)) percentage points "
                + "(95 % interval \(signed(points.1)) to \(signed(points.2)))"
                + (lift.isSignificant == true
                    ? "</p>" : ": not significant, the interval includes zero (no effect)</p>")
                + Charts.interval(
                    estimate: points.0, low: points.1, high: points.2,
                    axisTitle: "return rate of nudged users minus holdout, percentage points")
        }
    }

    // MARK: - Pieces

    static let budgetTitles = [
        "schedulingDecision": "Scheduling decision: thread CPU time of one engine call",
        "backgroundRun": "Background run: thread CPU time of one engine call in a background task",
        "liveActivityUpdate": "Live Activity update: thread CPU time of one engine call on a Live Activity",
    ]

    static func budget(title: String, samples: Int, bars: [(String, Double)], budgetMicros: Double) -> String {
        let largest = bars.map(\.1).max() ?? 0
        let held = largest <= budgetMicros
        return "<h3>\(PageText.escape(title))</h3><p>\(PageText.integer(samples)) samples; budget "
            + "\(PageText.duration(micros: budgetMicros)); "
            + (held ? "<span class=\"ok-text\">held</span>" : "<span class=\"bad-text\">breached</span>") + "</p>"
            + Charts.durations(
                bars.map { (label: $0.0, micros: $0.1) }, budgetMicros: budgetMicros, samples: samples)
    }

    static func signed(_ value: Double) -> String {
        (value > 0 ? "+" : "") + PageText.decimal(value)
    }

    static func section(_ id: String, _ title: String, _ body: () -> String) -> String {
        "<section id=\"\(id)\"><h2>\(PageText.escape(title))</h2>\(body())</section>"
    }

    /// What an invariant promises, in words; its name again for one this page does not know.
    static func meaning(ofInvariant name: String) -> String {
        guard let invariant = Invariant(rawValue: name) else { return PageText.escape(name) }
        let text: String
        switch invariant {
        case .noDeliveryInQuietHours: text = "nothing delivered in the user's quiet hours (critical excepted)"
        case .noReEngagementForGiveMeSpace: text = "no re-engagement nudge for a give_me_space user"
        case .perHourCapHeld: text = "no more than maxPerHour deliveries in any 60 minutes"
        case .perDayCapHeld: text = "no more than maxPerDay deliveries on a local day"
        case .noDuplicateDelivery: text = "no request identifier delivered twice"
        case .atMost64Pending: text = "never more than 64 pending requests"
        case .disabledKindNeverDelivered: text = "a kind the user disabled is never delivered"
        case .morningGreetingOncePerLocalDay: text = "at most one morning greeting per local day"
        case .noDeliveryAfterDeadline: text = "nothing delivered after its staleness deadline"
        case .groupNeverMixesKeys: text = "a batch or digest holds items of one key only"
        case .foldedItemInExactlyOneGroup: text = "every folded item delivered in exactly one group"
        case .noRequestDroppedByPendingLimit: text = "nothing silently dropped by the 64 limit"
        case .noReminderForDoneThing: text = "no reminder for something already done"
        case .payloadWithin4KB: text = "every push payload within 4 KB"
        case .noPersonalDataInPayload: text = "no personal data the privacy level forbids in a payload"
        case .deliveryInsideSlotWindow: text = "every delivery inside its slot's window"
        case .noSameInstantDuplicateOfKind: text = "never two of one kind at the same instant"
        case .nudgesWithinCampaignCap: text = "at most the campaign's cap of nudges per absence"
        case .noNudgeAttemptTwice: text = "no nudge attempt delivered twice in one absence"
        case .noNudgeInLocalNight: text = "no nudge in the local night without activity then"
        case .noPushToRetiredToken: text = "nothing sent to a device token after a 410 retired it"
        case .badgeEqualsUnread: text = "the badge is the inbox's unread count within one silent push"
        case .silentWithinBudget: text = "at most two background pushes in any hour"
        case .inboxHoldsEveryVisibleNotification: text = "every notification shown is in the inbox"
        case .noOccurrenceOnTwoChannels: text = "an occurrence shown on one channel only"
        case .liveActivityWithinLimits: text = "every Live Activity command within ActivityKit's limits"
        case .engineRestoresFromSnapshot: text = "a killed app's engine restores from its snapshot"
        case .planMatchesPlatform: text = "what the engine believes pending is what the device holds"
        }
        return PageText.escape(text)
    }

    static let style = """
        body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #222;
               max-width: 1080px; margin: 24px auto; padding: 0 20px; background: #fff; }
        h1 { font-size: 26px; margin-bottom: 4px; } h2 { font-size: 20px; margin: 0 0 8px; }
        h3 { font-size: 15px; margin: 18px 0 4px; }
        section { border: 1px solid #ddd; border-radius: 8px; padding: 14px 18px; margin: 16px 0; }
        .verdict { font-weight: 600; padding: 8px 12px; border-radius: 6px; }
        .ok { background: #e3f4e4; color: #1b5e20; } .bad { background: #fde4e4; color: #b71c1c; }
        .ok-text { color: #1b5e20; font-weight: 600; } .bad-text { color: #b71c1c; font-weight: 600; }
        dl.facts { display: grid; grid-template-columns: max-content 1fr max-content 1fr; gap: 2px 14px; }
        dt { color: #555; } dd { margin: 0; font-variant-numeric: tabular-nums; }
        table { border-collapse: collapse; width: 100%; }
        th, td { text-align: left; padding: 3px 8px; border-bottom: 1px solid #eee; }
        td.number { text-align: right; font-variant-numeric: tabular-nums; }
        pre { background: #f6f6f6; padding: 10px; border-radius: 6px; white-space: pre-wrap; overflow-x: auto; }
        .note { color: #666; font-style: italic; } .headline { font-size: 17px; font-weight: 600; }
        svg { width: 100%; height: auto; display: block; }
        svg text { font: 12px system-ui, sans-serif; fill: #333; } svg text.small { font-size: 10px; }
        svg text.title { font-weight: 600; } svg text.budget-label { fill: #c62828; font-weight: 600; }
        svg .grid { stroke: #e6e6e6; } svg .axis { stroke: #777; } svg .zero { stroke: #777; stroke-dasharray: 4 3; }
        svg .budget { stroke: #c62828; stroke-width: 2; stroke-dasharray: 6 4; }
        svg .whisker { stroke: #4e79a7; stroke-width: 2; }
        footer { color: #777; font-size: 13px; margin: 20px 0; }
        """
}

extension Simulator {
    /// The command that reproduces a run of `options` when the caller did not give one.
    static func defaultCommand(_ options: RunOptions) -> String {
        let scenario = options.scenario
        return "simulate --scenario \(scenario.name) --seed \(scenario.seed) --users \(scenario.users) "
            + "--weeks \(scenario.weeks) --threads \(scenario.threads) --store \(options.store.rawValue)"
    }
}
