public import Content
import Engagement
import Models
import Synchronization

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
            coachCalls.start {
                let outcome = await ContentGenerator.outcome(
                    of: coach, for: request, deadline: .milliseconds(self.content.deadlineMillis),
                    clock: ContinuousClock())
                _ = try? await self.apply(.contentGenerated(requestID: requestID, outcome: outcome), to: userID)
            }
        }
    }

    /// Returns once every coach call started before it (and any started while it waited) has
    /// applied its outcome. Each call is bounded by the content deadline, so this waits at most
    /// about that long: a server calls it at shutdown, before it closes the coach's HTTP client,
    /// so answers in flight land instead of failing; tests call it instead of polling.
    public nonisolated func coachAnswersSettled() async {
        while let pending = coachCalls.anyPending() { await pending.value }
    }
}

/// The coach calls in flight: unstructured tasks (they outlive the input that started them),
/// kept so that shutdown and tests can wait for them. Each runs where the task that started it
/// prefers to run (its task executor preference, which an unstructured task does not inherit by
/// itself): applying the answer calls the store, whose calls may block their thread (PostgreSQL's
/// run on threads of their own, never on Swift's cooperative pool).
final class CoachCalls: Sendable {
    private struct State {
        var nextID: UInt64 = 0
        var running: [UInt64: Task<Void, Never>] = [:]
    }
    private let state = Mutex(State())

    func start(_ work: @escaping @Sendable () async -> Void) {
        state.withLock { state in
            let id = state.nextID
            state.nextID += 1
            // Registered under the lock before it can finish, so its removal always finds it.
            state.running[id] = Self.task {
                await work()
                self.state.withLock { _ = $0.running.removeValue(forKey: id) }
            }
        }
    }

    /// An unstructured task with the calling task's executor preference, if it has one.
    static func task(_ operation: @escaping @Sendable () async -> Void) -> Task<Void, Never> {
        if #available(macOS 26.4, iOS 26.4, watchOS 26.4, tvOS 26.4, visionOS 26.4, *) {
            let preferred = withUnsafeCurrentTask { $0?.unownedTaskExecutor?.asTaskExecutor() }
            return Task(executorPreference: preferred, operation: operation)
        }
        return Task(operation: operation)
    }

    func anyPending() -> Task<Void, Never>? {
        state.withLock { $0.running.values.first }
    }
}
