import Foundation
public import Models
import PostgresNIO
public import Storage

/// `EngagementStore` on PostgreSQL: profiles, activity, the ledger and engagement states
/// (schema step 1). Replays are no-ops through `ledger_key` and `activity_event`'s primary key;
/// `user_activity` is updated by the same statement that inserts an event, so two processes
/// adding events for one user never lose a count.
extension PostgresRuntimeStore {
    public func apply(_ batch: StoreBatch) throws(StoreError) {
        if let error = batch.validationError { throw error }
        if batch.isEmpty { return }
        let profiles = try ProfileJSON.encode(batch.profiles)
        try pool.writing { session in try Self.writeBatch(batch, profiles: profiles, session) }
    }

    /// The batch's rows, inside the caller's transaction.
    static func writeBatch(_ batch: StoreBatch, profiles: [ProfileJSON], _ session: PostgresSession) throws {
        for profile in profiles {
            try session.execute(
                """
                INSERT INTO profile (user_id, json) VALUES (\(profile.userID.rawValue), \(profile.json))
                ON CONFLICT (user_id) DO UPDATE SET json = excluded.json
                """)
        }
        for event in batch.activityEvents {
            let columns = ActivityKindColumns.encode(event.kind)
            let at = event.at.secondsSinceEpoch
            try session.execute(
                """
                WITH inserted AS (
                    INSERT INTO activity_event (user_id, at, kind, detail)
                    VALUES (\(event.userID.rawValue), \(at), \(columns.name), \(columns.detail))
                    ON CONFLICT DO NOTHING RETURNING user_id, at)
                INSERT INTO user_activity (user_id, last_active_at, event_count) SELECT user_id, at, 1 FROM inserted
                ON CONFLICT (user_id) DO UPDATE SET
                    last_active_at = GREATEST(user_activity.last_active_at, excluded.last_active_at),
                    event_count = user_activity.event_count + 1
                """)
        }
        for entry in batch.ledgerEntries {
            // NULL stands for the conventional key, as in the SQLite store.
            let storedKey: String? =
                entry.idempotencyKey == LedgerEntry.transitionKey(requestID: entry.requestID, state: entry.state)
                ? nil : entry.idempotencyKey
            try session.execute(
                """
                WITH fresh AS (
                    INSERT INTO ledger_key (user_id, idempotency_key, at)
                    VALUES (\(entry.userID.rawValue), \(entry.idempotencyKey), \(entry.at.secondsSinceEpoch))
                    ON CONFLICT DO NOTHING RETURNING user_id)
                INSERT INTO ledger (user_id, request_id, kind, state, at, reason, idempotency_key)
                SELECT user_id, \(entry.requestID.rawValue), \(entry.kind.rawValue), \(entry.state.rawValue),
                    \(entry.at.secondsSinceEpoch), \(entry.reason?.rawValue), \(storedKey)
                FROM fresh
                ON CONFLICT (user_id, request_id) DO UPDATE SET kind = excluded.kind, state = excluded.state,
                    at = excluded.at, reason = excluded.reason, idempotency_key = excluded.idempotency_key
                """)
        }
        try pruneLedger(after: batch.ledgerEntries, session)
        for state in batch.engagementStates {
            try session.execute(
                """
                INSERT INTO engagement_state
                    (user_id, lapse_stage, re_engagement_attempts, campaign_started_at, checkpoint)
                VALUES (\(state.userID.rawValue), \(state.lapseStage), \(state.reEngagementAttempts),
                    \(state.campaignStartedAt?.secondsSinceEpoch), \(state.checkpoint))
                ON CONFLICT (user_id) DO UPDATE SET lapse_stage = excluded.lapse_stage,
                    re_engagement_attempts = excluded.re_engagement_attempts,
                    campaign_started_at = excluded.campaign_started_at, checkpoint = excluded.checkpoint
                """)
        }
    }

    // MARK: - Reads

    public func profile(id: UserID) throws(StoreError) -> UserProfile? {
        let json = try pool.reading { session in
            try session.rows("SELECT json FROM profile WHERE user_id = \(id.rawValue)").first.map {
                row throws(StoreError) in
                try PostgresColumns.decode(row, as: String.self, table: "profile")
            }
        }
        guard let json else { return nil }
        do {
            return try JSONDecoder().decode(UserProfile.self, from: Data(json.utf8))
        } catch {
            throw .corrupt("table profile, column json: the profile of \(id) does not decode: \(error)")
        }
    }

    public func activityEvents(userID: UserID, since: Instant) throws(StoreError) -> [ActivityEvent] {
        try pool.reading { session in
            try session.rows(
                """
                SELECT at, kind, detail FROM activity_event
                WHERE user_id = \(userID.rawValue) AND at >= \(since.secondsSinceEpoch) ORDER BY at, seq
                """
            ).map { row throws(StoreError) in
                let (at, name, detail) = try PostgresColumns.decode(
                    row, as: (Int64, String, String).self, table: "activity_event")
                guard let kind = ActivityKindColumns.decode(name: name, detail: detail) else {
                    throw PostgresColumns.unknownValue(
                        "\(name)(\(detail))", table: "activity_event", column: "kind",
                        row: "an event of \(userID)")
                }
                return ActivityEvent(userID: userID, at: Instant(secondsSinceEpoch: at), kind: kind)
            }
        }
    }

    public func lastActiveAt(userID: UserID) throws(StoreError) -> Instant? {
        try pool.reading { session in
            try session.rows("SELECT last_active_at FROM user_activity WHERE user_id = \(userID.rawValue)").first.map {
                row throws(StoreError) in
                Instant(secondsSinceEpoch: try PostgresColumns.decode(row, as: Int64.self, table: "user_activity"))
            }
        }
    }

    public func usersInactive(since: Instant) throws(StoreError) -> [UserID] {
        // Sorted in Swift, like the other stores: the contract's order is Swift's.
        try pool.reading { session in
            try session.rows(
                "SELECT user_id FROM user_activity WHERE last_active_at < \(since.secondsSinceEpoch)"
            ).map { row throws(StoreError) in
                UserID(try PostgresColumns.decode(row, as: String.self, table: "user_activity"))
            }
        }.sorted()
    }

    public func ledger(userID: UserID, from: Instant, to: Instant) throws(StoreError) -> [LedgerEntry] {
        try pool.reading { session in
            try session.rows(
                """
                SELECT request_id, kind, state, at, reason, idempotency_key FROM ledger
                WHERE user_id = \(userID.rawValue) AND at >= \(from.secondsSinceEpoch) AND at < \(to.secondsSinceEpoch)
                ORDER BY at, request_id COLLATE "C"
                """
            ).map { row throws(StoreError) in try Self.ledgerEntry(row, userID: userID) }
        }
    }

    public func engagementState(userID: UserID) throws(StoreError) -> EngagementState? {
        try pool.reading { session in
            try session.rows(
                """
                SELECT lapse_stage, re_engagement_attempts, campaign_started_at, checkpoint FROM engagement_state
                WHERE user_id = \(userID.rawValue)
                """
            ).first.map { row throws(StoreError) in
                let (stage, attempts, campaignStartedAt, checkpoint) = try PostgresColumns.decode(
                    row, as: (String, Int, Int64?, String?).self, table: "engagement_state")
                return EngagementState(
                    userID: userID, lapseStage: stage, reEngagementAttempts: attempts,
                    campaignStartedAt: campaignStartedAt.map(Instant.init(secondsSinceEpoch:)),
                    checkpoint: checkpoint)
            }
        }
    }

    private static func ledgerEntry(_ row: PostgresRow, userID: UserID) throws(StoreError) -> LedgerEntry {
        let (requestID, kindName, stateName, at, reasonName, storedKey) = try PostgresColumns.decode(
            row, as: (String, String, String, Int64, String?, String?).self, table: "ledger")
        let described = "the row (\(userID), \(requestID))"
        guard let kind = NotificationKind(rawValue: kindName) else {
            throw PostgresColumns.unknownValue(kindName, table: "ledger", column: "kind", row: described)
        }
        guard let state = LedgerState(rawValue: stateName) else {
            throw PostgresColumns.unknownValue(stateName, table: "ledger", column: "state", row: described)
        }
        var reason: ReasonCode?
        if let reasonName {
            guard let known = ReasonCode(rawValue: reasonName) else {
                throw PostgresColumns.unknownValue(reasonName, table: "ledger", column: "reason", row: described)
            }
            reason = known
        }
        let request = RequestID(requestID)
        return LedgerEntry(
            userID: userID, requestID: request, kind: kind, state: state, at: Instant(secondsSinceEpoch: at),
            reason: reason,
            idempotencyKey: storedKey ?? LedgerEntry.transitionKey(requestID: request, state: state))
    }
}

/// A profile as the JSON the `profile` table keeps, checked to read back unchanged: a profile
/// that would fail to decode later (an unknown time zone, say) is refused before anything is
/// written, as in the SQLite store.
struct ProfileJSON {
    var userID: UserID
    var json: String

    static func encode(_ profiles: [UserProfile]) throws(StoreError) -> [ProfileJSON] {
        guard !profiles.isEmpty else { return [] }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let decoder = JSONDecoder()
        var encoded: [ProfileJSON] = []
        encoded.reserveCapacity(profiles.count)
        for (index, profile) in profiles.enumerated() {
            let data: Data
            let readBack: UserProfile
            do {
                data = try encoder.encode(profile)
                readBack = try decoder.decode(UserProfile.self, from: data)
            } catch {
                throw .invalidBatch(field: "profiles[\(index)]", problem: "would not read back: \(error)")
            }
            guard readBack == profile else {
                throw .invalidBatch(field: "profiles[\(index)]", problem: "does not read back unchanged")
            }
            encoded.append(ProfileJSON(userID: profile.id, json: String(decoding: data, as: UTF8.self)))
        }
        return encoded
    }
}
