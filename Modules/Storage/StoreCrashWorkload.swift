public import Models

/// The writes of the store's crash test: `store-crash-writer` applies `batch(0)`, `batch(1)`, ...
/// and the test rebuilds what must be on disk from the same batches, so both sides agree on
/// every byte without sharing anything but this type. Not meant for production use.
///
/// Batch `index` is fixed by `index` alone. It writes, for user `userID(forBatch: index)`:
/// 1 to 24 activity events (1 in 8 batches: 300, so a kill often lands mid-transaction), now and
/// then a repeat of the previous batch's first event and a late-arriving older one; a planned
/// ledger row for request `crash.<index>`; the delivery of the previous batch's request (so a
/// replay must not roll it back); an engagement state whose checkpoint is
/// `checkpoint(forBatch: index)`; and every tenth batch a profile.
public enum StoreCrashWorkload {
    /// How many users the batches rotate through.
    public static let userCount = 7

    /// 2027-03-01T00:00:00Z; batch `index` writes around `start + index * 600` seconds.
    public static let start = Instant(secondsSinceEpoch: 1_803_859_200)

    public static func userID(forBatch index: Int) -> UserID { "crash-u\(index % userCount)" }

    /// The checkpoint batch `index` stores in its user's engagement state: seeing it on disk
    /// proves the batch committed.
    public static func checkpoint(forBatch index: Int) -> String { "batch-\(index)" }

    public static func batch(_ index: Int) -> StoreBatch {
        precondition(index >= 0, "batch indices start at 0")
        var random = SeededGenerator(seed: 0xC4A5_4E57_0000_0001).derived(UInt64(index))
        let userID = userID(forBatch: index)
        let at = start + Int64(index) * 600
        let eventCount = random.int(in: 0...7) == 0 ? 300 : random.int(in: 1...24)
        var events = (0..<eventCount).map { offset in
            ActivityEvent(userID: userID, at: at + Int64(offset) * 7, kind: kind(random.int(in: 0...6), &random))
        }
        if index > 0, random.chance(0.2), let repeated = batch(index - 1).activityEvents.first {
            events.append(repeated)
        }
        if random.chance(0.1) {
            events.append(ActivityEvent(userID: userID, at: at - Int64(random.int(in: 1...50_000)), kind: .moodLogged))
        }
        var ledger = [
            LedgerEntry(
                userID: userID, requestID: "crash.\(index)", kind: .hydration, state: .planned, at: at,
                idempotencyKey: LedgerEntry.transitionKey(requestID: "crash.\(index)", state: .planned))
        ]
        if index > 0 {
            let previous: RequestID = "crash.\(index - 1)"
            ledger.append(
                LedgerEntry(
                    userID: Self.userID(forBatch: index - 1), requestID: previous, kind: .hydration, state: .delivered,
                    at: at - 300, reason: .onTime,
                    idempotencyKey: LedgerEntry.transitionKey(requestID: previous, state: .delivered)))
        }
        let profiles =
            index % 10 == 0
            ? [UserProfile(id: userID, displayName: "Crash Tester \(index)", timeZone: "Europe/Lisbon")] : []
        let state = EngagementState(
            userID: userID, lapseStage: index % 3 == 0 ? "lapsed" : "active", reEngagementAttempts: index % 4,
            campaignStartedAt: index % 3 == 0 ? at : nil, checkpoint: checkpoint(forBatch: index))
        return StoreBatch(profiles: profiles, activityEvents: events, ledgerEntries: ledger, engagementStates: [state])
    }

    private static func kind(_ choice: Int, _ random: inout SeededGenerator) -> ActivityKind {
        switch choice {
        case 0: .appOpened(sessionSeconds: random.int(in: 5...1_800))
        case 1: .workoutCompleted(durationMinutes: random.int(in: 10...90))
        case 2: .mealLogged(MealType.allCases[random.int(in: 0...3)])
        case 3: .moodLogged
        case 4: .energyLogged
        case 5: .coachChat
        default: .checkInCompleted
        }
    }
}
