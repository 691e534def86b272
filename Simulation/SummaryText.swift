public import Engagement
import Foundation
import Models
import Scheduling

/// Lines of the run's summary on standard output that say what their figures mean.
public enum SummaryText {
    /// `name=count` pairs in `order`, then any others by name.
    public static func counts(_ table: [String: Int], order: [String]) -> String {
        let names = order.filter { table[$0] != nil } + table.keys.filter { !order.contains($0) }.sorted()
        return names.map { "\($0)=\(table[$0] ?? 0)" }.joined(separator: " ")
    }

    /// The re-engagement line: returns within 14 days per group (each lapse's return counted
    /// once), the part of the nudged returns that answered a nudge, and the lift with its 95 %
    /// interval, "not significant" when the interval includes zero. Nil without both groups.
    public static func lift(_ lift: ReturnLift) -> String? {
        guard let treated = lift.treatedReturnRate, let held = lift.holdoutReturnRate, let estimate = lift.lift,
            let interval = lift.liftInterval95
        else { return nil }
        func points(_ value: Double) -> String {
            let tenths = (value * 1_000).rounded()
            let sign = tenths > 0 ? "+" : tenths < 0 ? "-" : ""
            let magnitude = Int(abs(tenths))
            return "\(sign)\(magnitude / 10).\(magnitude % 10)"
        }
        func rate(_ value: Double) -> String {
            let thousandths = Int((value * 1_000).rounded())
            return "0." + String(repeating: "0", count: max(0, 3 - String(thousandths).count)) + String(thousandths)
        }
        let verdict = lift.isSignificant == true ? "significant" : "not significant"
        return "re-engagement: returned within 14 days \(lift.treatedReturns) of \(lift.treatedLapses) nudged lapses "
            + "(\(rate(treated)); \(lift.treatedReturnsPromptedByNudge) of them by answering a nudge) vs "
            + "\(lift.holdoutReturns) of \(lift.holdoutLapses) holdout lapses (\(rate(held))); lift "
            + "\(points(estimate)) points, 95 % interval \(points(interval.low)) to \(points(interval.high)): \(verdict)"
    }

    /// The drain phase: how long it ran, what it delivered, and what it left stuck.
    public static func drain(_ drain: DrainFigures) -> [String] {
        let hours = String(format: "%.1f", Double(drain.virtualSeconds) / 3_600)
        var lines = [
            "drain: \(hours) h of virtual time, \(drain.events) events, \(drain.watched) notifications waiting at "
                + "the end, \(drain.delivered) delivered during the drain, \(drain.stuck) stuck"
        ]
        lines += drain.stuckExamples.map { "  stuck: \($0)" }
        return lines
    }

    /// The server topology's pulls, signals and stale fires; nothing on the device topology.
    public static func deployment(_ figures: DeploymentFigures?) -> [String] {
        guard let figures else { return [] }
        func format(_ value: Double, _ places: Int = 2) -> String { String(format: "%.\(places)f", value) }
        let reasons = figures.pullsByReason.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        return [
            "deployment server: pulls/user-day=\(format(figures.pullsPerUserDay)) (\(reasons.joined(separator: " "))"
                + ", 304 share \(format(figures.notModifiedShare)), \(figures.pullsWhileOffline) offline)"
                + " plan bytes/answer "
                + (figures.planAnswersMeasured == 0
                    ? "not measured"
                    : "p50=\(Int(figures.planAnswerBytesP50)) p99=\(Int(figures.planAnswerBytesP99))"
                        + " (\(figures.planAnswersMeasured) measured)")
                + ", \(format(figures.deltaShareOfPlanAnswers)) deltas,"

                + " signals/user-day=\(format(figures.signalsPerUserDay))"
                + " early syncs/user-day=\(format(figures.earlySyncsPerUserDay, 4))"
                + " withdrawn on the phone/user-day=\(format(figures.withdrawnOnPhonePerUserDay))"
                + " queued offline/user-day=\(format(figures.eventsQueuedOfflinePerUserDay))",
            "stale fires: \(figures.staleFires) (\(format(figures.staleShareOfLocalDeliveries * 100, 3)) % of local "
                + "deliveries), age p50=\(Int(figures.staleAgeSecondsP50)) s p99=\(Int(figures.staleAgeSecondsP99)) s"
                + " (\(byCause(figures.staleFiresByCause))); the phone online when its sync was due:"
                + " p50=\(Int(figures.heardStaleAgeSecondsP50)) s p99=\(Int(figures.heardStaleAgeSecondsP99)) s",
            "unavoidable: \(figures.unavoidableByCause.values.reduce(0, +))"
                + " (\(format(figures.unavoidableShareOfLocalDeliveries * 100, 3)) % of local deliveries;"
                + " \(byCause(figures.unavoidableByCause)))",
        ] + figures.unavoidableExamples.map { "  unavoidable: \($0)" }
    }

    /// `counts` as `key=count`, in key order.
    private static func byCause(_ counts: [String: Int]) -> String {
        counts.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
    }

    /// One line per channel that carried anything, then what APNs dropped on the way.
    public static func channels(_ report: Report) -> [String] {
        var lines: [String] = []
        if let inbox = report.channels["inbox"] { lines.append("channel inbox: added=\(inbox.sent)") }
        for name in ["local", "remote", "silent", "liveActivity"] {
            guard let figures = report.channels[name] else { continue }
            var line = "channel \(name): sent=\(figures.sent)"
            if name != "local" {
                line +=
                    " accepted=\(figures.accepted) retries=\(figures.retries) tokensRetired=\(figures.tokensRetired)"
            }
            line += " shown=\(figures.shown)"
            if name == "local" || name == "remote" {
                line += " opened=\(figures.opened) acted=\(figures.acted)"
                if name == "remote", !ChannelActions.remoteKindsOfferActions {
                    line += " (the remote kinds' categories offer no action buttons: opening is their only answer)"
                }
            }
            if !figures.failed.isEmpty { line += " failed: " + counts(figures.failed, order: []) }
            lines.append(line)
        }
        if !report.droppedByAPNs.isEmpty || report.uninstalls > 0 {
            lines.append(
                "APNs accepted but never delivered: " + counts(report.droppedByAPNs, order: [])
                    + " (uninstalls=\(report.uninstalls))")
        }
        return lines
    }
}

/// Whether a channel's notifications can be answered with an action button at all.
enum ChannelActions {
    /// Whether any kind the server pushes as an alert has a category with an action button;
    /// without one, a remote notification can be opened but never acted on.
    static let remoteKindsOfferActions = NotificationKind.allCases.contains { kind in
        ChannelPolicy.channel(for: kind) == .remote
            && NotificationCategory.all.contains { $0.id == kind.category && !$0.actions.isEmpty }
    }
}
