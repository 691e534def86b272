public import Content
import Foundation
public import Models

/// How the simulated coach behaves, as a scenario states it. The three shares partition the
/// calls: `failureShare` throw, `slowShare` answer later than the deadline, `malformedShare`
/// answer in time with something invalid; the rest answer in time with valid copy.
public struct CoachBehaviour: Codable, Hashable, Sendable {
    /// Mean of the exponential latency of in-time calls, before it is cut at the deadline (so
    /// the observed mean is somewhat lower when this is not small next to the deadline).
    public var meanLatencyMillis: Double
    /// Share of calls slower than the deadline (they answer, too late).
    public var slowShare: Double
    /// Share of calls that throw.
    public var failureShare: Double
    /// Share of calls that answer in time with output that fails validation.
    public var malformedShare: Double
    /// The deadline the shares are defined against.
    public var deadlineMillis: Int

    public init(
        meanLatencyMillis: Double = 700, slowShare: Double = 0.03, failureShare: Double = 0.02,
        malformedShare: Double = 0.03, deadlineMillis: Int = 2_000
    ) {
        self.meanLatencyMillis = meanLatencyMillis
        self.slowShare = slowShare
        self.failureShare = failureShare
        self.malformedShare = malformedShare
        self.deadlineMillis = deadlineMillis
    }

    /// A coach that always answers quickly and well.
    public static let reliable = CoachBehaviour(
        meanLatencyMillis: 300, slowShare: 0, failureShare: 0, malformedShare: 0)

    /// Throws when a share is outside 0...1, the shares add up to more than 1, or a time is not
    /// positive.
    public func validate() throws(InvalidValue) {
        for (field, share) in [
            ("slowShare", slowShare), ("failureShare", failureShare), ("malformedShare", malformedShare),
        ] where !(0...1).contains(share) {
            throw InvalidValue(field: "coach.\(field)", problem: "\(share) is not a share in 0...1")
        }
        guard slowShare + failureShare + malformedShare <= 1 else {
            throw InvalidValue(field: "coach", problem: "slowShare + failureShare + malformedShare exceed 1")
        }
        guard meanLatencyMillis > 0, meanLatencyMillis.isFinite else {
            throw InvalidValue(field: "coach.meanLatencyMillis", problem: "must be positive")
        }
        guard deadlineMillis > 0 else { throw InvalidValue(field: "coach.deadlineMillis", problem: "must be positive") }
    }
}

/// A deterministic stand-in for the AI coach: latency, failures, timeouts and malformed output
/// drawn from `behaviour` with a seeded generator, valid copy rendered from templates.
///
/// The simulator calls `outcome(for:using:)`, which returns at once with the latency as a value
/// (virtual time: nothing waits). As a `CoachEngine` it derives its generator from `seed` and
/// the request, and waits out the latency with the injected `sleep`, if any.
public struct SimulatedCoach: CoachEngine {
    public var behaviour: CoachBehaviour
    public var library: TemplateLibrary
    public var seed: UInt64
    /// Waits out the simulated latency in `generate`; nil answers at once.
    public var sleep: (@Sendable (Duration) async throws -> Void)?

    /// - Parameter library: the templates valid answers are rendered from, loaded by the caller
    ///   (the simulator passes its catalog's default library).
    public init(
        behaviour: CoachBehaviour, library: TemplateLibrary, seed: UInt64 = 0,
        sleep: (@Sendable (Duration) async throws -> Void)? = nil
    ) {
        self.behaviour = behaviour
        self.library = library
        self.seed = seed
        self.sleep = sleep
    }

    /// Answers that fail validation for every privacy level, one per kind of mistake.
    static let malformed: [String] = [
        "Keep going, you are doing great today 💪",
        "|Time to move, your plan is waiting.",
        "Good morning ☀️|Ready?|Let's go",
        "Keep moving 🏃|" + String(repeating: "Every step counts and every day matters. ", count: 6),
        "Hi {name} 👋|TODO: write the body",
        "null|null",
        "Quick check-in 📧|We sent your plan to coach.ana@example.com, have a look.",
        "Call your coach 📞|Reach your coach at +1 415 555 0199 any time.",
        "Good morning â˜€ï¸|Ready for today?",
        "   ",
    ]

    /// The outcome of one call, drawn from `generator` (always four values, whatever the
    /// outcome, so one call's result does not shift the next call's draws).
    public func outcome(for request: CoachRequest, using generator: inout SeededGenerator) -> CoachOutcome {
        let category = generator.nextUnit()
        let latencyDraw = generator.nextUnit()
        let textDraw = generator.next()
        let slowDraw = generator.nextUnit()
        let deadline = Double(behaviour.deadlineMillis)
        let mean = behaviour.meanLatencyMillis
        // Exponential cut at the deadline by inverse transform: always under the deadline.
        let inTime = -mean * log(1 - latencyDraw * (1 - exp(-deadline / mean)))
        let inTimeMillis = min(behaviour.deadlineMillis - 1, max(1, Int(inTime.rounded())))
        var threshold = behaviour.failureShare
        if category < threshold {
            return .failed(reason: "coach unavailable (simulated)", latencyMillis: inTimeMillis)
        }
        threshold += behaviour.slowShare
        if category < threshold {
            let late = behaviour.deadlineMillis + 1 + Int((-mean * log(1 - slowDraw)).rounded())
            return .text(validText(request, textDraw), latencyMillis: late)
        }
        threshold += behaviour.malformedShare
        if category < threshold {
            return .text(Self.malformed[Int(textDraw % UInt64(Self.malformed.count))], latencyMillis: inTimeMillis)
        }
        return .text(validText(request, textDraw), latencyMillis: inTimeMillis)
    }

    private func validText(_ request: CoachRequest, _ draw: UInt64) -> String {
        let copy = library.render(
            request.kind, style: request.style, context: request.facts, variant: Int(draw % 1_024)
        ).copy
        return "\(copy.title)|\(copy.body)"
    }

    public func generate(_ request: CoachRequest) async throws -> CoachResponse {
        var hash: UInt64 = 14_695_981_039_346_656_037
        for byte in String(describing: request).utf8 { hash = (hash ^ UInt64(byte)) &* 1_099_511_628_211 }
        var generator = SeededGenerator(seed: seed).derived(hash)
        let outcome = outcome(for: request, using: &generator)
        switch outcome {
        case .text(let text, let millis):
            try await sleep?(.milliseconds(millis))
            return CoachResponse(text: text)
        case .failed(let reason, let millis):
            try await sleep?(.milliseconds(millis))
            throw CoachFailure(reason: reason)
        case .timedOut:
            throw CancellationError()
        }
    }
}
