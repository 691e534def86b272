import Foundation
import PostgresStore
import Testing

@testable import scale_test

/// A worker's time to recover from a fault: from the moment the system is whole again to the
/// first send after the silence that held then (docs/PERFORMANCE.md).
@Suite struct FaultRecoveryTests {
    /// A fault from 10,000 ms to 12,000 ms (PostgreSQL answering again, or SIGCONT, at 12,000).
    static let started: Int64 = 10_000
    static let whole: Int64 = 12_000

    static func silence(_ since: Int64, _ resumed: Int64) -> WorkerSends.Silence {
        WorkerSends.Silence(sinceMillis: since, resumedAtMillis: resumed)
    }

    @Test(
        "Each worker's time from the fault's end to its first send after the silence that held then",
        arguments: [
            // Never silent for long, and still sending after the fault: 0.
            (WorkerSends(worker: "never-silent", lastSendMillis: 20_000), 0),
            // Silent since before the fault began, first send 800 ms after it ended.
            (WorkerSends(worker: "before", silences: [silence(9_500, 12_800)], lastSendMillis: 30_000), 800),
            // Silent since during the outage, sending again 1,035 ms after the end.
            (WorkerSends(worker: "during", silences: [silence(11_000, 13_035)], lastSendMillis: 30_000), 1_035),
            // A lull that began after the fault's end is not this fault's: 0.
            (WorkerSends(worker: "later-lull", silences: [silence(15_000, 16_000)], lastSendMillis: 30_000), 0),
            // A silence over before the end (sent again during a pause of another worker), then a
            // later lull: neither held at the end.
            (
                WorkerSends(
                    worker: "over", silences: [silence(9_000, 11_000), silence(12_500, 14_000)],
                    lastSendMillis: 30_000), 0
            ),
            // A short silence over during the outage, then one that held at its end: the second.
            (
                WorkerSends(
                    worker: "second", silences: [silence(9_000, 10_500), silence(11_000, 12_300)],
                    lastSendMillis: 30_000), 300
            ),
            // A send at the very moment of the end ends the silence at once.
            (WorkerSends(worker: "at-once", silences: [silence(11_000, 12_000)], lastSendMillis: 12_000), 0),
        ] as [(WorkerSends, Int64)])
    func recovery(sends: WorkerSends, expectedMillis: Int64) {
        #expect(FaultRecovery.millis(wholeMillis: Self.whole, sends: sends) == expectedMillis)
    }

    @Test("A worker silent since before the end that never sent again has no time (never)")
    func neverSentAgain() {
        let frozen = WorkerSends(worker: "w2", silences: [Self.silence(1_000, 2_000)], lastSendMillis: 11_500)
        #expect(FaultRecovery.millis(wholeMillis: Self.whole, sends: frozen) == .some(nil))
        let silentFromStart = WorkerSends(worker: "w3", lastSendMillis: 0)
        #expect(FaultRecovery.millis(wholeMillis: Self.whole, sends: silentFromStart) == .some(nil))
    }

    @Test("The killed worker is left out; the others are named; no workers give no times")
    func perWorker() {
        let workers = [
            WorkerSends(worker: "w1", lastSendMillis: 5_000),
            WorkerSends(worker: "w2", silences: [Self.silence(11_000, 12_400)], lastSendMillis: 30_000),
            WorkerSends(worker: "w3", lastSendMillis: 11_900),
        ]
        let times = FaultRecovery.perWorker(wholeMillis: Self.whole, workers: workers, killed: "w1")
        #expect(times.keys.sorted() == ["w2", "w3"])
        #expect(times["w2"] == .some(.some(400)))
        #expect(times["w3"] == .some(nil))
        #expect(FaultRecovery.perWorker(wholeMillis: Self.whole, workers: [], killed: nil).isEmpty)
        #expect(FaultRecovery.perWorker(wholeMillis: Self.whole, workers: [], killed: "w1").isEmpty)
    }

    @Test("A statistics file's JSON reads into silences paired by position")
    func readsStatistics() throws {
        let json = Data(
            #"{"worker":"w2","silentSinceMillis":[9500,15000],"resumedAtMillis":[12800,16000],"lastSendMillis":30000}"#
                .utf8)
        let stats = try #require(try JSONSerialization.jsonObject(with: json) as? [String: Any])
        let sends = try #require(WorkerSends(stats: stats))
        #expect(
            sends
                == WorkerSends(
                    worker: "w2", silences: [Self.silence(9_500, 12_800), Self.silence(15_000, 16_000)],
                    lastSendMillis: 30_000))
        #expect(WorkerSends(stats: ["performed": 3]) == nil, "no worker's name")
        #expect(WorkerSends(stats: ["worker": "w4"]) == WorkerSends(worker: "w4", lastSendMillis: 0))
    }

    @Test("The report lists each fault with its outage and each counted worker's time, null for never")
    func report() throws {
        let faults = ScaleFaults(
            triggers: [], restartCommand: nil, pauseSeconds: 12, url: try .init("postgres://u@127.0.0.1/d"),
            log: { _ in })
        faults.record(
            ScaleFaults.Event(kind: .restartImmediate, startedMillis: Self.started, wholeMillis: Self.whole))
        let stats: [[String: Any]] = [
            ["worker": "w1", "lastSendMillis": 5_000],
            ["worker": "w2", "silentSinceMillis": [11_000], "resumedAtMillis": [12_805], "lastSendMillis": 20_000],
            ["worker": "w3", "lastSendMillis": 11_000],
        ]
        let entries = faults.recoveries(workerStats: stats, killed: "w1")
        let entry = try #require(entries.first)
        #expect(entries.count == 1)
        #expect(entry["fault"] as? String == "restart-immediate")
        #expect(entry["outageMillis"] as? Int64 == 2_000)
        let times = try #require(entry["recoveryMillis"] as? [String: Any])
        #expect(times.keys.sorted() == ["w2", "w3"])
        #expect(times["w2"] as? Int64 == 805)
        #expect(times["w3"] is NSNull)
        #expect(
            ScaleFaults(triggers: [], restartCommand: nil, pauseSeconds: 1, url: faults.url, log: { _ in })
                .recoveries(workerStats: stats, killed: nil).isEmpty)
    }
}
