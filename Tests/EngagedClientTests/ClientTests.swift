import EngagedAPI
import EngagedClient
import Foundation
import HTTPTypes
import Models
import OpenAPIRuntime
import Synchronization
import Testing

/// A transport that answers every request with one canned response and keeps what it was sent.
final class CannedTransport: ClientTransport, Sendable {
    let status: HTTPResponse.Status
    let contentType: String
    let headers: HTTPFields
    let body: String
    private let sent = Mutex<[(HTTPRequest, String, URL)]>([])

    init(
        _ status: HTTPResponse.Status, _ body: String, contentType: String = "application/json",
        headers: HTTPFields = [:]
    ) {
        self.status = status
        self.body = body
        self.contentType = contentType
        self.headers = headers
    }

    var requests: [(request: HTTPRequest, body: String, baseURL: URL)] {
        sent.withLock { $0.map { ($0.0, $0.1, $0.2) } }
    }

    func send(_ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String) async throws -> (
        HTTPResponse, HTTPBody?
    ) {
        var text = ""
        if let body { text = try await String(collecting: body, upTo: 1 << 20) }
        sent.withLock { $0.append((request, text, baseURL)) }
        var fields = headers
        fields[.contentType] = contentType
        return (HTTPResponse(status: status, headerFields: fields), HTTPBody(self.body))
    }
}

@Suite("EngagedClient")
struct ClientTests {
    static let server = URL(string: "https://engaged.example.com")!

    @Test func everyRequestCarriesTheCredentialAndCompactSortedJSON() async throws {
        let transport = CannedTransport(
            .accepted, #"{"effects": 2, "planVersion": 1803880800, "liveActivities": [], "futureField": true}"#)
        let client = Client(serverURL: Self.server, credential: "the-key", transport: transport)
        let answer = try await client.postEvent(
            path: .init(id: "ana"), headers: .init(idempotencyKey: "k-1"),
            body: .json(
                .mealLogged(.init(_type: .mealLogged, meal: .lunch, at: Instant(secondsSinceEpoch: 1_803_880_800))))
        ).accepted.body.json
        #expect(answer.effects == 2)
        #expect(answer.planVersion == 1_803_880_800)

        let sent = try #require(transport.requests.first)
        #expect(sent.request.method == .post)
        #expect(sent.request.path == "/v1/users/ana/events")
        #expect(sent.request.headerFields[.authorization] == "Bearer the-key")
        #expect(sent.request.headerFields[HTTPField.Name("Idempotency-Key")!] == "k-1")
        #expect(sent.body == #"{"at":"2027-03-01T06:00:00Z","meal":"lunch","type":"mealLogged"}"#)
    }

    @Test func aPathParameterIsEscaped() async throws {
        let transport = CannedTransport(
            .notFound,
            #"{"type": "urn:engaged:problem:not-found", "title": "Not Found", "status": 404, "detail": "no user"}"#,
            contentType: "application/problem+json")
        let client = Client(serverURL: Self.server, credential: "k", transport: transport)
        let answer = try await client.getUser(path: .init(id: "a b/c"))
        #expect(try answer.notFound.body.applicationProblemJson.detail == "no user")
        #expect(transport.requests.first?.request.path == "/v1/users/a%20b%2Fc")
    }

    @Test func anAnswerTheDocumentDoesNotListIsUndocumented() async throws {
        let transport = CannedTransport(.init(code: 418), "{}")
        let client = Client(serverURL: Self.server, credential: "k", transport: transport)
        let answer = try await client.getSchedule(path: .init(id: "ana"))
        guard case .undocumented(let status, _) = answer else {
            Issue.record("expected undocumented, got \(answer)")
            return
        }
        #expect(status == 418)
    }

    @Test func aBodyThatIsNotTheDocumentsIsAnError() async throws {
        let transport = CannedTransport(.ok, #"{"items": "not a list", "nextCursor": null, "timeZone": "UTC"}"#)
        let client = Client(serverURL: Self.server, credential: "k", transport: transport)
        await #expect(throws: ClientError.self) { try await client.getSchedule(path: .init(id: "ana")) }
    }

    @Test func theCredentialReplacesAnAuthorizationTheRequestHad() async throws {
        let middleware = BearerCredential("new")
        let (response, _) = try await middleware.intercept(
            HTTPRequest(
                method: .get, scheme: nil, authority: nil, path: "/", headerFields: [.authorization: "Bearer old"]),
            body: nil, baseURL: Self.server, operationID: "op"
        ) { request, _, _ in
            (
                HTTPResponse(
                    status: request.headerFields[values: .authorization] == ["Bearer new"] ? .ok : .badRequest), nil
            )
        }
        #expect(response.status == .ok)
    }

    @Test func headerParametersLeaveAsTheCallerWroteThem() async throws {
        let transport = CannedTransport(.notModified, "", headers: [.eTag: #"W/"7""#])
        let client = Client(serverURL: Self.server, credential: "k", transport: transport)
        _ = try await client.getPlan(path: .init(id: "ana"), headers: .init(ifNoneMatch: #"W/"7", W/"8""#))
        _ = try await client.postEvent(
            path: .init(id: "ana"), headers: .init(idempotencyKey: "a b/%41é"),
            body: .json(.moodLogged(.init(_type: .moodLogged))))
        let sent = transport.requests.map(\.request.headerFields)
        #expect(sent.first?[.ifNoneMatch] == #"W/"7", W/"8""#)
        #expect(sent.last?[HTTPField.Name("Idempotency-Key")!] == "a b/%41é")
    }

    /// `HeaderParametersAsWritten.names` lists every header parameter of the document.
    @Test func everyHeaderParameterOfTheDocumentIsSentAsWritten() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let document = try String(
            contentsOf: root.appendingPathComponent("Modules/EngagedAPI/openapi.yaml"), encoding: .utf8)
        let lines = document.split(separator: "\n", omittingEmptySubsequences: false)
        var names: Set<String> = []
        for (index, line) in lines.enumerated() where line.trimmingCharacters(in: .whitespaces) == "in: header" {
            let previous = lines[index - 1].trimmingCharacters(in: .whitespaces)
            if previous.hasPrefix("- name: ") { names.insert(String(previous.dropFirst("- name: ".count))) }
        }
        #expect(!names.isEmpty)
        #expect(names == Set(HeaderParametersAsWritten.names.map(\.rawName)))
    }
}
