public import Models

/// Where an inbox item stands. States only move forward: `unseen < seen < read < archived`.
public enum InboxState: Int, Codable, CaseIterable, Comparable, Sendable, CustomStringConvertible {
    /// Delivered; the user has not looked at the notification center since.
    case unseen = 0
    /// Shown in the list, not opened.
    case seen = 1
    /// Opened (or covered by a read-all).
    case read = 2
    /// Removed from the notification center; it no longer appears in pages or counts.
    case archived = 3

    public static func < (lhs: InboxState, rhs: InboxState) -> Bool { lhs.rawValue < rhs.rawValue }

    /// The name used in the API: `unseen`, `seen`, `read`, `archived`.
    public var name: String {
        switch self {
        case .unseen: "unseen"
        case .seen: "seen"
        case .read: "read"
        case .archived: "archived"
        }
    }

    public init?(name: String) {
        guard let state = Self.allCases.first(where: { $0.name == name }) else { return nil }
        self = state
    }

    public var description: String { name }
}

/// One notification in a user's notification center.
public struct InboxItem: Codable, Hashable, Sendable {
    /// The key of the outbox row it was delivered from: stable, and the same on a re-delivery.
    public var id: String
    public var userID: UserID
    /// The user's delivery order (1, 2, 3, ...): what pages are keyed on.
    public var sequence: Int64
    /// The notification request it shows.
    public var requestID: RequestID
    /// The raw value of the request's `NotificationKind`.
    public var kind: String
    public var title: String
    public var body: String
    public var deliveredAt: Instant
    /// The state as the user sees it: a read-all covering the item shows it as `read` (unless
    /// it is archived), whatever was set on the item itself.
    public var state: InboxState

    public init(
        id: String, userID: UserID, sequence: Int64, requestID: RequestID, kind: String, title: String, body: String,
        deliveredAt: Instant, state: InboxState
    ) {
        self.id = id
        self.userID = userID
        self.sequence = sequence
        self.requestID = requestID
        self.kind = kind
        self.title = title
        self.body = body
        self.deliveredAt = deliveredAt
        self.state = state
    }
}

/// The numbers of a notification center. Archived items are in none of them.
public struct InboxCounts: Codable, Hashable, Sendable {
    /// Items not archived.
    public var total: Int
    /// Items not yet read (`unseen` or `seen`).
    public var unread: Int
    /// Items not yet seen.
    public var unseen: Int
    /// The app icon's badge: the unread items.
    public var badge: Int { unread }

    public init(total: Int, unread: Int, unseen: Int) {
        self.total = total
        self.unread = unread
        self.unseen = unseen
    }

    public static let zero = InboxCounts(total: 0, unread: 0, unseen: 0)
}

/// One page of a notification center, newest first, with the counts read in the same snapshot.
public struct InboxPage: Hashable, Sendable {
    public var items: [InboxItem]
    /// The sequence to pass as `before` for the next page, or nil on the last page.
    public var nextBefore: Int64?
    public var counts: InboxCounts

    public init(items: [InboxItem], nextBefore: Int64?, counts: InboxCounts) {
        self.items = items
        self.nextBefore = nextBefore
        self.counts = counts
    }
}

/// An outbox row of the `inbox` channel with what the item shows (read from the row's payload).
public struct InboxDelivery: Hashable, Sendable {
    /// The row being performed: its key becomes the item's id.
    public var row: OutboxRow
    public var kind: String
    public var title: String
    public var body: String

    public init(row: OutboxRow, kind: String, title: String, body: String) {
        self.row = row
        self.kind = kind
        self.title = title
        self.body = body
    }
}

/// Each user's notification center: the items the `inbox` channel delivered, their states, and
/// a read-all watermark.
///
/// Contract (checked by `checkInboxStoreConformance` in `Tests/StorageTests`):
/// - **Delivery is the completion.** `deliverToInbox` adds the item, completes its outbox row
///   (as `RuntimeStore.completeOutbox` does) and makes the `next` rows pending (each replacing
///   the pending row of its request and channel; a completed key stays done), in one transaction: there
///   is no moment at which the item exists and the row is still pending, or the reverse.
/// - **One item per row.** Delivering a row whose key was completed before (by an earlier
///   delivery, or by `completeOutbox`) adds nothing and returns false; delivering it twice is
///   therefore one item. A crash cannot fall between the item and the completion of its row.
/// - **Order.** Each user's items get sequences 1, 2, 3, ... in delivery order, never reused.
/// - **Pages.** `inboxPage` lists items that are not archived, newest first, with sequences below
///   `before` (all when nil), at most `limit` (1...100; anything else is `invalidBatch` naming
///   `limit`). Keyed on the sequence, not an offset: items delivered between two pages come
///   before the first page and neither shift nor repeat the ones after it.
/// - **Forward only.** `setInboxState` moves an item to a later state; asking for the state it is
///   in, or an earlier one, changes nothing. It returns the item as it now stands, or nil when
///   the user has no item with that id.
/// - **Read-all is a watermark.** `readAllInbox` marks every item delivered so far as read (the
///   archived stay archived) by remembering the user's latest sequence; an item delivered after
///   it is unread. Counts are computed from the items, so they never drift.
/// - **Counts.** `total` excludes archived items, `unread` counts `unseen` and `seen` ones,
///   `badge` equals `unread`. A user without items has zero counts, never an error.
public protocol InboxStore: Sendable {
    /// Delivers `delivery` and completes its row; the `next` rows (of the same user: a repeating
    /// request's next firing, a badge sync) become pending in the same transaction. Returns
    /// whether an item was added.
    @discardableResult
    func deliverToInbox(_ delivery: InboxDelivery, next: [OutboxRow], at instant: Instant) throws(StoreError) -> Bool
    func inboxPage(userID: UserID, before sequence: Int64?, limit: Int) throws(StoreError) -> InboxPage
    func setInboxState(userID: UserID, itemID: String, to state: InboxState) throws(StoreError) -> InboxItem?
    /// Marks every item delivered so far as read; returns the counts after it.
    @discardableResult
    func readAllInbox(userID: UserID) throws(StoreError) -> InboxCounts
    /// The user's counts alone (the badge of a push): by default those of the first page.
    func inboxCounts(userID: UserID) throws(StoreError) -> InboxCounts
}

extension InboxStore {
    public func inboxCounts(userID: UserID) throws(StoreError) -> InboxCounts {
        try inboxPage(userID: userID, before: nil, limit: 1).counts
    }
}

/// The rules every conformer shares, as pure functions.
public enum InboxRules {
    public static let limitRange = 1...100

    public static func checkLimit(_ limit: Int) throws(StoreError) {
        guard limitRange.contains(limit) else {
            throw .invalidBatch(field: "limit", problem: "must be in 1...100, got \(limit)")
        }
    }

    public static func check(_ delivery: InboxDelivery, next: [OutboxRow]) throws(StoreError) {
        if delivery.row.key.isEmpty { throw .invalidBatch(field: "row.key", problem: "empty") }
        if delivery.row.userID.isEmpty { throw .invalidBatch(field: "row.userID", problem: "empty") }
        var slots = Set<OutboxSlot>()
        for (index, row) in next.enumerated() {
            if row.userID != delivery.row.userID {
                throw .invalidBatch(field: "next[\(index)].userID", problem: "not the delivered row's user")
            }
            if row.key.isEmpty || row.key == delivery.row.key {
                throw .invalidBatch(field: "next[\(index)].key", problem: "empty or the delivered row's key")
            }
            if !slots.insert(row.slot).inserted {
                throw .invalidBatch(field: "next[\(index)]", problem: "a second row for the same request and channel")
            }
        }
    }

    /// What the user sees: a read-all through `readThrough` shows covered items as read.
    public static func effectiveState(_ stored: InboxState, sequence: Int64, readThrough: Int64) -> InboxState {
        stored == .archived || sequence > readThrough ? stored : max(stored, .read)
    }
}
