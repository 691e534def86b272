import Foundation
public import Models
public import Storage
import Testing

/// One clause of the social ids' part of the `RuntimeStore` contract (`SocialEventStore`) and of
/// the ledger's retention (`EngagementStore`); every conformer runs all of them with its own
/// factory.
public enum SocialRetentionCheck: String, CaseIterable, Sendable {
    case aSocialRecordRoundTripsPerUser
    case aLiveRecordStandsAndAnExpiredOneIsReplaced
    case expiredRecordsArePrunedSoonestFirstAndBounded
    case anInvalidSocialRecordWritesNothing
    case ledgerRowsPastTheWindowArePrunedOldestFirstAndBounded
    case aKeyPastTheWindowIsForgottenAndARecentOneIsNot
    case aPlainBatchPrunesTheLedgerToo
}

private let t0 = Instant(iso8601: "2027-03-01T08:00:00Z")!
private let window = LedgerRetention.seconds

private func social(_ userID: UserID, _ id: String, at seconds: Int64, for lifetime: Int64 = 3_600)
    -> SocialEventRecord
{
    SocialEventRecord(userID: userID, eventID: id, seenAt: t0 + seconds, expiresAt: t0 + seconds + lifetime)
}

private func entry(_ userID: UserID, _ requestID: RequestID, at seconds: Int64, key: String? = nil) -> LedgerEntry {
    LedgerEntry(
        userID: userID, requestID: requestID, kind: .hydration, state: .pending, at: t0 + seconds,
        idempotencyKey: key ?? "\(requestID)/pending@\(seconds)")
}

/// Runs the checks against stores made by `make`.
public func checkSocialRetentionConformance(_ make: () throws -> any RuntimeStore, only checks: [SocialRetentionCheck])
    throws
{
    let past = t0 - 10 * window
    let far = t0 + 10 * window
    for check in checks {
        let store = try make()
        switch check {
        case .aSocialRecordRoundTripsPerUser:
            #expect(try store.socialEventRecord(userID: "u1", eventID: "e1") == nil)
            let record = social("u1", "e1", at: 0)
            try store.commit(RuntimeCommit(userID: "u1", snapshot: [1], socialEvent: record))
            #expect(try store.socialEventRecord(userID: "u1", eventID: "e1") == record)
            #expect(try store.socialEventRecord(userID: "u2", eventID: "e1") == nil)  // ids are per user
            #expect(try store.socialEventRecordCount() == 1)

        case .aLiveRecordStandsAndAnExpiredOneIsReplaced:
            let first = social("u1", "e1", at: 0)
            try store.commit(RuntimeCommit(userID: "u1", snapshot: [1], socialEvent: first))
            // Before it expires, the first arrival's window stands.
            try store.commit(RuntimeCommit(userID: "u1", snapshot: [2], socialEvent: social("u1", "e1", at: 3_599)))
            #expect(try store.socialEventRecord(userID: "u1", eventID: "e1") == first)
            // At its expiry it is replaced.
            let later = social("u1", "e1", at: 3_600)
            try store.commit(RuntimeCommit(userID: "u1", snapshot: [3], socialEvent: later))
            #expect(try store.socialEventRecord(userID: "u1", eventID: "e1") == later)
            #expect(try store.socialEventRecordCount() == 1)

        case .expiredRecordsArePrunedSoonestFirstAndBounded:
            let bound = SocialEventRecord.prunedPerCommit
            // bound + 10 records of three users, expiring one second apart.
            for index in 0..<(bound + 10) {
                let user = UserID("u\(index % 3)")
                try store.commit(
                    RuntimeCommit(userID: user, snapshot: [1], socialEvent: social(user, "e\(index)", at: Int64(index)))
                )
            }
            // Still live when the next one arrives: kept.
            let young = social("u1", "young", at: Int64(bound + 10) + 100, for: 7 * .secondsPerDay)
            try store.commit(RuntimeCommit(userID: "u1", snapshot: [1], socialEvent: young))
            #expect(try store.socialEventRecordCount() == bound + 11)
            // One arriving after every old one expired prunes the `bound` soonest to expire.
            let late = social("u2", "late", at: 3_600 + Int64(bound + 20))
            try store.commit(RuntimeCommit(userID: "u2", snapshot: [1], socialEvent: late))
            #expect(try store.socialEventRecordCount() == 12)
            #expect(try store.socialEventRecord(userID: "u\((bound - 1) % 3)", eventID: "e\(bound - 1)") == nil)
            #expect(try store.socialEventRecord(userID: "u\(bound % 3)", eventID: "e\(bound)") != nil)
            #expect(try store.socialEventRecord(userID: "u1", eventID: "young") == young)
            #expect(try store.socialEventRecord(userID: "u2", eventID: "late") == late)

        case .anInvalidSocialRecordWritesNothing:
            let foreign = RuntimeCommit(userID: "u1", snapshot: [1], socialEvent: social("u2", "e1", at: 0))
            #expect(throws: StoreError.invalidBatch(field: "socialEvent.userID", problem: "not the commit's user")) {
                try store.commit(foreign)
            }
            let empty = RuntimeCommit(userID: "u1", snapshot: [1], socialEvent: social("u1", "", at: 0))
            #expect(throws: StoreError.invalidBatch(field: "socialEvent.eventID", problem: "empty")) {
                try store.commit(empty)
            }
            #expect(try store.socialEventRecordCount() == 0)
            #expect(try store.snapshot(userID: "u1") == nil)

        case .ledgerRowsPastTheWindowArePrunedOldestFirstAndBounded:
            let bound = LedgerRetention.prunedPerBatch
            let old = (0..<(bound + 10)).map { entry("u1", "r\($0)", at: Int64($0)) }
            try store.commit(RuntimeCommit(userID: "u1", snapshot: [1], batch: StoreBatch(ledgerEntries: old)))
            try store.commit(
                RuntimeCommit(
                    userID: "u2", snapshot: [1], batch: StoreBatch(ledgerEntries: [entry("u2", "r0", at: 0)])))
            #expect(try store.ledger(userID: "u1", from: past, to: far).count == bound + 10)
            // A write past the window prunes the user's `bound` oldest rows, and no other user's.
            let fresh = entry("u1", "fresh", at: window + Int64(bound + 20))
            try store.commit(RuntimeCommit(userID: "u1", snapshot: [2], batch: StoreBatch(ledgerEntries: [fresh])))
            let rows = try store.ledger(userID: "u1", from: past, to: far)
            #expect(rows.map(\.requestID) == (bound..<(bound + 10)).map { RequestID("r\($0)") } + ["fresh"])
            #expect(try store.ledger(userID: "u2", from: past, to: far).count == 1)
            // The next write prunes the rest of what is past the window.
            let next = entry("u1", "next", at: window + Int64(bound + 21))
            try store.commit(RuntimeCommit(userID: "u1", snapshot: [3], batch: StoreBatch(ledgerEntries: [next])))
            #expect(try store.ledger(userID: "u1", from: past, to: far).map(\.requestID) == ["fresh", "next"])

        case .aKeyPastTheWindowIsForgottenAndARecentOneIsNot:
            let first = entry("u1", "r1", at: 0, key: "k-old")
            let recent = entry("u1", "r2", at: window, key: "k-recent")
            try store.commit(
                RuntimeCommit(userID: "u1", snapshot: [1], batch: StoreBatch(ledgerEntries: [first, recent])))
            let later = entry("u1", "r3", at: window + 1)
            try store.commit(RuntimeCommit(userID: "u1", snapshot: [2], batch: StoreBatch(ledgerEntries: [later])))
            #expect(try store.ledger(userID: "u1", from: past, to: far).map(\.requestID) == ["r2", "r3"])
            // The recent key is still known: its replay is a no-op, even after a newer write.
            var moved = recent
            moved.state = .cancelled
            try store.commit(
                RuntimeCommit(userID: "u1", snapshot: [3], batch: StoreBatch(ledgerEntries: [later, moved])))
            #expect(try store.ledger(userID: "u1", from: past, to: far).first { $0.requestID == "r2" } == recent)
            // The old key went with its row: the same write, past the window, applies again.
            try store.commit(RuntimeCommit(userID: "u1", snapshot: [4], batch: StoreBatch(ledgerEntries: [first])))
            #expect(try store.ledger(userID: "u1", from: past, to: far).first { $0.requestID == "r1" } == first)

        case .aPlainBatchPrunesTheLedgerToo:
            try store.apply(StoreBatch(ledgerEntries: [entry("u1", "r1", at: 0), entry("u2", "r1", at: 0)]))
            try store.apply(StoreBatch(ledgerEntries: [entry("u1", "r2", at: window + 1)]))
            #expect(try store.ledger(userID: "u1", from: past, to: far).map(\.requestID) == ["r2"])
            #expect(try store.ledger(userID: "u2", from: past, to: far).map(\.requestID) == ["r1"])
        }
    }
}
