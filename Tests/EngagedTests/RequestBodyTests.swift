import Foundation
import Hummingbird
import HummingbirdTesting
import Models
import Storage
import Testing

@testable import engaged

/// What a body must be before a route reads it (`RequestBodyMiddleware`, `JSONBody.check`);
/// each refusal changes nothing.
@Suite("engaged: request bodies")
struct RequestBodyTests {
    static let anaBody = #"{"timeZone": "Europe/Berlin"}"#

    func bodyHeaders(contentType: String?, encoding: String? = nil) -> HTTPFields {
        var fields = headers()
        fields[.contentType] = contentType
        if let encoding { fields[.contentEncoding] = encoding }
        return fields
    }

    @Test(arguments: [
        ("application/x-www-form-urlencoded", nil as String?), ("text/plain", nil), (nil, nil),
        ("application/jsonx", nil), ("application/json", "gzip"), ("application/json", "br"),
    ])
    func aBodyThatIsNotPlainJSONIs415(contentType: String?, encoding: String?) async throws {
        let server = try await TestServer()
        try await server.run(.live) { client in
            let response = try await client.send(
                .put, "/v1/users/ana", Self.anaBody, headers: bodyHeaders(contentType: contentType, encoding: encoding))
            response.expectProblem(415, "unsupported-media-type")
            #expect(try server.store.profile(id: "ana") == nil)
        }
    }

    @Test(arguments: ["application/json", "application/json; charset=utf-8", "Application/JSON"])
    func jsonWithAnyParametersOrCaseIsRead(contentType: String) async throws {
        let server = try await TestServer()
        try await server.run(.live) { client in
            let response = try await client.send(
                .put, "/v1/users/ana", Self.anaBody,
                headers: bodyHeaders(contentType: contentType, encoding: "identity"))
            #expect(response.status == .created, "\(response.text)")
        }
    }

    @Test func aRouteWithoutABodyNeedsNoContentType() async throws {
        let server = try await TestServer()
        try await server.run(.live) { client in
            #expect(try await client.send(.put, "/v1/users/ana", Self.anaBody).status == .created)
            let readAll = try await client.send(
                .post, "/v1/users/ana/inbox/read-all", headers: bodyHeaders(contentType: nil))
            #expect(readAll.status == .ok, "\(readAll.text)")
        }
    }

    @Test(arguments: [
        (#"{"timeZone": "Europe/Berlin", "timeZone": "UTC"}"#, "timeZone"),
        (
            #"{"timeZone": "UTC", "preferences": {"quietHours": {"start": "22:00", "start": "23:00", "end": "07:00"}}}"#,
            "preferences.quietHours.start"
        ),
        (#"{"timeZone": "UTC", "t\u0069meZone": "UTC"}"#, "timeZone"),
    ])
    func aDuplicateKeyIs400NamingIt(body: String, field: String) async throws {
        let server = try await TestServer()
        try await server.run(.live) { client in
            let response = try await client.send(.put, "/v1/users/ana", body)
            response.expectProblem(400, "bad-request", field: field, detailContains: "given twice")
            #expect(try server.store.profile(id: "ana") == nil)
        }
    }

    /// Nesting past 64 levels is refused at the level it passes, and the scan's memory and time
    /// stay linear in the body however deep it goes.
    @Test func aBodyNestedPast64LevelsIs400() async throws {
        let server = try await TestServer()
        try await server.run(.live) { client in
            let body = #"{"timeZone": "UTC", "x": "# + String(repeating: "[", count: 60_000)
            let response = try await client.send(.put, "/v1/users/ana", body)
            #expect(response.status == .badRequest)
            #expect((response.json["field"] as? String)?.hasPrefix("x[0][0]") == true)
            #expect(try server.store.profile(id: "ana") == nil)
        }
    }

    @Test(arguments: [#"{"timeZone": "UTC",}"#, "[]", "3", #""UTC""#, #"  [{"timeZone": "UTC"}]"#])
    func aBodyThatIsNotOneStrictJSONObjectIs400(body: String) async throws {
        let server = try await TestServer()
        try await server.run(.live) { client in
            let response = try await client.send(.put, "/v1/users/ana", body)
            response.expectProblem(400, "bad-request")
            #expect(!response.text.contains("Dictionary"), "\(response.text)")
            #expect(try server.store.profile(id: "ana") == nil)
        }
    }

    /// What the server answers a PUT of ana whose headers end with `rest` (the body's framing and
    /// what of the body is sent), over a raw connection: what an HTTP client cannot send.
    static func rawPut(port: Int, _ rest: String) async throws -> String {
        let connection = try RawConnection(port: port)
        defer { connection.closeConnection() }
        connection.send(
            "PUT /v1/users/ana HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(TestServer.apiKey)\r\n"
                + "Content-Type: application/json\r\nConnection: close\r\n" + rest)
        return await offThePool { connection.readUntilClosed(quietSeconds: RawConnection.answerQuietSeconds) }.text
    }

    @Test func aBodyThatStallsIs408AfterTheBodyTimeout() async throws {
        var server = try await TestServer()
        server.environment.bodyTimeoutSeconds = 1
        let store = server.store
        try await server.run(.live) { client in
            let answer = try await Self.rawPut(
                port: try #require(client.port), "Content-Length: 40\r\n\r\n{\"timeZone\"")
            #expect(answer.hasPrefix("HTTP/1.1 408"), "\(answer)")
            #expect(answer.contains("urn:engaged:problem:request-timeout"))
            #expect(try store.profile(id: "ana") == nil)
        }
    }

    @Test func aMalformedChunkIs400NotA500() async throws {
        let server = try await TestServer()
        try await server.run(.live) { client in
            let answer = try await Self.rawPut(
                port: try #require(client.port), "Transfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n")
            #expect(answer.hasPrefix("HTTP/1.1 400"), "\(answer)")
            #expect(answer.contains("could not be read"), "\(answer)")
            #expect(try server.store.profile(id: "ana") == nil)
        }
    }
}

/// How `JSONBody.check` words the scanner's refusals: what, the line and column, and the field.
@Suite("JSONBody.check")
struct JSONBodyCheckTests {
    /// The detail and field of the problem `check` throws for `body`, or nil when it passes.
    func refusal(_ body: String) -> (detail: String, field: String?)? {
        do {
            try JSONBody.check(Array(body.utf8))
            return nil
        } catch {
            #expect(error.status == .badRequest)
            return (error.detail, error.field)
        }
    }

    @Test(
        arguments: [
            (
                #"{"a": 1, "a": 2}"#, "a",
                #"the key "a" is given twice in one object (line 1, column 10; first at line 1)"#
            ),
            (#"{"x": {"y": [1, {"z": 1, "z": 2}]}}"#, "x.y[1].z", #"the key "z" is given twice"#),
            ("{\"a\": 1,\n \"a\": 2}", "a", "(line 2, column 2; first at line 1)"),
            (#"{"a": 1,}"#, nil, "the body is not valid JSON: a comma before '}'; expected a key in double quotes"),
            (#"{"a": {"b": [1, 2 , ]}}"#, "a.b", "a comma before ']'; expected a value (line 1, column 21)"),
            (#"{"a": tru}"#, "a", "the body is not valid JSON: unexpected word; expected true (line 1, column 7)"),
            (#"{"a": 1 "b": 2}"#, nil, "expected ',' or '}', found character '\"' (line 1, column 9)"),
            (#"{"a": 012}"#, "a", "a number has a leading zero"),
            (
                #"{"a": "# + String(repeating: "[", count: 70), "a" + String(repeating: "[0]", count: 63),
                "the body nests deeper than 64 levels (line 1, column 70)"
            ),
            (#"{"a": 1"#, nil, "expected ',' or '}', found end of file (line 1, column 8)"),
        ] as [(String, String?, String)])
    func aRefusalSaysWhatAndWhere(body: String, field: String?, detail: String) throws {
        let answer = try #require(refusal(body))
        #expect(answer.field == field)
        #expect(answer.detail.contains(detail), "\(answer.detail)")
    }

    /// A client's key in a detail is clipped, however long it is.
    @Test func aLongDuplicateKeyIsClippedInTheDetailAndTheField() throws {
        let key = String(repeating: "k", count: 500)
        let answer = try #require(refusal(#"{"\#(key)": 1, "\#(key)": 2}"#))
        #expect(answer.detail.count < 200, "\(answer.detail)")
        #expect(answer.field == String(repeating: "k", count: 64) + "...")
    }

    @Test(arguments: ["", "  ", "[]", "3", #""a""#, "\u{FEFF}{}"])
    func aBodyThatIsNotAnObjectIsRefusedBeforeTheScan(body: String) throws {
        let answer = try #require(refusal(body))
        #expect(answer.detail.contains("a JSON object is expected"), "\(answer.detail)")
    }

    @Test(arguments: [
        #"{"a": 1, "b": {"a": 2}}"#, #"{"a": [{"a": 1}, {"a": 2}]}"#, #"{"a": "}{\",:", "b": "a"}"#,
        #"{"a": [1, 2, "a", "a"], "b": null, "c": true, "d": -1.5e3}"#, #"{"a": 1, "A": 2}"#,
        " {\"a\": 18446744073709551616}\n",
    ])
    func aStrictObjectPasses(body: String) {
        #expect(refusal(body) == nil)
    }
}
