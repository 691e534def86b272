import Engagement
import Foundation
import Models
import Storage
import TestSupport
import Testing

@testable import Runtime

/// One user's SQLite store under a flood of social events: what the flood leaves is pruned as
/// the user's life goes on, so the store returns to the size of that life.
@Suite("Engine runtime: one user's storage under social events")
struct SocialStorageTests {
    static func kudos(_ id: String) -> EngineInput {
        .socialEvent(
            SocialEvent(id: id, kind: .workoutKudos, actorName: "Friend", topic: "morning run", isMutualFriend: true))
    }

    @Test func oneUsersStoreStaysBoundedUnderTenThousandSocialEvents() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("flood-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try SQLiteEngagementStore(
            path: directory.appendingPathComponent("s.sqlite").path,
            options: .init(durability: .fsyncAtCheckpoint))
        let clock = ManualClock(SocialIDTests.start)
        let runtime = EngineRuntime(store: store, clock: clock, content: bundledContent)
        let transport = RecordingTransport()
        try await runtime.putUser(profile())
        func footprint() throws -> SQLiteFootprint {
            try store.checkpoint()
            return try store.footprint()
        }
        let created = try footprint()

        // 10,000 distinct kudos in a day, a hundred every quarter of an hour, sent as they fall due.
        for batch in 0..<100 {
            for index in 0..<100 { try await runtime.apply(Self.kudos("kudos-\(batch)-\(index)"), to: "u1") }
            try await SocialIDTests.run(runtime, clock, for: 900, through: transport)
        }
        let flooded = try footprint()
        #expect(flooded.rows["socialEvent"] == 10_000)

        // Then 41 days of an ordinary social life: ten kudos a day, and the engine's own work.
        for day in 0..<41 {
            for index in 0..<10 {
                try await runtime.apply(Self.kudos("later-\(day)-\(index)"), to: "u1")
                try await SocialIDTests.run(runtime, clock, for: 8_640, stepSeconds: 2_880, through: transport)
            }
        }
        let later = try footprint()
        func rows(_ footprint: SQLiteFootprint) -> String {
            footprint.rows.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        }
        print(
            "one user's SQLite store: created \(created.bytesInUse) bytes in use; after 10,000 social events "
                + "\(flooded.bytesInUse) (\(rows(flooded))); 41 days later \(later.bytesInUse) (\(rows(later)))")
        // Social ids: a week of the trickle, give or take what the next arrivals prune.
        #expect(try #require(later.rows["socialEvent"]) <= 7 * 10 + SocialEventRecord.prunedPerCommit)
        // The ledger: two weeks of the user's requests, none of them a social id.
        #expect(try #require(later.rows["ledger"]) < 1_000)
        #expect(try #require(later.rows["ledgerKey"]) < 1_000)
        // The trace keeps 35 days: the flood's decisions, past them, are being pruned.
        let traceRows = (flooded: try #require(flooded.rows["trace"]), later: try #require(later.rows["trace"]))
        #expect(traceRows.later < traceRows.flooded)
        #expect(later.bytesInUse < flooded.bytesInUse)
    }
}
