import Foundation
import GRDB
import Models
import StoreConformance
import Testing

@testable import Storage

@Suite("Social ids and ledger retention conformance")
struct SocialRetentionConformanceTests {
    @Test(
        "The in-memory store keeps the social ids' and the ledger retention's contract",
        arguments: SocialRetentionCheck.allCases)
    func inMemory(_ check: SocialRetentionCheck) throws {
        try checkSocialRetentionConformance({ InMemoryEngagementStore() }, only: [check])
    }

    @Test(
        "The SQLite store keeps the social ids' and the ledger retention's contract",
        arguments: SocialRetentionCheck.allCases)
    func sqlite(_ check: SocialRetentionCheck) throws {
        try withTemporaryDirectory { directory in
            try checkSocialRetentionConformance(
                { try SQLiteEngagementStore(path: directory.appendingPathComponent("\(check).sqlite").path) },
                only: [check])
        }
    }
}

@Suite("SQLite social ids migration")
struct SQLiteSocialIDsMigrationTests {
    @Test("A store of schema v7 migrates: its ledger keys stay known a whole window, dated by their user's ledger")
    func aVersion7StoreKeepsItsLedgerKeys() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("store.sqlite").path
            let t0 = Instant(iso8601: "2027-03-01T08:00:00Z")!
            do {
                let queue = try DatabaseQueue(path: path)
                try SQLiteSchema.migrator.migrate(queue, upTo: "v7-claims")
                try queue.write { db in
                    for (requestID, at) in [("r1", t0), ("r2", t0 + 400)] {
                        try db.execute(
                            sql: """
                                INSERT INTO ledger (userID, requestID, kind, state, at, reason, idempotencyKey)
                                VALUES ('u1', ?, 'hydration', 'pending', ?, NULL, NULL)
                                """,
                            arguments: [requestID, at.secondsSinceEpoch])
                        try db.execute(
                            sql: "INSERT INTO ledgerKey (userID, idempotencyKey) VALUES ('u1', ?)",
                            arguments: ["\(requestID)/pending"])
                    }
                    // A key whose user has no ledger row.
                    try db.execute(sql: "INSERT INTO ledgerKey (userID, idempotencyKey) VALUES ('u2', 'k')")
                }
                try queue.close()
            }
            let store = try SQLiteEngagementStore(path: path)
            let queue = try DatabaseQueue(path: path)
            defer { try? queue.close() }
            let keys = try queue.read { db in
                try Row.fetchAll(
                    db, sql: "SELECT userID, idempotencyKey, at FROM ledgerKey ORDER BY userID, idempotencyKey"
                )
                .map { "\($0[0] as String) \($0[1] as String) \($0[2] as Int64)" }
            }
            let newest = (t0 + 400).secondsSinceEpoch
            #expect(keys == ["u1 r1/pending \(newest)", "u1 r2/pending \(newest)", "u2 k 0"])
            // A write a window after the older row prunes that row, and still knows its key.
            let later = LedgerEntry(
                userID: "u1", requestID: "r3", kind: .hydration, state: .pending,
                at: t0 + LedgerRetention.seconds + 1, idempotencyKey: "r3/pending")
            try store.apply(StoreBatch(ledgerEntries: [later]))
            let replay = LedgerEntry(
                userID: "u1", requestID: "r1", kind: .hydration, state: .pending, at: t0,
                idempotencyKey: "r1/pending")
            try store.apply(StoreBatch(ledgerEntries: [replay]))
            #expect(try store.ledger(userID: "u1", from: t0 - 1, to: later.at + 1).map(\.requestID) == ["r2", "r3"])
        }
    }
}
