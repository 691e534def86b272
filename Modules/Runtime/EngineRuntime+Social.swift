public import Engagement
public import Models
public import Storage

/// A social event on its way into a user's engine, with what the store knows of its id.
///
/// Social ids are a namespace of their own, per user (`SocialEventStore`): the runtime keeps each
/// id it took in for `EngineRuntime.socialIDRetentionSeconds`, and a repeat inside that window
/// is traced as a duplicate (`UserEngine.repeatedSocialEvent`) instead of being handed to the
/// engine, which knows an id only while its item waits. So a webhook retried after the
/// notification went out, or a message the backend's queue delivers twice, notifies once.
struct SocialIntake {
    /// The runtime's write gate key: calls with the same user and id run one at a time, so a
    /// second one reads the record the first committed.
    let gateKey: String
    let event: SocialEvent
    /// The live record of the id's earlier arrival, or nil when the id is new (or expired).
    let earlier: SocialEventRecord?

    /// The engine's effects: the input handled, or only the repeat traced (state unchanged).
    func handle(_ engine: inout UserEngine, at now: Instant, phone: PhoneHearing) -> [Effect] {
        // A social event comes from the app's backend: the phone hears of it with the next sync.
        guard let earlier else { return engine.handle(.socialEvent(event), at: now, phone: phone) }
        return engine.repeatedSocialEvent(event, firstSeen: earlier.seenAt, at: now)
    }

    /// The record the step commits: the id kept for `retentionSeconds` from now; nil for a
    /// repeat, whose first arrival's window stands.
    func record(userID: UserID, at now: Instant, retentionSeconds: Int64) -> SocialEventRecord? {
        guard earlier == nil else { return nil }
        return SocialEventRecord(userID: userID, eventID: event.id, seenAt: now, expiresAt: now + retentionSeconds)
    }
}

extension EngineRuntime {
    /// For a social event: holds its id's write gate (the caller releases `gateKey` once its step
    /// is written or refused) and reads whether the id is live for the user by the runtime's
    /// clock. Nil for any other input.
    func beginSocialIntake(_ input: EngineInput, of userID: UserID) async throws(RuntimeError) -> SocialIntake? {
        guard case .socialEvent(let event) = input else { return nil }
        let gateKey = "social\u{1F}" + userID.rawValue + "\u{1F}" + event.id
        await writeGate.acquire(gateKey)
        let earlier: SocialEventRecord?
        do {
            earlier = try store.socialEventRecord(userID: userID, eventID: event.id)
        } catch {
            writeGate.release(gateKey)
            throw .store(error)
        }
        return SocialIntake(
            gateKey: gateKey, event: event, earlier: earlier.flatMap { $0.isLive(at: clock.now()) ? $0 : nil })
    }

    /// The id's record if the user took the event in within the retention window (by the
    /// runtime's clock), else nil.
    public func socialEventRecord(userID: UserID, eventID: String) throws(RuntimeError) -> SocialEventRecord? {
        let record: SocialEventRecord?
        do { record = try store.socialEventRecord(userID: userID, eventID: eventID) } catch { throw .store(error) }
        guard let record, record.isLive(at: clock.now()) else { return nil }
        return record
    }
}
