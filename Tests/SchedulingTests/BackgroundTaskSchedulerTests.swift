import Foundation
import Models
import Testing

@testable import Scheduling

private let t0 = Instant(iso8601: "2027-03-01T07:00:00Z")!
private let refreshID = BackgroundJob.lapseDetection.rawValue
private let processingID = BackgroundJob.engagementAnalysis.rawValue
private let allJobs = Set(BackgroundJob.allCases.map(\.rawValue))

private func refresh(_ id: String = refreshID, at begin: Instant? = nil) -> BackgroundTaskRequest {
    BackgroundTaskRequest(identifier: id, kind: .appRefresh, earliestBegin: begin)
}

private func processing(_ id: String, at begin: Instant? = nil) -> BackgroundTaskRequest {
    BackgroundTaskRequest(identifier: id, kind: .processing, earliestBegin: begin)
}

private func scheduler(
    permitted: Set<String> = allJobs, model: BackgroundLaunchModel = .standard, seed: UInt64 = 42
) -> SimulatedBackgroundTaskScheduler {
    SimulatedBackgroundTaskScheduler(
        permittedIdentifiers: permitted, model: model, generator: SeededGenerator(seed: seed))
}

/// A model in which every request runs, so tests of ordering and timing do not depend on luck.
private let alwaysRuns = BackgroundLaunchModel(neverRunProbability: 0, earlyExpirationProbability: 0)

@Suite("SimulatedBackgroundTaskScheduler: submit rules")
struct BackgroundTaskSubmitTests {
    @Test func permittedIdentifierIsAccepted() throws {
        var s = scheduler()
        try s.submit(BackgroundTaskRequest(job: .lapseDetection, earliestBegin: t0), at: t0)
        #expect(s.pendingRequests.map(\.identifier) == [refreshID])
    }

    @Test func unlistedIdentifierIsNotPermitted() {
        var s = scheduler(permitted: [refreshID])
        #expect(throws: BackgroundTaskError.notPermitted(identifier: "com.example.other")) {
            try s.submit(refresh("com.example.other"), at: t0)
        }
        #expect(throws: BackgroundTaskError.notPermitted(identifier: processingID)) {
            try s.submit(processing(processingID), at: t0)
        }
        #expect(s.pendingRequests.isEmpty)
    }

    @Test func emptyPermittedListRejectsEverything() {
        var s = scheduler(permitted: [])
        for job in BackgroundJob.allCases {
            #expect(throws: BackgroundTaskError.notPermitted(identifier: job.rawValue)) {
                try s.submit(BackgroundTaskRequest(job: job, earliestBegin: nil), at: t0)
            }
        }
    }

    @Test func secondAppRefreshWithAnotherIdentifierThrows() throws {
        var s = scheduler(permitted: [refreshID, "refresh.b"])
        try s.submit(refresh(refreshID), at: t0)
        #expect(throws: BackgroundTaskError.tooManyPendingTaskRequests) {
            try s.submit(refresh("refresh.b"), at: t0)
        }
        #expect(s.pendingRequests.map(\.identifier) == [refreshID])
    }

    @Test func resubmittingTheSameIdentifierReplaces() throws {
        var s = scheduler(model: alwaysRuns)
        try s.submit(refresh(at: t0 + 3_600), at: t0)
        try s.submit(refresh(at: t0 + 7_200), at: t0 + 60)
        #expect(s.pendingRequests.count == 1)
        #expect(s.pendingRequests.first?.earliestBegin == t0 + 7_200)
        #expect(try #require(s.plannedLaunch(for: refreshID)) >= t0 + 7_200)
    }

    @Test func eleventhProcessingRequestThrows() throws {
        let ids = (1...11).map { "processing.\($0)" }
        var s = scheduler(permitted: Set(ids + [refreshID]))
        for id in ids.prefix(10) { try s.submit(processing(id), at: t0) }
        #expect(throws: BackgroundTaskError.tooManyPendingTaskRequests) {
            try s.submit(processing(ids[10]), at: t0)
        }
        #expect(s.pendingRequests.map(\.identifier) == Array(ids.prefix(10)))
        // Replacing one of the ten is fine, and the refresh limit is separate.
        try s.submit(processing(ids[3], at: t0 + 60), at: t0)
        try s.submit(refresh(), at: t0)
        #expect(s.pendingRequests.count == 11)
        #expect(s.pendingRequests.last?.identifier == refreshID)
        // After cancelling one, the eleventh fits.
        s.cancel(identifier: ids[0])
        try s.submit(processing(ids[10]), at: t0)
        #expect(s.pendingRequests.filter { $0.kind == .processing }.count == 10)
    }

    @Test func failedSubmitLeavesStateAndGeneratorUntouched() throws {
        var s = scheduler(permitted: [refreshID, "refresh.b"])
        try s.submit(refresh(), at: t0)
        let before = s
        #expect(throws: BackgroundTaskError.tooManyPendingTaskRequests) { try s.submit(refresh("refresh.b"), at: t0) }
        #expect(throws: BackgroundTaskError.notPermitted(identifier: "x")) { try s.submit(refresh("x"), at: t0) }
        #expect(s.generator == before.generator)
        #expect(s.entries == before.entries)
    }

    @Test func backgroundRefreshOffIsUnavailable() throws {
        var s = scheduler()
        s.isBackgroundRefreshEnabled = false
        #expect(throws: BackgroundTaskError.unavailable) { try s.submit(refresh(), at: t0) }
        #expect(throws: BackgroundTaskError.unavailable) { try s.submit(processing(processingID), at: t0) }
        // `unavailable` wins even over an identifier that is not permitted.
        #expect(throws: BackgroundTaskError.unavailable) { try s.submit(refresh("nope"), at: t0) }
        #expect(s.pendingRequests.isEmpty)
        s.isBackgroundRefreshEnabled = true
        try s.submit(refresh(), at: t0)
        #expect(s.pendingRequests.count == 1)
    }

    @Test func cancelRemovesOneAndCancelAllRemovesEverything() throws {
        var s = scheduler(model: alwaysRuns)
        try s.submit(refresh(), at: t0)
        try s.submit(processing(processingID), at: t0)
        try s.submit(processing(BackgroundJob.patternAnalysis.rawValue), at: t0)
        s.cancel(identifier: processingID)
        s.cancel(identifier: "not.pending")
        #expect(s.pendingRequests.map(\.identifier) == [refreshID, BackgroundJob.patternAnalysis.rawValue])
        #expect(s.plannedLaunch(for: processingID) == nil)
        s.cancelAll()
        #expect(s.pendingRequests.isEmpty)
        #expect(s.nextLaunchInstant == nil)
        #expect(s.launchDue(through: t0 + 365 * .secondsPerDay).isEmpty)
    }

    @Test func cancelledRequestNeverLaunches() throws {
        var s = scheduler(model: alwaysRuns)
        try s.submit(refresh(), at: t0)
        try s.submit(processing(processingID), at: t0)
        s.cancel(identifier: refreshID)
        let launches = s.launchDue(through: t0 + 365 * .secondsPerDay)
        #expect(launches.map(\.request.identifier) == [processingID])
    }

    @Test func usableThroughTheProtocol() throws {
        func schedule(_ scheduler: inout some BackgroundTaskScheduling) throws(BackgroundTaskError) {
            try scheduler.submit(BackgroundTaskRequest(job: .patternAnalysis, earliestBegin: t0), at: t0)
        }
        var s = scheduler()
        try schedule(&s)
        #expect(s.pendingRequests.map(\.identifier) == [BackgroundJob.patternAnalysis.rawValue])
    }
}

@Suite("SimulatedBackgroundTaskScheduler: launches")
struct BackgroundTaskLaunchTests {
    @Test func earliestBeginIsALowerBoundOverManyDraws() throws {
        var s = scheduler(model: BackgroundLaunchModel(meanDelaySeconds: 600, neverRunProbability: 0), seed: 7)
        var total: Int64 = 0
        var zeroDelays = 0
        for i in 0..<5_000 {
            let now = t0 + Int64(i) * 10
            let begin = now + Int64(i % 7) * 3_600
            try s.submit(refresh(at: begin), at: now)
            let planned = try #require(s.plannedLaunch(for: refreshID))
            #expect(planned >= begin)
            total += planned - begin
            if planned == begin { zeroDelays += 1 }
        }
        // The delay is exponential with mean 600 s: the sample mean is close and the task is
        // almost never launched the very second it is allowed to.
        let mean = Double(total) / 5_000
        #expect(abs(mean - 600) < 40)
        #expect(zeroDelays < 50)
    }

    @Test func earliestBeginInThePastCountsFromNow() throws {
        var s = scheduler(model: BackgroundLaunchModel(neverRunProbability: 0))
        for i in 0..<500 {
            try s.submit(refresh(at: t0 - 86_400), at: t0 + Int64(i))
            #expect(try #require(s.plannedLaunch(for: refreshID)) >= t0 + Int64(i))
        }
        try s.submit(refresh(at: nil), at: t0)
        #expect(try #require(s.plannedLaunch(for: refreshID)) >= t0)
    }

    @Test func nothingLaunchesBeforeItsPlannedTime() throws {
        var s = scheduler(model: alwaysRuns)
        try s.submit(refresh(at: t0 + 3_600), at: t0)
        let planned = try #require(s.plannedLaunch(for: refreshID))
        #expect(s.nextLaunchInstant == planned)
        #expect(s.launchDue(through: planned - 1).isEmpty)
        #expect(s.pendingRequests.count == 1)
        let launches = s.launchDue(through: planned)
        #expect(launches.count == 1)
        #expect(launches.first?.launchedAt == planned)
        #expect(launches.first?.request == refresh(at: t0 + 3_600))
    }

    @Test func eachLaunchHappensOnce() throws {
        var s = scheduler(model: alwaysRuns)
        try s.submit(refresh(), at: t0)
        try s.submit(processing(processingID), at: t0)
        let far = t0 + 30 * .secondsPerDay
        #expect(s.launchDue(through: far).count == 2)
        #expect(s.launchDue(through: far).isEmpty)
        #expect(s.launchDue(through: far + 86_400).isEmpty)
        #expect(s.pendingRequests.isEmpty)
        #expect(s.nextLaunchInstant == nil)
    }

    @Test func launchesComeInLaunchTimeThenIdentifierOrder() throws {
        // Zero delay: launches land exactly on earliestBegin, so ties are forced.
        let model = BackgroundLaunchModel(meanDelaySeconds: 0, neverRunProbability: 0, earlyExpirationProbability: 0)
        let ids = ["p.c", "p.a", "p.d", "p.b"]
        var s = scheduler(permitted: Set(ids), model: model)
        try s.submit(processing("p.c", at: t0 + 100), at: t0)
        try s.submit(processing("p.a", at: t0 + 200), at: t0)
        try s.submit(processing("p.d", at: t0 + 100), at: t0)
        try s.submit(processing("p.b", at: t0 + 100), at: t0)
        #expect(s.nextLaunchInstant == t0 + 100)
        let launches = s.launchDue(through: t0 + 1_000)
        #expect(launches.map(\.request.identifier) == ["p.b", "p.c", "p.d", "p.a"])
        #expect(launches.map(\.launchedAt) == [t0 + 100, t0 + 100, t0 + 100, t0 + 200])
    }

    @Test func launchDueOnlyTakesWhatIsDue() throws {
        let model = BackgroundLaunchModel(meanDelaySeconds: 0, neverRunProbability: 0, earlyExpirationProbability: 0)
        var s = scheduler(model: model)
        try s.submit(refresh(at: t0 + 100), at: t0)
        try s.submit(processing(processingID, at: t0 + 500), at: t0)
        #expect(s.launchDue(through: t0 + 99).isEmpty)
        #expect(s.launchDue(through: t0 + 100).map(\.request.identifier) == [refreshID])
        #expect(s.nextLaunchInstant == t0 + 500)
        #expect(s.pendingRequests.map(\.identifier) == [processingID])
        #expect(s.launchDue(through: t0 + 500).map(\.request.identifier) == [processingID])
    }

    @Test func neverRunRateMatchesTheModel() throws {
        for probability in [0.05, 0.3] {
            var s = scheduler(model: BackgroundLaunchModel(neverRunProbability: probability), seed: 2_027)
            var never = 0
            for i in 0..<10_000 {
                try s.submit(refresh(), at: t0 + Int64(i))
                if s.plannedLaunch(for: refreshID) == nil { never += 1 }
            }
            // Binomial standard deviation is at most 46 for n = 10 000; allow about 4 of them.
            #expect(abs(Double(never) - probability * 10_000) < 200, "probability \(probability): \(never) never ran")
        }
    }

    @Test func neverRunRequestsStayPendingButNeverLaunch() throws {
        var s = scheduler(model: BackgroundLaunchModel(neverRunProbability: 1))
        try s.submit(refresh(), at: t0)
        try s.submit(processing(processingID), at: t0)
        #expect(s.pendingRequests.count == 2)
        #expect(s.nextLaunchInstant == nil)
        #expect(s.launchDue(through: t0 + 3_650 * .secondsPerDay).isEmpty)
        #expect(s.pendingRequests.count == 2)
    }

    @Test func timeAllowedNeverExceedsTheBudget() throws {
        let model = BackgroundLaunchModel(neverRunProbability: 0, earlyExpirationProbability: 0.5)
        var s = scheduler(model: model, seed: 99)
        var early = [BackgroundTaskKind: Int]()
        var launches = 0
        for i in 0..<2_000 {
            let now = t0 + Int64(i) * .secondsPerDay
            try s.submit(refresh(), at: now)
            try s.submit(processing(processingID), at: now)
            for launch in s.launchDue(through: now + .secondsPerDay - 1) {
                launches += 1
                let budget = launch.request.kind == .appRefresh ? 30.0 : 300.0
                #expect(launch.timeAllowedSeconds <= budget)
                #expect(launch.timeAllowedSeconds >= 0.2 * budget)
                #expect(launch.expiresAt >= launch.launchedAt + Int64(0.2 * budget) - 1)
                if launch.timeAllowedSeconds < budget { early[launch.request.kind, default: 0] += 1 }
            }
            s.cancelAll()
        }
        #expect(launches > 3_000)
        // About half of each kind expires early.
        for kind in BackgroundTaskKind.allCases {
            let count = early[kind, default: 0]
            #expect(count > launches / 4 - 200 && count < launches / 4 + 200, "\(kind): \(count) early of \(launches)")
        }
    }

    @Test func standardModelGivesRefreshThirtySecondsAtMost() throws {
        #expect(BackgroundLaunchModel.standard.refreshBudgetSeconds == 30)
        #expect(BackgroundLaunchModel.standard.processingBudgetSeconds == 300)
        #expect(BackgroundLaunchModel.standard.meanDelaySeconds == 1_800)
        #expect(BackgroundLaunchModel.standard.neverRunProbability == 0.05)
        #expect(BackgroundLaunchModel.standard.earlyExpirationProbability == 0.05)
        var s = scheduler(seed: 5)
        var fullBudget = 0
        for i in 0..<1_000 {
            let now = t0 + Int64(i) * .secondsPerDay
            try s.submit(refresh(), at: now)
            for launch in s.launchDue(through: now + .secondsPerDay - 1) {
                #expect(launch.timeAllowedSeconds <= 30)
                if launch.timeAllowedSeconds == 30 { fullBudget += 1 }
            }
            s.cancelAll()
        }
        #expect(fullBudget > 850)
    }

    @Test func sameSeedSameLaunches() throws {
        func run(seed: UInt64) throws -> [BackgroundLaunch] {
            var s = scheduler(seed: seed)
            var all: [BackgroundLaunch] = []
            for day in 0..<60 {
                let now = t0 + Int64(day) * .secondsPerDay
                try s.submit(BackgroundTaskRequest(job: .lapseDetection, earliestBegin: now + 3_600), at: now)
                try s.submit(BackgroundTaskRequest(job: .engagementAnalysis, earliestBegin: now + 7_200), at: now)
                try s.submit(BackgroundTaskRequest(job: .patternAnalysis, earliestBegin: now + 10_800), at: now)
                all += s.launchDue(through: now + .secondsPerDay - 1)
            }
            return all
        }
        let first = try run(seed: 11)
        #expect(first.count > 100)
        #expect(try run(seed: 11) == first)
        #expect(try run(seed: 12) != first)
    }

    @Test func decisionsAreFixedAtSubmitTime() throws {
        // Launching in one big step or in many small ones gives the same launches.
        var a = scheduler(seed: 3)
        try a.submit(refresh(at: t0 + 600), at: t0)
        try a.submit(processing(processingID, at: t0 + 60), at: t0)
        var b = a
        let atOnce = a.launchDue(through: t0 + 10 * .secondsPerDay)
        var stepped: [BackgroundLaunch] = []
        var now = t0
        while now < t0 + 10 * .secondsPerDay {
            now = now + 300
            stepped += b.launchDue(through: now)
        }
        #expect(atOnce == stepped)
    }
}

@Suite("SimulatedBackgroundTaskScheduler: suspension")
struct BackgroundTaskSuspensionTests {
    @Test func terminatedByUserLaunchesNothingUntilTheAppRunsAgain() throws {
        var s = scheduler(model: alwaysRuns)
        try s.submit(refresh(at: t0 + 600), at: t0)
        let planned = try #require(s.plannedLaunch(for: refreshID))
        s.isTerminatedByUser = true
        #expect(s.isSuspended)
        #expect(s.nextLaunchInstant == nil)
        #expect(s.launchDue(through: planned + 30 * .secondsPerDay).isEmpty)
        // The request stays pending.
        #expect(s.pendingRequests.map(\.identifier) == [refreshID])

        let reopened = planned + 30 * .secondsPerDay + 1
        s.isTerminatedByUser = false
        // The launch was missed: it happens after the app ran again, never in the past.
        #expect(s.launchDue(through: reopened).allSatisfy { $0.launchedAt >= reopened })
        let next = try #require(s.nextLaunchInstant)
        #expect(next >= reopened)
        let launches = s.launchDue(through: next)
        #expect(launches.map(\.request.identifier) == [refreshID])
        #expect(launches.first?.launchedAt == next)
    }

    @Test func submitAfterReopeningReplansMissedLaunches() throws {
        var s = scheduler(model: alwaysRuns)
        try s.submit(processing(processingID, at: t0), at: t0)
        let planned = try #require(s.plannedLaunch(for: processingID))
        s.isTerminatedByUser = true
        s.isTerminatedByUser = false
        let reopened = planned + 86_400
        try s.submit(refresh(at: reopened), at: reopened)
        #expect(try #require(s.plannedLaunch(for: processingID)) >= reopened)
    }

    @Test func launchesNotYetDueSurviveASuspensionUnchanged() throws {
        var s = scheduler(model: alwaysRuns)
        try s.submit(refresh(at: t0 + 10 * .secondsPerDay), at: t0)
        let planned = try #require(s.plannedLaunch(for: refreshID))
        s.isTerminatedByUser = true
        #expect(s.launchDue(through: t0 + 3_600).isEmpty)
        s.isTerminatedByUser = false
        #expect(s.launchDue(through: t0 + 7_200).isEmpty)
        #expect(s.plannedLaunch(for: refreshID) == planned)
        #expect(s.nextLaunchInstant == planned)
    }

    @Test func backgroundRefreshOffAlsoStopsLaunches() throws {
        var s = scheduler(model: alwaysRuns)
        try s.submit(refresh(at: t0), at: t0)
        let planned = try #require(s.plannedLaunch(for: refreshID))
        s.isBackgroundRefreshEnabled = false
        #expect(s.nextLaunchInstant == nil)
        #expect(s.launchDue(through: planned + 86_400).isEmpty)
        // Both switches must allow it before anything runs again.
        s.isTerminatedByUser = true
        s.isBackgroundRefreshEnabled = true
        #expect(s.launchDue(through: planned + 2 * 86_400).isEmpty)
        s.isTerminatedByUser = false
        // The first call after that marks the moment the app may run again.
        let reopened = planned + 3 * 86_400
        #expect(s.launchDue(through: reopened).allSatisfy { $0.launchedAt >= reopened })
        let launched = s.launchDue(through: planned + 100 * 86_400)
        #expect(launched.count == 1)
        #expect(try #require(launched.first).launchedAt >= reopened)
    }

    @Test func submitWhileTerminatedIsAcceptedButWaits() throws {
        var s = scheduler(model: alwaysRuns)
        s.isTerminatedByUser = true
        try s.submit(refresh(at: t0), at: t0)
        #expect(s.pendingRequests.count == 1)
        #expect(s.launchDue(through: t0 + 86_400).isEmpty)
    }
}

@Suite("BackgroundLaunchModel decoding")
struct BackgroundLaunchModelDecodingTests {
    private func decode(_ json: String) throws -> BackgroundLaunchModel {
        try JSONDecoder().decode(BackgroundLaunchModel.self, from: Data(json.utf8))
    }

    @Test func emptyObjectGivesTheStandardModel() throws {
        #expect(try decode("{}") == .standard)
    }

    @Test func presentKeysOverrideDefaults() throws {
        let model = try decode(#"{"meanDelaySeconds": 60, "neverRunProbability": 0}"#)
        #expect(model.meanDelaySeconds == 60)
        #expect(model.neverRunProbability == 0)
        #expect(model.refreshBudgetSeconds == 30)
    }

    @Test func roundTrips() throws {
        let model = BackgroundLaunchModel(
            meanDelaySeconds: 12, neverRunProbability: 0.5, earlyExpirationProbability: 0.25, refreshBudgetSeconds: 20,
            processingBudgetSeconds: 600)
        let data = try JSONEncoder().encode(model)
        #expect(try JSONDecoder().decode(BackgroundLaunchModel.self, from: data) == model)
    }

    @Test(arguments: [
        (#"{"meanDelay": 5}"#, "meanDelay"),
        (#"{"neverRunProbability": 1.5}"#, "neverRunProbability"),
        (#"{"earlyExpirationProbability": -0.1}"#, "earlyExpirationProbability"),
        (#"{"refreshBudgetSeconds": 0}"#, "refreshBudgetSeconds"),
        (#"{"processingBudgetSeconds": -1}"#, "processingBudgetSeconds"),
        (#"{"meanDelaySeconds": -1}"#, "meanDelaySeconds"),
    ])
    func invalidInputNamesTheField(json: String, field: String) {
        do {
            _ = try decode(json)
            Issue.record("decoded \(json)")
        } catch let error as DecodingError {
            #expect(error.fieldMessage.hasPrefix(field + ":"), "\(error.fieldMessage)")
        } catch {
            Issue.record("unexpected \(error)")
        }
    }
}
