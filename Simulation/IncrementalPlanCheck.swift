import Engagement
public import Models

/// The engine's incremental plan held to a full planning pass after every step of a run
/// (`RunOptions.checksIncrementalPlan`): a step "differs" when a full pass, run on a copy of the
/// engine right after it, would schedule or cancel anything (`UserEngine.fullReplanChanges`).
/// A step that left the plan unsettled (regrouping ran out of passes) is counted apart.
public struct IncrementalPlanCheck: Codable, Sendable, Equatable {
    public var checkedSteps = 0
    /// The checked steps whose input skipped the pass (the ones the check is about: a step that
    /// ran one is a full pass already).
    public var skippedSteps = 0
    public var differingSteps = 0
    /// Steps not checked: the input left regrouping unfinished (`UserEngine.planIsSettled`), so
    /// the next input plans again whatever it is.
    public var unsettledSteps = 0
    /// The first differing steps (at most `exampleLimit`): user, instant, input, and what the
    /// full pass would change.
    public var examples: [String] = []

    static let exampleLimit = 10

    public init() {}

    /// Checks `engine` right after it handled `input` at `now`; `passBefore` is its
    /// `lastPlanPassAt` before the input, to tell whether the input ran a pass.
    mutating func check(
        _ engine: UserEngine, passBefore: Instant?, after input: EngineInput, phone: PhoneHearing, at now: Instant
    ) {
        guard engine.planIsSettled else {
            unsettledSteps += 1
            return
        }
        checkedSteps += 1
        if engine.lastPlanPassAt == passBefore { skippedSteps += 1 }
        let missed = engine.fullReplanChanges(at: now, phone: phone)
        guard !missed.isEmpty else { return }
        differingSteps += 1
        guard examples.count < Self.exampleLimit else { return }
        let changes = missed.map { effect -> String in
            switch effect {
            case .schedule(let request, let fireAt, _): "schedule \(request.identifier) at \(fireAt)"
            case .cancel(let ids): "cancel \(ids.map(\.rawValue).joined(separator: ", "))"
            default: "\(effect)"
            }
        }
        examples.append(
            "user \(engine.profile.id) at \(now) after \(input): a full pass would \(changes.joined(separator: "; "))")
    }

    mutating func merge(_ other: IncrementalPlanCheck) {
        checkedSteps += other.checkedSteps
        skippedSteps += other.skippedSteps
        differingSteps += other.differingSteps
        unsettledSteps += other.unsettledSteps
        examples += other.examples.prefix(max(0, Self.exampleLimit - examples.count))
    }
}
