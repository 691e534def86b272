import Foundation
public import Models
public import Storage
import Testing

/// One clause of the `TraceStore` contract; every conformer runs all of them.
public enum TraceStoreCheck: String, CaseIterable, Sendable {
    case recordsComeByTimeThenIdAfterAPosition
    case eachUserHasTheirOwnTrace
    case anInvalidCommitWritesNoTrace
    case pruningRemovesExpiredRecordsABoundedNumberPerCommit
    case idsKeepGrowingAfterEverythingWasPruned
}

private let t0 = Instant(iso8601: "2027-03-01T08:00:00Z")!
private let start = TracePosition(at: Instant(secondsSinceEpoch: -(1 << 40)), id: 0)

private func record(
    _ requestID: RequestID, at: Instant, user: UserID = "u1", decision: TraceDecision = .scheduled,
    reason: ReasonCode = .onTime
) -> TraceRecord {
    TraceRecord(
        userID: user, at: at, requestID: requestID, kind: .mealReminder, decision: decision, reason: reason,
        fireAt: decision == .scheduled ? at + 3_600 : nil, detail: reason == .onTime ? "" : "quiet 22:00-07:00",
        groupID: nil, input: "appOpened")
}

private func commit(_ store: any RuntimeStore, _ records: [TraceRecord], user: UserID = "u1") throws {
    try store.commit(RuntimeCommit(userID: user, snapshot: [1], trace: records))
}

/// Runs the checks of `TraceStore`'s contract against stores made by `make`.
public func checkTraceStoreConformance(_ make: () throws -> any RuntimeStore, only checks: [TraceStoreCheck]) throws {
    for check in checks {
        let store = try make()
        switch check {
        case .recordsComeByTimeThenIdAfterAPosition:
            try commit(store, [record("a", at: t0), record("b", at: t0)])
            try commit(store, [record("c", at: t0 + 60, decision: .deferred, reason: .quietHours)])
            try commit(store, [record("d", at: t0 + 120)])
            let all = try store.traceRecords(userID: "u1", after: start, limit: 10)
            #expect(all.map(\.requestID) == ["a", "b", "c", "d"])
            #expect(all.allSatisfy { $0.id > 0 })
            #expect(all.map(\.id) == all.map(\.id).sorted() && Set(all.map(\.id)).count == 4)
            // What was committed reads back whole, apart from the id the store gave.
            var deferred = all[2]
            deferred.id = 0
            #expect(deferred == record("c", at: t0 + 60, decision: .deferred, reason: .quietHours))
            // A page continues after the position of its last record; a time alone is inclusive.
            #expect(
                try store.traceRecords(userID: "u1", after: all[0].position, limit: 2).map(\.requestID) == ["b", "c"])
            #expect(
                try store.traceRecords(userID: "u1", after: all[1].position, limit: 10).map(\.requestID) == ["c", "d"])
            let since = TracePosition(at: t0 + 60, id: 0)
            #expect(try store.traceRecords(userID: "u1", after: since, limit: 10).map(\.requestID) == ["c", "d"])
            #expect(try store.traceRecords(userID: "u1", after: all[3].position, limit: 10).isEmpty)
            #expect(try store.traceRecords(userID: "u1", after: start, limit: 0).isEmpty)
        case .eachUserHasTheirOwnTrace:
            try commit(store, [record("a", at: t0)])
            try commit(store, [record("x", at: t0, user: "u2")], user: "u2")
            #expect(try store.traceRecords(userID: "u1", after: start, limit: 10).map(\.requestID) == ["a"])
            #expect(try store.traceRecords(userID: "u2", after: start, limit: 10).map(\.userID) == ["u2"])
            #expect(try store.traceRecords(userID: "nobody", after: start, limit: 10).isEmpty)
        case .anInvalidCommitWritesNoTrace:
            try commit(store, [record("a", at: t0)])
            let invalid = [
                RuntimeCommit(
                    userID: "u1", snapshot: [2], trace: [record("b", at: t0 + 1), record("c", at: t0 + 1, user: "u2")]),
                RuntimeCommit(userID: "u1", snapshot: [2], trace: [record("", at: t0 + 1)]),
            ]
            for commit in invalid {
                #expect(throws: StoreError.self) { try store.commit(commit) }
            }
            #expect(try store.traceRecords(userID: "u1", after: start, limit: 10).map(\.requestID) == ["a"])
            #expect(try store.snapshot(userID: "u1") == [1])
        case .pruningRemovesExpiredRecordsABoundedNumberPerCommit:
            let old = (0..<100).map { record("old\($0)", at: t0 + Int64($0)) }
            try commit(store, old)
            try commit(store, [record("other", at: t0, user: "u2")], user: "u2")
            // Exactly at the window's edge: kept.
            let newest = t0 + 99 + TraceRetention.seconds
            try commit(store, [record("new1", at: newest)])
            var left = try store.traceRecords(userID: "u1", after: start, limit: 500).map(\.requestID)
            #expect(left.count == 100 + 1 - TraceRetention.prunedPerCommit)
            #expect(left.first == "old\(TraceRetention.prunedPerCommit)")
            try commit(store, [record("new2", at: newest)])
            left = try store.traceRecords(userID: "u1", after: start, limit: 500).map(\.requestID)
            #expect(left == ["old99", "new1", "new2"])
            // A commit without trace prunes nothing; another user's trace is never touched.
            try store.commit(RuntimeCommit(userID: "u1", snapshot: [3]))
            #expect(try store.traceRecords(userID: "u1", after: start, limit: 500).count == 3)
            #expect(try store.traceRecords(userID: "u2", after: start, limit: 10).map(\.requestID) == ["other"])
        case .idsKeepGrowingAfterEverythingWasPruned:
            try commit(store, [record("a", at: t0), record("b", at: t0)])
            let before = try store.traceRecords(userID: "u1", after: start, limit: 10).map(\.id).max() ?? 0
            let later = t0 + TraceRetention.seconds + 1
            try commit(store, [record("c", at: later)])
            let after = try store.traceRecords(userID: "u1", after: start, limit: 10)
            #expect(after.map(\.requestID) == ["c"])
            #expect(after[0].id > before)
        }
    }
}

/// The trace outlives its store object: `open` opens the same database each time.
public func checkTraceSurvivesAReopen(_ open: () throws -> any RuntimeStore) throws {
    do {
        let store = try open()
        try commit(store, [record("a", at: t0), record("b", at: t0 + 1, decision: .cancelled, reason: .alreadyDone)])
    }
    let reopened = try open()
    let records = try reopened.traceRecords(userID: "u1", after: start, limit: 10)
    #expect(records.map(\.requestID) == ["a", "b"])
    #expect(records.map(\.reason) == [.onTime, .alreadyDone])
}
