import Engagement
public import Models
public import Storage

/// What the server reads beside the engines: the decision trace and the outbox depth. Both read
/// committed data straight from the store, so they never wait behind the inputs being applied.
extension EngineRuntime {
    /// The runtime clock's time (the default `since` of a trace read).
    public nonisolated func now() -> Instant { clock.now() }

    /// The user's traced decisions after `position` (by time, then id), at most `limit`.
    /// Throws `unknownUser` for a user that was never put.
    public nonisolated func traceRecords(of userID: String, after position: TracePosition, limit: Int)
        throws(RuntimeError) -> [TraceRecord]
    {
        let profile: UserProfile?
        do { profile = try store.profile(id: userID) } catch { throw .store(error) }
        guard profile != nil else { throw .unknownUser(userID) }
        do { return try store.traceRecords(userID: userID, after: position, limit: limit) } catch {
            throw .store(error)
        }
    }

    /// Pending outbox rows, all users.
    public nonisolated func outboxDepth() throws(RuntimeError) -> Int {
        do { return try store.outboxDepth() } catch { throw .store(error) }
    }
}

extension EngineRuntime {
    /// The rules that bound how late the user's alerts may be shown (`PushSends.showBy`): from
    /// the user's newest engine. Throws `unknownUser` for a user never put.
    public func showingRules(of userID: String) throws(RuntimeError) -> ShowingRules {
        guard let engine = try engine(of: userID) else { throw .unknownUser(userID) }
        return ShowingRules(profile: engine.profile, zone: engine.zone)
    }
}
