import Foundation
import GRDB
import Models
import Synchronization
import Testing

@testable import EngagementKit

/// What the queue does with an event past the server's bounds: an `at` older than it takes,
/// and a key older than it keeps.
@Suite("EngagementKit: the event queue past the server's bounds")
struct EventQueueBoundsTests {
    static let now = Instant(iso8601: "2027-03-08T06:00:00Z")!

    @Test func anEventOlderThanTheServerTakesIsRemovedUnsentAndTheRestGoOn() async throws {
        let queue = EventQueue(store: InMemoryEventQueueStore(userID: "ana", installation: "p"), seed: 1)
        let bound = EventQueue.maximumAgeSeconds + EventQueue.clockSkewSeconds
        let expired = try await queue.enqueue(.activity(.mealLogged(.lunch)), at: Self.now - bound - 1)
        // Past 7 days by the phone's clock but within the skew: the server's 422 decides.
        let nearTheBound = try await queue.enqueue(.activity(.mealLogged(.dinner)), at: Self.now - bound)
        let fresh = try await queue.enqueue(.activity(.moodLogged), at: Self.now)
        let sender = ScriptedSender([EventAnswer(status: 422)])
        let report = try await queue.flush(via: sender, at: Self.now)
        #expect(report.expired == [expired.sequence])
        #expect(report.dropped == [DroppedEvent(sequence: nearTheBound.sequence, status: 422)])
        #expect(report.sent == 1)
        // The expired event was never sent.
        #expect(
            sender.attempts.withLock { $0.map(\.key) } == ["p-\(nearTheBound.sequence)", "p-\(fresh.sequence)"])
        #expect(try await queue.count() == 0)
    }

    @Test func anEventThatWaitedAWeekForTheNetworkExpiresAtTheFlushThatFindsItSo() async throws {
        let queue = EventQueue(store: InMemoryEventQueueStore(userID: "ana", installation: "p"), seed: 2)
        let event = try await queue.enqueue(.activity(.workoutCompleted(durationMinutes: 30)), at: Self.now)
        // Offline for the first attempt; the next one is past the bound.
        var report = try await queue.flush(via: ScriptedSender([nil]), at: Self.now)
        #expect(report.sent == 0 && report.expired.isEmpty)
        let sender = ScriptedSender()
        let later = Self.now + EventQueue.maximumAgeSeconds + EventQueue.clockSkewSeconds + 1
        report = try await queue.flush(via: sender, at: later)
        #expect(report.expired == [event.sequence] && report.sent == 0)
        #expect(sender.attempts.withLock { $0.isEmpty })
    }

    @Test func anEventAcceptedMoreThanADayAfterAnUnansweredAttemptIsSentWithItsKeyAndNamed() async throws {
        let queue = EventQueue(store: InMemoryEventQueueStore(userID: "ana", installation: "p"), seed: 3)
        let late = try await queue.enqueue(.activity(.mealLogged(.breakfast)), at: Self.now)
        // The answer is lost twice: the key's lifetime runs from the first of them.
        _ = try await queue.flush(via: ScriptedSender([nil]), at: Self.now)
        _ = try await queue.flush(via: ScriptedSender([nil]), at: Self.now + 3_600)
        let sender = ScriptedSender()
        let report = try await queue.flush(via: sender, at: Self.now + EventQueue.keyLifetimeSeconds + 1)
        #expect(report.sent == 1 && report.acceptedPastKeyLifetime == [late.sequence])
        #expect(sender.attempts.withLock { $0.map(\.key) } == ["p-\(late.sequence)"])
    }

    @Test func anEventAcceptedWithinADayOfItsFirstAttemptIsNotNamed() async throws {
        let queue = EventQueue(store: InMemoryEventQueueStore(userID: "ana", installation: "p"), seed: 4)
        try await queue.enqueue(.activity(.mealLogged(.breakfast)), at: Self.now)
        // Enqueued offline long ago does not count: only an attempt starts the key's lifetime.
        try await queue.enqueue(.activity(.mealLogged(.lunch)), at: Self.now - 2 * 86_400)
        _ = try await queue.flush(via: ScriptedSender([nil]), at: Self.now)
        let report = try await queue.flush(via: ScriptedSender(), at: Self.now + EventQueue.keyLifetimeSeconds)
        #expect(report.sent == 2 && report.acceptedPastKeyLifetime.isEmpty)
    }

    @Test func theSQLiteQueueKeepsTheFirstAttemptAndOpensAFileMadeBeforeIt() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("queue-\(UUID().uuidString).sqlite")
            .path
        defer { try? FileManager.default.removeItem(atPath: path) }
        // A file as an earlier build made it, one event waiting with an attempt made.
        do {
            let database = try DatabaseQueue(path: path)
            try await database.write { db in
                try db.execute(
                    sql: """
                        CREATE TABLE queuedEvent (
                            sequence INTEGER PRIMARY KEY AUTOINCREMENT, body BLOB NOT NULL,
                            enqueuedAt INTEGER NOT NULL, attempts INTEGER NOT NULL,
                            nextAttemptAt INTEGER NOT NULL);
                        CREATE TABLE queueIdentity (
                            one INTEGER PRIMARY KEY CHECK (one = 1), userID TEXT NOT NULL,
                            installation TEXT NOT NULL);
                        INSERT INTO queueIdentity VALUES (1, 'ana', 'p');
                        """)
                try db.execute(
                    sql: "INSERT INTO queuedEvent (body, enqueuedAt, attempts, nextAttemptAt) VALUES (?, ?, 1, ?)",
                    arguments: [Data("{}".utf8), Self.now.secondsSinceEpoch, Self.now.secondsSinceEpoch])
            }
        }
        let store = try SQLiteEventQueueStore(path: path, userID: "ana", newInstallation: "q")
        let kept = try #require(try store.oldest(limit: 1).first)
        // Tried already: its first attempt is taken as no earlier than it was queued.
        #expect(kept.attempts == 1 && kept.firstAttemptAt == Self.now)
        var tried = kept
        tried.firstAttemptAt = Self.now + 60
        try store.update(tried)
        let reopened = try SQLiteEventQueueStore(path: path, userID: "ana", newInstallation: "r")
        #expect(try reopened.oldest(limit: 1).first?.firstAttemptAt == Self.now + 60)
    }
}
