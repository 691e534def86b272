public import Models
public import Storage

/// The early sync: a step whose change the phone would hear of only at the next slot, and that
/// withdrew a copy the phone holds and fires before then (`UserEngine.withdrewHeldCopy`: the
/// planner keeps such copies unless the user's own intent withdraws them), sends that slot's
/// sync now, when the budget has room (`StepOutbox`).
extension SilentPushPlan {
    /// What the budget of an early sync reads of a user's syncs: their pending rows, written or
    /// still to be written, and which of the keys asked for (`historyKeys`) were completed.
    public struct SyncHistory: Sendable {
        public var pending: [OutboxRow]
        public var completed: Set<OutboxKey>

        public init(pending: [OutboxRow], completed: Set<OutboxKey>) {
            self.pending = pending
            self.completed = completed
        }
    }

    /// How far back a store must remember completed sync keys for `earlyRows` to read the
    /// budget: the keys of the `perHour` slots before the next one, and of an early sync sent up
    /// to a slot before its own: `perHour + 1` slots.
    public var historySeconds: Int64 { Int64(perHour + 1) * slotSeconds }

    /// The keys an early sync for a change at `now` reads (`SyncHistory.completed`): the next
    /// slot's, then the `perHour` slots' before it.
    public func historyKeys(for userID: UserID, changedAt now: Instant) -> [OutboxKey] {
        let next = slot(after: now)
        return (0...Int64(perHour)).map { row(for: userID, dueAt: next - $0 * slotSeconds).key }
    }

    /// The rows of an early sync for a change at `now`, from `history` (`historyKeys`); nil when
    /// the budget has no room, and the change waits for the next slot as any other.
    ///
    /// The early sync is the next slot's own row (its request and key), due now: it takes that
    /// slot, so the hours after it hold no more sends than the grid's. A store keeps the earlier
    /// due instant of a row asked again with the same key, so a later change never postpones it.
    /// A change after it is sent and before the slot would ask for the slot's key, which a store
    /// refuses once completed, so the slot after is booked with it; a push reads the counts and
    /// the plan's version when it is sent, so that one carries whatever came between, or nothing
    /// new.
    ///
    /// A slot is taken when its key was completed (sent early or at its slot), or its row is
    /// pending past its instant. The early sync needs the next slot untaken, and fewer than
    /// `perHour` of the `perHour` slots before it taken: any earlier slot's send was more than an
    /// hour before `now`.
    public func earlyRows(for userID: UserID, changedAt now: Instant, history: SyncHistory) -> [OutboxRow]? {
        let next = slot(after: now)
        func taken(_ slot: Instant) -> Bool {
            let sync = row(for: userID, dueAt: slot)
            return history.completed.contains(sync.key)
                || history.pending.contains {
                    $0.userID == userID && $0.channel == .silent && $0.requestID == sync.requestID && $0.dueAt <= now
                }
        }
        guard !taken(next), (1...Int64(perHour)).count(where: { taken(next - $0 * slotSeconds) }) < perHour else {
            return nil
        }
        var early = row(for: userID, dueAt: next)
        early.dueAt = now
        return [early, row(for: userID, dueAt: next + slotSeconds)]
    }

    /// Whether `row` is a sync due before the slot it names (`earlyRows`): what the reports count
    /// as syncs outside the grid.
    public func isEarly(_ row: OutboxRow) -> Bool {
        guard row.channel == .silent, let slot = Self.slot(of: row.requestID) else { return false }
        return row.dueAt < slot
    }
}
