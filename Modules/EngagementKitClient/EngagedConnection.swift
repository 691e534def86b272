import EngagedClient
public import Foundation
import HTTPTypes
public import OpenAPIRuntime

/// Where the kit's senders reach `engaged`, and with what: the server's root URL, the user's
/// credential and the HTTP transport. One connection serves the three senders
/// (`EngagedEventSender`, `EngagedDeviceReportSender`, `EngagedPlanSource`), which then share one
/// renewal of the user's token.
///
/// Every request goes through the generated client (`Client`, Modules/EngagedClient), which
/// writes the path, the header parameters and the body as the API's document says. What decides
/// the outcome is the status the server answered: an answer whose body is not what the document
/// says (a proxy's error page, a body cut short) still counts as that status, and only a request
/// that got no answer at all (offline, a timeout, a connection lost) throws.
public struct EngagedConnection: Sendable {
    public let serverURL: URL
    public let credential: UserCredential
    let transport: (any ClientTransport)?

    /// The longest answer body read: larger ones count as unreadable.
    static let maximumBodyBytes = 4 << 20

    /// A connection to the server at `serverURL` (its root, `https://engaged.example.com`) with
    /// `credential`. Without a `transport`, URLSession on Apple platforms and async-http-client's
    /// shared client elsewhere (`Client.init(serverURL:credential:transport:middlewares:)`).
    public init(serverURL: URL, credential: UserCredential, transport: (any ClientTransport)? = nil) {
        self.serverURL = serverURL
        self.credential = credential
        self.transport = transport
    }

    /// Runs `operation` on a client carrying the user's token; when the server refuses the token
    /// (401 or 403) and the credential renews it, runs it once more with the new one. Returns the
    /// last attempt's output (nil when the server's body was not the document's) and its answer;
    /// throws only when an attempt got no answer.
    func exchange<Output: Sendable>(
        _ operation: @Sendable (Client) async throws -> Output
    ) async throws -> (output: Output?, answer: RecordedAnswer) {
        let token = await credential.token
        let first = try await attempt(operation, token: token)
        guard RecordedAnswer.refusesToken(first.answer.status),
            let renewed = await credential.renewed(after: token)
        else { return first }
        return try await attempt(operation, token: renewed)
    }

    private func attempt<Output: Sendable>(
        _ operation: @Sendable (Client) async throws -> Output, token: String
    ) async throws -> (output: Output?, answer: RecordedAnswer) {
        let recorder = AnswerRecorder(maximumBodyBytes: Self.maximumBodyBytes)
        let client = Client(serverURL: serverURL, credential: token, transport: transport, middlewares: [recorder])
        do {
            let output = try await operation(client)
            guard let answer = recorder.answer else { throw NoAnswerRecorded() }
            return (output, answer)
        } catch {
            // The server answered, with a body the document does not read: the status still holds.
            guard let answer = recorder.answer else { throw error }
            return (nil, answer)
        }
    }

    /// A client returned an output without the transport answering: cannot happen with the
    /// generated client, which always goes through its middlewares.
    struct NoAnswerRecorded: Error {}
}

/// What the server answered one request, as it arrived, before the generated client read it.
struct RecordedAnswer: Sendable {
    var status: Int
    var headerFields: HTTPFields
    /// The body; nil when there was none, or it was longer than the connection reads.
    var body: Data?

    /// Whether `status` says the token was refused.
    static func refusesToken(_ status: Int) -> Bool { status == 401 || status == 403 }

    /// `Retry-After` in whole seconds, when it has that form (the server's); an HTTP date is
    /// not read, since the kit keeps no clock of its own.
    var retryAfterSeconds: Int64? {
        guard let text = headerFields[.retryAfter], let seconds = Int64(text), seconds >= 0 else { return nil }
        return seconds
    }
}

/// Keeps the status, headers and body of the answer to one request, and hands the generated
/// client the same body to read. The innermost middleware: it sees the answer as the transport
/// gave it.
final class AnswerRecorder: ClientMiddleware, @unchecked Sendable {
    private let lock = NSLock()
    private var recorded: RecordedAnswer?
    let maximumBodyBytes: Int

    init(maximumBodyBytes: Int) { self.maximumBodyBytes = maximumBodyBytes }

    var answer: RecordedAnswer? { lock.withLock { recorded } }

    func intercept(
        _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        let (response, responseBody) = try await next(request, body, baseURL)
        var bytes: Data?
        if let responseBody { bytes = try? await Data(collecting: responseBody, upTo: maximumBodyBytes) }
        let answer = RecordedAnswer(status: response.status.code, headerFields: response.headerFields, body: bytes)
        lock.withLock { recorded = answer }
        return (response, bytes.map { HTTPBody($0) })
    }
}
