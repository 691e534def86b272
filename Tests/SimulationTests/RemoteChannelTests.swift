import Delivery
import Foundation
import Models
import Scheduling
import SimulatedPlatform
import Storage
import TestSupport
import Testing

@testable import Simulation

/// The remote channel in the world loop: remote kinds go through the simulated APNs, its faults
/// are handled as the client handles them, and the channel invariants hold.
@Suite(.serialized) struct RemoteChannelTests {
    func run(weeks: Int = 1, _ change: (inout Scenario) -> Void) throws -> Report {
        var scenario = try Scenario.parse(baseScenario(), file: "test.json")
        scenario.users = 40
        scenario.weeks = weeks
        change(&scenario)
        return try Simulator.run(RunOptions(scenario: scenario, templates: bundledTemplates, outputDirectory: nil))
    }

    @Test func remoteKindsArePushedAndShownOnOneChannelEachAndEverythingIsInTheInbox() throws {
        let report = try run { _ in }
        #expect(report.invariantsHeld, "\(report.violationExamples)")
        let remote = try #require(report.channels["remote"])
        let local = try #require(report.channels["local"])
        let inbox = try #require(report.channels["inbox"])
        #expect(remote.sent > 0 && remote.accepted == remote.sent)
        #expect(remote.shown > 0 && remote.shown <= remote.accepted)
        #expect(local.shown > 0)
        // Every shown notification was added to the inbox when due; remote ones even when not shown.
        #expect(inbox.sent >= remote.sent + local.shown)
        // Only remote kinds are pushed, only local ones fire on the device.
        let remoteKinds = Set(
            NotificationKind.allCases.filter { ChannelPolicy.channel(for: $0) == .remote }.map(\.rawValue))
        let remoteDelivered = report.deliveriesByKind.filter { remoteKinds.contains($0.key) }.values.reduce(0, +)
        // The channels count the drain's deliveries too; the run's deliveries stop at its end.
        #expect(remoteDelivered <= remote.shown)
        #expect(report.deliveries + report.drain.delivered == remote.shown + local.shown)
        #expect(report.drain.events == 0, "drainDays 0: no drain phase")
        let silent = try #require(report.channels["silent"])
        #expect(silent.sent > 0, "local fires and reads change the unread count: badge syncs follow")
        #expect(report.droppedByAPNs.isEmpty)
    }

    @Test func apnsFaultsAreRetriedRetiredAndDroppedAsAppleDocumentsWithEveryInvariantHeld() throws {
        let report = try run(weeks: 2) { scenario in
            scenario.faults.apns.outagesPerWeek = 20
            scenario.faults.apns.outageMinutes = 60
            scenario.faults.apns.tooManyRequestsBurstsPerWeek = 20
            scenario.faults.apns.tooManyRequestsShare = 0.5
            scenario.faults.apns.unregisteredAfterHours = 2
            scenario.faults.deviceOfflinePerUserDay = 0.6
            scenario.faults.deviceOfflineMeanHours = 6
            scenario.faults.uninstallOnChurn = 1
            scenario.personas = Weights([("churner", 1), ("morningRunner", 1)])
        }
        #expect(report.invariantsHeld, "\(report.violationExamples)")
        let remote = try #require(report.channels["remote"])
        #expect(remote.retries > 0)
        #expect(remote.failed["ServiceUnavailable", default: 0] > 0)
        #expect(remote.accepted < remote.sent)
        #expect(report.uninstalls > 0)
        let retired = remote.tokensRetired + (report.channels["silent"]?.tokensRetired ?? 0)
        #expect(retired > 0 && retired <= report.uninstalls)
        #expect(report.droppedByAPNs["replacedWhileOffline", default: 0] > 0)
    }

    @Test func theSameFaultsGiveTheSameDigestOnOneAndTwoThreads() throws {
        func faulty(_ threads: Int) throws -> Report {
            try run { scenario in
                scenario.threads = threads
                scenario.faults.apns.outagesPerWeek = 10
                scenario.faults.apns.tooManyRequestsBurstsPerWeek = 10
                scenario.faults.deviceOfflinePerUserDay = 0.3
                scenario.faults.uninstallOnChurn = 0.5
            }
        }
        let one = try faulty(1)
        let two = try faulty(2)
        #expect(one.digest == two.digest)
        #expect(one.channels == two.channels)
    }

    /// A server whose dispatch stalls claims its backlog late, by the claim-time rules, and keeps
    /// what those rules promise: nothing in quiet hours, nothing twice, no push to a retired
    /// token, the silent budget, every shown alert in the inbox, no alert past its staleness, a
    /// merged alert's folded items delivered once, and the badge synced when a deferred alert
    /// cannot carry it. Not yet held under a backlog, and so not asserted here: the caps against
    /// what the phone fired itself in the hour a late alert lands in.
    @Test(arguments: [Deployment.server, .device])
    func aStalledServerClaimsItsBacklogLateAndKeepsTheClaimsPromises(deployment: Deployment) throws {
        let report = try run(weeks: 2) { scenario in
            scenario.deployment = deployment
            scenario.faults.serverStallsPerWeek = 10
            scenario.faults.serverStallMinutes = 120
        }
        let promised: [Invariant] = [
            .noDeliveryInQuietHours, .noDuplicateDelivery, .noPushToRetiredToken, .silentWithinBudget,
            .inboxHoldsEveryVisibleNotification, .noOccurrenceOnTwoChannels, .noReminderForDoneThing,
            .disabledKindNeverDelivered, .noDeliveryAfterDeadline, .foldedItemInExactlyOneGroup, .badgeEqualsUnread,
        ]
        for invariant in promised {
            #expect(report.invariantViolations[invariant.rawValue, default: 0] == 0, "\(invariant)")
        }
        #expect(report.platform["serverRowsDispatchedLate", default: 0] > 50, "\(report.platform)")
        #expect(report.livenessHeld, "\(report.drain)")
        let calm = try run(weeks: 2) { $0.deployment = deployment }
        #expect(calm.platform["serverRowsDispatchedLate", default: 0] == 0)
        #expect(calm.invariantsHeld, "\(calm.violationExamples)")
    }

    @Test func theScenarioFileSetsTheAPNsFaultsAndRefusesOutOfRange() throws {
        var object = baseScenario()
        object["faults"] = [
            "apnsOutagesPerWeek": 2, "uninstallOnChurn": 0.25, "deviceOfflineMeanHours": 3, "appKilledPerUserDay": 0.1,
        ]
        let scenario = try Scenario.parse(object, file: "test.json")
        #expect(scenario.faults.appKilledPerUserDay == 0.1)
        #expect(scenario.faults.apns.outagesPerWeek == 2)
        #expect(scenario.faults.uninstallOnChurn == 0.25)
        #expect(scenario.faults.deviceOfflineMeanHours == 3)
        object["faults"] = ["uninstallOnChurn": 2]
        #expect(throws: ScenarioError.self) { try Scenario.parse(object, file: "test.json") }
        object["faults"] = ["apnsOutagesPerWeek": -1]
        #expect(throws: ScenarioError.self) { try Scenario.parse(object, file: "test.json") }
        object["faults"] = ["serverStallsPerWeek": 2, "serverStallMinutes": 45]
        let stalled = try Scenario.parse(object, file: "test.json")
        #expect(stalled.faults.serverStallsPerWeek == 2 && stalled.faults.serverStallMinutes == 45)
        object["faults"] = ["serverStallMinutes": 2_000]
        #expect(throws: ScenarioError.self) { try Scenario.parse(object, file: "test.json") }
    }

    @Test func theChannelCheckerCatchesASendToARetiredTokenATopUpOfSilentPushesAndTwoChannels() {
        var checker = ChannelChecker()
        let at = Instant(secondsSinceEpoch: 1_800_000_000)
        #expect(checker.observeSend(to: "aa", at: at).isEmpty)
        checker.observeRetired("aa")
        #expect(checker.observeSend(to: "aa", at: at + 60) == [.noPushToRetiredToken])
        #expect(checker.observeSend(to: "bb", at: at + 60).isEmpty)
        let r1 = checker.observeSilentAccepted(at: at)
        #expect(r1.isEmpty)
        let r2 = checker.observeSilentAccepted(at: at + 1_830)
        #expect(r2.isEmpty)
        let r3 = checker.observeSilentAccepted(at: at + 3_599)
        #expect(r3 == [.silentWithinBudget])
        let r4 = checker.observeSilentAccepted(at: at + 7_300)
        #expect(r4.isEmpty)
        let r5 = checker.observeShown(FiringKey("mention.2027-03-10.1", repeatsAt: nil), on: .remote, at: at)
        #expect(r5.isEmpty)
        let r6 = checker.observeShown(FiringKey("mention.2027-03-10.1", repeatsAt: nil), on: .local, at: at + 5)
        #expect(r6 == [.noOccurrenceOnTwoChannels])
    }

    @Test func theInboxReadsARepeatingRequestsOccurrencesOneByOne() {
        var inbox = SimulatedInbox()
        let at = Instant(secondsSinceEpoch: 1_800_000_000)
        inbox.add(key: "k1", requestID: "hydration.series.1000", at: at)
        inbox.add(key: "k2", requestID: "hydration.series.1000", at: at + 86_400)
        inbox.add(key: "k3", requestID: "mention.2027-03-10.1", at: at + 86_401)
        #expect(inbox.unreadCount == 3)
        let readOccurrence = inbox.read("hydration.series.1000")
        #expect(readOccurrence)
        // The earliest occurrence is read first, as the app reads the oldest unread item.
        #expect(inbox.unread.map(\.key) == ["k2", "k3"])
        let readOnce = inbox.read("mention.2027-03-10.1")
        let readTwice = inbox.read("mention.2027-03-10.1")
        #expect(readOnce)
        #expect(!readTwice)
        #expect(inbox.holds(requestID: "mention.2027-03-10.1"))
        // A simulated user reads what they look at: nothing is seen and left unread.
        #expect(inbox.counts == InboxCounts(total: 3, unread: 1, unseen: 1))
        inbox.readAll()
        #expect(inbox.unreadCount == 0)
        #expect(inbox.total == 3)
    }

    /// The inbox forgets an item two days after it came, whatever the order of times: held to a
    /// model that drops every item over two days old on every add.
    @Test func theInboxForgetsItemsAfterTwoDaysLikeAScanOnEveryAdd() {
        var generator = SeededGenerator(seed: 5)
        for _ in 0..<200 {
            var inbox = SimulatedInbox()
            var model: [(id: String, at: Int64)] = []
            var time: Int64 = 1_800_000_000
            for _ in 0..<60 {
                // Mostly forward, sometimes back (a clock jump), by up to a day and a half.
                let step = Int64(generator.next() % 130_000)
                time += generator.next() % 8 == 0 ? -step / 3 : step
                let id = "k\(generator.next())"
                inbox.add(key: id, requestID: "mention.2027-03-10.1", at: Instant(secondsSinceEpoch: time))
                model.removeAll { time - $0.at > 2 * .secondsPerDay }
                model.append((id, time))
                #expect(inbox.recent.map(\.key) == model.map(\.id))
                #expect(inbox.recent.map(\.at) == model.map(\.at))
            }
        }
    }
}

/// The drain phase: after the last week the world stands still and what was waiting reaches an end.
@Suite(.serialized) struct DrainTests {
    @Test func aWeeklyDigestDueAfterTheLastDayIsDeliveredInTheDrainAndNothingIsStuck() throws {
        var object = baseScenario()
        var preferences = object["preferences"] as? [String: Any] ?? [:]
        preferences["kudosSetting"] = ["weekly": 1]
        preferences["quietHours"] = ["20:00-16:00": 1]
        preferences["maxPerHour"] = ["1": 1]
        object["preferences"] = preferences
        var scenario = try Scenario.parse(object, file: "test.json")
        scenario.users = 40
        scenario.drainDays = 8
        let report = try Simulator.run(
            RunOptions(scenario: scenario, templates: bundledTemplates, outputDirectory: nil))
        #expect(report.invariantsHeld, "\(report.violationExamples)")
        #expect(report.drain.watched > 0)
        #expect(report.drain.delivered > 0)
        #expect(report.drain.stuck == 0, "\(report.drain.stuckExamples)")
        #expect(report.drain.virtualSeconds > 0 && report.drain.virtualSeconds <= 8 * 86_400)
        #expect(report.exitStatus == 0)
    }

    @Test func anAppKilledEveryFewDaysRestoresItsEngineFromTheSnapshotAndKeepsEveryPromise() throws {
        var scenario = try Scenario.parse(baseScenario(), file: "test.json")
        scenario.users = 30
        scenario.drainDays = 8
        scenario.faults.appKilledPerUserDay = 0.5
        let report = try Simulator.run(
            RunOptions(scenario: scenario, templates: bundledTemplates, outputDirectory: nil))
        #expect(report.platform["appRelaunchesFromSnapshot", default: 0] > 30)
        #expect(report.invariantsHeld, "\(report.violationExamples)")
        #expect(report.drain.stuck == 0)
    }

    @Test func somethingStuckIsALivenessFailureWithItsOwnExitStatus() throws {
        var scenario = try Scenario.parse(baseScenario(), file: "test.json")
        scenario.users = 5
        scenario.drainDays = 8
        var report = try Simulator.run(
            RunOptions(scenario: scenario, templates: bundledTemplates, outputDirectory: nil))
        #expect(report.exitStatus == 0)
        report.drain.stuck = 1
        #expect(report.invariantsHeld)
        #expect(report.exitStatus == 3)
        report.invariantViolations["noDuplicateDelivery"] = 1
        #expect(report.exitStatus == 2)
    }
}

/// The inbox compares identifiers as strings (`==`): its hash prefilter never tells two equal
/// identifiers apart, canonically equivalent spellings included.
@Suite struct InboxIdentityTests {
    @Test func equalIdentifiersAreOneItemWhateverTheirSpelling() {
        var inbox = SimulatedInbox()
        let at = Instant(secondsSinceEpoch: 1_800_000_000)
        inbox.add(key: "caf\u{E9}-key", requestID: "caf\u{E9}.2027-03-10.1", at: at)
        #expect(inbox.holds(requestID: "cafe\u{301}.2027-03-10.1"))
        #expect(!inbox.holds(requestID: "cafe.2027-03-10.1"))
        inbox.add(key: "cafe-key", requestID: "cafe.2027-03-10.1", at: at + 120)
        let read = inbox.read("cafe\u{301}.2027-03-10.1")
        #expect(read && inbox.unreadCount == 1)
        #expect(inbox.unread.map(\.requestID) == ["cafe.2027-03-10.1"])
    }
}
