import Foundation
import Models
import Storage
import Synchronization
import TestSupport
import Testing

@testable import Runtime

@Suite("Engine runtime: the inbox")
struct RuntimeInboxTests {
    static let start = Instant(iso8601: "2027-03-27T22:00:00Z")!

    /// A runtime over `store` with user u1, and the user's first pending inbox row.
    private func setUp(_ store: any RuntimeStore) async throws -> (EngineRuntime, ManualClock, OutboxRow) {
        let clock = ManualClock(Self.start)
        let runtime = EngineRuntime(
            store: store, clock: clock, content: bundledContent, configuration: withoutAttentionBudget)
        try await runtime.putUser(profile())
        let row = try #require(try store.pendingOutbox(userID: "u1").first { $0.channel == .inbox })
        return (runtime, clock, row)
    }

    @Test(arguments: ["memory", "sqlite"])
    func aDispatchedInboxRowIsOneItemEvenWhenDeliveredTwice(storeKind: String) async throws {
        // Delivering the item and completing its row is one transaction of the store, so a crash
        // cannot fall between them; what remains is a second delivery of the same row (another
        // dispatcher, a retry), which the row's key makes a no-op.
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("inbox-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let store: any RuntimeStore =
            storeKind == "memory"
            ? InMemoryEngagementStore()
            : try SQLiteEngagementStore(path: directory.appendingPathComponent("s.sqlite").path)
        let (runtime, clock, row) = try await setUp(store)
        clock.advance(by: row.dueAt - clock.now())
        let transport = RecordingTransport()
        let completed = try await runtime.dispatchDue(limit: 10_000, through: transport)
        #expect(completed.contains(row))
        // Inbox rows never reach the transport. A local kind gets no push: a badge sync is
        // pending at the next slot in its place.
        let performed = transport.performed.withLock { $0 }
        #expect(!performed.contains { $0.channel == .inbox })
        #expect(!performed.contains { $0.channel == .push && $0.requestID == row.requestID })
        let sync = try #require(try store.pendingOutbox(userID: "u1").first { $0.channel == .silent })
        #expect(sync == runtime.silentPushes.row(for: "u1", changedAt: clock.now()))

        let request = try #require(row.payload.notification)
        let page = try await runtime.inbox(of: "u1", cursor: nil, limit: 100)
        let item = try #require(page.items.first { $0.id == row.key.rawValue })
        #expect(item.requestID == row.requestID)
        #expect(item.kind == request.content.kind.rawValue)
        #expect(item.title == request.content.title)
        #expect(item.body == request.content.body)
        #expect(item.deliveredAt == clock.now())
        #expect(item.state == .unseen)

        let delivery = try #require(InboxDelivery(row))
        #expect(try !store.deliverToInbox(delivery, next: [], at: clock.now()))
        _ = try await runtime.dispatchDue(limit: 10_000, through: transport)
        let again = try await runtime.inbox(of: "u1", cursor: nil, limit: 100)
        #expect(again.items.filter { $0.id == row.key.rawValue }.count == 1)
        #expect(again.counts == page.counts)
    }

    @Test func aDailySeriesInboxRowComesBackForItsNextDay() async throws {
        let store = InMemoryEngagementStore()
        let (runtime, clock, _) = try await setUp(store)
        let series = try #require(
            try store.pendingOutbox(userID: "u1").first {
                $0.requestID.rawValue.contains(".daily.") && $0.channel == .inbox
            })
        clock.advance(by: series.dueAt - clock.now())
        _ = try await runtime.dispatchDue(limit: 10_000, through: RecordingTransport())
        let next = try store.pendingOutbox(userID: "u1").filter {
            $0.requestID == series.requestID && $0.channel == .inbox
        }
        #expect(next.map(\.dueAt) == [series.dueAt + 86_400])
        #expect(
            try await runtime.inbox(of: "u1", cursor: nil, limit: 100).items.contains { $0.id == series.key.rawValue })
    }

    @Test func theInboxOfAnUnknownUserIsRefused() async throws {
        let runtime = EngineRuntime(
            store: InMemoryEngagementStore(), clock: ManualClock(Self.start), content: bundledContent)
        await #expect(throws: RuntimeError.unknownUser("nobody")) {
            try await runtime.inbox(of: "nobody", cursor: nil, limit: 10)
        }
        await #expect(throws: RuntimeError.unknownUser("nobody")) {
            try await runtime.setInboxState(.read, item: "x", of: "nobody")
        }
        await #expect(throws: RuntimeError.unknownUser("nobody")) { try await runtime.readAllInbox(of: "nobody") }
    }

    @Test func itemStatesAndReadAllGoThroughTheRuntime() async throws {
        let store = InMemoryEngagementStore()
        let (runtime, clock, _) = try await setUp(store)
        clock.advance(by: 2 * 86_400)
        _ = try await runtime.dispatchDue(limit: 10_000, through: RecordingTransport())
        let page = try await runtime.inbox(of: "u1", cursor: nil, limit: 100)
        #expect(page.counts.total >= 2)
        #expect(page.counts.unread == page.counts.total)
        let newest = try #require(page.items.first)
        #expect(try await runtime.setInboxState(.read, item: newest.id, of: "u1")?.state == .read)
        #expect(try await runtime.setInboxState(.read, item: "no-such-item", of: "u1") == nil)
        #expect(try await runtime.inboxCounts(of: "u1").unread == page.counts.total - 1)
        let counts = try await runtime.readAllInbox(of: "u1")
        #expect(counts == InboxCounts(total: page.counts.total, unread: 0, unseen: 0))
    }

    @Test func aCursorRoundTripsAndForeignTokensAreRefused() {
        for before: Int64 in [1, 42, 1 << 40, .max] {
            let token = InboxCursor(before: before).token
            #expect(InboxCursor(token: token) == InboxCursor(before: before))
            #expect(!token.contains("=") && !token.contains("+") && !token.contains("/"))
        }
        let foreign = ["", "abc", "aW5ib3g6MA", "aW5ib3g6LTE", "aW5ib3g6MDc", "aW5ib3g6NDI=", "eyJhIjoxfQ", "!!!"]
        for token in foreign { #expect(InboxCursor(token: token) == nil, "\(token)") }
    }
}
