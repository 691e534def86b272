import Delivery
import Engagement
import Foundation
import Models
import SimulatedPlatform
import Simulation

extension Simulate {
    /// `SEED=` first, then every derived parameter, so a killed run can still be reproduced.
    func printHeader(_ scenario: Scenario, outputDirectory: String, estimate: RunEstimate) {
        say("SEED=\(scenario.seed)")
        say(
            "scenario=\(scenario.name) file=\(scenarioPath) users=\(scenario.users) weeks=\(scenario.weeks) "
                + "threads=\(scenario.threads) start=\(scenario.start) end=\(scenario.endInstant) out=\(outputDirectory) "
                + "events=\(events) store=\(store)")
        let faults = scenario.faults
        say(
            "faults: backgroundNeverRun=\(faults.backgroundNeverRun) "
                + "backgroundMeanDelayMinutes=\(faults.backgroundMeanDelayMinutes) "
                + "backgroundEarlyExpiration=\(faults.backgroundEarlyExpiration) "
                + "permissionRevokedPerUserWeek=\(faults.permissionRevokedPerUserWeek) "
                + "travelPerTravellerDay=\(faults.travelPerTravellerDay)")
        let apns = faults.apns
        say(
            "faults of APNs and devices: apnsOutagesPerWeek=\(apns.outagesPerWeek) "
                + "apnsOutageMinutes=\(apns.outageMinutes) "
                + "apnsTooManyRequestsBurstsPerWeek=\(apns.tooManyRequestsBurstsPerWeek) "
                + "apnsTooManyRequestsShare=\(apns.tooManyRequestsShare) apnsLatencySeconds=\(apns.meanLatencySeconds) "
                + "apnsUnregisteredAfterHours=\(apns.unregisteredAfterHours) "
                + "deviceOfflinePerUserDay=\(faults.deviceOfflinePerUserDay) "
                + "deviceOfflineMeanHours=\(faults.deviceOfflineMeanHours) uninstallOnChurn=\(faults.uninstallOnChurn)")
        say(
            "faults of the app and its store: appKilledPerUserDay=\(faults.appKilledPerUserDay) "
                + "upgradeShareOfRelaunches=\(faults.upgradeShareOfRelaunches) "
                + "storeWriteFailure=\(faults.storeWriteFailure) "
                + "clockCorrectionPerUserDay=\(faults.clockCorrectionPerUserDay) "
                + "clockSetByUserPerUserWeek=\(faults.clockSetByUserPerUserWeek)")
        say(
            "estimate: memory about \(RunEstimate.text(bytes: estimate.memoryBytes)), "
                + "time about \(RunEstimate.text(seconds: estimate.wallSeconds))")
    }

    func printSummary(_ report: Report, outputDirectory: String) {
        func micros(_ value: Double) -> String { String(format: "%.1f", value) }
        say("")
        say(
            "digest=\(report.digest) worldEvents=\(report.events) eventLogLines=\(report.eventLogLines) "
                + "wall=\(String(format: "%.2f", report.wallSeconds))s "
                + "worldEventsPerSecond=\(Int(report.eventsPerSecond)) peakMemoryMB=\(report.peakMemoryMB)")
        say(
            "deliveries=\(report.deliveries) in the run's weeks; with the \(report.drain.delivered) shown during "
                + "the drain, \(report.deliveries + report.drain.delivered), which the local and remote lines' shown add up to"
        )
        say(
            "rule decisions (the engine's): "
                + SummaryText.counts(report.decisions, order: TraceDecision.allCases.map(\.rawValue)))
        say(
            "platform (the simulated device): "
                + SummaryText.counts(
                    report.platform,
                    order: [
                        "droppedByPendingLimit", "suppressedByAuthorization", "scheduleRejected", "backgroundRuns",
                        "backgroundRunsOverTimeAllowed", "backgroundSubmitRejected",
                    ]))
        for line in SummaryText.channels(report) { say(line) }
        for line in SummaryText.drain(report.drain) { say(line) }
        for line in SummaryText.deployment(report.deployment) { say(line) }
        let content = report.content
        let p99 =
            content.p99AtDeadline
            ? "p99=\(Int(content.p99Millis))ms (the deadline itself: \(content.atDeadline) of \(content.coachCalls) "
                + "calls were cut there)" : "p99=\(Int(content.p99Millis))ms"
        say(
            "content: coachCalls=\(content.coachCalls) aiShare=\(String(format: "%.3f", content.aiShare)) "
                + "p50=\(Int(content.p50Millis))ms \(p99) max=\(Int(content.maxMillis))ms "
                + "(deadline \(Int(content.budgetMillis))ms, virtual) payloadBytesMax=\(report.payloadBytesMax)")
        let snapshot = report.snapshotBytesPerUser
        say("engine snapshot bytes per user: p50=\(snapshot.p50) p99=\(snapshot.p99) max=\(snapshot.max)")
        if let line = SummaryText.lift(report.lift) { say(line) }
        for line in SummaryText.attention(report.attention) { say(line) }
        say("")
        say("budget               samples      p50 us      p99 us      max us   budget us  held")
        for (name, figures) in report.budgets.sorted(by: { $0.key < $1.key }) {
            say(
                name.padding(toLength: 20, withPad: " ", startingAt: 0)
                    + String(figures.samples).leftJustified(10)
                    + micros(figures.p50Micros).leftJustified(12) + micros(figures.p99Micros).leftJustified(12)
                    + micros(figures.maxMicros).leftJustified(12) + micros(figures.budgetMicros).leftJustified(12)
                    + (figures.breached ? "  NO" : "  yes"))
        }
        say("")
        say("invariant                              violations")
        for (name, count) in report.invariantViolations.sorted(by: { $0.key < $1.key }) {
            say(name.padding(toLength: 38, withPad: " ", startingAt: 0) + String(count).leftJustified(11))
        }
        for example in report.violationExamples { say("  " + example) }
        if let check = report.incrementalPlan {
            say(
                "incrementalPlanMatchesFullPass".padding(toLength: 38, withPad: " ", startingAt: 0)
                    + String(check.differingSteps).leftJustified(11)
                    + " (of \(check.checkedSteps) steps checked, \(check.skippedSteps) of them skipping the pass; "
                    + "\(check.unsettledSteps) left regrouping to the next input)"
            )
            say("  passes by what changed: " + check.causesText)
            for example in check.examples { say("  " + example) }
        }
        say("")
        say("report: \(outputDirectory)/report.json, \(outputDirectory)/report.html")
    }
}

/// One line on standard output, written at once: the run's summary goes straight to the file
/// descriptor (no stdio buffer), so `SEED=` reaches a pipe or a file even if the run is killed.
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

extension String {
    func leftJustified(_ width: Int) -> String {
        count >= width ? " " + self : String(repeating: " ", count: width - count) + self
    }
}
