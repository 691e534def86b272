import Foundation
public import Models
public import Storage
import Testing

/// One clause of the user-records part of the `RuntimeStore` contract (`UserVersionStore`,
/// `IdempotencyStore`, `DeviceStore`, `TokenRevocationStore`); every conformer runs all of them
/// with its own factory.
public enum UserRecordsCheck: String, CaseIterable, Sendable {
    case versionsAreSetGroupByGroupWithTheSnapshot
    case anInvalidCommitWritesNoVersionsAndNoRecord
    case anIdempotencyRecordRoundTripsAndIsReplacedByKey
    case pruningRemovesOnlyExpiredRecordsOldestFirstAndBounded
    case aNewTokenIsRegisteredAndReregisteringReplacesIt
    case aTokenRegisteredForAnotherUserMoves
    case aRegistrationNotTakingFromOthersLeavesAnothersToken
    case removalByUserRemovesOnlyThatUsersToken
    case removalByTokenRemovesItWhoeverHoldsIt
    case aUserKeepsAtMostTheNewestTokens
    case anInvalidRegistrationChangesNothing
    case aRevocationOnlyMovesForwardPerUser
}

private let t0 = Instant(iso8601: "2027-03-01T08:00:00Z")!
private let tokenA = String(repeating: "a1", count: 32)
private let tokenB = String(repeating: "b2", count: 32)

private func device(
    _ token: String, _ userID: UserID, _ environment: PushEnvironment = .production, at seconds: Int64 = 0
)
    -> DeviceRegistration
{
    DeviceRegistration(
        token: token, userID: userID, environment: environment, platform: "ios", registeredAt: t0 + seconds)
}

private func record(_ userID: UserID, _ key: String, at seconds: Int64, hash: String = "h") -> IdempotencyRecord {
    IdempotencyRecord(
        userID: userID, key: key, requestHash: hash, status: 202, response: Array(#"{"effects":1}"#.utf8),
        createdAt: t0 + seconds)
}

/// Runs the checks against stores made by `make`.
public func checkUserRecordsConformance(_ make: () throws -> any RuntimeStore, only checks: [UserRecordsCheck]) throws {
    for check in checks {
        let store = try make()
        switch check {
        case .versionsAreSetGroupByGroupWithTheSnapshot:
            #expect(try store.userVersions(userID: "u1") == nil)
            try store.commit(
                RuntimeCommit(
                    userID: "u1", snapshot: [1], userVersions: UserVersions([.timeZone: 1_000, .profile: 1_000])))
            try store.commit(RuntimeCommit(userID: "u1", snapshot: [2]))  // no versions: they stay
            try store.commit(
                RuntimeCommit(
                    userID: "u1", snapshot: [3], userVersions: UserVersions([.profile: 2_500, .preferences: 7])))
            #expect(
                try store.userVersions(userID: "u1")
                    == UserVersions([.timeZone: 1_000, .profile: 2_500, .preferences: 7]))
            #expect(try store.userVersions(userID: "u2") == nil)
        case .anInvalidCommitWritesNoVersionsAndNoRecord:
            let invalid = RuntimeCommit(
                userID: "u1", snapshot: [], userVersions: UserVersions([.timeZone: 1]),
                idempotency: record("u1", "k", at: 0))
            #expect(throws: StoreError.self) { try store.commit(invalid) }
            let foreignRecord = RuntimeCommit(userID: "u1", snapshot: [1], idempotency: record("u2", "k", at: 0))
            #expect(throws: StoreError.invalidBatch(field: "idempotency.userID", problem: "not the commit's user")) {
                try store.commit(foreignRecord)
            }
            #expect(try store.userVersions(userID: "u1") == nil)
            #expect(try store.idempotencyRecord(userID: "u1", key: "k") == nil)
            #expect(try store.snapshot(userID: "u1") == nil)
        case .anIdempotencyRecordRoundTripsAndIsReplacedByKey:
            let first = record("u1", "k", at: 0)
            try store.commit(RuntimeCommit(userID: "u1", snapshot: [1], idempotency: first))
            #expect(try store.idempotencyRecord(userID: "u1", key: "k") == first)
            #expect(try store.idempotencyRecord(userID: "u2", key: "k") == nil)  // keys are per user
            let later = record("u1", "k", at: IdempotencyRecord.retentionSeconds + 5, hash: "other")
            try store.commit(RuntimeCommit(userID: "u1", snapshot: [2], idempotency: later))
            #expect(try store.idempotencyRecord(userID: "u1", key: "k") == later)
            #expect(try store.idempotencyRecordCount() == 1)
        case .pruningRemovesOnlyExpiredRecordsOldestFirstAndBounded:
            let bound = IdempotencyRecord.prunedPerCommit
            // More expired records than one commit prunes, then one that is not yet expired.
            for index in 0..<(bound + 10) {
                try store.commit(
                    RuntimeCommit(
                        userID: "u\(index % 3)", snapshot: [1],
                        idempotency: record("u\(index % 3)", "k\(index)", at: Int64(index))))
            }
            let young = Int64(bound + 10) + 100
            try store.commit(RuntimeCommit(userID: "u1", snapshot: [1], idempotency: record("u1", "young", at: young)))
            #expect(try store.idempotencyRecordCount() == bound + 11)
            // A day after the youngest of them: every old one is expired, a commit prunes `bound`.
            let now = young + IdempotencyRecord.retentionSeconds
            try store.commit(RuntimeCommit(userID: "u2", snapshot: [1], idempotency: record("u2", "new", at: now)))
            #expect(try store.idempotencyRecordCount() == 12)
            // The oldest went first.
            #expect(try store.idempotencyRecord(userID: "u0", key: "k0") == nil)
            #expect(try store.idempotencyRecord(userID: "u\((bound - 1) % 3)", key: "k\(bound - 1)") == nil)
            #expect(try store.idempotencyRecord(userID: "u\(bound % 3)", key: "k\(bound)") != nil)
            // Exactly retentionSeconds old is still kept by this commit.
            #expect(try store.idempotencyRecord(userID: "u1", key: "young") != nil)
            try store.commit(RuntimeCommit(userID: "u2", snapshot: [1], idempotency: record("u2", "next", at: now + 1)))
            #expect(try store.idempotencyRecordCount() == 2)
            #expect(try store.idempotencyRecord(userID: "u1", key: "young") == nil)
        case .aNewTokenIsRegisteredAndReregisteringReplacesIt:
            #expect(try store.registerDevice(device(tokenA, "u1", .sandbox)) == nil)
            #expect(try store.devices(userID: "u1") == [device(tokenA, "u1", .sandbox)])
            let again = device(tokenA, "u1", .production, at: 60)
            #expect(try store.registerDevice(again) == device(tokenA, "u1", .sandbox))
            #expect(try store.devices(userID: "u1") == [again])
        case .aTokenRegisteredForAnotherUserMoves:
            try store.registerDevice(device(tokenA, "u1"))
            try store.registerDevice(device(tokenB, "u1", at: 1))
            #expect(try store.registerDevice(device(tokenA, "u2", at: 2))?.userID == "u1")
            #expect(try store.devices(userID: "u1").map(\.token) == [tokenB])
            #expect(try store.devices(userID: "u2").map(\.token) == [tokenA])
        case .aRegistrationNotTakingFromOthersLeavesAnothersToken:
            try store.registerDevice(device(tokenA, "u1"))
            let held = try store.registerDevice(device(tokenA, "u2", at: 2), takingFromOthers: false)
            #expect(held == device(tokenA, "u1"))
            #expect(try store.devices(userID: "u1") == [device(tokenA, "u1")])
            #expect(try store.devices(userID: "u2").isEmpty)
            // Its own token and a new one are registered as ever.
            #expect(try store.registerDevice(device(tokenB, "u2", at: 3), takingFromOthers: false) == nil)
            let again = device(tokenB, "u2", .production, at: 4)
            #expect(try store.registerDevice(again, takingFromOthers: false) == device(tokenB, "u2", at: 3))
            #expect(try store.devices(userID: "u2") == [again])
        case .removalByUserRemovesOnlyThatUsersToken:
            try store.registerDevice(device(tokenA, "u1"))
            #expect(try !store.removeDevice(userID: "u2", token: tokenA))
            #expect(try store.devices(userID: "u1").count == 1)
            #expect(try store.removeDevice(userID: "u1", token: tokenA))
            #expect(try !store.removeDevice(userID: "u1", token: tokenA))
            #expect(try store.devices(userID: "u1").isEmpty)
        case .removalByTokenRemovesItWhoeverHoldsIt:
            try store.registerDevice(device(tokenA, "u7"))
            #expect(try store.removeDevice(token: tokenA) == device(tokenA, "u7"))
            #expect(try store.removeDevice(token: tokenA) == nil)
            #expect(try store.devices(userID: "u7").isEmpty)
        case .aUserKeepsAtMostTheNewestTokens:
            let limit = DeviceRegistration.maxPerUser
            let tokens = (0...limit).map { String(format: "%064x", $0 + 1) }
            for (index, token) in tokens.enumerated() {
                try store.registerDevice(device(token, "u1", at: Int64(index)))
            }
            let kept = try store.devices(userID: "u1")
            #expect(kept.count == limit)
            #expect(kept.map(\.token) == Array(tokens.dropFirst()))  // the least recently registered went
            #expect(try store.removeDevice(token: tokens[0]) == nil)
        case .anInvalidRegistrationChangesNothing:
            for bad in [
                device("xyz", "u1"), device(tokenA.uppercased(), "u1"), device(tokenA, ""),
                DeviceRegistration(
                    token: tokenA, userID: "u1", environment: .sandbox, platform: "android", registeredAt: t0),
            ] {
                #expect(throws: StoreError.self) { try store.registerDevice(bad) }
            }
            #expect(try store.devices(userID: "u1").isEmpty)
            #expect(try store.removeDevice(token: tokenA) == nil)
        case .aRevocationOnlyMovesForwardPerUser:
            #expect(try store.tokensRevokedBefore(userID: "u1") == nil)
            #expect(try store.revokeTokens(userID: "u1", issuedBefore: t0 + 60) == t0 + 60)
            // An earlier instant changes nothing and answers the one in force.
            #expect(try store.revokeTokens(userID: "u1", issuedBefore: t0) == t0 + 60)
            #expect(try store.tokensRevokedBefore(userID: "u1") == t0 + 60)
            #expect(try store.revokeTokens(userID: "u1", issuedBefore: t0 + 120) == t0 + 120)
            #expect(try store.tokensRevokedBefore(userID: "u1") == t0 + 120)
            #expect(try store.tokensRevokedBefore(userID: "u2") == nil)
        }
    }
}

/// Versions, idempotency records, devices and token revocations outlive their store object: `open` opens the same
/// database each time.
public func checkUserRecordsSurviveAReopen(_ open: () throws -> any RuntimeStore) throws {
    let versions = UserVersions([.timeZone: 1_000, .preferences: 2_000])
    let kept = record("u1", "k", at: 0)
    do {
        let store = try open()
        try store.commit(RuntimeCommit(userID: "u1", snapshot: [1], userVersions: versions, idempotency: kept))
        try store.registerDevice(device(tokenA, "u1", .sandbox))
        _ = try store.revokeTokens(userID: "u1", issuedBefore: t0 + 5)
    }
    let reopened = try open()
    #expect(try reopened.userVersions(userID: "u1") == versions)
    #expect(try reopened.idempotencyRecord(userID: "u1", key: "k") == kept)
    #expect(try reopened.devices(userID: "u1") == [device(tokenA, "u1", .sandbox)])
    #expect(try reopened.tokensRevokedBefore(userID: "u1") == t0 + 5)
}
