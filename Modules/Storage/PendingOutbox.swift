public import Models

/// The outbox as every `RuntimeStore` keeps it (the outbox identity), in memory: the in-memory
/// store holds one for all its users, and the simulated server one per user, so both keep rows
/// by the same rules:
/// - a commit withdraws the pending rows of its cancelled requests, then makes each of its rows
///   pending;
/// - a row replaces the pending row of its user, request and channel (its `slot`); one with the
///   same key is the same work, due at the earlier of the two instants (a sync sent before its
///   slot stays early, an alert asked again is due at its instant again);
/// - a completed key is never pending again: a row bearing it is refused;
/// - a claim's record (`ClaimRecord`) defers rows to their new instant, completes the rows a
///   merge replaces and makes the merged row pending, and marks performed rows attempted; it
///   changes nothing of a key no longer pending.
///
/// A store remembers completed keys for ever, since a replayed commit may arrive at any time.
/// A shell that never replays a commit may bound them (`completedKeyRetentionSeconds`): a key
/// names the instant its work is due, and the engine plans nothing before its step's instant,
/// so a key can only be made again at the instant it was completed, or, for a sync sent before
/// its slot, until that slot; the budget of such a sync reads the keys of the last few slots
/// (the runtime's `SilentPushPlan.historySeconds` bounds both).
///
/// A user has a few rows at a time, so rows are an array in due order searched in order.
public struct PendingOutbox: Sendable {
    /// In due order (`dueAt`, then key), as a store lists them: what is due is a prefix.
    public private(set) var rows: [OutboxRow] = []
    /// What the claim-time rules keep of past claims, of pending rows only.
    public private(set) var claims = ClaimState()
    /// The completed keys, when they are remembered for ever.
    private var completedForever: Set<OutboxKey> = []
    /// The keys completed within the retention, in the order they were completed, when it is
    /// bounded: a few, searched in order, so nothing is hashed.
    private var completedRecently: [(key: OutboxKey, at: Instant)] = []
    /// How long a completed key is remembered; nil: for ever.
    public let completedKeyRetentionSeconds: Int64?

    public init(completedKeyRetentionSeconds: Int64? = nil) {
        self.completedKeyRetentionSeconds = completedKeyRetentionSeconds
    }

    /// Commits a step's rows: the cancelled requests' rows of `userID` are withdrawn, then each
    /// row is made pending (`enqueue`).
    public mutating func commit(userID: UserID, cancelled: [RequestID], rows new: [OutboxRow]) {
        if !cancelled.isEmpty, !rows.isEmpty {
            var withdrawn: [OutboxKey] = []
            rows.removeAll { row in
                guard row.userID == userID, cancelled.contains(row.requestID) else { return false }
                withdrawn.append(row.key)
                return true
            }
            if !withdrawn.isEmpty { claims.forget(withdrawn) }
        }
        for row in new { enqueue(row) }
    }

    /// Makes `row` pending, replacing the pending row of its slot, unless its key was completed.
    /// Returns whether it was made pending.
    @discardableResult
    public mutating func enqueue(_ row: OutboxRow) -> Bool {
        guard !wasCompleted(row.key) else { return false }
        var row = row
        let channel = row.channel
        // The channel first: comparing it is a switch, where identifiers are compared byte by byte.
        if let old = index(where: { $0.channel == channel && $0.requestID == row.requestID && $0.userID == row.userID })
        {
            if rows[old].key != row.key {
                forgetClaims(of: rows[old].key)
            } else {
                row.dueAt = min(row.dueAt, rows[old].dueAt)
            }
            rows.remove(at: old)
        }
        insert(row)
        return true
    }

    /// Completes `key` at `now`: no longer pending, and never pending again.
    public mutating func complete(_ key: OutboxKey, at now: Instant) {
        if let index = index(where: { $0.key == key }) { rows.remove(at: index) }
        forgetClaims(of: key)
        guard let retention = completedKeyRetentionSeconds else {
            completedForever.insert(key)
            return
        }
        var old = 0
        while old < completedRecently.count, now - completedRecently[old].at > retention { old += 1 }
        if old > 0 { completedRecently.removeFirst(old) }
        completedRecently.append((key, now))
    }

    /// Whether `key` was completed (and is still remembered).
    public func wasCompleted(_ key: OutboxKey) -> Bool {
        guard completedKeyRetentionSeconds != nil else {
            return !completedForever.isEmpty && completedForever.contains(key)
        }
        for index in completedRecently.indices where completedRecently[index].key == key { return true }
        return false
    }

    /// The rows due by `now`, in due order.
    public func due(through now: Instant) -> ArraySlice<OutboxRow> {
        var count = 0
        while count < rows.count, rows[count].dueAt <= now { count += 1 }
        return rows[..<count]
    }

    /// Writes a claim's record, taken at `now` (the contract above).
    public mutating func apply(_ record: ClaimRecord, at now: Instant) {
        var record = record
        record.deferrals.removeAll { deferral in
            guard let index = index(where: { $0.key == deferral.key }) else { return true }
            var row = rows.remove(at: index)
            row.dueAt = deferral.until
            insert(row)
            return false
        }
        for merge in record.merges {
            for key in merge.replacedKeys { complete(key, at: now) }
            enqueue(merge.row)
        }
        for key in record.expiredKeys { complete(key, at: now) }
        record.performedKeys.removeAll { key in index(where: { $0.key == key }) == nil }
        claims.apply(record)
    }

    /// The soonest pending row's instant.
    public var nextDueAt: Instant? { rows.first?.dueAt }

    /// Whether a badge sync is pending.
    public var hasSync: Bool { index(where: { $0.channel == .silent }) != nil }

    /// What the claim-time rules read of `userIDs`' past claims: their tallies, and which of
    /// their pending rows were attempted or deferred.
    public func claimState(of userIDs: Set<UserID>) -> ClaimState {
        let keys = Set(rows.lazy.filter { userIDs.contains($0.userID) }.map(\.key))
        return ClaimState(
            tallies: claims.tallies.filter { userIDs.contains($0.key) },
            attemptedKeys: claims.attemptedKeys.intersection(keys),
            plannedAt: claims.plannedAt.filter { keys.contains($0.key) })
    }

    /// The first row `matches`, read in place: a closure over the array's elements as a sequence
    /// would be handed a copy of each row it looks at, retaining its key, identifiers and payload.
    private func index(where matches: (borrowing OutboxRow) -> Bool) -> Int? {
        for index in rows.indices where matches(rows[index]) { return index }
        return nil
    }

    /// Inserts `row` at its place in due order.
    private mutating func insert(_ row: OutboxRow) {
        var low = 0
        var high = rows.count
        while low < high {
            let middle = (low + high) / 2
            let dueAt = rows[middle].dueAt
            if dueAt < row.dueAt || (dueAt == row.dueAt && rows[middle].key < row.key) {
                low = middle + 1
            } else {
                high = middle
            }
        }
        rows.insert(row, at: low)
    }

    /// What the claims keep of `key`, dropped (most rows were never deferred nor attempted).
    private mutating func forgetClaims(of key: OutboxKey) {
        guard !claims.attemptedKeys.isEmpty || !claims.plannedAt.isEmpty else { return }
        claims.forget(CollectionOfOne(key))
    }
}
