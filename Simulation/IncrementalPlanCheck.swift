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
    /// The checked steps that ran a pass, by why (`UserEngine.planPassCauses`, a
    /// `PlanPassCause`'s name): a step with several causes counts under each.
    public var passCauses: [String: Int] = [:]
    /// The steps among those whose pass had that one cause alone: the passes it alone costs.
    public var passSoleCauses: [String: Int] = [:]
    /// The first differing steps (at most `exampleLimit`): user, instant, input, and what the
    /// full pass would change.
    public var examples: [String] = []

    static let exampleLimit = 10

    public init() {}

    /// Checks `engine` right after it handled `input` at `now`; `before` is the same engine
    /// before the input, to tell whether the input ran a pass, and why.
    mutating func check(
        _ engine: UserEngine, before: UserEngine, after input: EngineInput, phone: PhoneHearing, at now: Instant
    ) {
        guard engine.planIsSettled else {
            unsettledSteps += 1
            return
        }
        checkedSteps += 1
        if engine.lastPlanPassAt == before.lastPlanPassAt { skippedSteps += 1 }
        let causes = engine.planPassCauses(since: before, at: now)
        for cause in causes { passCauses[cause.rawValue, default: 0] += 1 }
        if causes.count == 1 { passSoleCauses[causes[0].rawValue, default: 0] += 1 }
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

    /// The pass causes most first, each as `name count (alone count)`, the second count being the
    /// passes it alone asked for; pairs apart by commas.
    public var causesText: String {
        passCauses.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }
            .map { "\($0.key) \($0.value) (alone \(passSoleCauses[$0.key, default: 0]))" }.joined(separator: ", ")
    }

    mutating func merge(_ other: IncrementalPlanCheck) {
        checkedSteps += other.checkedSteps
        skippedSteps += other.skippedSteps
        differingSteps += other.differingSteps
        unsettledSteps += other.unsettledSteps
        passCauses.merge(other.passCauses, uniquingKeysWith: +)
        passSoleCauses.merge(other.passSoleCauses, uniquingKeysWith: +)
        examples += other.examples.prefix(max(0, Self.exampleLimit - examples.count))
    }
}
