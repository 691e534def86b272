import Content
import Foundation
import Models
import PostgresStore
import Runtime
import Storage
import Synchronization
import TestSupport
import Testing

/// A coach that answers once `open` is set, and counts what it was asked.
private final class GatedCoach: CoachEngine {
    let open = Mutex(false)
    let asked = Mutex(0)

    func generate(_ request: CoachRequest) async throws -> CoachResponse {
        asked.withLock { $0 += 1 }
        while !open.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(5)) }
        return CoachResponse(text: "Sunrise run?|A fresh morning for a few easy miles.")
    }
}

/// No wait on PostgreSQL runs on Swift's cooperative pool: under `DatabaseThreads.run`, a wait
/// off its threads (a stray wait) is counted and reported, and the runtime's own unstructured
/// tasks (the coach's answers) run on them.
@Suite(
    "DatabaseThreads: stray waits on PostgreSQL", .enabled(if: TestServer.isConfigured, TestServer.disabledReason))
struct StrayWaitTests {
    /// `SELECT 1` on `pool` from a nonisolated async function (it runs on the task's executor).
    static func selectOne(_ pool: PostgresPool) async -> Bool {
        PostgresPoolTests.selectOne(pool).error == nil
    }

    @Test("Waits on the threads are not stray; one in an unstructured task started inside `run` is, and is reported")
    func detectsStrayWaits() async throws {
        let reported = Mutex<[String]>([])
        let threads = DatabaseThreads(count: 2, name: "stray-test") { what in reported.withLock { $0.append(what) } }
        let pool = PostgresPool(url: try PostgresURL(TestServer.urlText), size: 1, logger: TestServer.logger)
        defer { pool.close() }

        #expect(await threads.run { DatabaseThreads.isCurrentThread }, "`run` starts its operation on the threads")
        #expect(await threads.run { await Self.selectOne(pool) })
        #expect(threads.strayWaits == 0)
        #expect(reported.withLock { $0 }.isEmpty)

        // An unstructured task keeps the watch (a task-local value) but not the preference.
        #expect(await threads.run { await Task { await Self.selectOne(pool) }.value })
        #expect(threads.strayWaits > 0)
        #expect(reported.withLock { $0 }.contains("a statement"))

        // Outside `run`, nothing is watched (tests and tools call the pool from any thread).
        let before = threads.strayWaits
        #expect(await Self.selectOne(pool))
        #expect(threads.strayWaits == before)
    }

    @Test("A coach's answer is applied on the database threads, never on Swift's cooperative pool")
    func coachAnswerOnDatabaseThreads() async throws {
        try await ScratchDatabase.withAsync { database in
            let threads = DatabaseThreads(count: 2, name: "coach-test")
            let pool = database.makePool()
            defer { pool.close() }
            let store = try PostgresRuntimeStore(pool: pool)
            let coach = GatedCoach()
            var content = bundledContent
            content.deadlineMillis = 600_000
            let runtime = EngineRuntime(
                store: store, clock: ManualClock(Instant(iso8601: "2027-03-27T22:00:00Z")!), content: content,
                coach: coach)
            var preferences = NotificationPreferences()
            preferences.hydration = .biHourly
            let profile = UserProfile(
                id: "u1", displayName: "Ana", timeZone: "Asia/Kathmandu", preferences: preferences)
            try await threads.run {
                try await runtime.putUser(profile)
                // The answer must load the user's engine from the store where it is applied.
                await runtime.evictCache()
                coach.open.withLock { $0 = true }
                await runtime.coachAnswersSettled()
            }
            #expect(coach.asked.withLock { $0 } > 0, "the coach was asked")
            let payloads = try store.pendingOutbox(userID: "u1").map(\.payload.storedText)
            #expect(payloads.contains { $0.contains("Sunrise run?") }, "the answer was applied")
            #expect(threads.strayWaits == 0)
        }
    }
}
