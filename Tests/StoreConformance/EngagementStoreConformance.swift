public import Models
public import Storage
public import Testing

// The contract of `EngagementStore` as executable checks. Every conformer runs all of them with
// its own factory, e.g. for the SQLite store:
//
//     @Test(arguments: StoreConformanceCheck.allCases)
//     func sqliteStoreConforms(_ check: StoreConformanceCheck) throws {
//         try checkEngagementStoreConformance({ try! SQLiteEngagementStore(path: temporaryPath()) }, only: [check])
//     }

/// One clause of the `EngagementStore` contract.
public enum StoreConformanceCheck: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case roundTrip
    case replayOfTheSameBatchAddsNothing
    case replayAfterALaterWriteDoesNotRollBack
    case duplicatesWithinOneBatchAreStoredOnce
    case idempotencyKeysAreScopedPerUser
    case ledgerKeepsOneRowPerRequest
    case ledgerRangeIsHalfOpenAndOrdered
    case activityEventsSinceIsInclusiveAndOrdered
    case usersInactiveListsOnlyUsersIdleBeforeTheCutoff
    case invalidBatchAppliesNothing
    case emptyBatchChangesNothing
    case lastActiveAtFollowsTheNewestEvent
    case unknownUsersReadAsEmpty

    public var testDescription: String {
        switch self {
        case .roundTrip: "what a batch writes reads back unchanged"
        case .replayOfTheSameBatchAddsNothing: "replaying the same batch adds no duplicates"
        case .replayAfterALaterWriteDoesNotRollBack: "replaying an old batch does not roll back a later ledger write"
        case .duplicatesWithinOneBatchAreStoredOnce: "an event or key repeated within one batch is stored once"
        case .idempotencyKeysAreScopedPerUser: "the same idempotency key for two users writes both rows"
        case .ledgerKeepsOneRowPerRequest: "the ledger keeps one row per request, in its latest state"
        case .ledgerRangeIsHalfOpenAndOrdered: "ledger ranges include from, exclude to, and are ordered by time"
        case .activityEventsSinceIsInclusiveAndOrdered:
            "activity events since an instant include it and come oldest first"
        case .usersInactiveListsOnlyUsersIdleBeforeTheCutoff:
            "usersInactive lists only users idle since before the cutoff"
        case .invalidBatchAppliesNothing: "an invalid batch names its field and applies nothing"
        case .emptyBatchChangesNothing: "an empty batch succeeds and changes nothing"
        case .lastActiveAtFollowsTheNewestEvent: "lastActiveAt follows the newest event, not the latest arrival"
        case .unknownUsersReadAsEmpty: "reads for unknown users return nil or nothing"
        }
    }
}

/// Runs the `EngagementStore` conformance suite (or the `checks` given) against stores made by
/// `makeStore`; each check gets a fresh store.
public func checkEngagementStoreConformance(
    _ makeStore: () -> any EngagementStore, only checks: [StoreConformanceCheck] = StoreConformanceCheck.allCases
) throws {
    for check in checks {
        try run(check, on: makeStore())
    }
}

// MARK: - Fixtures

private let t0 = Instant(iso8601: "2027-03-01T07:00:00Z")!
private let hour = Int64.secondsPerHour
private let day = Int64.secondsPerDay

private func profile(_ id: UserID, name: String = "Ana Lima") -> UserProfile {
    UserProfile(id: id, displayName: name, timeZone: "Europe/Lisbon")
}

private func event(_ userID: UserID, _ at: Instant, _ kind: ActivityKind = .appOpened(sessionSeconds: 120))
    -> ActivityEvent
{
    ActivityEvent(userID: userID, at: at, kind: kind)
}

private func entry(
    _ userID: UserID, _ requestID: RequestID, _ state: LedgerState, at: Instant, key: String? = nil,
    reason: ReasonCode? = .onTime
) -> LedgerEntry {
    LedgerEntry(
        userID: userID, requestID: requestID, kind: .morningGreeting, state: state, at: at, reason: reason,
        idempotencyKey: key ?? LedgerEntry.transitionKey(requestID: requestID, state: state))
}

private func everything(_ userID: UserID, in store: any EngagementStore) throws -> String {
    let far = Instant(secondsSinceEpoch: 1 << 40)
    let past = Instant(secondsSinceEpoch: -(1 << 40))
    return """
        \(String(describing: try store.profile(id: userID)))
        \(try store.activityEvents(userID: userID, since: past))
        \(String(describing: try store.lastActiveAt(userID: userID)))
        \(try store.ledger(userID: userID, from: past, to: far))
        \(String(describing: try store.engagementState(userID: userID)))
        """
}

/// A batch touching every kind of record for `userID`.
private func stepBatch(_ userID: UserID) -> StoreBatch {
    StoreBatch(
        profiles: [profile(userID)],
        activityEvents: [
            event(userID, t0), event(userID, t0 + hour, .workoutCompleted(durationMinutes: 45)),
            event(userID, t0 + 2 * hour, .mealLogged(.lunch)),
        ],
        ledgerEntries: [
            entry(userID, "morningGreeting.2027-03-02", .pending, at: t0 + 3 * hour),
            entry(userID, "mealReminder.2027-03-02.lunch", .planned, at: t0 + 4 * hour, reason: nil),
        ],
        engagementStates: [
            EngagementState(
                userID: userID, lapseStage: "lapsed", reEngagementAttempts: 2, campaignStartedAt: t0,
                checkpoint: "input-41")
        ])
}

// MARK: - Checks

private func run(_ check: StoreConformanceCheck, on store: any EngagementStore) throws {
    let far = Instant(secondsSinceEpoch: 1 << 40)
    let past = Instant(secondsSinceEpoch: -(1 << 40))
    switch check {
    case .roundTrip:
        let batch = stepBatch("u1")
        try store.apply(batch)
        #expect(try store.profile(id: "u1") == batch.profiles[0])
        #expect(try store.activityEvents(userID: "u1", since: past) == batch.activityEvents)
        #expect(try store.ledger(userID: "u1", from: past, to: far) == batch.ledgerEntries)
        #expect(try store.engagementState(userID: "u1") == batch.engagementStates[0])
        #expect(try store.lastActiveAt(userID: "u1") == t0 + 2 * hour)

    case .replayOfTheSameBatchAddsNothing:
        let batch = stepBatch("u1")
        try store.apply(batch)
        let once = try everything("u1", in: store)
        try store.apply(batch)
        try store.apply(batch)
        #expect(try everything("u1", in: store) == once)
        #expect(try store.activityEvents(userID: "u1", since: past).count == 3)
        #expect(try store.ledger(userID: "u1", from: past, to: far).count == 2)

    case .replayAfterALaterWriteDoesNotRollBack:
        let request: RequestID = "workoutReminder.2027-03-01.1830"
        let planned = StoreBatch(ledgerEntries: [entry("u1", request, .pending, at: t0)])
        try store.apply(planned)
        try store.apply(StoreBatch(ledgerEntries: [entry("u1", request, .delivered, at: t0 + hour)]))
        try store.apply(planned)
        let rows = try store.ledger(userID: "u1", from: past, to: far)
        #expect(rows.map(\.state) == [.delivered])
        #expect(rows.map(\.at) == [t0 + hour])

    case .duplicatesWithinOneBatchAreStoredOnce:
        let moment = event("u1", t0, .moodLogged)
        let row = entry("u1", "morningGreeting.2027-03-01", .delivered, at: t0)
        var later = row
        later.at = t0 + hour
        try store.apply(StoreBatch(activityEvents: [moment, moment], ledgerEntries: [row, later]))
        #expect(try store.activityEvents(userID: "u1", since: past) == [moment])
        // The second entry carries an applied key, so it is skipped even within the batch.
        #expect(try store.ledger(userID: "u1", from: past, to: far) == [row])

    case .idempotencyKeysAreScopedPerUser:
        let a = entry("u1", "morningGreeting.2027-03-01", .delivered, at: t0, key: "k1")
        let b = entry("u2", "morningGreeting.2027-03-01", .delivered, at: t0, key: "k1")
        try store.apply(StoreBatch(ledgerEntries: [a, b]))
        #expect(try store.ledger(userID: "u1", from: past, to: far) == [a])
        #expect(try store.ledger(userID: "u2", from: past, to: far) == [b])

    case .ledgerKeepsOneRowPerRequest:
        let request: RequestID = "hydration.2027-03-01.0900"
        let states: [LedgerState] = [.planned, .pending, .delivered, .responded]
        for (offset, state) in states.enumerated() {
            try store.apply(StoreBatch(ledgerEntries: [entry("u1", request, state, at: t0 + Int64(offset) * hour)]))
        }
        let rows = try store.ledger(userID: "u1", from: past, to: far)
        #expect(rows.count == 1)
        #expect(rows.first?.state == .responded)
        #expect(rows.first?.at == t0 + 3 * hour)

    case .ledgerRangeIsHalfOpenAndOrdered:
        let rows = [
            entry("u1", "c", .delivered, at: t0 + 2 * hour),
            entry("u1", "b", .delivered, at: t0 + hour),
            entry("u1", "a", .delivered, at: t0 + hour),
            entry("u1", "early", .delivered, at: t0 - 1),
            entry("u1", "edge", .delivered, at: t0 + 3 * hour),
            entry("u2", "other", .delivered, at: t0 + hour),
        ]
        try store.apply(StoreBatch(ledgerEntries: rows))
        let range = try store.ledger(userID: "u1", from: t0, to: t0 + 3 * hour)
        #expect(range.map(\.requestID) == ["a", "b", "c"])
        #expect(try store.ledger(userID: "u1", from: t0 + 3 * hour, to: t0 + 3 * hour).isEmpty)
        #expect(try store.ledger(userID: "u1", from: t0 + 3 * hour, to: t0 + 3 * hour + 1).map(\.requestID) == ["edge"])

    case .activityEventsSinceIsInclusiveAndOrdered:
        let events = [
            event("u1", t0 + 2 * hour, .coachChat), event("u1", t0, .moodLogged), event("u1", t0 + hour, .energyLogged),
            event("u1", t0 + hour, .checkInCompleted), event("u2", t0 + hour, .coachChat),
        ]
        try store.apply(StoreBatch(activityEvents: events))
        let since = try store.activityEvents(userID: "u1", since: t0 + hour)
        #expect(since == [events[2], events[3], events[0]])
        #expect(try store.activityEvents(userID: "u1", since: t0 + 2 * hour + 1).isEmpty)

    case .usersInactiveListsOnlyUsersIdleBeforeTheCutoff:
        let cutoff = t0 + 3 * day
        try store.apply(
            StoreBatch(
                profiles: [profile("neverActive")],
                activityEvents: [
                    event("zoe", t0), event("adam", t0 + day), event("adam", t0 - day),
                    event("returned", t0), event("returned", cutoff + hour),
                    event("exactly", cutoff),
                ]))
        #expect(try store.usersInactive(since: cutoff) == ["adam", "zoe"])
        #expect(try store.usersInactive(since: t0).isEmpty)

    case .invalidBatchAppliesNothing:
        try store.apply(stepBatch("u1"))
        let before = try everything("u1", in: store)
        let valid = stepBatch("u1")
        var cases: [(StoreBatch, String)] = []
        var batch = valid
        batch.profiles.append(profile(""))
        cases.append((batch, "profiles[1].id"))
        batch = valid
        batch.activityEvents.append(event("", t0 + 9 * hour))
        cases.append((batch, "activityEvents[3].userID"))
        batch = valid
        batch.ledgerEntries.append(entry("", "x", .pending, at: t0))
        cases.append((batch, "ledgerEntries[2].userID"))
        batch = valid
        batch.ledgerEntries.append(entry("u1", "", .pending, at: t0))
        cases.append((batch, "ledgerEntries[2].requestID"))
        batch = valid
        batch.ledgerEntries.append(entry("u1", "x", .pending, at: t0, key: ""))
        cases.append((batch, "ledgerEntries[2].idempotencyKey"))
        batch = valid
        batch.engagementStates.append(EngagementState(userID: "", lapseStage: "active"))
        cases.append((batch, "engagementStates[1].userID"))
        batch = valid
        batch.engagementStates.append(EngagementState(userID: "u1", lapseStage: ""))
        cases.append((batch, "engagementStates[1].lapseStage"))
        batch = valid
        batch.engagementStates.append(EngagementState(userID: "u1", lapseStage: "active", reEngagementAttempts: -1))
        cases.append((batch, "engagementStates[1].reEngagementAttempts"))

        for (invalid, field) in cases {
            // Make every valid item new, so a partial write would show.
            var probe = invalid
            probe.profiles = probe.profiles.map { $0.id.isEmpty ? $0 : profile($0.id, name: "Changed") }
            probe.activityEvents = probe.activityEvents.map { event($0.userID, $0.at + 5 * day, $0.kind) }
            probe.ledgerEntries = probe.ledgerEntries.map {
                var row = $0
                if !row.idempotencyKey.isEmpty { row.idempotencyKey += "/new" }
                return row
            }
            probe.engagementStates = probe.engagementStates.map {
                var state = $0
                state.checkpoint = "changed"
                return state
            }
            do {
                try store.apply(probe)
                Issue.record("a batch with an invalid \(field) was accepted")
            } catch {
                guard case .invalidBatch(let reported, _) = error else {
                    Issue.record("expected invalidBatch for \(field), got \(error)")
                    continue
                }
                #expect(reported == field)
            }
            #expect(try everything("u1", in: store) == before, "a rejected batch changed the store (\(field))")
            #expect(try store.profile(id: "") == nil)
        }

    case .emptyBatchChangesNothing:
        try store.apply(.empty)
        #expect(try store.usersInactive(since: far).isEmpty)
        try store.apply(stepBatch("u1"))
        let before = try everything("u1", in: store)
        try store.apply(StoreBatch())
        #expect(try everything("u1", in: store) == before)

    case .lastActiveAtFollowsTheNewestEvent:
        #expect(try store.lastActiveAt(userID: "u1") == nil)
        try store.apply(StoreBatch(activityEvents: [event("u1", t0)]))
        #expect(try store.lastActiveAt(userID: "u1") == t0)
        try store.apply(StoreBatch(activityEvents: [event("u1", t0 + day, .workoutCompleted(durationMinutes: 30))]))
        #expect(try store.lastActiveAt(userID: "u1") == t0 + day)
        // A late-arriving older event (an offline log synced later) does not move it back.
        try store.apply(StoreBatch(activityEvents: [event("u1", t0 + hour, .mealLogged(.dinner))]))
        #expect(try store.lastActiveAt(userID: "u1") == t0 + day)
        #expect(try store.usersInactive(since: t0 + day).isEmpty)
        #expect(try store.usersInactive(since: t0 + day + 1) == ["u1"])

    case .unknownUsersReadAsEmpty:
        try store.apply(stepBatch("u1"))
        #expect(try store.profile(id: "nobody") == nil)
        #expect(try store.activityEvents(userID: "nobody", since: past).isEmpty)
        #expect(try store.lastActiveAt(userID: "nobody") == nil)
        #expect(try store.ledger(userID: "nobody", from: past, to: far).isEmpty)
        #expect(try store.engagementState(userID: "nobody") == nil)
    }
}
