import Foundation
public import Models
public import Storage

extension InboxDelivery {
    /// What an `inbox` row shows, from its notification, or nil when its payload is not one (the
    /// row is then left pending, as a refused send is).
    init?(_ row: OutboxRow) {
        guard let request = row.payload.notification else { return nil }
        self.init(
            row: row, kind: request.content.kind.rawValue, title: request.content.title, body: request.content.body)
    }
}

/// Where the next page of an inbox starts: an opaque token for clients (it is the sequence the
/// next page goes below, which is why a page never shifts when newer items arrive).
public struct InboxCursor: Hashable, Sendable {
    public var before: Int64

    public init(before: Int64) { self.before = before }

    private static let prefix = "inbox:"

    /// The cursor of `token`, or nil when the token is not one this runtime made.
    public init?(token: String) {
        var base64 = token.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        guard token.utf8.count <= 64, token.utf8.allSatisfy({ $0 != UInt8(ascii: "=") }),
            let data = Data(base64Encoded: base64), let text = String(data: data, encoding: .utf8),
            text.hasPrefix(Self.prefix), let before = Int64(text.dropFirst(Self.prefix.count)), before > 0,
            text == Self.prefix + String(before)
        else { return nil }
        self.before = before
    }

    /// Base64url without padding.
    public var token: String {
        Data((Self.prefix + String(before)).utf8).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}

/// The notification center of each user, over the store's `InboxStore`. Every call refuses an
/// unknown user (`RuntimeError.unknownUser`) and changes nothing then.
extension EngineRuntime {
    /// A page of the user's inbox, newest first (`limit` 1...100), with the counts.
    public func inbox(of userID: UserID, cursor: InboxCursor?, limit: Int) throws(RuntimeError) -> InboxPage {
        try requireUser(userID)
        do { return try store.inboxPage(userID: userID, before: cursor?.before, limit: limit) } catch {
            throw .store(error)
        }
    }

    /// Moves an item forward to `state` (an earlier state changes nothing); returns the item as
    /// it now stands, or nil when the user has no item `itemID`. When the unread count changed,
    /// the user's devices get a badge sync (`SilentPushPlan`), committed after the change: a
    /// crash between the two leaves the badge to the next sync.
    public func setInboxState(_ state: InboxState, item itemID: String, of userID: UserID) async throws(RuntimeError)
        -> InboxItem?
    {
        try requireUser(userID)
        let before = try inboxCounts(of: userID)
        let item: InboxItem?
        do { item = try store.setInboxState(userID: userID, itemID: itemID, to: state) } catch { throw .store(error) }
        if try inboxCounts(of: userID).unread != before.unread { try await requestInboxSync(of: userID) }
        return item
    }

    /// Marks everything delivered so far as read; returns the counts after it. When the unread
    /// count changed, the user's devices get a badge sync, as for `setInboxState`.
    public func readAllInbox(of userID: UserID) async throws(RuntimeError) -> InboxCounts {
        try requireUser(userID)
        let before = try inboxCounts(of: userID)
        let after: InboxCounts
        do { after = try store.readAllInbox(userID: userID) } catch { throw .store(error) }
        if after.unread != before.unread { try await requestInboxSync(of: userID) }
        return after
    }

    /// The counts of the user's inbox.
    public func inboxCounts(of userID: UserID) throws(RuntimeError) -> InboxCounts {
        try requireUser(userID)
        do { return try store.inboxCounts(userID: userID) } catch { throw .store(error) }
    }

    /// Throws `unknownUser` unless the user has a stored profile (a read of the profile alone:
    /// no engine is loaded).
    public func requireUser(_ userID: UserID) throws(RuntimeError) {
        let known: Bool
        do { known = try store.hasProfile(id: userID) } catch { throw .store(error) }
        guard known else { throw .unknownUser(userID) }
    }
}
