public import Content
import Engagement
import Models

extension EngineRuntime {
    /// Asks the coach, once the step that wanted it is committed, for each `generateContent`
    /// effect of `effects`: the coach races the content deadline (`ContentGenerator.outcome`,
    /// 2 s by default) on the system's clock, and its outcome (copy, failure or timeout) goes
    /// back to the user's engine as `contentGenerated`, where the engine judges it and keeps the
    /// template on any failure. The request carries only what `ContentGenerator.coachRequest`
    /// kept for the user's privacy level. A user deleted meanwhile, or a store failure, drops
    /// the answer: the notification keeps its template copy.
    nonisolated func askCoach(for effects: [Effect], of userID: UserID) {
        guard let coach else { return }
        for case .generateContent(let requestID, let request) in effects {
            Task {
                let outcome = await ContentGenerator.outcome(
                    of: coach, for: request, deadline: .milliseconds(content.deadlineMillis), clock: ContinuousClock())
                _ = try? await apply(.contentGenerated(requestID: requestID, outcome: outcome), to: userID)
            }
        }
    }
}
