public import Models
public import Storage

/// What the server reads beside the engines: the decision trace and the outbox depth. Both read
/// committed data straight from the store, so they never wait behind the inputs being applied.
extension EngineRuntime {
    /// The runtime clock's time (the default `since` of a trace read).
    public nonisolated func now() -> Instant { clock.now() }

    /// The user's traced decisions after `position` (by time, then id), at most `limit`.
    /// Throws `unknownUser` for a user that was never put.
    public nonisolated func traceRecords(of userID: UserID, after position: TracePosition, limit: Int)
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
    /// the stored profile alone (a send restores no engine), nil for a zone this process does
    /// not know (the claim-time rules hold such a user's alerts). Throws `unknownUser` for a
    /// user never put.
    public func showingRules(of userID: UserID) throws(RuntimeError) -> ShowingRules? {
        let profile: UserProfile?
        do { profile = try store.profile(id: userID) } catch { throw .store(error) }
        guard let profile else { throw .unknownUser(userID) }
        guard let zone = try? zoneRules(profile.timeZone) else { return nil }
        return ShowingRules(profile: profile, zone: zone)
    }
}
