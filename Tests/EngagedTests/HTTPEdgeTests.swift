import Foundation
import Hummingbird
import HummingbirdTesting
import Testing

@testable import engaged

/// The edges of HTTP/1.1 a hostile client probes, each answered as HTTP says, over a raw
/// connection (what an HTTP client would not send).
@Suite("engaged: HTTP edges")
struct HTTPEdgeTests {
    /// Sends `request` on a fresh connection and reads until the server closes it (or goes quiet
    /// for `quietSeconds`).
    static func exchange(
        _ server: TestServer, _ request: String, quietSeconds: Int = RawConnection.answerQuietSeconds
    ) async throws -> (text: String, closed: Bool) {
        let box = Box()
        try await server.run(.live) { client in
            let connection = try RawConnection(port: try #require(client.port))
            defer { connection.closeConnection() }
            connection.send(request)
            box.answer = await offThePool { connection.readUntilClosed(quietSeconds: quietSeconds) }
        }
        return box.answer
    }

    final class Box: @unchecked Sendable {
        var answer: (text: String, closed: Bool) = ("", false)
    }

    /// The status line, the headers (lowercased names) and the body of one answer.
    static func parse(_ text: String) -> (status: Int, headers: [String: String], body: String) {
        let parts = text.components(separatedBy: "\r\n\r\n")
        let lines = (parts.first ?? "").components(separatedBy: "\r\n")
        let status = Int(lines.first?.split(separator: " ").dropFirst().first ?? "") ?? 0
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
                in: .whitespaces)
        }
        return (status, headers, parts.dropFirst().joined(separator: "\r\n\r\n"))
    }

    static let auth = "Authorization: Bearer \(TestServer.apiKey)\r\n"

    @Test(arguments: [
        // A transfer coding the server does not decode: 501 (RFC 9112 section 6.1), a problem body.
        (
            "POST /v1/users/ana/events HTTP/1.1\r\nHost: t\r\n\(auth)Content-Type: application/json\r\n"
                + "Transfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n", 501, "not-implemented"
        ),
        // What NIO's parser refuses: 400 with a problem body, not an empty one.
        ("GET /healthz HTTP/1.1\r\nHost: t\r\nBad Header: x\r\n\r\n", 400, "bad-request"),
        ("NOT A REQUEST\r\n\r\n", 400, "bad-request"),
        (
            "POST /v1/users/ana/events HTTP/1.1\r\nHost: t\r\nContent-Length: 4\r\n"
                + "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400, "bad-request"
        ),
        // A header larger than the parser reads: 431.
        (
            "GET /healthz HTTP/1.1\r\nHost: t\r\nX-Big: \(String(repeating: "a", count: 90_000))\r\n\r\n", 431,
            "header-too-large"
        ),
    ])
    func aRequestRefusedBeforeAnyRouteGetsAProblemAndIsClosed(request: String, status: Int, slug: String)
        async throws
    {
        let answer = try await Self.exchange(try await TestServer(), request)
        let (answered, headers, body) = Self.parse(answer.text)
        #expect(answered == status, "\(answer.text.prefix(300))")
        #expect(headers["content-type"] == "application/problem+json")
        #expect(headers["connection"] == "close")
        #expect(body.contains("\"urn:engaged:problem:\(slug)\""), "\(body)")
        #expect(answer.closed)
    }

    @Test(arguments: [
        ("GET /healthz HTTP/1.0\r\n\r\n", true),  // HTTP/1.0: closed after the answer
        ("GET /healthz HTTP/1.1\r\nHost: t\r\nConnection: Close\r\n\r\n", true),
        ("GET /healthz HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", false),  // asked to stay: it stays
    ])
    func http10ClosesAfterItsAnswerUnlessKeptAlive(request: String, closes: Bool) async throws {
        // Kept alive, the server stays silent after the answer: a short quiet time ends the read.
        let answer = try await Self.exchange(try await TestServer(), request, quietSeconds: closes ? 30 : 10)
        let (status, headers, _) = Self.parse(answer.text)
        #expect(status == 200, "\(answer.text)")
        #expect(answer.closed == closes)
        #expect(headers["connection"] == (closes ? "close" : "keep-alive"))
    }

    @Test(arguments: [
        ("HEAD", "/healthz", "GET"), ("TRACE", "/healthz", "GET"), ("TRACE", "/v1/users/ana", "GET, PUT"),
        ("DELETE", "/v1/users/ana/events", "POST"),
    ])
    func aKnownPathWithAnotherMethodIs405WithAllow(method: String, path: String, allow: String) async throws {
        let server = try await TestServer()
        try await server.run(.router) { client in
            let response = try await client.send(HTTPRequest.Method(method)!, path)
            #expect(response.status == .methodNotAllowed)
            #expect(response.headers[.allow] == allow)
            if method == "HEAD" {
                #expect(response.body.readableBytes == 0)
            } else {
                response.expectProblem(405, "method-not-allowed")
            }
            // A path no route has stays 404.
            let unknown = try await client.send(HTTPRequest.Method(method)!, "/no/such/route")
            #expect(unknown.status == .notFound)
        }
    }

    @Test(arguments: [
        "application/json; charset=latin1", "application/json; charset=ISO-8859-1",
        "application/json;charset=\"utf-16\"",
    ])
    func jsonInACharsetOtherThanUTF8Is415(contentType: String) async throws {
        let server = try await TestServer()
        try await server.run(.router) { client in
            var fields = headers()
            fields[.contentType] = contentType
            let response = try await client.send(.put, "/v1/users/ana", berlin, headers: fields)
            response.expectProblem(415, "unsupported-media-type")
        }
    }

    @Test(arguments: ["application/json; charset=utf-8", "application/json; charset=\"UTF-8\""])
    func jsonDeclaredUTF8IsRead(contentType: String) async throws {
        let server = try await TestServer()
        try await server.run(.router) { client in
            var fields = headers()
            fields[.contentType] = contentType
            let response = try await client.send(.put, "/v1/users/ana", berlin, headers: fields)
            #expect(response.status == .created, "\(response.text)")
        }
    }

    @Test func aLongUnknownEventTypeIsNotEchoedInFull() async throws {
        let server = try await TestServer()
        let type = String(repeating: "x", count: 10_000)
        try await server.run(.router) { client in
            _ = try await client.send(.put, "/v1/users/ana", berlin)
            let response = try await client.send(.post, "/v1/users/ana/events", #"{"type": "\#(type)"}"#)
            response.expectProblem(400, "bad-request", field: "type")
            #expect(response.text.utf8.count < 1_000, "\(response.text.prefix(300))")
            #expect(response.text.contains("10000 bytes"))
        }
    }

    /// A head that trickles in is cut at the header deadline (408 and closed), long before the
    /// idle timeout, which each trickled byte would otherwise restart: the trickle never ends its
    /// head, so within the 30 s the test listens only the header deadline answers.
    @Test func aTrickledHeadIs408AtTheHeaderDeadline() async throws {
        var server = try await TestServer()
        server.environment.headerTimeoutSeconds = 1
        server.environment.idleTimeoutSeconds = 60
        try await server.run(.live) { client in
            let connection = try RawConnection(port: try #require(client.port))
            defer { connection.closeConnection() }
            let trickle = Task.detached {
                for byte in "GET /healthz HTTP/1.1\r\nHost: t\r\n".utf8.map({ String(UnicodeScalar($0)) }) {
                    try await Task.sleep(for: .milliseconds(200))
                    connection.send(byte)
                }
            }
            defer { trickle.cancel() }
            let answer = await offThePool { connection.readUntilClosed(quietSeconds: 30) }
            #expect(Self.parse(answer.text).status == 408, "\(answer.text)")
            #expect(answer.text.contains("urn:engaged:problem:request-timeout"))
            #expect(answer.closed)
        }
    }

    /// A kept-alive connection between requests is the idle timeout's, not the header deadline's.
    @Test func aQuietKeptAliveConnectionOutlivesTheHeaderDeadline() async throws {
        var server = try await TestServer()
        server.environment.headerTimeoutSeconds = 1
        try await server.run(.live) { client in
            let connection = try RawConnection(port: try #require(client.port), timeoutSeconds: 10)
            defer { connection.closeConnection() }
            connection.send("GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n")
            try await Task.sleep(for: .milliseconds(2_500))  // past the header deadline, quiet
            connection.send("GET /healthz HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
            let answer = await offThePool { connection.readUntilClosed(quietSeconds: 30) }
            #expect(answer.text.components(separatedBy: "HTTP/1.1 200").count == 3, "\(answer.text)")
        }
    }
}
