import Foundation
import Models
import Testing

@testable import Content

// MARK: - People

let ana = Recipient(
    privacyLevel: .friendsOnly, firstName: "Ana", fullName: "Ana Lima", email: "ana.lima@example.com",
    phoneNumber: "+44 20 7946 0958")

func recipient(_ level: PrivacyLevel) -> Recipient {
    var person = ana
    person.privacyLevel = level
    return person
}

let mutualFriend = SocialSender(name: "Ben Okafor", isMutualFriend: true, text: "Great pace on that hill today!")
let stranger = SocialSender(name: "Carla Diaz", isMutualFriend: false, text: "Which shoes do you run in?")

/// A context with every fact known, for the kind's sake.
func richContext(_ kind: NotificationKind, sender: SocialSender? = mutualFriend, stronger: Bool = false) -> CopyContext
{
    CopyContext(
        firstName: "Ana", meal: .lunch, workoutType: "Run", daysAway: 9, stronger: stronger, streakDays: 12,
        sleepQuality: .good, weather: .sunny, workoutsCompleted: 4, workoutsPlanned: 5, achievementName: "First 5K",
        sender: sender, topic: "morning run", groupCount: nil)
}

func request(
    _ kind: NotificationKind = .morningGreeting, level: PrivacyLevel = .friendsOnly, context: CopyContext? = nil,
    language: String = "en", style: MotivationalStyle = .encouraging
) -> ContentRequest {
    ContentRequest(
        kind: kind, style: style, language: language, recipient: recipient(level),
        context: context ?? richContext(kind))
}

// MARK: - Coaches

/// Answers at once with fixed text.
struct FixedCoach: CoachEngine {
    var text: String
    func generate(_ request: CoachRequest) async throws -> CoachResponse { CoachResponse(text: text) }
}

/// Never answers: waits until cancelled, then throws.
struct HangingCoach: CoachEngine {
    func generate(_ request: CoachRequest) async throws -> CoachResponse {
        try await Task.sleep(for: .seconds(86_400))
        return CoachResponse(text: "too late|far too late")
    }
}

/// Throws at once.
struct ThrowingCoach: CoachEngine {
    func generate(_ request: CoachRequest) async throws -> CoachResponse {
        throw CoachFailure(reason: "quota exceeded")
    }
}

/// Records the request it was given.
final class RecordingCoach: CoachEngine, @unchecked Sendable {
    // Written once by the single call under test and read after it returns; a lock keeps it honest.
    private let lock = NSLock()
    private var received: CoachRequest?
    var request: CoachRequest? { lock.withLock { received } }

    func generate(_ request: CoachRequest) async throws -> CoachResponse {
        lock.withLock { received = request }
        return CoachResponse(text: "Nice work 🙌|Keep it up today.")
    }
}

// MARK: - Clocks

struct TestInstant: InstantProtocol {
    var offset: Duration
    func advanced(by duration: Duration) -> TestInstant { TestInstant(offset: offset + duration) }
    func duration(to other: TestInstant) -> Duration { other.offset - offset }
    static func < (a: TestInstant, b: TestInstant) -> Bool { a.offset < b.offset }
}

/// Time stands still and every deadline has passed: sleeping returns at once.
struct ExpiredClock: Clock {
    var now: TestInstant { TestInstant(offset: .zero) }
    var minimumResolution: Duration { .zero }
    func sleep(until deadline: TestInstant, tolerance: Duration?) async throws { await Task.yield() }
}

/// Time stands still and no deadline ever comes: sleeping lasts until cancelled.
struct StoppedClock: Clock {
    var now: TestInstant { TestInstant(offset: .zero) }
    var minimumResolution: Duration { .zero }
    func sleep(until deadline: TestInstant, tolerance: Duration?) async throws {
        try await Task.sleep(for: .seconds(86_400))
    }
}

// MARK: - Bundled templates

/// The bundled templates, read once per test run. Content has no default catalog (nothing there
/// reads a bundle behind a default argument), so tests load it as an executable would.
private let bundled = Result { () throws(TemplateLoadError) -> TemplateCatalog in try TemplateCatalog.bundled() }

/// The bundled catalog; throws the loader's error (file, line, name) when a file does not load.
func bundledCatalog() throws -> TemplateCatalog { try bundled.get() }

/// The bundled English library, the catalog's default.
func bundledEnglish() throws -> TemplateLibrary { try bundledCatalog().defaultLibrary }

/// A generator over the bundled templates with the default deadline and limits.
func bundledGenerator() throws -> ContentGenerator { ContentGenerator(catalog: try bundledCatalog()) }

// MARK: - Template files

/// The text of a bundled template file.
func bundledText(_ language: String) throws -> String {
    let url = try #require(TemplateLibrary.bundledURL(language))
    return try String(contentsOf: url, encoding: .utf8)
}

/// `text` with `line` (1-based) inserted before line `before`.
func inserting(_ line: String, before number: Int, in text: String) -> String {
    var lines = text.components(separatedBy: "\n")
    lines.insert(line, at: number - 1)
    return lines.joined(separator: "\n")
}

/// The 1-based number of the first line containing `fragment`.
func lineNumber(of fragment: String, in text: String) -> Int? {
    text.components(separatedBy: "\n").firstIndex { $0.contains(fragment) }.map { $0 + 1 }
}
