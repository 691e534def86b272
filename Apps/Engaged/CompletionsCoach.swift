import AsyncHTTPClient
import Content
import Foundation
import Models
import NIOCore
import NIOHTTP1
import Synchronization

/// A `CoachEngine` that asks a model behind an OpenAI-compatible chat-completions API
/// (`POST {baseURL}/chat/completions`) for one notification's copy.
///
/// What it sends: the kind, tone, language and length limits, and the request's facts, which
/// `ContentGenerator.coachRequest(for:)` has already redacted for the user's privacy level;
/// nothing else about the user. What it returns: the first choice's message content, unchecked:
/// `ContentGenerator` judges it (`CoachOutput.validate`) and falls back to a template when it is
/// late, failed or invalid. Each call has its own timeout (`timeout`, the content deadline) and
/// honours task cancellation, so the caller never waits past its deadline. Errors name the
/// status or the problem, never the prompt or the answer (they can reach traces).
struct CompletionsCoach: CoachEngine {
    let settings: CoachSettings
    let client: HTTPClient
    /// At most this long per call (the content budget, `ContentGenerator.deadlineMillis`).
    var timeout: TimeAmount = .seconds(2)
    /// Answers larger than this are refused unread (a lock-screen line is far smaller).
    static let maximumResponseBytes = 64 * 1_024

    /// Returns at once when the calling task is cancelled (the caller's deadline passed), whether
    /// or not the HTTP request has noticed yet; the request is cancelled and its answer dropped.
    func generate(_ request: CoachRequest) async throws -> CoachResponse {
        let call = Task { try await self.call(request) }
        let outcome = OneOutcome()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                outcome.wait(continuation)
                if Task.isCancelled { outcome.resume(.failure(CancellationError())) }
                Task {
                    do { outcome.resume(.success(try await call.value)) } catch { outcome.resume(.failure(error)) }
                }
            }
        } onCancel: {
            call.cancel()
            outcome.resume(.failure(CancellationError()))
        }
    }

    private func call(_ request: CoachRequest) async throws -> CoachResponse {
        var http = HTTPClientRequest(url: settings.baseURL + "/chat/completions")
        http.method = .POST
        http.headers.add(name: "Content-Type", value: "application/json")
        http.headers.add(name: "Authorization", value: "Bearer \(settings.apiKey)")
        http.body = .bytes(ByteBuffer(bytes: try CompletionsPrompt.body(for: request, model: settings.model)))
        let response = try await client.execute(http, timeout: timeout)
        guard response.status == .ok else { throw CoachFailure(reason: "completions answered \(response.status.code)") }
        let body = try await response.body.collect(upTo: Self.maximumResponseBytes)
        return CoachResponse(text: try CompletionsPrompt.answer(in: Data(body.readableBytesView)))
    }
}

/// A continuation resumed by whichever comes first, the answer or the cancellation; later
/// attempts do nothing.
private final class OneOutcome: Sendable {
    private let slot = Mutex<CheckedContinuation<CoachResponse, any Error>?>(nil)

    func wait(_ continuation: CheckedContinuation<CoachResponse, any Error>) {
        slot.withLock { $0 = continuation }
    }

    func resume(_ result: Result<CoachResponse, any Error>) {
        slot.withLock { slot -> CheckedContinuation<CoachResponse, any Error>? in
            defer { slot = nil }
            return slot
        }?.resume(with: result)
    }
}

/// The request body and the answer's one field, as pure functions (tested without a server).
enum CompletionsPrompt {
    /// The chat-completions body: a system message with the rules, a user message with the facts.
    static func body(for request: CoachRequest, model: String) throws -> [UInt8] {
        let body = Body(
            model: model,
            messages: [
                Message(role: "system", content: instructions(for: request)),
                Message(role: "user", content: try facts(of: request)),
            ], maxTokens: 120, temperature: 0.7)
        return Array(try JSONEncoder().encode(body))
    }

    /// The first choice's message content; a clear error for anything else.
    static func answer(in data: Data) throws -> String {
        guard let reply = try? JSONDecoder().decode(Reply.self, from: data) else {
            throw CoachFailure(reason: "completions answer is not a chat-completions JSON object")
        }
        guard let content = reply.choices.first?.message.content else {
            throw CoachFailure(reason: "completions answer has no message content")
        }
        return content
    }

    static func instructions(for request: CoachRequest) -> String {
        "You write one push notification for a fitness app. Kind: \(request.kind.rawValue). Tone: "
            + "\(request.style.rawValue). Language: \(request.language). Answer with one line, title|body, "
            + "the title at most \(request.maxTitleCharacters) characters, the body at most "
            + "\(request.maxBodyCharacters). Use only the facts given; never invent names, numbers or health "
            + "details; no placeholders, no markup."
    }

    /// The facts the privacy level allows (already redacted), as JSON; absent facts are left out.
    static func facts(of request: CoachRequest) throws -> String {
        let facts = request.facts
        let shown = Facts(
            firstName: facts.firstName.isEmpty ? nil : facts.firstName, meal: facts.meal?.rawValue,
            workoutType: facts.workoutType, daysAway: facts.daysAway, stronger: facts.stronger ? true : nil,
            streakDays: facts.streakDays, sleepQuality: facts.sleepQuality?.rawValue, weather: facts.weather?.rawValue,
            workoutsCompleted: facts.workoutsCompleted, workoutsPlanned: facts.workoutsPlanned,
            achievementName: facts.achievementName, sender: facts.sender?.name, topic: facts.topic,
            groupCount: facts.groupCount)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return String(decoding: try encoder.encode(shown), as: UTF8.self)
    }

    struct Body: Encodable {
        var model: String
        var messages: [Message]
        var maxTokens: Int
        var temperature: Double

        enum CodingKeys: String, CodingKey {
            case model, messages, temperature
            case maxTokens = "max_tokens"
        }
    }

    struct Message: Codable {
        var role: String
        var content: String
    }

    struct Facts: Encodable {
        var firstName: String?
        var meal: String?
        var workoutType: String?
        var daysAway: Int?
        var stronger: Bool?
        var streakDays: Int?
        var sleepQuality: String?
        var weather: String?
        var workoutsCompleted: Int?
        var workoutsPlanned: Int?
        var achievementName: String?
        var sender: String?
        var topic: String?
        var groupCount: Int?
    }

    struct Reply: Decodable {
        struct Choice: Decodable {
            struct Content: Decodable { var content: String? }
            var message: Content
        }
        var choices: [Choice]
    }
}

/// Where the coach is and who may ask it: `--coach-url` and `--coach-model` (or
/// ENGAGED_COACH_URL, ENGAGED_COACH_MODEL) and the key from ENGAGED_COACH_API_KEY (never a
/// flag: a command line is visible to every user of the machine). All three or none.
struct CoachSettings: Hashable, Sendable {
    /// `http(s)://host[:port][/path]`, without a trailing slash.
    var baseURL: String
    var model: String
    var apiKey: String

    /// The settings from the flags, else the environment; nil when none is given.
    static func resolve(url: String?, model: String?, environment: [String: String]) throws(CoachSettingsError)
        -> CoachSettings?
    {
        func given(_ flag: String?, _ variable: String) -> String? {
            let value = flag ?? environment[variable]
            return value?.isEmpty == true ? nil : value
        }
        let url = given(url, "ENGAGED_COACH_URL")
        let model = given(model, "ENGAGED_COACH_MODEL")
        let key = given(nil, "ENGAGED_COACH_API_KEY")
        guard url != nil || model != nil || key != nil else { return nil }
        var missing: [String] = []
        if url == nil { missing.append("--coach-url (or ENGAGED_COACH_URL)") }
        if model == nil { missing.append("--coach-model (or ENGAGED_COACH_MODEL)") }
        if key == nil { missing.append("ENGAGED_COACH_API_KEY") }
        guard let url, let model, let key, missing.isEmpty else { throw .incomplete(missing: missing) }
        guard let parsed = URLComponents(string: url), let scheme = parsed.scheme?.lowercased(),
            scheme == "http" || scheme == "https", let host = parsed.host, !host.isEmpty, parsed.query == nil,
            parsed.fragment == nil, parsed.user == nil
        else { throw .badURL(url) }
        guard model.count <= 200, !model.contains(where: \.isWhitespace) else { throw .badModel(model) }
        guard key.allSatisfy({ $0.isASCII && !$0.isWhitespace && !$0.isNewline }) else { throw .badKey }
        var base = url
        while base.hasSuffix("/") { base.removeLast() }
        return CoachSettings(baseURL: base, model: model, apiKey: key)
    }
}

/// Why the coach settings cannot be used (exit 64, bad usage).
enum CoachSettingsError: Error, Hashable, CustomStringConvertible {
    case incomplete(missing: [String])
    case badURL(String)
    case badModel(String)
    case badKey

    var description: String {
        switch self {
        case .incomplete(let missing):
            "the coach needs its URL, model and key together; missing: \(missing.joined(separator: ", "))"
        case .badURL(let url):
            "--coach-url (or ENGAGED_COACH_URL) must be http(s)://host[:port][/path] without query or user, "
                + "got \"\(url.prefix(200))\""
        case .badModel(let model):
            "--coach-model (or ENGAGED_COACH_MODEL) must be a model name without spaces, got \"\(model.prefix(200))\""
        case .badKey: "ENGAGED_COACH_API_KEY must be printable ASCII without spaces"
        }
    }
}
