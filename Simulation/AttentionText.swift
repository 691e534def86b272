import Foundation

/// The attention budget's lines in the run's summary and its section of report.html, both from
/// `AttentionReport` (no second computation).
extension SummaryText {
    /// One line per group (opt-out, keeping defaults, open and action rates against the
    /// product's goals, deliveries per user-day), and the budget's lift; empty without a report.
    public static func attention(_ report: AttentionReport?) -> [String] {
        guard let report else { return [] }
        func rate(_ value: Double?) -> String {
            guard let value else { return "n/a" }
            let tenths = Int((value * 1_000).rounded())
            return "\(tenths / 10).\(tenths % 10)%"
        }
        func points(_ value: Double) -> String {
            let tenths = (value * 1_000).rounded()
            let magnitude = Int(abs(tenths))
            return (tenths > 0 ? "+" : tenths < 0 ? "-" : "") + "\(magnitude / 10).\(magnitude % 10)"
        }
        func line(_ name: String, _ group: AttentionReport.Group) -> String {
            let spread = group.deliveriesPerUserDay
            let missed = AttentionGoals.missed(by: group, goals: report.goals)
            return "\(name): users=\(group.users) optOut=\(rate(group.optOutRate)) (goal < 5%) "
                + "keepingDefaults=\(rate(group.keepingDefaultsShare)) (goal > 80%) open=\(rate(group.openRate)) "
                + "(goal 60%) action=\(rate(group.actionRate)) (goal 40%) deliveries/user-day p50=\(spread.p50) "
                + "p90=\(spread.p90) p99=\(spread.p99) max=\(spread.max) lastWeekEngagement="
                + rate(group.lastWeekEngagement)
                + (missed.isEmpty ? "" : " BELOW GOAL: " + missed.joined(separator: ", "))
        }
        var lines = [
            "attention budget: \(AttentionGoals.budgetText(report.budgetPerDay)), fatigue "
                + (report.fatigueModelled ? "on" : "off"),
            line("  with budget", report.budgeted), line("  held out   ", report.heldOut),
        ]
        if !AttentionGoals.missed(by: report.budgeted, goals: report.goals).isEmpty
            || !AttentionGoals.missed(by: report.heldOut, goals: report.goals).isEmpty
        {
            lines.append(
                "  the product's goals are reported, not judged: the verdict holds the promises and the "
                    + "budgets only")
        }
        if let optOut = report.optOutDifference, let engagement = report.lastWeekEngagementDifference {
            lines.append(
                "  budget lift: opt-out \(points(optOut.estimate)) points (95 % \(points(optOut.low95)) to "
                    + "\(points(optOut.high95))), last-week engagement \(points(engagement.estimate)) points "
                    + "(95 % \(points(engagement.low95)) to \(points(engagement.high95)))")
        }
        return lines
    }
}

extension ReportPage {
    /// The attention section: both groups side by side, per persona and per kind, and the lift.
    static func attention(_ report: Report) -> String {
        guard let attention = report.attention else {
            return section("attention", "Attention budget and fatigue") { "<p class=\"note\">Not measured.</p>" }
        }
        let groups = [("With the budget", attention.budgeted), ("Held out", attention.heldOut)]
        func row(_ label: String, _ goal: String, _ value: (AttentionReport.Group) -> String) -> String {
            "<tr><th>\(PageText.escape(label))</th>" + groups.map { "<td>\(value($0.1))</td>" }.joined()
                + "<td>\(PageText.escape(goal))</td></tr>"
        }
        var table =
            "<table><tr><th></th>" + groups.map { "<th>\($0.0)</th>" }.joined() + "<th>Goal</th></tr>"
        table += row("Users", "") { PageText.integer($0.users) }
        table += row("Opt-out rate", "< 5 %") { PageText.percent($0.optOutRate) }
        table += row("Revoked permission", "") { PageText.integer($0.revokedUsers) }
        table += row("Keeping defaults", "> 80 %") { PageText.percent($0.keepingDefaultsShare) }
        table += row("Open rate", "60 %") { PageText.percent($0.openRate) }
        table += row("Action rate", "40 %") { PageText.percent($0.actionRate) }
        table += row("Deliveries per user-day p50 / p90 / p99 / max", "p99 <= 8") {
            let s = $0.deliveriesPerUserDay
            return "\(s.p50) / \(s.p90) / \(s.p99) / \(s.max)"
        }
        table += row("Last week's engagement", "not lower with the budget") { PageText.percent($0.lastWeekEngagement) }
        let personas = Set(groups.flatMap { $0.1.optOutRateByPersona.keys }).sorted()
        for persona in personas {
            table += row("Opt-out, \(persona)", "") { PageText.percent($0.optOutRateByPersona[persona]) }
        }
        for persona in personas {
            table += row("Last week's engagement, \(persona)", "") {
                PageText.percent($0.lastWeekEngagementByPersona[persona])
            }
        }
        let kinds = Set(groups.flatMap { $0.1.optOutRateByKind.keys }).sorted()
        for kind in kinds {
            table += row("Opt-out of \(kind)", "") { PageText.percent($0.optOutRateByKind[kind] ?? 0) }
        }
        table += "</table>"
        var lift = ""
        if let optOut = attention.optOutDifference, let engagement = attention.lastWeekEngagementDifference {
            lift =
                "<p class=\"headline\">Budget minus holdout: opt-out \(signed(optOut.estimate * 100)) points (95 % "
                + "interval \(signed(optOut.low95 * 100)) to \(signed(optOut.high95 * 100))); last week's engagement "
                + "\(signed(engagement.estimate * 100)) points (95 % interval \(signed(engagement.low95 * 100)) to "
                + "\(signed(engagement.high95 * 100))).</p>"
        }
        let budget = PageText.escape(AttentionGoals.budgetText(attention.budgetPerDay))
        let missed = groups.flatMap { name, group in
            AttentionGoals.missed(by: group, goals: attention.goals).map { "\(name): \($0)" }
        }
        let goals =
            missed.isEmpty
            ? ""
            : "<p class=\"bad-text\">Below the product's goals (reported, not judged: the verdict holds the "
                + "promises and the budgets only): \(PageText.escape(missed.joined(separator: "; "))).</p>"
        return section("attention", "Attention budget and fatigue") {
            goals + "<p>Budget: \(budget); \(PageText.percent(attention.holdoutShare)) of users held out of it; users "
                + (attention.fatigueModelled ? "tire of notifications (the scenario's fatigue model)" : "never tire")
                + ".</p>" + lift + table
        }
    }
}

/// The product's goals for a group of users, as the report states them beside the figures, and
/// the budget's meaning in words.
enum AttentionGoals {
    /// The goals `group` misses, each as "name rate < goal"; empty when it meets them all or
    /// has no figures.
    static func missed(by group: AttentionReport.Group, goals: AttentionReport.Goals) -> [String] {
        func percent(_ value: Double) -> String { String(format: "%.1f%%", value * 100) }
        var missed: [String] = []
        if let rate = group.optOutRate, rate >= goals.optOutRateBelow {
            missed.append("optOut \(percent(rate)) >= \(percent(goals.optOutRateBelow))")
        }
        if let share = group.keepingDefaultsShare, share <= goals.keepingDefaultsAbove {
            missed.append("keepingDefaults \(percent(share)) <= \(percent(goals.keepingDefaultsAbove))")
        }
        if let rate = group.openRate, rate < goals.openRate {
            missed.append("open \(percent(rate)) < \(percent(goals.openRate))")
        }
        if let rate = group.actionRate, rate < goals.actionRate {
            missed.append("action \(percent(rate)) < \(percent(goals.actionRate))")
        }
        return missed
    }

    /// What the budget counts and what it exempts: every notification planned or shown on a
    /// local day counts (`AttentionBudget`), but it never cuts a transactional kind or a digest,
    /// and a user may set a number of their own, so a day may hold more than the app's number.
    static func budgetText(_ perDay: Int?) -> String {
        guard let perDay else { return "none" }
        return "\(perDay) interruptions per user and local day by default (a user may set their own); every "
            + "notification planned or shown that day counts, but transactional kinds and digests are never cut, so "
            + "a day may hold more"
    }
}
