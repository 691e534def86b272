public import Models

/// One user's notification center in memory: items in delivery order with their own states,
/// and the read-all watermark.
struct InMemoryInbox {
    /// Ascending by sequence; `state` is the state set on the item itself.
    var items: [InboxItem] = []
    var lastSequence: Int64 = 0
    /// Items with a sequence at or below it count as read (unless archived).
    var readThrough: Int64 = 0

    func shown(_ item: InboxItem) -> InboxItem {
        var shown = item
        shown.state = InboxRules.effectiveState(item.state, sequence: item.sequence, readThrough: readThrough)
        return shown
    }

    var counts: InboxCounts {
        var counts = InboxCounts.zero
        for item in items {
            let state = InboxRules.effectiveState(item.state, sequence: item.sequence, readThrough: readThrough)
            guard state != .archived else { continue }
            counts.total += 1
            if state < .read { counts.unread += 1 }
            if state == .unseen { counts.unseen += 1 }
        }
        return counts
    }
}

/// `InboxStore` in memory (a `RuntimeStore` requirement): every call runs under the store's one
/// lock, so a delivery and the completion of its row are one step, as they are one transaction
/// in SQLite.
extension InMemoryEngagementStore {
    @discardableResult
    public func deliverToInbox(_ delivery: InboxDelivery, next: [OutboxRow], at instant: Instant) throws(StoreError)
        -> Bool
    {
        try InboxRules.check(delivery, next: next)
        let row = delivery.row
        return locked { storage in
            let fresh = !storage.outbox.wasCompleted(row.key)
            if fresh {
                var inbox = storage.inboxes[row.userID] ?? InMemoryInbox()
                inbox.lastSequence += 1
                inbox.items.append(
                    InboxItem(
                        id: row.key.rawValue, userID: row.userID, sequence: inbox.lastSequence,
                        requestID: row.requestID,
                        kind: delivery.kind, title: delivery.title, body: delivery.body, deliveredAt: instant,
                        state: .unseen))
                storage.inboxes[row.userID] = inbox
            }
            storage.outbox.complete(row.key, at: instant)
            for row in next { storage.outbox.enqueue(row) }
            return fresh
        }
    }

    public func inboxPage(userID: UserID, before sequence: Int64?, limit: Int) throws(StoreError) -> InboxPage {
        try InboxRules.checkLimit(limit)
        return locked { storage in
            let inbox = storage.inboxes[userID] ?? InMemoryInbox()
            let before = sequence ?? .max
            let newerFirst = inbox.items.reversed().filter { $0.sequence < before && $0.state != .archived }
            let items = newerFirst.prefix(limit).map(inbox.shown)
            let nextBefore = newerFirst.count > limit ? items.last?.sequence : nil
            return InboxPage(items: items, nextBefore: nextBefore, counts: inbox.counts)
        }
    }

    public func setInboxState(userID: UserID, itemID: String, to state: InboxState) throws(StoreError)
        -> InboxItem?
    {
        locked { storage in
            guard var inbox = storage.inboxes[userID], let index = inbox.items.firstIndex(where: { $0.id == itemID })
            else { return nil }
            inbox.items[index].state = max(inbox.items[index].state, state)
            storage.inboxes[userID] = inbox
            return inbox.shown(inbox.items[index])
        }
    }

    @discardableResult
    public func readAllInbox(userID: UserID) throws(StoreError) -> InboxCounts {
        locked { storage in
            guard var inbox = storage.inboxes[userID] else { return .zero }
            inbox.readThrough = inbox.lastSequence
            storage.inboxes[userID] = inbox
            return inbox.counts
        }
    }
}
