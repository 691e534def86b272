import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import engaged

/// What the generated routing would do differently from the routes it replaced, held to what
/// they did: the order in which a request's parts are judged, a lenient query, `Accept`, and a
/// path parameter as sent.
@Suite("engaged: the generated routing keeps the routes' rules")
struct GeneratedServerTests {
    @Test func theAcceptHeaderNeitherRefusesNorUndoesAWrite() async throws {
        try await TestServer().run { client in
            #expect(try await client.send(.put, "/v1/users/ana", berlin).status == .created)
            var fields = headers(idempotencyKey: "accept-1")
            fields[.accept] = "text/html"
            let answer = try await client.send(
                .post, "/v1/users/ana/events", #"{"type": "moodLogged"}"#, headers: fields)
            #expect(answer.status == .accepted, "\(answer.text)")
            let retry = try await client.send(
                .post, "/v1/users/ana/events", #"{"type": "moodLogged"}"#, headers: fields)
            #expect(retry.status == .accepted)
            #expect(retry.headers[EventKey.replayedHeader] == "true")
        }
    }

    /// The path, the headers and the manual clock are judged before the body: the problem named
    /// is the same whatever the body holds.
    @Test func theRequestIsJudgedBeforeItsBody() async throws {
        try await TestServer(manualClock: false).run { client in
            #expect(try await client.send(.put, "/v1/users/ana", berlin).status == .created)
            var twoKeys = headers(idempotencyKey: "k1")
            twoKeys.append(HTTPField(name: EventKey.idempotencyKey, value: "k2"))
            try await client.send(.post, "/v1/users/ana/events", #"{"type": 1}"#, headers: twoKeys)
                .expectProblem(400, "bad-request", field: "Idempotency-Key")
            try await client.send(.put, "/v1/users/a%20b", #"{"timeZone": 1}"#)
                .expectProblem(400, "bad-request", field: "id")
            try await client.send(.post, "/v1/users/ana/inbox/not-an-item", #"{"state": 1}"#)
                .expectProblem(400, "bad-request", field: "item")
            try await client.send(.post, "/v1/admin/clock", #"{"advanceSeconds": "soon"}"#)
                .expectProblem(404, "not-found")
        }
    }

    /// The generated code would percent-decode the path: `al%69ce` would be `alice`.
    @Test func aPathParameterIsTakenAsSent() async throws {
        try await TestServer().run { client in
            #expect(try await client.send(.put, "/v1/users/alice", berlin).status == .created)
            try await client.send(.get, "/v1/users/al%69ce").expectProblem(400, "bad-request", field: "id")
        }
    }

    /// Hummingbird's reading of a query, which the rules were written against: a name without a
    /// value is empty (an empty cursor is the first page), a parameter explain does not know is
    /// ignored.
    @Test(arguments: [
        "/v1/users/ana/inbox?cursor", "/v1/users/ana/inbox?limit=5&cursor", "/v1/users/ana/explain?debug",
    ])
    func aLenientQueryIsRead(uri: String) async throws {
        try await TestServer().run { client in
            #expect(try await client.send(.put, "/v1/users/ana", berlin).status == .created)
            let answer = try await client.send(.get, uri)
            #expect(answer.status == .ok, "\(uri): \(answer.text)")
        }
    }

    /// A body on an operation that takes none is not read (revocation refuses one itself).
    @Test func aBodyWhereNoneIsTakenIsNotRead() async throws {
        try await TestServer().run { client in
            #expect(try await client.send(.put, "/v1/users/ana", berlin).status == .created)
            #expect(try await client.send(.get, "/v1/users/ana", "not json").status == .ok)
            try await client.send(.delete, "/v1/users/ana/tokens", "{}").expectProblem(400, "bad-request")
        }
    }
}
