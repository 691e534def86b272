import Foundation
import Hummingbird
import Models
import Runtime
import Storage

/// The notification center: `GET /v1/users/{id}/inbox`, `POST /v1/users/{id}/inbox/{item}` and
/// `POST /v1/users/{id}/inbox/read-all`, open to the API key and to the user's own token
/// (`InboxAuthMiddleware`).
struct InboxRoutes: Sendable {
    let routes: Routes

    var runtime: EngineRuntime { routes.runtime }

    func register(on router: Router<EngagedRequestContext>) {
        let inbox = router.group("v1/users/:id/inbox").add(middleware: InboxAuthMiddleware(routes.environment))
        inbox.get(use: list)
        inbox.post("read-all", use: readAll)
        inbox.post(":item", use: setState)
    }

    @Sendable func list(_ request: Request, context: EngagedRequestContext) async throws -> Response {
        let id = try Routes.userID(context)
        let query = try InboxQuery(request.uri.queryParameters)
        let page = try await routes.perform {
            try await runtime.inbox(of: id, cursor: query.cursor, limit: query.limit)
        }
        return JSONBody.response(.ok, InboxView(page))
    }

    @Sendable func setState(_ request: Request, context: EngagedRequestContext) async throws -> Response {
        let id = try Routes.userID(context)
        let itemID = try Self.itemID(context)
        let body = try JSONBody.decode(InboxStateBody.self, from: try await JSONBody.read(request))
        guard let item = try await routes.perform({ try await runtime.setInboxState(body.state, item: itemID, of: id) })
        else {
            throw Problem.notFound("user \"\(id)\" has no inbox item \"\(itemID)\"")
        }
        let counts = try await routes.perform { try await runtime.inboxCounts(of: id) }
        return JSONBody.response(.ok, InboxItemUpdated(item: InboxItemView(item), counts: InboxCountsView(counts)))
    }

    @Sendable func readAll(_ request: Request, context: EngagedRequestContext) async throws -> Response {
        let id = try Routes.userID(context)
        let bytes = try await JSONBody.read(request)
        if !bytes.isEmpty { _ = try JSONBody.decode(EmptyBody.self, from: bytes) }
        let counts = try await routes.perform { try await runtime.readAllInbox(of: id) }
        return JSONBody.response(.ok, InboxCountsView(counts))
    }

    /// The item of the path: an id as the inbox lists it (a lowercase UUID, the key of the outbox
    /// row it came from).
    static func itemID(_ context: some RequestContext) throws(Problem) -> String {
        let id = context.parameters.get("item") ?? ""
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

/// `POST /v1/users/{id}/inbox/{item}`: `{"state": "seen" | "read" | "archived"}`.
struct InboxStateBody: Decodable {
    var state: InboxState

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: AnyKey.self)
        try c.rejectKeys(outside: ["state"], at: decoder.codingPath)
        let name: String = try c.decode("state")
        guard let state = InboxState(name: name), state != .unseen else {
            throw invalidValue(
                decoder.codingPath, "state",
                "expected seen, read or archived, got \"\(name)\"; states only move forward, so unseen cannot be set")
        }
        self.state = state
    }
}

/// A body that must be an empty JSON object (`POST /v1/users/{id}/inbox/read-all` takes none).
struct EmptyBody: Decodable {
    init(from decoder: any Decoder) throws {
        try decoder.container(keyedBy: AnyKey.self).rejectKeys(outside: [], at: decoder.codingPath)
    }
}

struct InboxItemView: Encodable {
    /// Stable: the key of the outbox row the item came from.
    var id: String
    var requestID: String
    var kind: String
    var title: String
    var body: String
    /// ISO 8601 UTC.
    var deliveredAt: String
    var state: String

    init(_ item: InboxItem) {
        id = item.id
        requestID = item.requestID.rawValue
        kind = item.kind
        title = item.title
        body = item.body
        deliveredAt = item.deliveredAt.iso8601
        state = item.state.name
    }
}

/// The counts of a notification center; archived items are in none of them, `badge` = `unread`.
struct InboxCountsView: Encodable {
    var unseen: Int
    var unread: Int
    var total: Int
    var badge: Int

    init(_ counts: InboxCounts) {
        unseen = counts.unseen
        unread = counts.unread
        total = counts.total
        badge = counts.badge
    }

    /// Writes the four counts beside the other fields of an answer.
    func encode(into c: inout KeyedEncodingContainer<AnyKey>) throws {
        try c.encode(unseen, forKey: AnyKey("unseen"))
        try c.encode(unread, forKey: AnyKey("unread"))
        try c.encode(total, forKey: AnyKey("total"))
        try c.encode(badge, forKey: AnyKey("badge"))
    }
}

/// `GET /v1/users/{id}/inbox`: a page, newest first, the next page's cursor (null on the last)
/// and the counts.
struct InboxView: Encodable {
    var items: [InboxItemView]
    var nextCursor: String?
    var counts: InboxCountsView

    init(_ page: InboxPage) {
        items = page.items.map(InboxItemView.init)
        nextCursor = page.nextBefore.map { InboxCursor(before: $0).token }
        counts = InboxCountsView(page.counts)
    }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: AnyKey.self)
        try c.encode(items, forKey: AnyKey("items"))
        try c.encode(nextCursor, forKey: AnyKey("nextCursor"))  // null, not absent
        try counts.encode(into: &c)
    }
}

/// The answer of `POST /v1/users/{id}/inbox/{item}`: the item as it now stands, and the counts.
struct InboxItemUpdated: Encodable {
    var item: InboxItemView
    var counts: InboxCountsView

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: AnyKey.self)
        try c.encode(item, forKey: AnyKey("item"))
        try counts.encode(into: &c)
    }
}
