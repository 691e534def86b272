import Foundation
import GRDB
public import Models

extension SQLiteSchema {
    /// Migration `v4-users`: field-group versions, idempotency records and devices.
    static let version4Users = """
        -- One row per (user, field group) ever written; a group without a row holds its default.
        CREATE TABLE userVersion (
            userID TEXT NOT NULL,
            fieldGroup TEXT NOT NULL,
            updatedAtMillis INTEGER NOT NULL,
            PRIMARY KEY (userID, fieldGroup)
        ) STRICT, WITHOUT ROWID;

        -- The first answer of each keyed request, written with the input it applied.
        CREATE TABLE idempotencyRecord (
            userID TEXT NOT NULL,
            key TEXT NOT NULL,
            requestHash TEXT NOT NULL,
            status INTEGER NOT NULL,
            response BLOB NOT NULL,
            createdAt INTEGER NOT NULL,
            PRIMARY KEY (userID, key)
        ) STRICT, WITHOUT ROWID;
        -- Pruning takes the oldest first.
        CREATE INDEX idempotencyRecord_createdAt ON idempotencyRecord (createdAt);

        -- Push tokens, one owner each.
        CREATE TABLE device (
            token TEXT NOT NULL PRIMARY KEY,
            userID TEXT NOT NULL,
            environment TEXT NOT NULL,
            platform TEXT NOT NULL,
            registeredAt INTEGER NOT NULL
        ) STRICT, WITHOUT ROWID;
        CREATE INDEX device_userID ON device (userID, registeredAt);
        """

    /// Migration `v6-token-revocations`: per user, the instant before which their tokens are refused.
    static let version6TokenRevocations = """
        CREATE TABLE tokenRevocation (
            userID TEXT NOT NULL PRIMARY KEY,
            issuedBefore INTEGER NOT NULL
        ) STRICT, WITHOUT ROWID;
        """
}

/// The statements on the `v4-users` tables, named so the tests can check each one's query plan.
enum SQLiteUserStatements {
    static let upsertVersion = """
        INSERT INTO userVersion (userID, fieldGroup, updatedAtMillis) VALUES (?, ?, ?)
        ON CONFLICT (userID, fieldGroup) DO UPDATE SET updatedAtMillis = excluded.updatedAtMillis
        """
    static let selectVersions = "SELECT fieldGroup, updatedAtMillis FROM userVersion WHERE userID = ?"
    static let upsertIdempotency = """
        INSERT INTO idempotencyRecord (userID, key, requestHash, status, response, createdAt) VALUES (?, ?, ?, ?, ?, ?)
        ON CONFLICT (userID, key) DO UPDATE SET requestHash = excluded.requestHash, status = excluded.status,
            response = excluded.response, createdAt = excluded.createdAt
        """
    static let pruneIdempotency = """
        DELETE FROM idempotencyRecord WHERE (userID, key) IN (
            SELECT userID, key FROM idempotencyRecord INDEXED BY idempotencyRecord_createdAt
            WHERE createdAt < ? ORDER BY createdAt, userID, key LIMIT ?)
        """
    static let selectIdempotency = """
        SELECT requestHash, status, response, createdAt FROM idempotencyRecord WHERE userID = ? AND key = ?
        """
    static let countIdempotency = "SELECT COUNT(*) FROM idempotencyRecord INDEXED BY idempotencyRecord_createdAt"
    static let selectDevice = "SELECT userID, environment, platform, registeredAt FROM device WHERE token = ?"
    static let upsertDevice = """
        INSERT INTO device (token, userID, environment, platform, registeredAt) VALUES (?, ?, ?, ?, ?)
        ON CONFLICT (token) DO UPDATE SET userID = excluded.userID, environment = excluded.environment,
            platform = excluded.platform, registeredAt = excluded.registeredAt
        """
    static let selectUserDevices = """
        SELECT token, environment, platform, registeredAt FROM device INDEXED BY device_userID
        WHERE userID = ? ORDER BY registeredAt, token
        """
    static let deleteDevice = "DELETE FROM device WHERE token = ?"
    /// Keeps the later instant, and answers the one in force.
    static let upsertRevocation = """
        INSERT INTO tokenRevocation (userID, issuedBefore) VALUES (?, ?)
        ON CONFLICT (userID) DO UPDATE SET issuedBefore = max(issuedBefore, excluded.issuedBefore)
        RETURNING issuedBefore
        """
    static let selectRevocation = "SELECT issuedBefore FROM tokenRevocation WHERE userID = ?"

    static let all: [(name: String, sql: String)] = [
        ("upsertVersion", upsertVersion), ("selectVersions", selectVersions), ("upsertIdempotency", upsertIdempotency),
        ("pruneIdempotency", pruneIdempotency), ("selectIdempotency", selectIdempotency),
        ("countIdempotency", countIdempotency), ("selectDevice", selectDevice), ("upsertDevice", upsertDevice),
        ("selectUserDevices", selectUserDevices), ("deleteDevice", deleteDevice),
        ("upsertRevocation", upsertRevocation), ("selectRevocation", selectRevocation),
    ]
}

/// `UserVersionStore`, `IdempotencyStore` and `DeviceStore` on SQLite (migration `v4-users`), and
/// `TokenRevocationStore` (`v6-token-revocations`).
extension SQLiteEngagementStore {
    /// The commit's versions and idempotency record, inside the commit's transaction.
    static func writeUserRecords(_ commit: RuntimeCommit, _ db: Database) throws {
        if let versions = commit.userVersions {
            let upsert = try db.cachedStatement(sql: SQLiteUserStatements.upsertVersion)
            for (group, milliseconds) in versions.millisecondsByGroup.sorted(by: { $0.key.rawValue < $1.key.rawValue })
            {
                try upsert.execute(arguments: [commit.userID.rawValue, group.rawValue, milliseconds])
            }
        }
        if let record = commit.idempotency {
            try db.cachedStatement(sql: SQLiteUserStatements.pruneIdempotency).execute(arguments: [
                (record.createdAt - IdempotencyRecord.retentionSeconds).secondsSinceEpoch,
                IdempotencyRecord.prunedPerCommit,
            ])
            try db.cachedStatement(sql: SQLiteUserStatements.upsertIdempotency).execute(arguments: [
                record.userID.rawValue, record.key, record.requestHash, record.status, Data(record.response),
                record.createdAt.secondsSinceEpoch,
            ])
        }
    }

    public func userVersions(userID: UserID) throws(StoreError) -> UserVersions? {
        let rows = try read { db in
            try Row.fetchAll(db.cachedStatement(sql: SQLiteUserStatements.selectVersions), arguments: [userID.rawValue])
                .map {
                    (try $0.decode(String.self, atIndex: 0), try $0.decode(Int64.self, atIndex: 1))
                }
        }
        guard !rows.isEmpty else { return nil }
        var versions = UserVersions()
        for (name, milliseconds) in rows {
            guard let group = UserFieldGroup(rawValue: name) else {
                throw .corrupt("\(path): user \(userID) has a version for an unknown field group \(name)")
            }
            versions[group] = milliseconds
        }
        return versions
    }

    public func idempotencyRecord(userID: UserID, key: String) throws(StoreError) -> IdempotencyRecord? {
        try read { db in
            guard
                let row = try Row.fetchOne(
                    db.cachedStatement(sql: SQLiteUserStatements.selectIdempotency), arguments: [userID.rawValue, key])
            else { return nil }
            return IdempotencyRecord(
                userID: userID, key: key, requestHash: try row.decode(String.self, atIndex: 0),
                status: try row.decode(Int.self, atIndex: 1), response: [UInt8](try row.decode(Data.self, atIndex: 2)),
                createdAt: Instant(secondsSinceEpoch: try row.decode(Int64.self, atIndex: 3)))
        }
    }

    public func idempotencyRecordCount() throws(StoreError) -> Int {
        try read { db in try Int.fetchOne(db.cachedStatement(sql: SQLiteUserStatements.countIdempotency)) ?? 0 }
    }

    public func registerDevice(_ device: DeviceRegistration, takingFromOthers: Bool) throws(StoreError)
        -> DeviceRegistration?
    {
        if let error = device.validationError { throw error }
        let path = path
        return try write { db in
            var previous: DeviceRegistration?
            try db.inTransaction(.immediate) {
                previous = try Self.device(token: device.token, db, path: path)
                if !takingFromOthers, let previous, previous.userID != device.userID { return .commit }
                try db.cachedStatement(sql: SQLiteUserStatements.upsertDevice).execute(arguments: [
                    device.token, device.userID.rawValue, device.environment.rawValue, device.platform,
                    device.registeredAt.secondsSinceEpoch,
                ])
                let owned = try Self.devices(userID: device.userID, db, path: path)
                if owned.count > DeviceRegistration.maxPerUser, let oldest = owned.first {
                    try db.cachedStatement(sql: SQLiteUserStatements.deleteDevice).execute(arguments: [oldest.token])
                }
                return .commit
            }
            return previous
        }
    }

    public func removeDevice(userID: UserID, token: String) throws(StoreError) -> Bool {
        let path = path
        return try write { db in
            var removed = false
            try db.inTransaction(.immediate) {
                if try Self.device(token: token, db, path: path)?.userID == userID {
                    try db.cachedStatement(sql: SQLiteUserStatements.deleteDevice).execute(arguments: [token])
                    removed = true
                }
                return .commit
            }
            return removed
        }
    }

    public func removeDevice(token: String) throws(StoreError) -> DeviceRegistration? {
        let path = path
        return try write { db in
            var removed: DeviceRegistration?
            try db.inTransaction(.immediate) {
                removed = try Self.device(token: token, db, path: path)
                if removed != nil {
                    try db.cachedStatement(sql: SQLiteUserStatements.deleteDevice).execute(arguments: [token])
                }
                return .commit
            }
            return removed
        }
    }

    public func devices(userID: UserID) throws(StoreError) -> [DeviceRegistration] {
        let path = path
        return try read { db in try Self.devices(userID: userID, db, path: path) }
    }

    public func revokeTokens(userID: UserID, issuedBefore instant: Instant) throws(StoreError) -> Instant {
        try write { db in
            let inForce = try Int64.fetchOne(
                db.cachedStatement(sql: SQLiteUserStatements.upsertRevocation),
                arguments: [userID.rawValue, instant.secondsSinceEpoch])
            return inForce.map(Instant.init(secondsSinceEpoch:)) ?? instant
        }
    }

    public func checkReady() throws(StoreError) {
        let found = try read { db in try Int.fetchOne(db, sql: "PRAGMA user_version") ?? 0 }
        if found > SQLiteSchema.version { throw .newerSchema(found: found, supported: SQLiteSchema.version) }
        if found < SQLiteSchema.version { throw .olderSchema(found: found, expected: SQLiteSchema.version) }
    }

    public func tokensRevokedBefore(userID: UserID) throws(StoreError) -> Instant? {
        try read { db in
            try Int64.fetchOne(
                db.cachedStatement(sql: SQLiteUserStatements.selectRevocation), arguments: [userID.rawValue]
            )
            .map(Instant.init(secondsSinceEpoch:))
        }
    }

    private static func device(token: String, _ db: Database, path: String) throws -> DeviceRegistration? {
        guard let row = try Row.fetchOne(db.cachedStatement(sql: SQLiteUserStatements.selectDevice), arguments: [token])
        else { return nil }
        return try registration(
            token: token, userID: UserID(row.decode(String.self, atIndex: 0)),
            environment: row.decode(String.self, atIndex: 1),
            platform: row.decode(String.self, atIndex: 2), registeredAt: row.decode(Int64.self, atIndex: 3), path: path)
    }

    private static func devices(userID: UserID, _ db: Database, path: String) throws -> [DeviceRegistration] {
        try Row.fetchAll(db.cachedStatement(sql: SQLiteUserStatements.selectUserDevices), arguments: [userID.rawValue])
            .map {
                row in
                try registration(
                    token: row.decode(String.self, atIndex: 0), userID: userID,
                    environment: row.decode(String.self, atIndex: 1), platform: row.decode(String.self, atIndex: 2),
                    registeredAt: row.decode(Int64.self, atIndex: 3), path: path)
            }
    }

    private static func registration(
        token: String, userID: UserID, environment: String, platform: String, registeredAt: Int64, path: String
    ) throws -> DeviceRegistration {
        guard let environment = PushEnvironment(rawValue: environment) else {
            throw StoreError.corrupt("\(path): device \(token) has environment \(environment)")
        }
        return DeviceRegistration(
            token: token, userID: userID, environment: environment, platform: platform,
            registeredAt: Instant(secondsSinceEpoch: registeredAt))
    }
}
