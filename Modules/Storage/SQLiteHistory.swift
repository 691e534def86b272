import Foundation
import GRDB
public import Models

/// `EngagementStore` on SQLite: the history tables of schema v1 (profiles, activity events, the
/// ledger and its idempotency keys, engagement states), written in the caller's transaction and
/// read through the reader pool.
extension SQLiteEngagementStore {
    // MARK: - Writes

    public func apply(_ batch: StoreBatch) throws(StoreError) {
        if let error = batch.validationError { throw error }
        if batch.isEmpty { return }
        let profiles = try Self.encodeProfiles(batch.profiles)
        try write { db in
            try db.inTransaction(.immediate) {
                try Self.writeProfiles(profiles, db)
                try Self.writeActivityEvents(batch.activityEvents, db)
                try Self.writeLedgerEntries(batch.ledgerEntries, db)
                try Self.pruneLedger(after: batch.ledgerEntries, db)
                try Self.writeEngagementStates(batch.engagementStates, db)
                return .commit
            }
        }
    }

    /// Profiles as JSON, each checked to read back unchanged: a profile that would fail to
    /// decode later (say, an unknown time zone) is refused now rather than lost on read.
    static func encodeProfiles(_ profiles: [UserProfile]) throws(StoreError) -> [(String, String)] {
        guard !profiles.isEmpty else { return [] }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let decoder = JSONDecoder()
        var rows: [(String, String)] = []
        rows.reserveCapacity(profiles.count)
        for (index, profile) in profiles.enumerated() {
            do {
                let data = try encoder.encode(profile)
                guard try decoder.decode(UserProfile.self, from: data) == profile else {
                    throw StoreError.invalidBatch(field: "profiles[\(index)]", problem: "does not read back unchanged")
                }
                rows.append((profile.id.rawValue, String(decoding: data, as: UTF8.self)))
            } catch let error as StoreError {
                throw error
            } catch {
                throw .invalidBatch(field: "profiles[\(index)]", problem: "would not read back: \(error)")
            }
        }
        return rows
    }

    static func writeProfiles(_ rows: [(String, String)], _ db: Database) throws {
        guard !rows.isEmpty else { return }
        let upsert = try db.cachedStatement(sql: SQLiteStatements.upsertProfile)
        for (userID, json) in rows { try upsert.execute(arguments: [userID, json]) }
    }

    static func writeActivityEvents(_ events: [ActivityEvent], _ db: Database) throws {
        guard !events.isEmpty else { return }
        // Per user in first-seen order, each user's events in batch order: `seq` continues the
        // user's count, so equal times read back in arrival order.
        var users: [UserID] = []
        var byUser: [UserID: [ActivityEvent]] = [:]
        for event in events {
            if byUser[event.userID] == nil { users.append(event.userID) }
            byUser[event.userID, default: []].append(event)
        }
        let select = try db.cachedStatement(sql: SQLiteStatements.selectUserActivity)
        let insert = try db.cachedStatement(sql: SQLiteStatements.insertActivityEvent)
        let upsert = try db.cachedStatement(sql: SQLiteStatements.upsertUserActivity)
        for userID in users {
            var lastActiveAt: Int64?
            var count: Int64 = 0
            if let row = try Row.fetchOne(select, arguments: [userID.rawValue]) {
                lastActiveAt = try row.decode(Int64.self, atIndex: 0)
                count = try row.decode(Int64.self, atIndex: 1)
            }
            let before = count
            for event in byUser[userID] ?? [] {
                let columns = ActivityKindColumns.encode(event.kind)
                let at = event.at.secondsSinceEpoch
                try insert.execute(arguments: [userID.rawValue, at, columns.name, columns.detail, count + 1])
                if db.changesCount > 0 {
                    count += 1
                    lastActiveAt = max(lastActiveAt ?? at, at)
                }
            }
            if count > before, let lastActiveAt {
                try upsert.execute(arguments: [userID.rawValue, lastActiveAt, count])
            }
        }
    }

    static func writeLedgerEntries(_ entries: [LedgerEntry], _ db: Database) throws {
        guard !entries.isEmpty else { return }
        let insertKey = try db.cachedStatement(sql: SQLiteStatements.insertLedgerKey)
        let upsert = try db.cachedStatement(sql: SQLiteStatements.upsertLedger)
        for entry in entries {
            try insertKey.execute(arguments: [entry.userID.rawValue, entry.idempotencyKey, entry.at.secondsSinceEpoch])
            guard db.changesCount > 0 else { continue }  // already applied: a replay
            try upsert.execute(arguments: [
                entry.userID.rawValue, entry.requestID.rawValue, entry.kind.rawValue, entry.state.rawValue,
                entry.at.secondsSinceEpoch,
                entry.reason?.rawValue,
                entry.idempotencyKey == LedgerEntry.transitionKey(requestID: entry.requestID, state: entry.state)
                    ? nil : entry.idempotencyKey,
            ])
        }
    }

    static func writeEngagementStates(_ states: [EngagementState], _ db: Database) throws {
        guard !states.isEmpty else { return }
        let upsert = try db.cachedStatement(sql: SQLiteStatements.upsertEngagementState)
        for state in states {
            try upsert.execute(arguments: [
                state.userID.rawValue, state.lapseStage, state.reEngagementAttempts,
                state.campaignStartedAt?.secondsSinceEpoch,
                state.checkpoint,
            ])
        }
    }

    // MARK: - Reads

    public func profile(id: UserID) throws(StoreError) -> UserProfile? {
        let json = try read { db in
            try String.fetchOne(db.cachedStatement(sql: SQLiteStatements.selectProfile), arguments: [id.rawValue])
        }
        guard let json else { return nil }
        do {
            return try JSONDecoder().decode(UserProfile.self, from: Data(json.utf8))
        } catch {
            throw .corrupt("\(path): the profile of \(id) does not decode: \(error)")
        }
    }

    public func activityEvents(userID: UserID, since: Instant) throws(StoreError) -> [ActivityEvent] {
        try read { db in
            let statement = try db.cachedStatement(sql: SQLiteStatements.selectActivityEvents)
            let rows = try Row.fetchCursor(statement, arguments: [userID.rawValue, since.secondsSinceEpoch])
            var events: [ActivityEvent] = []
            while let row = try rows.next() {
                let at = try row.decode(Int64.self, atIndex: 0)
                let name = try row.decode(String.self, atIndex: 1)
                let detail = try row.decode(String.self, atIndex: 2)
                guard let kind = ActivityKindColumns.decode(name: name, detail: detail) else {
                    throw StoreError.corrupt("\(path): an activity event of \(userID) has kind \(name)(\(detail))")
                }
                events.append(ActivityEvent(userID: userID, at: Instant(secondsSinceEpoch: at), kind: kind))
            }
            return events
        }
    }

    public func lastActiveAt(userID: UserID) throws(StoreError) -> Instant? {
        try read { db in
            try Int64.fetchOne(
                db.cachedStatement(sql: SQLiteStatements.selectLastActiveAt), arguments: [userID.rawValue]
            ).map(Instant.init(secondsSinceEpoch:))
        }
    }

    public func usersInactive(since: Instant) throws(StoreError) -> [UserID] {
        // Sorted here, not in SQL: ordering by userID in SQL makes SQLite walk the whole table in
        // key order instead of the lastActiveAt range, and Swift's order is the contract's.
        try read { db in
            try String.fetchAll(
                db.cachedStatement(sql: SQLiteStatements.selectUsersInactive), arguments: [since.secondsSinceEpoch])
        }.map(UserID.init(rawValue:)).sorted()
    }

    public func ledger(userID: UserID, from: Instant, to: Instant) throws(StoreError) -> [LedgerEntry] {
        try read { db in
            let statement = try db.cachedStatement(sql: SQLiteStatements.selectLedger)
            let rows = try Row.fetchCursor(
                statement, arguments: [userID.rawValue, from.secondsSinceEpoch, to.secondsSinceEpoch])
            var entries: [LedgerEntry] = []
            while let row = try rows.next() {
                let requestID = RequestID(try row.decode(String.self, atIndex: 0))
                let kindName = try row.decode(String.self, atIndex: 1)
                let stateName = try row.decode(String.self, atIndex: 2)
                let reasonName = try row.decode(String?.self, atIndex: 4)
                let reason = reasonName.flatMap(ReasonCode.init(rawValue:))
                guard let kind = NotificationKind(rawValue: kindName), let state = LedgerState(rawValue: stateName),
                    (reason == nil) == (reasonName == nil)
                else {
                    throw StoreError.corrupt(
                        "\(path): ledger row (\(userID), \(requestID)) has kind \(kindName), state \(stateName), "
                            + "reason \(reasonName ?? "nil")")
                }
                entries.append(
                    LedgerEntry(
                        userID: userID, requestID: requestID, kind: kind, state: state,
                        at: Instant(secondsSinceEpoch: try row.decode(Int64.self, atIndex: 3)), reason: reason,
                        idempotencyKey: try row.decode(String?.self, atIndex: 5)
                            ?? LedgerEntry.transitionKey(requestID: requestID, state: state)))
            }
            return entries
        }
    }

    public func engagementState(userID: UserID) throws(StoreError) -> EngagementState? {
        try read { db in
            let statement = try db.cachedStatement(sql: SQLiteStatements.selectEngagementState)
            guard let row = try Row.fetchOne(statement, arguments: [userID.rawValue]) else { return nil }
            return EngagementState(
                userID: userID, lapseStage: try row.decode(String.self, atIndex: 0),
                reEngagementAttempts: try row.decode(Int.self, atIndex: 1),
                campaignStartedAt: try row.decode(Int64?.self, atIndex: 2).map(Instant.init(secondsSinceEpoch:)),
                checkpoint: try row.decode(String?.self, atIndex: 3))
        }
    }
}
