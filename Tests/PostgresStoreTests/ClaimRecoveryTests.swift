import Foundation
import Models
import PostgresNIO
import PostgresStore
import Storage
import TestSupport
import Testing

/// A claim across the faults of its database: an answer lost after the commit, and a server that
/// acknowledged the commit and then crashed before writing it. Either way, a row claimed and
/// performed once is never performed again as part of another alert, and the parts of a merge
/// are never performed alone.
/// The suite runs its tests one at a time: one starts a server of its own.
@Suite(
    "OutboxQueue: claims across lost answers and crashes", .serialized,
    .enabled(if: TestServer.isConfigured, TestServer.disabledReason))
struct ClaimRecoveryTests {
    static let now = OutboxQueueTests.now

    @Test("A claim whose answer was lost is performed once: its merged row, alone, after the lease; never its parts")
    func lostAnswer() throws {
        try ScratchDatabase.with { database in
            try database.withStore { store in
                let parts = (0..<3).map {
                    OutboxQueueTests.alert("u1", "r\($0)", at: Self.now - Int64(3_600 - $0 * 600))
                }
                try OutboxQueueTests.addUser("u1", rows: parts, to: store)
                // The claim commits; its worker never sees the answer (the connection dropped after
                // COMMIT), so it performs nothing and its book of claimed rows stays empty: a
                // queue of the same name that never saw the claim is that worker afterwards.
                let lost = try OutboxQueue(pool: store.pool, workerID: "w", leaseSeconds: 1)
                    .claim(through: Self.now, users: 10)
                let merged = try #require(lost.first)
                #expect(lost.count == 1)
                let retrying = OutboxQueue(pool: store.pool, workerID: "w", leaseSeconds: 1)
                let other = OutboxQueue(pool: store.pool, workerID: "other", leaseSeconds: 1)
                var performed: [OutboxKey] = []
                // Retried at once, by the worker and by another: the lease keeps both off.
                performed += try retrying.claim(through: Self.now, users: 10).map(\.key)
                performed += try other.claim(through: Self.now, users: 10).map(\.key)
                #expect(performed.isEmpty)
                Thread.sleep(forTimeInterval: 1.3)
                performed += try retrying.claim(through: Self.now, users: 10).map(\.key)
                performed += try other.claim(through: Self.now, users: 10).map(\.key)
                #expect(performed == [merged.key])
                #expect(Set(performed).isDisjoint(with: parts.map(\.key)))
                let mergedParts = try database.query(
                    "SELECT count(*) FROM outbox_merged WHERE merged_into = \(merged.key.rawValue)"
                ).first?.decode(Int.self)
                #expect(mergedParts == 3)
                // The merged row was marked by the lost claim: a rescue re-sends it alone.
                let attempts = try database.query(
                    "SELECT attempts FROM outbox WHERE key = \(merged.key.rawValue)"
                ).first?.decode(Int.self)
                #expect(attempts == 2)
            }
        }
    }

    @Test(
        "A claim outlives an immediate restart of a server that acknowledges commits early: the alert it sent is re-sent alone, not merged"
    )
    func claimSurvivesCrash() throws {
        let cluster = try LocalCluster()  // synchronous_commit = off, as scripts/pg-local.sh starts it
        let first = Self.now - 30
        let sent = OutboxQueueTests.alert("u1", "sent", at: first)
        let later = OutboxQueueTests.alert("u1", "later", at: first + 600)
        do {
            let pool = PostgresPool(url: try PostgresURL(cluster.url), size: 2, logger: TestServer.logger)
            defer { pool.close() }
            let store = try PostgresRuntimeStore(pool: pool)
            try OutboxQueueTests.addUser("u1", rows: [sent, later], to: store)
            // Everything so far is written; what commits next waits up to 10 s in memory, unless
            // its transaction asks for a durable commit.
            try pool.withConnection { connection in
                try pool.query("ALTER SYSTEM SET wal_writer_delay = '10s'", on: connection)
                try pool.query("SELECT pg_reload_conf()", on: connection)
                try pool.query("CHECKPOINT", on: connection)
            }
            Thread.sleep(forTimeInterval: 1)
            let claim = try OutboxQueue(pool: pool, workerID: "crashed", leaseSeconds: 1)
                .claim(through: Self.now, users: 10)
            #expect(claim.map(\.key) == [sent.key])  // on time: performed as planned, alone
        }
        try cluster.restart(mode: "immediate")
        Thread.sleep(forTimeInterval: 1.3)  // the claim's lease runs out
        let pool = PostgresPool(url: try PostgresURL(cluster.url), size: 2, logger: TestServer.logger)
        defer { pool.close() }
        // Both alerts are late now: had the claim been forgotten, they would be merged into one,
        // and the first delivered twice (alone, then inside the merge).
        let rescue = try OutboxQueue(pool: pool, workerID: "rescuer").claim(through: first + 1_200, users: 10)
        #expect(rescue.map(\.key) == [sent.key])
        let merges = try pool.withConnection { connection in
            try pool.query("SELECT count(*) FROM outbox_merged", on: connection).first?.decode(Int.self)
        }
        #expect(merges == 0)
    }
}
