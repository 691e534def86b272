import ArgumentParser
import AsyncHTTPClient
import Content
import Foundation
import Hummingbird
import HummingbirdTesting
import Models
import Synchronization
import TestSupport
import Testing

@testable import engaged

/// A chat-completions server on loopback (127.0.0.1, a port chosen at run time) that answers as
/// told: valid copy, slowly, with an error status, or with garbage. Nothing leaves the machine.
final class FakeCompletions: Sendable {
    enum Behaviour: Sendable {
        case answer(String)
        case slow(seconds: Int, answer: String)
        case status(Int)
        case garbage(String)
    }

    let behaviour: Behaviour
    /// Bodies and authorization headers received.
    let received = Mutex<[(body: String, authorization: String?)]>([])

    init(_ behaviour: Behaviour) { self.behaviour = behaviour }

    static func reply(_ content: String) -> String {
        let escaped = String(decoding: try! JSONEncoder().encode(content), as: UTF8.self)
        return #"{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"#
            + escaped + "}}]}"
    }

    /// Runs the server for the duration of `body`, which gets its base URL.
    func run(_ body: @Sendable (String) async throws -> Void) async throws {
        let router = Router()
        router.post("/v1/chat/completions") { request, _ -> Response in
            let bytes = try await request.body.collect(upTo: 1 << 16)
            self.received.withLock {
                $0.append((String(buffer: bytes), request.headers[.authorization]))
            }
            func json(_ text: String, status: HTTPResponse.Status = .ok) -> Response {
                Response(
                    status: status, headers: [.contentType: "application/json"],
                    body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
            }
            switch self.behaviour {
            case .answer(let text): return json(Self.reply(text))
            case .slow(let seconds, let text):
                try await Task.sleep(for: .seconds(seconds))
                return json(Self.reply(text))
            case .status(let code): return json(#"{"error":"no"}"#, status: .init(code: code))
            case .garbage(let text): return json(text)
            }
        }
        let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        try await app.test(.live) { client in
            try await body("http://127.0.0.1:\(client.port!)/v1")
        }
    }
}

@Suite struct CompletionsCoachTests {
    /// A deadline far above any loopback round trip on a loaded machine (the whole suite shares
    /// two cores with these calls): only the slow server's test meets it (with `shortDeadline`).
    let generator = ContentGenerator(catalog: bundledTemplates, deadlineMillis: 120_000)
    let shortDeadline = ContentGenerator(catalog: bundledTemplates, deadlineMillis: 500)

    func request(privacy: PrivacyLevel = .public) -> ContentRequest {
        ContentRequest(
            kind: .morningGreeting, style: .encouraging,
            recipient: Recipient(privacyLevel: privacy, firstName: "Ana", fullName: "Ana Example"),
            context: CopyContext(firstName: "Ana", streakDays: 4))
    }

    func decide(
        _ behaviour: FakeCompletions.Behaviour, privacy: PrivacyLevel = .public, generator: ContentGenerator? = nil
    ) async throws -> (ContentDecision, FakeCompletions) {
        let server = FakeCompletions(behaviour)
        let result = Mutex<ContentDecision?>(nil)
        let generator = generator ?? self.generator
        let request = request(privacy: privacy)
        try await server.run { base in
            let client = HTTPClient(eventLoopGroupProvider: .singleton)
            let settings = CoachSettings(baseURL: base, model: "test-model", apiKey: "sk-test")
            var coach = CompletionsCoach(settings: settings, client: client)
            coach.timeout = .seconds(120)
            var memory = TemplateMemory()
            var random = SeededGenerator(seed: 1)
            let decision = await generator.generate(
                request, coach: coach, clock: ContinuousClock(), memory: &memory, generator: &random)
            result.withLock { $0 = decision }
            try await client.shutdown()
        }
        return (result.withLock { $0! }, server)
    }

    @Test func validCopyInTimeIsUsedAndTheServerSawOnlyTheRedactedFacts() async throws {
        let (decision, server) = try await decide(.answer("Morning, Ana|Four days in a row. Keep it going!"))
        #expect(decision.source == .ai)
        #expect(decision.copy.title == "Morning, Ana")
        let received = server.received.withLock { $0 }
        #expect(received.count == 1)
        #expect(received.first?.authorization == "Bearer sk-test")
        let body = received.first?.body ?? ""
        #expect(body.contains(#""model":"test-model""#))
        #expect(body.contains("streakDays"))
        #expect(!body.contains("Example"))  // the full name is never sent
    }

    @Test func aPrivateUsersFactsAreRedactedBeforeTheyAreSent() async throws {
        let (_, server) = try await decide(.answer("Good morning|A new day to move."), privacy: .private)
        let body = server.received.withLock { $0.first?.body } ?? ""
        let redacted = PrivacyPolicy(.private).redact(CopyContext(firstName: "Ana", streakDays: 4))
        #expect(body.contains("streakDays") == (redacted.streakDays != nil))
        #expect(body.contains("Ana") == !redacted.firstName.isEmpty)
    }

    @Test func aSlowServerIsCutAtTheDeadlineAndTheTemplateIsUsed() async throws {
        let (decision, _) = try await decide(
            .slow(seconds: 30, answer: "Late|Too late."), generator: shortDeadline)
        // Cut at the deadline (0.5 s): only a cut call leaves no latency; one that ran on to the
        // server's answer at 30 s would have one, its late copy refused. The coach's own timeout
        // is 120 s here: what cuts the call is the caller's cancellation.
        #expect(decision.source == .template)
        #expect(decision.reason == .coachTimeout)
        #expect(decision.coachLatencyMillis == nil)
    }

    @Test func anErrorStatusFallsBackToTheTemplateNamingTheStatus() async throws {
        let (decision, _) = try await decide(.status(500))
        #expect(decision.source == .template)
        #expect("\(decision.reason)".contains("500"))
    }

    @Test(arguments: ["not json at all", #"{"choices":[]}"#, #"{"choices":[{"message":{}}]}"#])
    func garbageFallsBackToTheTemplate(garbage: String) async throws {
        let (decision, _) = try await decide(.garbage(garbage))
        #expect(decision.source == .template)
    }

    @Test func anAnswerTheValidationRefusesFallsBackToTheTemplate() async throws {
        let (decision, _) = try await decide(
            .answer("no separator and far too long " + String(repeating: "x", count: 400)))
        #expect(decision.source == .template)
    }

    @Test func settingsComeTogetherAndAreValidatedWithClearErrors() throws {
        #expect(try CoachSettings.resolve(url: nil, model: nil, environment: [:]) == nil)
        let full = try CoachSettings.resolve(
            url: "https://api.example.test/v1/", model: "gpt-test", environment: ["ENGAGED_COACH_API_KEY": "sk-1"])
        #expect(full == CoachSettings(baseURL: "https://api.example.test/v1", model: "gpt-test", apiKey: "sk-1"))
        let fromEnvironment = try CoachSettings.resolve(
            url: nil, model: nil,
            environment: [
                "ENGAGED_COACH_URL": "http://127.0.0.1:9/v1", "ENGAGED_COACH_MODEL": "m",
                "ENGAGED_COACH_API_KEY": "k",
            ])
        #expect(fromEnvironment?.baseURL == "http://127.0.0.1:9/v1")
        #expect(throws: CoachSettingsError.incomplete(missing: ["ENGAGED_COACH_API_KEY"])) {
            try CoachSettings.resolve(url: "https://x.test", model: "m", environment: [:])
        }
        for url in ["ftp://x.test", "https://", "not a url", "https://x.test/v1?key=1"] {
            #expect(throws: CoachSettingsError.badURL(url)) {
                try CoachSettings.resolve(url: url, model: "m", environment: ["ENGAGED_COACH_API_KEY": "k"])
            }
        }
        #expect(throws: CoachSettingsError.badModel("two words")) {
            try CoachSettings.resolve(
                url: "https://x.test", model: "two words", environment: ["ENGAGED_COACH_API_KEY": "k"])
        }
        #expect(throws: CoachSettingsError.badKey) {
            try CoachSettings.resolve(url: "https://x.test", model: "m", environment: ["ENGAGED_COACH_API_KEY": "a b"])
        }
        #expect(
            CoachSettingsError.incomplete(missing: ["--coach-url (or ENGAGED_COACH_URL)"]).description.contains(
                "--coach-url"))
    }
}

@Suite struct CoachFlagsTests {
    @Test func theCoachFlagsParseAndTheKeyComesFromTheEnvironment() throws {
        // Parsing validates against this process's environment, which has no key: set the flags after.
        var serve = try #require(try Engaged.parseAsRoot(["serve", "--data-dir", "d", "--port", "0"]) as? Serve)
        serve.coachURL = "http://127.0.0.1:9/v1/"
        serve.coachModel = "m"
        let settings = try serve.coachSettings(["ENGAGED_COACH_API_KEY": "sk-1"])
        #expect(settings == CoachSettings(baseURL: "http://127.0.0.1:9/v1", model: "m", apiKey: "sk-1"))
        #expect(throws: CoachSettingsError.incomplete(missing: ["ENGAGED_COACH_API_KEY"])) {
            try serve.coachSettings([:])
        }
    }

    @Test func aBadCoachURLIsRefusedBeforeTheServerStarts() {
        #expect(throws: (any Error).self) {
            _ = try Engaged.parseAsRoot(["serve", "--data-dir", "d", "--coach-url", "ftp://x", "--coach-model", "m"])
        }
    }
}
