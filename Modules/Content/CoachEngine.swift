public import Models

/// The AI coach that writes notification copy.
///
/// Contract, for implementers and for callers:
/// - `generate(_:)` is asynchronous and may take any time. Callers give it a deadline (2 s for
///   notification copy) and treat a late answer as no answer: `ContentGenerator` races the call
///   against an injected clock and falls back to templates; it never waits past the deadline
///   for a coach that honours cancellation. Implementations must therefore return or throw
///   promptly when their task is cancelled (a coach that ignores cancellation delays the
///   caller's return, but its late answer is still discarded).
/// - It may throw any error (network, quota, refusal); the error's description may end up in a
///   trace, so it must not carry personal data.
/// - It may return garbage. The answer is meant to be one line, `title|body`, but the caller
///   assumes nothing: it parses leniently, then validates (lengths, placeholders, personal
///   data, payload size) and shows nothing that fails.
/// - It sees only what the user's privacy level allows: the request's `facts` are already
///   redacted. It must not look anything else up about the user.
/// - It is called from any task, concurrently for many users; conformers are `Sendable` and
///   keep no per-call state in shared mutable storage.
///
/// `ContentGeneratorTests` holds the behaviours a conformer must survive (slow, failing,
/// malformed); `SimulatedCoach` is the reference conformer.
public protocol CoachEngine: Sendable {
    /// Writes copy for one notification, as `title|body`.
    func generate(_ request: CoachRequest) async throws -> CoachResponse
}

/// What the coach is asked to write.
public struct CoachRequest: Hashable, Sendable {
    public var kind: NotificationKind
    public var style: MotivationalStyle
    /// BCP 47 language tag of the copy wanted, e.g. "en", "de".
    public var language: String
    public var privacyLevel: PrivacyLevel
    /// What the coach may mention, already redacted for `privacyLevel`.
    public var facts: CopyContext
    public var maxTitleCharacters: Int
    public var maxBodyCharacters: Int

    public init(
        kind: NotificationKind, style: MotivationalStyle, language: String = "en",
        privacyLevel: PrivacyLevel = .private, facts: CopyContext, limits: CopyLimits = .lockScreen
    ) {
        self.kind = kind
        self.style = style
        self.language = language
        self.privacyLevel = privacyLevel
        self.facts = facts
        self.maxTitleCharacters = limits.maxTitleCharacters
        self.maxBodyCharacters = limits.maxBodyCharacters
    }
}

/// The coach's answer as it came back: meant to be `title|body`, unchecked.
public struct CoachResponse: Hashable, Sendable {
    public var text: String

    public init(text: String) { self.text = text }
}

/// An error a coach reports; `SimulatedCoach` throws it for its simulated failures.
public struct CoachFailure: Error, Hashable, Sendable, CustomStringConvertible {
    public var reason: String

    public init(reason: String) { self.reason = reason }

    public var description: String { reason }
}

/// How a call to the coach ended, as a value: what `ContentGenerator.decide` takes, so the
/// decision is pure and the simulator can supply outcomes in virtual time.
public enum CoachOutcome: Hashable, Sendable {
    /// The coach answered after `latencyMillis` (an answer later than the deadline counts as a
    /// timeout).
    case text(String, latencyMillis: Int)
    /// The coach threw after `latencyMillis`.
    case failed(reason: String, latencyMillis: Int)
    /// The deadline passed before the coach answered.
    case timedOut
}
