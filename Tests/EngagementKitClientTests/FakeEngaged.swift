import EngagementKit
import EngagementKitClient
import Foundation
import HTTPTypes
import Models
import OpenAPIRuntime
import Synchronization

/// `engaged` as the kit's senders meet it, on no network: a `ClientTransport` that answers as the
/// server's routes do (a token it does not know is 401 with a problem body; an event is 202 with
/// the plan's version; a registration 201; a removal 204; the plan 200 with its weak `ETag`, or
/// 304 when `If-None-Match` names it), unless a scripted answer for the operation comes first.
/// Every request is kept, as it left the client.
final class FakeEngaged: ClientTransport {
    /// A scripted answer: the status, headers and body to send, or none at all (offline).
    enum Scripted: Sendable {
        case answer(
            HTTPResponse.Status, body: String = "", contentType: String = "application/json",
            headers: HTTPFields = [:])
        case noAnswer

        /// A problem body of `status`, as the server writes its errors.
        static func problem(_ status: HTTPResponse.Status, headers: HTTPFields = [:]) -> Scripted {
            .answer(
                status,
                body:
                    #"{"type":"urn:engaged:problem:test","title":"\#(status.reasonPhrase)","status":\#(status.code),"detail":"scripted"}"#,
                contentType: "application/problem+json", headers: headers)
        }
    }

    struct Received: Sendable {
        var operationID: String
        var request: HTTPRequest
        var body: Data

        var bearer: String? { request.headerFields[.authorization].map { String($0.dropFirst("Bearer ".count)) } }
        var idempotencyKey: String? { request.headerFields[HTTPField.Name("Idempotency-Key")!] }
    }

    struct Offline: Error {}

    static let server = URL(string: "https://engaged.example.com")!
    static let planVersion = 1_803_880_800

    let validTokens: Mutex<Set<String>>
    let script: Mutex<[String: [Scripted]]>
    let received = Mutex<[Received]>([])
    /// The plan's body at `planVersion` (`plan(version:requests:)`).
    let planBody: Mutex<String>

    init(validTokens: Set<String> = ["good"], script: [String: [Scripted]] = [:]) {
        self.validTokens = Mutex(validTokens)
        self.script = Mutex(script)
        planBody = Mutex(Self.plan(version: Self.planVersion, requests: [Self.lunch()]))
    }

    var requests: [Received] { received.withLock { $0 } }

    func send(_ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String) async throws -> (
        HTTPResponse, HTTPBody?
    ) {
        var bytes = Data()
        if let body { bytes = try await Data(collecting: body, upTo: 1 << 20) }
        received.withLock { $0.append(Received(operationID: operationID, request: request, body: bytes)) }
        let scripted = script.withLock { script -> Scripted? in
            guard var answers = script[operationID], !answers.isEmpty else { return nil }
            defer { script[operationID] = answers }
            return answers.removeFirst()
        }
        switch scripted ?? serve(request, operationID: operationID) {
        case .noAnswer: throw Offline()
        case .answer(let status, let text, let contentType, let headers):
            var fields = headers
            if !text.isEmpty { fields[.contentType] = contentType }
            return (HTTPResponse(status: status, headerFields: fields), text.isEmpty ? nil : HTTPBody(text))
        }
    }

    /// What the server's routes answer.
    private func serve(_ request: HTTPRequest, operationID: String) -> Scripted {
        let bearer = request.headerFields[.authorization].map { String($0.dropFirst("Bearer ".count)) }
        guard let bearer, validTokens.withLock({ $0.contains(bearer) }) else { return .problem(.unauthorized) }
        let eTag = #"W/"\#(Self.planVersion)""#
        switch operationID {
        case "postEvent":
            return .answer(.accepted, body: #"{"effects":1,"liveActivities":[],"planVersion":\#(Self.planVersion)}"#)
        case "registerDevice":
            return .answer(
                .created,
                body:
                    #"{"environment":"production","id":"5a5a","platform":"ios","registeredAt":"2027-03-01T06:00:00Z"}"#)
        case "removeDevice":
            return .answer(.noContent)
        case "getPlan":
            if let held = request.headerFields[.ifNoneMatch], held == eTag || held == "*" {
                return .answer(.notModified, headers: [.eTag: eTag, .cacheControl: "no-cache"])
            }
            return .answer(.ok, body: planBody.withLock { $0 }, headers: [.eTag: eTag, .cacheControl: "no-cache"])
        default:
            return .problem(.notFound)
        }
    }

    /// A plan's body as the server writes it.
    static func plan(version: Int, requests: [String]) -> String {
        #"{"horizonEnd":"2027-03-02T18:00:00Z","requests":[\#(requests.joined(separator: ","))],"timeZone":"Europe/Berlin","version":\#(version)}"#
    }

    /// One request of a plan, of `kind`.
    static func lunch(_ identifier: String = "mealReminder.2027-03-01.lunch", kind: String = "mealReminder") -> String {
        #"{"body":"Time to eat","categoryIdentifier":"MEAL","identifier":"\#(identifier)","interruptionLevel":"active","kind":"\#(kind)","localTime":"2027-03-01T12:30:00+01:00","nextFireAt":"2027-03-01T11:30:00Z","relevanceScore":0.6,"sound":"reminder.caf","subtitle":null,"threadIdentifier":"mealReminder","title":"Lunch","trigger":{"fireAt":"2027-03-01T11:30:00Z","type":"date"},"userInfo":{"kind":"\#(kind)","link":"engage://meal/log/lunch"}}"#
    }
}

/// A connection to `server` whose credential holds `token` and renews it with `renewed` (nil:
/// none to be had), counting nothing else.
func connection(
    to server: FakeEngaged, user: UserID = "ana", token: String = "good", renewed: String? = nil
) -> EngagedConnection {
    let credential = UserCredential(userID: user, token: token) { _ in renewed }
    return EngagedConnection(serverURL: FakeEngaged.server, credential: credential, transport: server)
}
