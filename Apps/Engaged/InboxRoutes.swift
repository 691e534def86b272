import EngagedAPI
import Foundation
import Hummingbird
import Models
import Runtime
import Storage

/// The notification center: `GET /v1/users/{id}/inbox`, `POST /v1/users/{id}/inbox/{item}` and
/// `POST /v1/users/{id}/inbox/read-all`, open to the API key and to the user's own token
/// (`OperationAccess`).
extension Routes {
    /// A page, newest first, the next page's cursor (null on the last) and the counts.
    func getInbox(_ input: Operations.GetInbox.Input) async throws -> Operations.GetInbox.Output {
        let id = try Self.userID(input.path.id)
        let query = try InboxQuery(RequestScope.queryItems)
        let page = try await perform { try await runtime.inbox(of: id, cursor: query.cursor, limit: query.limit) }
        let counts = page.counts
        return .ok(
            .init(
                body: .json(
                    .init(
                        unseen: counts.unseen, unread: counts.unread, total: counts.total, badge: counts.badge,
                        items: try page.items.map(Components.Schemas.InboxItem.init),
                        nextCursor: Nullable(page.nextBefore.map { InboxCursor(before: $0).token })))))
    }

    /// The item as it now stands, and the counts; 404 for an item the user does not have.
    func setInboxItemState(_ input: Operations.SetInboxItemState.Input) async throws
        -> Operations.SetInboxItemState.Output
    {
        let id = try Self.userID(input.path.id)
        let itemID = try Self.inboxItemID(input.path.item)
        let body =
            switch input.body {
            case .json(let body): body
            }  // the only media type the document takes
        // The document's states are those a client may set: states only move forward.
        guard let state = InboxState(name: body.state.rawValue) else {
            throw Problem.invalidField("state", "expected seen, read or archived, got \"\(body.state.rawValue)\"")
        }
        guard let item = try await perform({ try await runtime.setInboxState(state, item: itemID, of: id) }) else {
            throw Problem.notFound("user \"\(id)\" has no inbox item \"\(itemID)\"")
        }
        let counts = try await perform { try await runtime.inboxCounts(of: id) }
        return .ok(
            .init(
                body: .json(
                    .init(
                        unseen: counts.unseen, unread: counts.unread, total: counts.total, badge: counts.badge,
                        item: try Components.Schemas.InboxItem(item)))))
    }

    /// Every item read; the counts after. The body is empty or `{}`.
    func readAllInbox(_ input: Operations.ReadAllInbox.Input) async throws -> Operations.ReadAllInbox.Output {
        let id = try Self.userID(input.path.id)
        let counts = try await perform { try await runtime.readAllInbox(of: id) }
        return .ok(
            .init(
                body: .json(
                    .init(unseen: counts.unseen, unread: counts.unread, total: counts.total, badge: counts.badge))))
    }

    /// The item of the path: an id as the inbox lists it (a lowercase UUID, the key of the outbox
    /// row it came from).
    static func inboxItemID(_ id: String) throws(Problem) -> String {
        let bytes = Array(id.utf8)
        let dashes: Set = [8, 13, 18, 23]
        let wellFormed =
            bytes.count == 36
            && bytes.indices.allSatisfy { index in
                let byte = bytes[index]
                if dashes.contains(index) { return byte == UInt8(ascii: "-") }
                return (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                    || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
            }
        guard wellFormed else {
            throw Problem.badRequest(
                "an inbox item id is a lowercase UUID such as 0f8e2c1a-4b3d-8e6f-9a1b-2c3d4e5f6a7b, as the inbox lists it",
                field: "item")
        }
        return id
    }
}

/// `?cursor=&limit=` of `GET /v1/users/{id}/inbox`. An absent or empty cursor is the first page;
/// an absent limit is `defaultLimit`. Any other parameter, or one given twice, is refused.
struct InboxQuery: Equatable {
    static let defaultLimit = 20
    var cursor: InboxCursor?
    var limit: Int

    init(_ parameters: some Collection<(key: Substring, value: Substring)>) throws(Problem) {
        var seen: Set<Substring> = []
        cursor = nil
        limit = Self.defaultLimit
        for (name, value) in parameters {
            guard seen.insert(name).inserted else {
                throw Problem.badRequest("the query parameter \(name) is given more than once", field: String(name))
            }
            switch name {
            case "cursor":
                guard !value.isEmpty else { continue }
                guard let cursor = InboxCursor(token: String(value)) else {
                    throw Problem.badRequest(
                        "not a cursor of this inbox; pass the nextCursor of the previous page", field: "cursor")
                }
                self.cursor = cursor
            case "limit":
                guard let number = Int(value) else {
                    throw Problem.badRequest("limit is a whole number in 1...100, got \"\(value)\"", field: "limit")
                }
                guard (1...100).contains(number) else {
                    throw Problem.invalidField("limit", "must be in 1...100, got \(number)")
                }
                limit = number
            default:
                throw Problem.badRequest(
                    "unknown query parameter \"\(name)\"; expected cursor or limit", field: String(name))
            }
        }
    }
}

extension Components.Schemas.InboxItem {
    /// An item as the inbox lists it. Its kind and state are the engine's, which the document
    /// lists; one it does not is a server fault (500, logged), never a guess.
    init(_ item: InboxItem) throws {
        guard let kind = Components.Schemas.NotificationKind(rawValue: item.kind),
            let state = Components.Schemas.InboxState(rawValue: item.state.name)
        else {
            throw APIAnswerError(detail: "inbox item \(item.id): kind \(item.kind) or state \(item.state.name)")
        }
        self.init(
            id: item.id, requestID: item.requestID.rawValue, kind: kind, title: item.title, body: item.body,
            deliveredAt: item.deliveredAt.date, state: state)
    }
}
