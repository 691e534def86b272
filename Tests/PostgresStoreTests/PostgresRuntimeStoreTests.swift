import Dispatch
import Foundation
import Models
import PostgresNIO
import PostgresStore
import Storage
import StoreConformance
import Testing

private let t0 = Instant(iso8601: "2027-03-01T08:00:00Z")!
private let past = Instant(secondsSinceEpoch: -(1 << 40))
private let far = Instant(secondsSinceEpoch: 1 << 40)
private let conflictOfU1 = StoreError.unavailable(
    "the snapshot of user \"u1\" was changed by another process; load it again")

private func row(_ userID: UserID, _ requestID: RequestID, dueIn seconds: Int64) -> OutboxRow {
    OutboxRow(
        key: "\(userID)/\(requestID)/push/\(seconds)", userID: userID, requestID: requestID,
        dueAt: t0 + seconds, payload: samplePayload(requestID, channel: .push))
}

/// A commit touching every table a commit writes, for `userID`.
private func fullCommit(_ userID: UserID, snapshot: [UInt8], dueIn seconds: Int64 = 60) -> RuntimeCommit {
    RuntimeCommit(
        userID: userID, snapshot: snapshot,
        batch: StoreBatch(
            profiles: [UserProfile(id: userID, displayName: "Ana", timeZone: "Europe/Lisbon")],
            activityEvents: [ActivityEvent(userID: userID, at: t0, kind: .coachChat)],
            ledgerEntries: [
                LedgerEntry(
                    userID: userID, requestID: "r", kind: .mealReminder, state: .pending, at: t0,
                    idempotencyKey: "r/pending/\(seconds)")
            ],
            engagementStates: [EngagementState(userID: userID, lapseStage: "active")]),
        outbox: [row(userID, "r", dueIn: seconds)],
        userVersions: UserVersions([.timeZone: 1_000]),
        idempotency: IdempotencyRecord(
            userID: userID, key: "k\(seconds)", requestHash: "h", status: 202, response: [1, 2], createdAt: t0),
        trace: [
            TraceRecord(
                userID: userID, at: t0, requestID: "r", kind: .mealReminder, decision: .scheduled, reason: .onTime,
                input: "appOpened")
        ])
}

/// Everything a commit of `userID` may have written, as one string.
private func everything(_ userID: UserID, _ store: PostgresRuntimeStore) throws -> String {
    """
    \(String(describing: try store.profile(id: userID)))
    \(try store.activityEvents(userID: userID, since: past))
    \(try store.ledger(userID: userID, from: past, to: far))
    \(String(describing: try store.engagementState(userID: userID)))
    \(try store.pendingOutbox(userID: userID))
    \(String(describing: try store.userVersions(userID: userID)))
    \(String(describing: try store.idempotencyRecord(userID: userID, key: "k60")))
    \(try store.traceRecords(userID: userID, after: TracePosition(at: past, id: 0), limit: 10))
    """
}

/// The work queue's row of `userID` (its due instant), or nil.
private func workQueueDue(_ userID: UserID, _ database: ScratchDatabase) throws -> Int64? {
    try database.query("SELECT due_at FROM work_queue WHERE user_id = \(userID.rawValue)").first.map {
        try $0.decode(Int64.self)
    }
}

@Suite("PostgresRuntimeStore", .enabled(if: TestServer.isConfigured, TestServer.disabledReason))
struct PostgresRuntimeStoreTests {
    @Test("A commit over a snapshot another process changed fails whole; reading again lets it through")
    func snapshotConflictIsDetected() throws {
        try ScratchDatabase.with { database in
            try database.withStore { a in
                try database.withStore { b in
                    try a.commit(RuntimeCommit(userID: "u1", snapshot: [1]))
                    #expect(try a.snapshot(userID: "u1") == [1])
                    #expect(try b.snapshot(userID: "u1") == [1])
                    try b.commit(RuntimeCommit(userID: "u1", snapshot: [2]))

                    // u2's commit comes first in the group and is fine on its own: it is rolled back too.
                    let group = [fullCommit("u2", snapshot: [9]), fullCommit("u1", snapshot: [3])]
                    #expect(throws: conflictOfU1) { try a.commitGroup(group) }
                    #expect(try b.snapshot(userID: "u1") == [2])
                    #expect(try b.snapshot(userID: "u2") == nil)
                    let empty = try everything("nobody", b)
                    #expect(try everything("u1", b) == empty)
                    #expect(try everything("u2", b) == empty)
                    #expect(try b.outboxDepth() == 0)
                    #expect(try b.idempotencyRecordCount() == 0)
                    #expect(try workQueueDue("u1", database) == nil)
                    #expect(try workQueueDue("u2", database) == nil)

                    // A reads again and its group goes through.
                    #expect(try a.snapshot(userID: "u1") == [2])
                    try a.commitGroup(group)
                    #expect(try b.snapshot(userID: "u1") == [3])
                    #expect(try b.snapshot(userID: "u2") == [9])
                    #expect(try b.pendingOutbox(userID: "u1").map(\.requestID) == ["r"])
                    // A remembers what it wrote: its next commit needs no read.
                    try a.commit(RuntimeCommit(userID: "u1", snapshot: [4]))
                    #expect(try b.snapshot(userID: "u1") == [4])
                }
            }
        }
    }

    @Test("A user read as absent is inserted once: a row another process inserted first is a conflict")
    func anInsertOverAnotherProcessesRowIsAConflict() throws {
        try ScratchDatabase.with { database in
            try database.withStore { a in
                try database.withStore { b in
                    #expect(try a.snapshot(userID: "u1") == nil)
                    #expect(try b.snapshot(userID: "u1") == nil)
                    try b.commit(RuntimeCommit(userID: "u1", snapshot: [1]))
                    #expect(throws: conflictOfU1) { try a.commit(fullCommit("u1", snapshot: [2])) }
                    #expect(try b.snapshot(userID: "u1") == [1])
                    #expect(try b.outboxDepth() == 0)
                    // The conflict forgot u1's version: without a read, the next commit is unconditional.
                    try a.commit(RuntimeCommit(userID: "u1", snapshot: [3]))
                    #expect(try b.snapshot(userID: "u1") == [3])
                }
            }
        }
    }

    @Test("Two commits of one user in one group: the second writes over the first's version")
    func aGroupWithTwoCommitsOfOneUser() throws {
        try ScratchDatabase.withStore { store in
            #expect(try store.snapshot(userID: "u1") == nil)
            try store.commitGroup([
                RuntimeCommit(userID: "u1", snapshot: [1]), RuntimeCommit(userID: "u1", snapshot: [2]),
            ])
            try store.commit(RuntimeCommit(userID: "u1", snapshot: [3]))
            #expect(try store.snapshot(userID: "u1") == [3])
        }
    }

    @Test("forgetSnapshotVersions makes the next commit unconditional")
    func forgettingVersions() throws {
        try ScratchDatabase.with { database in
            try database.withStore { a in
                try database.withStore { b in
                    try a.commit(RuntimeCommit(userID: "u1", snapshot: [1]))
                    try b.commit(RuntimeCommit(userID: "u1", snapshot: [2]))
                    #expect(throws: conflictOfU1) { try a.commit(RuntimeCommit(userID: "u1", snapshot: [3])) }
                    try b.commit(RuntimeCommit(userID: "u1", snapshot: [4]))
                    b.forgetSnapshotVersions()
                    try a.commit(RuntimeCommit(userID: "u1", snapshot: [5]))
                    try b.commit(RuntimeCommit(userID: "u1", snapshot: [6]))
                    #expect(try a.snapshot(userID: "u1") == [6])
                }
            }
        }
    }

    @Test("Commits and deliveries note each user's soonest new row in work_queue")
    func newRowsAreNotedInTheWorkQueue() throws {
        try ScratchDatabase.with { database in
            try database.withStore { store in
                try store.commit(
                    RuntimeCommit(
                        userID: "u1", snapshot: [1], outbox: [row("u1", "a", dueIn: 90), row("u1", "b", dueIn: 30)]))
                try store.commit(RuntimeCommit(userID: "u2", snapshot: [1]))
                #expect(try workQueueDue("u1", database) == (t0 + 30).secondsSinceEpoch)
                #expect(try workQueueDue("u2", database) == nil)
                // A later row leaves the soonest; a sooner one moves it.
                try store.commit(RuntimeCommit(userID: "u1", snapshot: [2], outbox: [row("u1", "c", dueIn: 600)]))
                #expect(try workQueueDue("u1", database) == (t0 + 30).secondsSinceEpoch)
                try store.commit(RuntimeCommit(userID: "u1", snapshot: [3], outbox: [row("u1", "d", dueIn: 10)]))
                #expect(try workQueueDue("u1", database) == (t0 + 10).secondsSinceEpoch)
                // Rows whose keys are done are not written, so not noted.
                let done = row("u3", "a", dueIn: 5)
                try store.completeOutbox(keys: [done.key], at: t0)
                try store.commit(RuntimeCommit(userID: "u3", snapshot: [1], outbox: [done]))
                #expect(try workQueueDue("u3", database) == nil)
                // A delivery's next rows are noted with it.
                let inbox = OutboxRow(
                    key: "u4/lunch/inbox", userID: "u4", requestID: "lunch", dueAt: t0 + 100,
                    payload: samplePayload("lunch", channel: .inbox))
                let next = OutboxRow(
                    key: "u4/sync", userID: "u4", requestID: "sync", dueAt: t0 + 50, payload: .sync)
                try store.commit(RuntimeCommit(userID: "u4", snapshot: [1], outbox: [inbox]))
                try database.query("DELETE FROM work_queue WHERE user_id = 'u4'")
                try store.deliverToInbox(
                    InboxDelivery(row: inbox, kind: "mealReminder", title: "Lunch", body: "Log it"), next: [next],
                    at: t0 + 100)
                #expect(try workQueueDue("u4", database) == (t0 + 50).secondsSinceEpoch)
            }
        }
    }

    @Test("A completion racing a replayed commit in another process never leaves its key pending")
    func aCompletionRacingAReplayNeverLeavesTheKeyPending() throws {
        try ScratchDatabase.with { database in
            try database.withStore { runtime in
                try database.withStore { dispatcher in
                    for round in 0..<25 {
                        let commit = RuntimeCommit(
                            userID: "u1", snapshot: [UInt8(round)], outbox: [row("u1", "r\(round)", dueIn: 60)])
                        try runtime.commit(commit)
                        let failures = Failures()
                        DispatchQueue.concurrentPerform(iterations: 2) { worker in
                            do {
                                if worker == 0 {
                                    try dispatcher.completeOutbox(keys: [commit.outbox[0].key], at: t0 + 61)
                                } else {
                                    try runtime.commit(commit)
                                }
                            } catch {
                                failures.append("\(error)")
                            }
                        }
                        #expect(failures.all.isEmpty)
                        #expect(try dispatcher.pendingOutbox(userID: "u1").isEmpty, "round \(round)")
                    }
                }
            }
        }
    }

    @Test("Opening a migrated database again migrates nothing and keeps the data")
    func migratingTwice() throws {
        try ScratchDatabase.with { database in
            try database.withStore { store in try store.commit(fullCommit("u1", snapshot: [1])) }
            try database.withStore { store throws in
                #expect(try store.snapshot(userID: "u1") == [1])
                #expect(try store.userIDs() == ["u1"])
            }
            let versions = try database.query("SELECT version FROM engaged_schema ORDER BY version").map {
                try $0.decode(Int.self)
            }
            #expect(versions == Array(1...PostgresRuntimeStore.schemaVersion))
        }
    }

    @Test("Stores opening at once on a new database migrate it once")
    func concurrentOpeningsMigrateOnce() throws {
        try ScratchDatabase.with { database in
            let openers = 4
            let failures = Failures()
            DispatchQueue.concurrentPerform(iterations: openers) { index in
                do {
                    try database.withStore { store in
                        try store.commit(RuntimeCommit(userID: "u\(index)", snapshot: [UInt8(index)]))
                    }
                } catch {
                    failures.append("\(error)")
                }
            }
            #expect(failures.all.isEmpty)
            let versions = try database.query("SELECT version FROM engaged_schema ORDER BY version").map {
                try $0.decode(Int.self)
            }
            #expect(versions == Array(1...PostgresRuntimeStore.schemaVersion))
            try database.withStore { store throws in
                for index in 0..<openers { #expect(try store.snapshot(userID: "u\(index)") == [UInt8(index)]) }
            }
        }
    }

    @Test("A database of a newer schema is refused and left as it was")
    func aNewerSchemaIsRefused() throws {
        try ScratchDatabase.with { database in
            try database.withStore { store in try store.commit(RuntimeCommit(userID: "u1", snapshot: [1])) }
            let newer = PostgresRuntimeStore.schemaVersion + 1
            try database.query("INSERT INTO engaged_schema (version) VALUES (\(newer))")
            #expect(throws: StoreError.newerSchema(found: newer, supported: PostgresRuntimeStore.schemaVersion)) {
                try database.withStore { _ in }
            }
            let count = try database.query("SELECT COUNT(*) FROM engine_snapshot").first.map {
                try $0.decode(Int.self)
            }
            #expect(count == 1)
        }
    }

    @Test("A running store is ready until a newer build migrates the database, or a version is undone")
    func readinessFollowsTheRecordedSchema() throws {
        try ScratchDatabase.with { database in
            try database.withStore { store in
                try store.checkReady()
                let current = PostgresRuntimeStore.schemaVersion
                try database.query("INSERT INTO engaged_schema (version) VALUES (\(current + 1))")
                #expect(throws: StoreError.newerSchema(found: current + 1, supported: current)) {
                    try store.checkReady()
                }
                try database.query("DELETE FROM engaged_schema WHERE version >= \(current)")
                #expect(throws: StoreError.olderSchema(found: current - 1, expected: current)) {
                    try store.checkReady()
                }
            }
        }
    }

    @Test("A row holding a value this build never writes reads as corrupt, naming table and column")
    func aDamagedRowIsCorrupt() throws {
        try ScratchDatabase.with { database in
            try database.withStore { store in
                try store.commit(fullCommit("u1", snapshot: [1]))
                try database.query("UPDATE ledger SET kind = 'noSuchKind' WHERE user_id = 'u1'")
                let error = #expect(throws: StoreError.self) { try store.ledger(userID: "u1", from: past, to: far) }
                #expect("\(String(describing: error))".contains("table ledger, column kind"))
                try database.query("ALTER TABLE user_activity ALTER COLUMN last_active_at DROP NOT NULL")
                try database.query("UPDATE user_activity SET last_active_at = NULL WHERE user_id = 'u1'")
                let missing = #expect(throws: StoreError.self) { try store.lastActiveAt(userID: "u1") }
                guard case .corrupt(let detail) = missing else {
                    Issue.record("expected corrupt, got \(String(describing: missing))")
                    return
                }
                #expect(detail.contains("table user_activity, column last_active_at"))
            }
        }
    }
}

/// Errors collected from concurrent work.
private final class Failures: @unchecked Sendable {
    // @unchecked Sendable is safe: `list` is only touched while holding `lock`.
    private let lock = NSLock()
    private var list: [String] = []

    func append(_ failure: String) { lock.withLock { list.append(failure) } }
    var all: [String] { lock.withLock { list } }
}
