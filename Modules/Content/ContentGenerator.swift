public import Models

/// Where a notification's copy came from.
public enum ContentSource: String, Codable, Hashable, Sendable {
    case ai
    case template
}

/// Why the copy came from where it did.
public enum ContentReason: Hashable, Sendable, CustomStringConvertible {
    /// The coach answered in time and the answer passed validation.
    case coachAccepted
    /// The coach was not asked (no coach, kind not worth a call, or the caller chose templates).
    case coachNotAsked
    /// No answer within the deadline (or an answer that came later).
    case coachTimeout
    /// The coach threw.
    case coachError(String)
    /// The coach answered in time with something that may not be shown.
    case malformedOutput(OutputProblem)
    /// The coach answered for a copy the user's phone already holds and shows before it could
    /// hear of another: the template stays, so the inbox says what the phone shows.
    case heldByPhone

    /// A stable, low-cardinality code for traces and reports: `coachAccepted`, `coachTimeout`,
    /// `coachError`, `malformedOutput.missingSeparator`, `malformedOutput.personalData.email`, ...
    public var code: String {
        switch self {
        case .coachAccepted: "coachAccepted"
        case .coachNotAsked: "coachNotAsked"
        case .coachTimeout: "coachTimeout"
        case .coachError: "coachError"
        case .malformedOutput(let problem): "malformedOutput.\(problem.code)"
        case .heldByPhone: "heldByPhone"
        }
    }

    public var description: String {
        switch self {
        case .coachError(let reason): "coachError: \(reason)"
        case .malformedOutput(let problem): "malformedOutput: \(problem)"
        default: code
        }
    }
}

/// The copy of one notification and why: what the trace records.
public struct ContentDecision: Hashable, Sendable {
    public var copy: Copy
    public var source: ContentSource
    public var reason: ContentReason
    /// The template rendered, for template copy.
    public var templateName: String?
    /// The coach's latency when it answered or threw (also when later than the deadline); nil
    /// when it was not asked or the caller gave up at the deadline.
    public var coachLatencyMillis: Int?
    /// Time until the copy was ready: the coach's latency, capped at the deadline; 0 when the
    /// coach was not asked (templates render in microseconds). Virtual time in the simulator.
    public var contentMillis: Int
    /// The image a service extension attaches (the morning greeting's by weather), if any.
    public var imageKey: String?
    /// The sound of the kind.
    public var sound: NotificationSound
}

/// The ruling on one answer of the coach.
public enum CoachVerdict: Hashable, Sendable {
    /// Show this copy.
    case accepted(Copy, latencyMillis: Int)
    /// Do not; `latencyMillis` is nil when the caller gave up at the deadline.
    case rejected(ContentReason, latencyMillis: Int?)
}

/// Everything `ContentGenerator` needs to write one notification.
public struct ContentRequest: Hashable, Sendable {
    public var kind: NotificationKind
    public var style: MotivationalStyle
    /// BCP 47 language tag; unknown languages fall back to the catalog's default.
    public var language: String
    public var recipient: Recipient
    /// Everything known; redacted for the recipient's privacy level before anyone sees it.
    public var context: CopyContext
    /// The rest of the notification (level, category, thread, deep link, badge), to check that
    /// the whole push payload fits; nil uses the kind's defaults.
    public var envelope: NotificationContent?

    public init(
        kind: NotificationKind, style: MotivationalStyle, language: String = "en", recipient: Recipient,
        context: CopyContext, envelope: NotificationContent? = nil
    ) {
        self.kind = kind
        self.style = style
        self.language = language
        self.recipient = recipient
        self.context = context
        self.envelope = envelope
    }
}

/// Writes a notification's copy: the coach's when it answers in time with something valid,
/// a template otherwise, and always says which and why.
///
/// The core, `decide(_:for:memory:generator:)`, is pure: it takes the coach's outcome as a
/// value (with its latency), so the simulator feeds it outcomes in virtual time and tests feed
/// it tables. `generate(_:coach:clock:memory:generator:)` is the live convenience that calls a
/// coach under the deadline with structured concurrency. It never touches a file: the templates
/// come in with `init(catalog:)`.
public struct ContentGenerator: Sendable {
    public var catalog: TemplateCatalog
    /// The budget for content: 2 s by default; past it the template copy stands.
    public var deadlineMillis: Int
    public var limits: CopyLimits

    /// - Parameter catalog: the templates, loaded by the caller (`TemplateCatalog.bundled()` at
    ///   start-up, or `TemplateCatalog(default:)` with a library of its own); there is no default,
    ///   so no generator reads a bundle or a file behind its caller's back.
    public init(catalog: TemplateCatalog, deadlineMillis: Int = 2_000, limits: CopyLimits = .lockScreen) {
        self.catalog = catalog
        self.deadlineMillis = deadlineMillis
        self.limits = limits
    }

    /// What the coach may be told: the facts the recipient's privacy level allows.
    public func coachRequest(for request: ContentRequest) -> CoachRequest {
        let level = request.recipient.privacyLevel
        return CoachRequest(
            kind: request.kind, style: request.style, language: request.language, privacyLevel: level,
            facts: PrivacyPolicy(level).redact(request.context), limits: limits)
    }

    /// Decides the copy given how the call to the coach ended (`nil`: it was not asked).
    /// Template copy avoids the body last shown for the kind and is recorded in `memory`; so is
    /// accepted AI copy. Draws one value from `generator` on the template path, none otherwise.
    public func decide(
        _ outcome: CoachOutcome?, for request: ContentRequest, memory: inout TemplateMemory,
        generator: inout SeededGenerator
    ) -> ContentDecision {
        var reason = ContentReason.coachNotAsked
        var latency: Int?
        if let outcome {
            switch judge(outcome, for: request) {
            case .accepted(let copy, let millis):
                memory.record(request.kind, body: copy.body)
                return decision(
                    copy, .ai, .coachAccepted, template: nil, latency: millis, request: request,
                    imageKey: imageKey(for: request))
            case .rejected(let why, let millis):
                reason = why
                latency = millis
            }
        }
        let context = PrivacyPolicy(request.recipient.privacyLevel).redact(request.context)
        let rendered = catalog.withLibrary(for: request.language) { library in
            library.render(request.kind, style: request.style, context: context, memory: &memory, generator: &generator)
        }
        return decision(
            rendered.copy, .template, reason, template: rendered.templateName, latency: latency, request: request,
            imageKey: NotificationStyling.imageKey(for: request.kind, context: context))
    }

    /// Rules on the coach's outcome alone, without rendering a template or touching any memory:
    /// for callers that already hold template copy (scheduled at once) and replace it only when
    /// the coach's answer is accepted.
    public func judge(_ outcome: CoachOutcome, for request: ContentRequest) -> CoachVerdict {
        switch outcome {
        case .timedOut:
            return .rejected(.coachTimeout, latencyMillis: nil)
        case .failed(let message, let millis):
            let reason: ContentReason =
                millis > deadlineMillis ? .coachTimeout : .coachError(String(message.prefix(120)))
            return .rejected(reason, latencyMillis: millis)
        case .text(let text, let millis):
            guard millis <= deadlineMillis else { return .rejected(.coachTimeout, latencyMillis: millis) }
            let senders = request.context.sender.map { [$0] } ?? []
            switch CoachOutput.validate(
                text, recipient: request.recipient, senders: senders, envelope: envelope(for: request),
                imageKey: imageKey(for: request), limits: limits)
            {
            case .success(let copy): return .accepted(copy, latencyMillis: millis)
            case .failure(let problem): return .rejected(.malformedOutput(problem), latencyMillis: millis)
            }
        }
    }

    /// Calls `coach` with the deadline measured on `clock`, then decides. Never waits past the
    /// deadline for a coach that honours cancellation (see `CoachEngine`).
    public func generate(
        _ request: ContentRequest, coach: some CoachEngine, clock: any Clock<Duration>,
        memory: inout TemplateMemory, generator: inout SeededGenerator
    ) async -> ContentDecision {
        let outcome = await ContentGenerator.outcome(
            of: coach, for: coachRequest(for: request), deadline: .milliseconds(deadlineMillis), clock: clock)
        return decide(outcome, for: request, memory: &memory, generator: &generator)
    }

    /// Races `coach` against `deadline` on `clock` in a task group: the first to finish wins and
    /// the other is cancelled.
    public static func outcome(
        of coach: some CoachEngine, for request: CoachRequest, deadline: Duration, clock: any Clock<Duration>
    ) async -> CoachOutcome {
        await race(coach, request, deadline, clock)
    }

    private static func race<C: Clock<Duration>>(
        _ coach: some CoachEngine, _ request: CoachRequest, _ deadline: Duration, _ clock: C
    ) async -> CoachOutcome {
        let start = clock.now
        return await withTaskGroup(of: CoachOutcome.self) { group in
            group.addTask {
                do {
                    let response = try await coach.generate(request)
                    return .text(response.text, latencyMillis: millis(start.duration(to: clock.now)))
                } catch {
                    if Task.isCancelled { return .timedOut }
                    return .failed(reason: "\(error)", latencyMillis: millis(start.duration(to: clock.now)))
                }
            }
            group.addTask {
                // Cancelled when the coach finishes first; the result is then never read.
                try? await clock.sleep(until: start.advanced(by: deadline), tolerance: nil)
                return .timedOut
            }
            let first = await group.next() ?? .timedOut
            group.cancelAll()
            return first
        }
    }

    static func millis(_ duration: Duration) -> Int {
        let (seconds, attoseconds) = duration.components
        return Int(seconds) * 1_000 + Int(attoseconds / 1_000_000_000_000_000)
    }

    // MARK: Helpers

    private func envelope(for request: ContentRequest) -> NotificationContent {
        request.envelope ?? NotificationContent(kind: request.kind, title: "", body: "")
    }

    /// The image key of the request's kind, from its facts as redacted for the recipient.
    private func imageKey(for request: ContentRequest) -> String? {
        let context = PrivacyPolicy(request.recipient.privacyLevel).redact(request.context)
        return NotificationStyling.imageKey(for: request.kind, context: context)
    }

    private func decision(
        _ copy: Copy, _ source: ContentSource, _ reason: ContentReason, template: String?, latency: Int?,
        request: ContentRequest, imageKey: String?
    ) -> ContentDecision {
        let contentMillis =
            switch reason {
            case .coachNotAsked: 0
            case .coachTimeout: deadlineMillis
            default: min(latency ?? 0, deadlineMillis)
            }
        return ContentDecision(
            copy: copy, source: source, reason: reason, templateName: template, coachLatencyMillis: latency,
            contentMillis: contentMillis, imageKey: imageKey,
            sound: NotificationStyling.sound(for: request.kind))
    }
}
