public import Foundation

/// The badge and inbox sync the server sends as a background push, read from its payload:
///
/// ```json
/// {"aps":{"content-available":1},"inbox":{"unread":3,"unseen":1,"total":12},"planVersion":7}
/// ```
///
/// The app sets its badge from `unread` (the server's count, so it stays right after the user
/// clears notifications), refreshes its inbox, and pulls its plan when `PlanSync.needsPull`
/// says the version is newer than its own.
public struct SyncSignal: Hashable, Sendable {
    public var unread: Int
    public var unseen: Int
    public var total: Int
    /// Nil from a server that does not send it yet: pull to be sure.
    public var planVersion: Int?

    public init(unread: Int, unseen: Int, total: Int, planVersion: Int?) {
        self.unread = unread
        self.unseen = unseen
        self.total = total
        self.planVersion = planVersion
    }

    /// Reads a push's payload; nil for a payload that is not a sync (an alert, a Live Activity
    /// update, anything without the `inbox` counts).
    public init?(payload: Data) {
        struct Wire: Decodable {
            struct Inbox: Decodable {
                var unread: Int
                var unseen: Int
                var total: Int
            }
            var inbox: Inbox
            var planVersion: Int?
        }
        guard let wire = try? JSONDecoder().decode(Wire.self, from: payload) else { return nil }
        let inbox = wire.inbox
        guard inbox.unread >= 0, inbox.unseen >= 0, inbox.total >= 0, (wire.planVersion ?? 0) >= 0 else { return nil }
        self.init(unread: inbox.unread, unseen: inbox.unseen, total: inbox.total, planVersion: wire.planVersion)
    }

    /// The badge the app shows: the unread count.
    public var badge: Int { unread }
}
