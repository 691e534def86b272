import Foundation
public import Models
public import Storage
import Testing

/// One clause of the `InboxStore` contract; every conformer runs all of them with its own factory.
public enum InboxStoreCheck: String, CaseIterable, Sendable {
    case aDeliveryMakesOneItemAndCompletesItsRow
    case aRowCompletedBeforeMakesNoItem
    case theNextRowOfARepeatIsPendingAfterTheDelivery
    case everyNextRowIsPendingAfterTheDelivery
    case pagesAreNewestFirstAndStableUnderInserts
    case aLimitOutside1To100IsRefused
    case statesOnlyMoveForward
    case readAllIsAWatermark
    case eachUserHasTheirOwnInbox
    case anInvalidDeliveryChangesNothing
}

private let t0 = Instant(iso8601: "2027-03-01T08:00:00Z")!

private func inboxRow(_ userID: UserID, _ requestID: RequestID, dueIn seconds: Int64) -> OutboxRow {
    OutboxRow(
        key: "\(userID)/\(requestID)/inbox/\(seconds)", userID: userID, requestID: requestID,
        dueAt: t0 + seconds, payload: samplePayload(requestID, channel: .inbox))
}

private func delivery(_ row: OutboxRow) -> InboxDelivery {
    InboxDelivery(row: row, kind: "mealReminder", title: "Lunch \(row.requestID)", body: "Log your lunch")
}

/// Commits `row` as the runtime would, then delivers it at its due time.
private func commitAndDeliver(_ store: any RuntimeStore, _ row: OutboxRow, next: [OutboxRow] = []) throws {
    try store.commit(RuntimeCommit(userID: row.userID, snapshot: [1], outbox: [row]))
    #expect(try store.deliverToInbox(delivery(row), next: next, at: row.dueAt))
}

/// Delivers items 1...count to `userID` (request `r<n>`, due `n` minutes after t0).
private func deliverItems(_ store: any RuntimeStore, _ userID: UserID, _ range: ClosedRange<Int>) throws {
    for index in range { try commitAndDeliver(store, inboxRow(userID, "r\(index)", dueIn: Int64(index) * 60)) }
}

private func sequences(_ page: InboxPage) -> [Int64] { page.items.map(\.sequence) }

/// Runs the checks of `InboxStore`'s contract against stores made by `make`.
public func checkInboxStoreConformance(_ make: () throws -> any RuntimeStore, only checks: [InboxStoreCheck]) throws {
    for check in checks {
        let store = try make()
        switch check {
        case .aDeliveryMakesOneItemAndCompletesItsRow:
            let row = inboxRow("u1", "lunch", dueIn: 60)
            try commitAndDeliver(store, row)
            #expect(try store.pendingOutbox(userID: "u1").isEmpty)
            // Delivered again (a second dispatcher, a retry): still one item.
            #expect(try !store.deliverToInbox(delivery(row), next: [], at: t0 + 120))
            let page = try store.inboxPage(userID: "u1", before: nil, limit: 10)
            #expect(
                page.items == [
                    InboxItem(
                        id: row.key.rawValue, userID: "u1", sequence: 1, requestID: "lunch", kind: "mealReminder",
                        title: "Lunch lunch", body: "Log your lunch", deliveredAt: t0 + 60, state: .unseen)
                ])
            #expect(page.nextBefore == nil)
            #expect(page.counts == InboxCounts(total: 1, unread: 1, unseen: 1))
            #expect(page.counts.badge == 1)
            // A replayed commit never brings the delivered row back.
            try store.commit(RuntimeCommit(userID: "u1", snapshot: [2], outbox: [row]))
            #expect(try store.outboxDepth() == 0)
        case .aRowCompletedBeforeMakesNoItem:
            let row = inboxRow("u1", "lunch", dueIn: 60)
            try store.commit(RuntimeCommit(userID: "u1", snapshot: [1], outbox: [row]))
            try store.completeOutbox(keys: [row.key], at: t0 + 60)
            #expect(try !store.deliverToInbox(delivery(row), next: [], at: t0 + 61))
            #expect(try store.inboxPage(userID: "u1", before: nil, limit: 10).items.isEmpty)
        case .theNextRowOfARepeatIsPendingAfterTheDelivery:
            let day1 = inboxRow("u1", "water", dueIn: 0)
            let day2 = inboxRow("u1", "water", dueIn: 86_400)
            let day3 = inboxRow("u1", "water", dueIn: 2 * 86_400)
            try commitAndDeliver(store, day1, next: [day2])
            #expect(try store.pendingOutbox(userID: "u1") == [day2])
            #expect(try store.deliverToInbox(delivery(day2), next: [day3], at: day2.dueAt))
            // A stale repeat of day 1 neither adds an item nor brings day 2 back.
            #expect(try !store.deliverToInbox(delivery(day1), next: [day2], at: day2.dueAt + 1))
            #expect(try store.pendingOutbox(userID: "u1") == [day3])
            #expect(
                try store.inboxPage(userID: "u1", before: nil, limit: 10).items.map(\.id) == [
                    day2.key.rawValue, day1.key.rawValue,
                ])
        case .everyNextRowIsPendingAfterTheDelivery:
            let lunch = inboxRow("u1", "lunch", dueIn: 0)
            let sync = OutboxRow(
                key: "u1/sync/1", userID: "u1", requestID: "inbox-sync", dueAt: t0 + 1_830,
                payload: .sync)
            let tomorrow = inboxRow("u1", "lunch", dueIn: 86_400)
            try commitAndDeliver(store, lunch, next: [tomorrow, sync])
            #expect(try store.pendingOutbox(userID: "u1") == [sync, tomorrow])
            // A sync already performed is never pending again.
            try store.completeOutbox(keys: [sync.key], at: sync.dueAt)
            try commitAndDeliver(store, inboxRow("u1", "snack", dueIn: 2_000), next: [sync])
            #expect(try store.pendingOutbox(userID: "u1") == [tomorrow])
            var later = sync
            later.key = "u1/sync/2"
            later.dueAt = t0 + 3_660
            try commitAndDeliver(store, inboxRow("u1", "dinner", dueIn: 3_000), next: [later])
            #expect(try store.pendingOutbox(userID: "u1") == [later, tomorrow])
        case .pagesAreNewestFirstAndStableUnderInserts:
            try deliverItems(store, "u1", 1...5)
            let first = try store.inboxPage(userID: "u1", before: nil, limit: 2)
            #expect(sequences(first) == [5, 4])
            #expect(first.nextBefore == 4)
            try deliverItems(store, "u1", 6...8)  // arrive between two pages
            let second = try store.inboxPage(userID: "u1", before: first.nextBefore, limit: 2)
            #expect(sequences(second) == [3, 2])
            #expect(second.counts.total == 8)
            let third = try store.inboxPage(userID: "u1", before: second.nextBefore, limit: 2)
            #expect(sequences(third) == [1])
            #expect(third.nextBefore == nil)
            #expect(sequences(try store.inboxPage(userID: "u1", before: nil, limit: 3)) == [8, 7, 6])
            // A page that ends exactly at the last item has no next page.
            let all = try store.inboxPage(userID: "u1", before: nil, limit: 8)
            #expect(sequences(all) == [8, 7, 6, 5, 4, 3, 2, 1])
            #expect(all.nextBefore == nil)
        case .aLimitOutside1To100IsRefused:
            try deliverItems(store, "u1", 1...3)
            for limit in [0, -1, 101, Int.max] {
                let error = #expect(throws: StoreError.self) {
                    try store.inboxPage(userID: "u1", before: nil, limit: limit)
                }
                guard case .invalidBatch(let field, _) = error else {
                    Issue.record("expected invalidBatch, got \(String(describing: error))")
                    continue
                }
                #expect(field == "limit")
            }
            #expect(try store.inboxPage(userID: "u1", before: nil, limit: 1).items.count == 1)
            #expect(try store.inboxPage(userID: "u1", before: nil, limit: 100).items.count == 3)
        case .statesOnlyMoveForward:
            try deliverItems(store, "u1", 1...2)
            let id = inboxRow("u1", "r1", dueIn: 60).key
            func set(_ state: InboxState) throws -> InboxState? {
                try store.setInboxState(userID: "u1", itemID: id.rawValue, to: state)?.state
            }
            func counts() throws -> InboxCounts { try store.inboxPage(userID: "u1", before: nil, limit: 10).counts }
            #expect(try set(.seen) == .seen)
            #expect(try counts() == InboxCounts(total: 2, unread: 2, unseen: 1))
            #expect(try set(.read) == .read)
            #expect(try counts() == InboxCounts(total: 2, unread: 1, unseen: 1))
            #expect(try set(.seen) == .read)  // back: nothing changes
            #expect(try set(.unseen) == .read)
            #expect(try set(.archived) == .archived)
            #expect(try set(.read) == .archived)
            #expect(try counts() == InboxCounts(total: 1, unread: 1, unseen: 1))
            #expect(sequences(try store.inboxPage(userID: "u1", before: nil, limit: 10)) == [2])
            // Unknown ids, and another user's item, are not found and change nothing.
            #expect(try store.setInboxState(userID: "u1", itemID: "no-such-item", to: .read) == nil)
            let second = inboxRow("u1", "r2", dueIn: 120).key
            #expect(try store.setInboxState(userID: "u2", itemID: second.rawValue, to: .read) == nil)
            #expect(try counts() == InboxCounts(total: 1, unread: 1, unseen: 1))
        case .readAllIsAWatermark:
            #expect(try store.readAllInbox(userID: "u1") == .zero)  // no items yet: nothing to do
            try deliverItems(store, "u1", 1...3)
            _ = try store.setInboxState(
                userID: "u1", itemID: inboxRow("u1", "r1", dueIn: 60).key.rawValue, to: .archived)
            _ = try store.setInboxState(userID: "u1", itemID: inboxRow("u1", "r2", dueIn: 120).key.rawValue, to: .seen)
            #expect(try store.readAllInbox(userID: "u1") == InboxCounts(total: 2, unread: 0, unseen: 0))
            try deliverItems(store, "u1", 4...4)  // after the read-all: unread
            let page = try store.inboxPage(userID: "u1", before: nil, limit: 10)
            #expect(page.items.map(\.state) == [.unseen, .read, .read])
            #expect(page.counts == InboxCounts(total: 3, unread: 1, unseen: 1))
            #expect(page.counts.badge == page.counts.unread)
            // An item covered by the read-all still archives; an earlier state changes nothing.
            let third = inboxRow("u1", "r3", dueIn: 180).key
            #expect(try store.setInboxState(userID: "u1", itemID: third.rawValue, to: .seen)?.state == .read)
            #expect(try store.setInboxState(userID: "u1", itemID: third.rawValue, to: .archived)?.state == .archived)
            #expect(try store.readAllInbox(userID: "u1") == InboxCounts(total: 2, unread: 0, unseen: 0))
        case .eachUserHasTheirOwnInbox:
            try deliverItems(store, "u1", 1...3)
            try deliverItems(store, "u2", 1...2)
            _ = try store.readAllInbox(userID: "u2")
            let u1 = try store.inboxPage(userID: "u1", before: nil, limit: 10)
            let u2 = try store.inboxPage(userID: "u2", before: nil, limit: 10)
            #expect(sequences(u1) == [3, 2, 1])
            #expect(sequences(u2) == [2, 1])
            #expect(u1.items.allSatisfy { $0.userID == "u1" && $0.state == .unseen })
            #expect(u2.counts == InboxCounts(total: 2, unread: 0, unseen: 0))
            #expect(
                try store.inboxPage(userID: "nobody", before: nil, limit: 10)
                    == InboxPage(
                        items: [], nextBefore: nil, counts: .zero))
        case .anInvalidDeliveryChangesNothing:
            let row = inboxRow("u1", "lunch", dueIn: 60)
            try store.commit(RuntimeCommit(userID: "u1", snapshot: [1], outbox: [row]))
            let sync = OutboxRow(
                key: "u1/sync", userID: "u1", requestID: "inbox-sync", dueAt: t0, payload: .sync)
            var sameSlot = sync
            sameSlot.key = "u1/sync-2"
            let invalid: [(InboxDelivery, [OutboxRow])] = [
                (delivery(row), [inboxRow("u2", "lunch", dueIn: 120)]),
                (delivery(row), [row]),
                (delivery(row), [sync, sameSlot]),
                (
                    delivery(
                        OutboxRow(
                            key: "", userID: "u1", requestID: "x", dueAt: t0, payload: .unreadable("", channel: .inbox))
                    ), []
                ),
            ]
            for (delivery, next) in invalid {
                #expect(throws: StoreError.self) { try store.deliverToInbox(delivery, next: next, at: t0 + 60) }
            }
            #expect(try store.pendingOutbox(userID: "u1") == [row])
            #expect(try store.inboxPage(userID: "u1", before: nil, limit: 10).items.isEmpty)
        }
    }
}

/// The inbox outlives its store object: `open` opens the same database each time.
public func checkInboxSurvivesAReopen(_ open: () throws -> any RuntimeStore) throws {
    do {
        let store = try open()
        try deliverItems(store, "u1", 1...3)
        try store.readAllInbox(userID: "u1")
        try deliverItems(store, "u1", 4...4)
    }
    let reopened = try open()
    let page = try reopened.inboxPage(userID: "u1", before: nil, limit: 10)
    #expect(sequences(page) == [4, 3, 2, 1])
    #expect(page.counts == InboxCounts(total: 4, unread: 1, unseen: 1))
    try deliverItems(reopened, "u1", 5...5)  // the sequence continues, never reused
    #expect(sequences(try reopened.inboxPage(userID: "u1", before: nil, limit: 1)) == [5])
}
