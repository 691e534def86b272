public import Models
import NIOCore
import PostgresNIO
public import Storage

/// `UserVersionStore`, `IdempotencyStore` and `DeviceStore` on PostgreSQL (schema step 4), and
/// `TokenRevocationStore` (step 7).
/// Versions and idempotency records are written inside the commit's transaction; each device
/// call is a transaction of its own, holding the user's device lock so two registrations in two
/// processes cannot both keep a user past `DeviceRegistration.maxPerUser`.
extension PostgresRuntimeStore {
    /// The first key of the two-key advisory locks on a user's devices ("DEV1" in ASCII).
    static let deviceLockSpace: Int32 = 0x4445_5631

    /// The commit's versions, idempotency record and social event record
    /// (`PostgresRuntimeStore+SocialEvents.swift`), inside the commit's transaction.
    static func writeUserRecords(_ commit: RuntimeCommit, _ session: PostgresSession) throws {
        try writeSocialEvent(commit.socialEvent, session)
        if let versions = commit.userVersions {
            for (group, milliseconds) in versions.millisecondsByGroup.sorted(by: { $0.key.rawValue < $1.key.rawValue })
            {
                try session.execute(
                    """
                    INSERT INTO user_version (user_id, field_group, updated_at_millis)
                    VALUES (\(commit.userID.rawValue), \(group.rawValue), \(milliseconds))
                    ON CONFLICT (user_id, field_group) DO UPDATE SET updated_at_millis = excluded.updated_at_millis
                    """)
            }
        }
        if let record = commit.idempotency {
            // Oldest first, at most `prunedPerCommit`; rows another transaction is pruning are
            // skipped rather than waited for.
            try session.execute(
                """
                DELETE FROM idempotency_record WHERE (user_id, key) IN (
                    SELECT user_id, key FROM idempotency_record
                    WHERE created_at < \((record.createdAt - IdempotencyRecord.retentionSeconds).secondsSinceEpoch)
                    ORDER BY created_at, user_id COLLATE "C", key COLLATE "C"
                    LIMIT \(IdempotencyRecord.prunedPerCommit) FOR UPDATE SKIP LOCKED)
                """)
            try session.execute(
                """
                INSERT INTO idempotency_record (user_id, key, request_hash, status, response, created_at)
                VALUES (\(record.userID.rawValue), \(record.key), \(record.requestHash), \(record.status),
                    \(PostgresColumns.bytea(record.response)), \(record.createdAt.secondsSinceEpoch))
                ON CONFLICT (user_id, key) DO UPDATE SET request_hash = excluded.request_hash,
                    status = excluded.status, response = excluded.response, created_at = excluded.created_at
                """)
        }
    }

    public func userVersions(userID: UserID) throws(StoreError) -> UserVersions? {
        let rows = try pool.reading { session in
            try session.rows(
                "SELECT field_group, updated_at_millis FROM user_version WHERE user_id = \(userID.rawValue)"
            ).map {
                row throws(StoreError) in
                try PostgresColumns.decode(row, as: (String, Int64).self, table: "user_version")
            }
        }
        guard !rows.isEmpty else { return nil }
        var versions = UserVersions()
        for (name, milliseconds) in rows {
            guard let group = UserFieldGroup(rawValue: name) else {
                throw PostgresColumns.unknownValue(
                    name, table: "user_version", column: "field_group", row: "a version of user \(userID)")
            }
            versions[group] = milliseconds
        }
        return versions
    }

    public func idempotencyRecord(userID: UserID, key: String) throws(StoreError) -> IdempotencyRecord? {
        try pool.reading { session in
            try session.rows(
                """
                SELECT request_hash, status, response, created_at FROM idempotency_record
                WHERE user_id = \(userID.rawValue) AND key = \(key)
                """
            ).first.map { row throws(StoreError) in
                let (requestHash, status, response, createdAt) = try PostgresColumns.decode(
                    row, as: (String, Int, ByteBuffer, Int64).self, table: "idempotency_record")
                return IdempotencyRecord(
                    userID: userID, key: key, requestHash: requestHash, status: status,
                    response: PostgresColumns.bytes(response), createdAt: Instant(secondsSinceEpoch: createdAt))
            }
        }
    }

    public func idempotencyRecordCount() throws(StoreError) -> Int {
        try pool.reading { session in
            try session.rows("SELECT COUNT(*) FROM idempotency_record").first.map { row throws(StoreError) in
                try PostgresColumns.decode(row, as: Int.self, table: "idempotency_record")
            } ?? 0
        }
    }

    @discardableResult
    public func registerDevice(_ device: DeviceRegistration, takingFromOthers: Bool) throws(StoreError)
        -> DeviceRegistration?
    {
        if let error = device.validationError { throw error }
        return try pool.writing { session in
            try session.execute(
                "SELECT pg_advisory_xact_lock(\(Self.deviceLockSpace), hashtext(\(device.userID.rawValue)))")
            let previous = try session.rows(
                "SELECT user_id, environment, platform, registered_at FROM device WHERE token = \(device.token) FOR UPDATE"
            ).first.map { row throws(StoreError) in try Self.registration(row, token: device.token) }
            // Not taking from others, the write is skipped for a token another user holds (read
            // above, or registered first between the read and the write: the lock is per user),
            // no row comes back, and the registration that holds it is answered.
            let written = try session.rows(
                """
                INSERT INTO device (token, user_id, environment, platform, registered_at)
                VALUES (\(device.token), \(device.userID.rawValue), \(device.environment.rawValue), \(device.platform),
                    \(device.registeredAt.secondsSinceEpoch))
                ON CONFLICT (token) DO UPDATE SET user_id = excluded.user_id, environment = excluded.environment,
                    platform = excluded.platform, registered_at = excluded.registered_at
                WHERE \(takingFromOthers) OR device.user_id = excluded.user_id
                RETURNING token
                """)
            if written.isEmpty {
                if let previous { return previous }
                return try session.rows(
                    "SELECT user_id, environment, platform, registered_at FROM device WHERE token = \(device.token)"
                ).first.map { row throws(StoreError) in try Self.registration(row, token: device.token) }
            }
            // Past the limit: the user's least recently registered token goes.
            try session.execute(
                """
                DELETE FROM device WHERE token IN (
                    SELECT token FROM device WHERE user_id = \(device.userID.rawValue)
                    ORDER BY registered_at, token COLLATE "C"
                    LIMIT GREATEST(0, (SELECT COUNT(*) FROM device WHERE user_id = \(device.userID.rawValue))
                        - \(DeviceRegistration.maxPerUser)))
                """)
            return previous
        }
    }

    @discardableResult
    public func removeDevice(userID: UserID, token: String) throws(StoreError) -> Bool {
        try pool.writing { session in
            try !session.rows(
                "DELETE FROM device WHERE token = \(token) AND user_id = \(userID.rawValue) RETURNING token"
            )
            .isEmpty
        }
    }

    @discardableResult
    public func removeDevice(token: String) throws(StoreError) -> DeviceRegistration? {
        try pool.writing { session in
            try session.rows(
                "DELETE FROM device WHERE token = \(token) RETURNING user_id, environment, platform, registered_at"
            ).first.map { row throws(StoreError) in try Self.registration(row, token: token) }
        }
    }

    public func revokeTokens(userID: UserID, issuedBefore instant: Instant) throws(StoreError) -> Instant {
        try pool.writing { session in
            try session.rows(
                """
                INSERT INTO token_revocation (user_id, issued_before) VALUES (\(userID.rawValue), \(instant.secondsSinceEpoch))
                ON CONFLICT (user_id) DO UPDATE
                SET issued_before = GREATEST(token_revocation.issued_before, excluded.issued_before)
                RETURNING issued_before
                """
            ).first.map { row throws(StoreError) in
                Instant(
                    secondsSinceEpoch: try PostgresColumns.decode(row, as: Int64.self, table: "token_revocation"))
            } ?? instant
        }
    }

    public func checkReady() throws(StoreError) {
        let found = try PostgresSchema.recordedVersion(pool)
        let expected = PostgresSchema.version
        if found > expected { throw .newerSchema(found: found, supported: expected) }
        if found < expected { throw .olderSchema(found: found, expected: expected) }
    }

    public func tokensRevokedBefore(userID: UserID) throws(StoreError) -> Instant? {
        try pool.reading { session in
            try session.rows("SELECT issued_before FROM token_revocation WHERE user_id = \(userID.rawValue)").first.map
            {
                row throws(StoreError) in
                Instant(
                    secondsSinceEpoch: try PostgresColumns.decode(row, as: Int64.self, table: "token_revocation"))
            }
        }
    }

    public func devices(userID: UserID) throws(StoreError) -> [DeviceRegistration] {
        try pool.reading { session in
            try session.rows(
                """
                SELECT token, user_id, environment, platform, registered_at FROM device WHERE user_id = \(userID.rawValue)
                ORDER BY registered_at, token COLLATE "C"
                """
            ).map { row throws(StoreError) in
                let (token, owner, environment, platform, registeredAt) = try PostgresColumns.decode(
                    row, as: (String, String, String, String, Int64).self, table: "device")
                return try Self.registration(
                    token: token, userID: UserID(owner), environment: environment, platform: platform,
                    registeredAt: registeredAt)
            }
        }
    }

    /// A row of `user_id, environment, platform, registered_at` for `token`.
    private static func registration(_ row: PostgresRow, token: String) throws(StoreError) -> DeviceRegistration {
        let (userID, environment, platform, registeredAt) = try PostgresColumns.decode(
            row, as: (String, String, String, Int64).self, table: "device")
        return try registration(
            token: token, userID: UserID(userID), environment: environment, platform: platform,
            registeredAt: registeredAt)
    }

    private static func registration(
        token: String, userID: UserID, environment: String, platform: String, registeredAt: Int64
    ) throws(StoreError) -> DeviceRegistration {
        guard let environment = PushEnvironment(rawValue: environment) else {
            throw PostgresColumns.unknownValue(
                environment, table: "device", column: "environment", row: "device \(token)")
        }
        return DeviceRegistration(
            token: token, userID: userID, environment: environment, platform: platform,
            registeredAt: Instant(secondsSinceEpoch: registeredAt))
    }
}
