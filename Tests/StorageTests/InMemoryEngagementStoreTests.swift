import Foundation
import Models
import StoreConformance
import Testing

@testable import Storage

private let t0 = Instant(iso8601: "2027-03-01T07:00:00Z")!
private let past = Instant(secondsSinceEpoch: -(1 << 40))
private let far = Instant(secondsSinceEpoch: 1 << 40)

@Suite("InMemoryEngagementStore")
struct InMemoryEngagementStoreTests {
    @Test("The in-memory store passes the conformance suite", arguments: StoreConformanceCheck.allCases)
    func conformance(_ check: StoreConformanceCheck) throws {
        try checkEngagementStoreConformance({ InMemoryEngagementStore() }, only: [check])
    }

    @Test("Concurrent writers lose nothing and readers never see half a batch")
    func concurrentBatchesAreAtomic() throws {
        let store = InMemoryEngagementStore()
        let writers = 8
        let batchesPerWriter = 200
        // Each batch writes one event and one ledger row for the same user; a reader that ever
        // sees the two counts differ has seen part of a batch.
        let torn = Counter()
        DispatchQueue.concurrentPerform(iterations: writers + 2) { worker in
            if worker >= writers {
                for _ in 0..<batchesPerWriter {
                    for user in 0..<writers {
                        let events = (try? store.activityEvents(userID: "u\(user)", since: past).count) ?? -1
                        let rows = (try? store.ledger(userID: "u\(user)", from: past, to: far).count) ?? -2
                        // Read the ledger second: it can only be ahead of the events, never behind.
                        if rows < events { torn.increment() }
                    }
                }
                return
            }
            for index in 0..<batchesPerWriter {
                let at = t0 + Int64(index)
                let batch = StoreBatch(
                    activityEvents: [ActivityEvent(userID: "u\(worker)", at: at, kind: .moodLogged)],
                    ledgerEntries: [
                        LedgerEntry(
                            userID: "u\(worker)", requestID: "r\(index)", kind: .hydration, state: .delivered, at: at,
                            idempotencyKey: "k\(index)")
                    ])
                try? store.apply(batch)
            }
        }
        #expect(torn.value == 0)
        for user in 0..<writers {
            #expect(try store.activityEvents(userID: "u\(user)", since: past).count == batchesPerWriter)
            #expect(try store.ledger(userID: "u\(user)", from: past, to: far).count == batchesPerWriter)
            #expect(try store.lastActiveAt(userID: "u\(user)") == t0 + Int64(batchesPerWriter - 1))
        }
    }

    @Test("A batch survives a JSON round trip unchanged")
    func batchCodableRoundTrip() throws {
        let batch = StoreBatch(
            profiles: [UserProfile(id: "u1", displayName: "Ana Lima", timeZone: "Asia/Kolkata")],
            activityEvents: [ActivityEvent(userID: "u1", at: t0, kind: .workoutCompleted(durationMinutes: 40))],
            ledgerEntries: [
                LedgerEntry(
                    userID: "u1", requestID: "reEngagement.2027-03-01.1", kind: .reEngagement, state: .cancelled,
                    at: t0, reason: .userReturned, idempotencyKey: "reEngagement.2027-03-01.1/cancelled")
            ],
            engagementStates: [EngagementState(userID: "u1", lapseStage: "churnRisk", reEngagementAttempts: 3)])
        let data = try JSONEncoder().encode(batch)
        #expect(try JSONDecoder().decode(StoreBatch.self, from: data) == batch)
    }

    @Test(
        "Errors read as one actionable line",
        arguments: [
            (
                StoreError.invalidBatch(field: "ledgerEntries[2].userID", problem: "must not be empty"),
                "invalid batch: ledgerEntries[2].userID: must not be empty"
            ),
            (
                StoreError.newerSchema(found: 4, supported: 3),
                "store schema version 4 is newer than the supported version 3; upgrade the package"
            ),
            (StoreError.diskFull("/var/db/engage.sqlite"), "disk full: /var/db/engage.sqlite"),
        ])
    func errorDescriptions(error: StoreError, text: String) {
        #expect(error.description == text)
    }

    @Test("The transition key names the request and the state")
    func transitionKey() {
        #expect(
            LedgerEntry.transitionKey(requestID: "morningGreeting.2027-03-01", state: .delivered)
                == "morningGreeting.2027-03-01/delivered")
    }
}

/// A thread-safe tally for the concurrency test.
private final class Counter: @unchecked Sendable {
    // Safe: `count` is only touched while holding `lock`.
    private let lock = NSLock()
    private var count = 0

    func increment() {
        lock.lock()
        count += 1
        lock.unlock()
    }

    var value: Int {
        lock.lock()
        defer { lock.unlock() }
        return count
    }
}
