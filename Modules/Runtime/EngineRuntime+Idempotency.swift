public import Engagement
public import Models
public import Storage

/// What a keyed `apply` did.
public enum KeyedApply: Hashable, Sendable {
    /// The input was applied; its record was committed in the same transaction.
    case applied(IdempotencyRecord)
    /// A live record of the key with the same request hash: its answer stands, nothing applied.
    case replayed(IdempotencyRecord)
    /// A live record of the key with another request hash: nothing applied.
    case conflicted(IdempotencyRecord)
    /// Another call with the key was being applied (`WhileKeyRuns.refuse`): nothing applied.
    case running
}

/// What a keyed `apply` does while another call with its key is being applied.
public enum WhileKeyRuns: Hashable, Sendable {
    /// Waits for it to be written, then finds its record (replayed or conflicted).
    case wait
    /// Returns `KeyedApply.running` at once: a server answers 409 rather than hold a connection.
    case refuse
}

/// Inputs with an idempotency key, durable across restarts: the record of the first answer is
/// committed with the input, so an input is applied once per key whatever crashes in between.
extension EngineRuntime {
    /// The key's record if it is live (younger than `IdempotencyRecord.retentionSeconds` by the
    /// runtime's clock), else nil.
    public func idempotencyRecord(userID: UserID, key: String) throws(RuntimeError) -> IdempotencyRecord? {
        let record: IdempotencyRecord?
        do { record = try store.idempotencyRecord(userID: userID, key: key) } catch { throw .store(error) }
        guard let record, record.isLive(at: clock.now()) else { return nil }
        return record
    }

    /// Applies `input` once per live key: a live record of the key answers instead (replayed
    /// for the same `requestHash`, conflicted for another). Otherwise the input is applied and
    /// `answer` turns its effects and the local plan's revision after it into the status and
    /// body kept as the record, in the input's transaction. A refused input (unknown user, a
    /// store failure) keeps no record. Calls with the same key run one at a time: a second one
    /// waits for the first to be written, then finds its record, or is refused at once
    /// (`whileKeyRuns`). The key's one lock is the runtime's write gate: a host keeps none of its
    /// own. `occurredAt` and `source` are `apply(_:to:occurredAt:from:)`'s.
    public func apply(
        _ input: EngineInput, to userID: UserID, occurredAt: Instant? = nil, from source: InputSource = .backend,
        idempotencyKey key: String, requestHash: String, whileKeyRuns: WhileKeyRuns = .wait,
        answer: (_ effects: [Effect], _ planRevision: Int) -> (status: Int, body: [UInt8])
    ) async throws(RuntimeError) -> KeyedApply {
        let gateKey = "key\u{1F}" + userID.rawValue + "\u{1F}" + key
        switch whileKeyRuns {
        case .wait: await writeGate.acquire(gateKey)
        case .refuse: guard writeGate.tryAcquire(gateKey) else { return .running }
        }
        defer { writeGate.release(gateKey) }
        if let record = try idempotencyRecord(userID: userID, key: key) {
            return record.requestHash == requestHash ? .replayed(record) : .conflicted(record)
        }
        var made: IdempotencyRecord?
        _ = try await applyStep(input, to: userID, occurredAt: occurredAt, from: source) { effects, revision, now in
            let (status, body) = answer(effects, revision)
            let record = IdempotencyRecord(
                userID: userID, key: key, requestHash: requestHash, status: status, response: body, createdAt: now)
            made = record
            return record
        }
        // Unreachable: applyStep makes the record for its commit whenever it returns.
        guard let made else { throw .store(.unavailable("the input of key \(key) was committed without its record")) }
        return .applied(made)
    }
}
