public import Models
import Scheduling
public import Storage
import Testing

/// One clause of the `RuntimeStore` contract; every conformer runs all of them with its own factory.
public enum RuntimeStoreCheck: String, CaseIterable, Sendable {
    case snapshotRoundTrips
    case aRowReplacesThePendingRowOfItsRequestAndChannel
    case cancellingWithdrawsEveryChannelOfTheRequest
    case aCompletedKeyNeverComesBack
    case theSameKeyStaysDueAtTheEarlierInstant
    case completedKeysAreAnsweredAmongThoseAsked
    case dueRowsComeByTimeThenKeyUpToTheLimit
    case anInvalidCommitChangesNothing
    case aDeferredRowKeepsItsKeyAndFirstDueInstant
    case aClaimCompletesWhatItMergesOrExpires
    case talliesAndAttemptsAreKeptUntilTheRowIsReplaced
}

private let userID: UserID = "u1"
private let t0 = Instant(iso8601: "2027-03-01T08:00:00Z")!

/// A lunch reminder of request `requestID`.
private func sampleRequest(_ requestID: RequestID) -> NotificationRequest {
    NotificationRequest(
        identifier: requestID,
        content: NotificationContent(kind: .mealReminder, title: "Lunch", body: "Log your lunch"),
        trigger: .date(Instant(iso8601: "2027-03-01T08:00:00Z")!))
}

/// A payload of `channel`'s kind for request `requestID`, as the runtime writes one.
public func samplePayload(_ requestID: RequestID, channel: OutboxChannel) -> OutboxPayload {
    switch channel {
    case .push: .alert(sampleRequest(requestID))
    case .inbox: .inboxItem(sampleRequest(requestID), shownBy: .local)
    case .silent: .sync
    case .job: BackgroundJob(rawValue: requestID.rawValue).map { .job($0) } ?? .unreadable("{}", channel: .job)
    case .liveActivity, .unknown: .unreadable("{\"id\":\"\(requestID)\"}", channel: channel)
    }
}

private func row(_ requestID: RequestID, _ channel: OutboxChannel = .push, dueIn seconds: Int64, key: OutboxKey? = nil)
    -> OutboxRow
{
    OutboxRow(
        key: key ?? "\(userID)/\(requestID)/\(channel)/\(seconds)", userID: userID, requestID: requestID,
        dueAt: t0 + seconds, payload: samplePayload(requestID, channel: channel))
}

/// Runs the checks of `RuntimeStore`'s contract against stores made by `make`.
public func checkRuntimeStoreConformance(_ make: () throws -> any RuntimeStore, only checks: [RuntimeStoreCheck]) throws
{
    for check in checks {
        let store = try make()
        switch check {
        case .snapshotRoundTrips:
            #expect(try store.snapshot(userID: userID) == nil)
            try store.commit(RuntimeCommit(userID: userID, snapshot: [0x45, 0x53, 1, 0, 255]))
            #expect(try store.snapshot(userID: userID) == [0x45, 0x53, 1, 0, 255])
            try store.commit(RuntimeCommit(userID: userID, snapshot: [7]))
            #expect(try store.snapshot(userID: userID) == [7])
        case .aRowReplacesThePendingRowOfItsRequestAndChannel:
            try store.commit(
                RuntimeCommit(
                    userID: userID, snapshot: [1], outbox: [row("a", dueIn: 60), row("a", .inbox, dueIn: 60)]))
            try store.commit(RuntimeCommit(userID: userID, snapshot: [2], outbox: [row("a", dueIn: 120)]))
            let pending = try store.pendingOutbox(userID: userID)
            #expect(pending.map(\.dueAt) == [t0 + 60, t0 + 120])
            #expect(pending.map(\.channel) == [.inbox, .push])
            #expect(try store.outboxDepth() == 2)
        case .cancellingWithdrawsEveryChannelOfTheRequest:
            try store.commit(
                RuntimeCommit(
                    userID: userID, snapshot: [1],
                    outbox: [row("a", dueIn: 60), row("a", .inbox, dueIn: 60), row("b", dueIn: 90)]))
            try store.commit(RuntimeCommit(userID: userID, snapshot: [2], cancelledRequestIDs: ["a"]))
            #expect(try store.pendingOutbox(userID: userID).map(\.requestID) == ["b"])
        case .aCompletedKeyNeverComesBack:
            let commit = RuntimeCommit(userID: userID, snapshot: [1], outbox: [row("a", dueIn: 60)])
            try store.commit(commit)
            try store.completeOutbox(keys: [commit.outbox[0].key, "completed-before-any-row"], at: t0 + 61)
            try store.completeOutbox(keys: [commit.outbox[0].key], at: t0 + 62)
            // A crash before the commit was acknowledged replays it: the work stays done.
            try store.commit(commit)
            #expect(try store.dueOutbox(through: t0 + 3_600, limit: 10).isEmpty)
            #expect(try store.outboxDepth() == 0)
            // A key completed before any row had it is remembered as done too.
            try store.commit(
                RuntimeCommit(
                    userID: userID, snapshot: [2], outbox: [row("z", dueIn: 60, key: "completed-before-any-row")]))
            #expect(try store.outboxDepth() == 0)
        case .theSameKeyStaysDueAtTheEarlierInstant:
            // A sync sent before its slot: asked again for the slot, it stays early.
            let slot = row("sync", .silent, dueIn: 1_800)
            var early = slot
            early.dueAt = t0 + 60
            try store.commit(RuntimeCommit(userID: userID, snapshot: [1], outbox: [slot]))
            try store.commit(RuntimeCommit(userID: userID, snapshot: [2], outbox: [early]))
            try store.commit(RuntimeCommit(userID: userID, snapshot: [3], outbox: [slot]))
            #expect(try store.pendingOutbox(userID: userID).map(\.dueAt) == [t0 + 60])
            // Another key is new work, due at its own instant.
            try store.commit(RuntimeCommit(userID: userID, snapshot: [4], outbox: [row("sync", .silent, dueIn: 3_600)]))
            #expect(try store.pendingOutbox(userID: userID).map(\.dueAt) == [t0 + 3_600])
        case .completedKeysAreAnsweredAmongThoseAsked:
            #expect(try store.completedOutboxKeys(among: []).isEmpty)
            let commit = RuntimeCommit(
                userID: userID, snapshot: [1], outbox: [row("a", dueIn: 60), row("b", dueIn: 60)])
            try store.commit(commit)
            try store.completeOutbox(keys: [commit.outbox[0].key, "never-a-row"], at: t0 + 61)
            #expect(
                try store.completedOutboxKeys(among: [commit.outbox[0].key, commit.outbox[1].key, "never-a-row", "x"])
                    == [commit.outbox[0].key, "never-a-row"])
        case .dueRowsComeByTimeThenKeyUpToTheLimit:
            try store.commit(
                RuntimeCommit(
                    userID: userID, snapshot: [1],
                    outbox: [
                        row("c", dueIn: 60, key: "k3"), row("a", dueIn: 30, key: "k9"), row("b", dueIn: 60, key: "k1"),
                        row("d", dueIn: 600, key: "k0"),
                    ]))
            #expect(try store.dueOutbox(through: t0 + 60, limit: 10).map(\.key) == ["k9", "k1", "k3"])
            #expect(try store.dueOutbox(through: t0 + 60, limit: 2).map(\.key) == ["k9", "k1"])
            #expect(try store.dueOutbox(through: t0 + 29, limit: 10).isEmpty)
        case .anInvalidCommitChangesNothing:
            try store.commit(RuntimeCommit(userID: userID, snapshot: [1], outbox: [row("a", dueIn: 60)]))
            let invalid = [
                RuntimeCommit(userID: userID, snapshot: [], outbox: [row("b", dueIn: 60)]),
                RuntimeCommit(
                    userID: userID, snapshot: [2],
                    outbox: [row("b", dueIn: 60), row("c", dueIn: 60, key: "x"), row("d", dueIn: 60, key: "x")]),
                RuntimeCommit(
                    userID: userID, snapshot: [2], cancelledRequestIDs: ["a"],
                    outbox: [row("b", dueIn: 60), row("b", dueIn: 90)]),
                RuntimeCommit(
                    userID: userID, snapshot: [2],
                    outbox: [
                        OutboxRow(
                            key: "k", userID: "u2", requestID: "z", dueAt: t0,
                            payload: samplePayload("z", channel: .push))
                    ]),
            ]
            for commit in invalid {
                #expect(throws: StoreError.self) { try store.commit(commit) }
            }
            #expect(try store.snapshot(userID: userID) == [1])
            #expect(try store.pendingOutbox(userID: userID).map(\.requestID) == ["a"])
        case .aDeferredRowKeepsItsKeyAndFirstDueInstant:
            let a = row("a", dueIn: 60)
            try store.commit(RuntimeCommit(userID: userID, snapshot: [1], outbox: [a, row("b", dueIn: 90)]))
            let morning = t0 + 36_000
            // The second deferral names another first instant: the first one recorded stays.
            for (until, first) in [(t0 + 3_600, a.dueAt), (morning, t0 + 3_600)] {
                try store.recordClaim(
                    ClaimRecord(deferrals: [
                        OutboxDeferral(key: a.key, until: until, reason: "quietHours", firstDueAt: first),
                        OutboxDeferral(key: "not-pending", until: until, reason: "quietHours", firstDueAt: t0),
                    ]), at: t0 + 61)
            }
            let pending = try store.pendingOutbox(userID: userID)
            #expect(pending.map(\.key) == [row("b", dueIn: 90).key, a.key])
            #expect(pending.last?.dueAt == morning && pending.last?.payload == a.payload)
            #expect(try store.dueOutbox(through: t0 + 3_600, limit: 10).map(\.requestID) == ["b"])
            let state = try store.claimState(userIDs: [userID])
            #expect(state.plannedAt == [a.key: a.dueAt] && state.attemptedKeys.isEmpty && state.tallies.isEmpty)
        case .aClaimCompletesWhatItMergesOrExpires:
            let parts = [row("a", dueIn: 60), row("b", dueIn: 90)]
            let stale = row("s", dueIn: 30)
            let commit = RuntimeCommit(userID: userID, snapshot: [1], outbox: parts + [stale, row("c", dueIn: 600)])
            try store.commit(commit)
            let merged = row("merged/a", dueIn: 90, key: "merged-key")
            try store.recordClaim(
                ClaimRecord(
                    merges: [OutboxMerge(row: merged, replacedKeys: parts.map(\.key))], performedKeys: [merged.key],
                    expiredKeys: [stale.key, "not-pending"]),
                at: t0 + 120)
            // A replayed commit of the parts, or of the expired alert, does not bring them back.
            try store.commit(commit)
            #expect(try store.pendingOutbox(userID: userID).map(\.requestID) == ["merged/a", "c"])
            #expect(try store.claimState(userIDs: [userID]).attemptedKeys == [merged.key])
            try store.completeOutbox(keys: [merged.key], at: t0 + 121)
            #expect(try store.pendingOutbox(userID: userID).map(\.requestID) == ["c"])
            // The same merge recorded again after its send completed does not bring it back.
            try store.recordClaim(
                ClaimRecord(merges: [OutboxMerge(row: merged, replacedKeys: parts.map(\.key))]), at: t0 + 122)
            #expect(try store.pendingOutbox(userID: userID).map(\.requestID) == ["c"])
        case .talliesAndAttemptsAreKeptUntilTheRowIsReplaced:
            let a = row("a", dueIn: 60)
            try store.commit(RuntimeCommit(userID: userID, snapshot: [1], outbox: [a]))
            let tally = AlertTally(localDay: 20_000, localHour: 480_008, sentToday: 2, sentThisHour: 1)
            try store.recordClaim(
                ClaimRecord(tallies: [userID: tally, "u2": .none], performedKeys: [a.key, "not-pending"]), at: t0 + 61)
            var state = try store.claimState(userIDs: [userID])
            #expect(state.tallies == [userID: tally] && state.attemptedKeys == [a.key])
            // The same row committed again keeps its attempts; a new row of the request starts afresh.
            try store.commit(RuntimeCommit(userID: userID, snapshot: [2], outbox: [a]))
            #expect(try store.claimState(userIDs: [userID]).attemptedKeys == [a.key])
            try store.commit(RuntimeCommit(userID: userID, snapshot: [3], outbox: [row("a", dueIn: 120)]))
            state = try store.claimState(userIDs: [userID, "u2"])
            #expect(state.attemptedKeys.isEmpty && state.tallies == [userID: tally, "u2": .none])
        }
    }
}
