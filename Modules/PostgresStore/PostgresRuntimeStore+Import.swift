import Foundation
public import Models
import PostgresNIO
public import Storage

/// One user as an import brings them in: what `putUser` and the app would have stored.
public struct ImportedUser: Sendable {
    public var profile: UserProfile
    /// The engine's snapshot (`UserEngine.snapshot()`).
    public var snapshot: [UInt8]
    /// Pending outbox rows.
    public var outbox: [OutboxRow]
    public var devices: [DeviceRegistration]

    public init(profile: UserProfile, snapshot: [UInt8], outbox: [OutboxRow], devices: [DeviceRegistration]) {
        self.profile = profile
        self.snapshot = snapshot
        self.outbox = outbox
        self.devices = devices
    }
}

extension PostgresRuntimeStore {
    /// Brings in many new users at once (a move from another store, a load test): profiles,
    /// snapshots, pending rows with their queue entries, and devices, in one transaction of a few
    /// statements, however many users. Users must be new: a user, a device token or an outbox key
    /// already stored fails the whole import (`unavailable`, PostgreSQL's own message); nothing
    /// is written before every row was checked (`invalidBatch` names the first bad field).
    public func importUsers(_ users: [ImportedUser]) throws(StoreError) {
        guard !users.isEmpty else { return }
        for (index, user) in users.enumerated() {
            let commit = RuntimeCommit(
                userID: user.profile.id, snapshot: user.snapshot, batch: StoreBatch(profiles: [user.profile]),
                outbox: user.outbox)
            if let error = commit.validationError {
                throw .invalidBatch(field: "users[\(index)] (\(user.profile.id)): \(error)", problem: "refused")
            }
            for device in user.devices {
                if let error = device.validationError { throw error }
                if device.userID != user.profile.id {
                    throw .invalidBatch(field: "users[\(index)].devices", problem: "\(device.token) is not the user's")
                }
            }
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        var profileJSON: [String] = []
        for user in users {
            guard let data = try? encoder.encode(user.profile) else {
                throw .invalidBatch(field: "profile of \(user.profile.id)", problem: "does not encode")
            }
            profileJSON.append(String(decoding: data, as: UTF8.self))
        }
        let ids = users.map(\.profile.id.rawValue)
        let rows = users.flatMap(\.outbox)
        let devices = users.flatMap(\.devices)
        let queued = users.filter { !$0.outbox.isEmpty }
        try pool.transaction { connection in
            try pool.query(
                "INSERT INTO profile (user_id, json) SELECT * FROM unnest(\(ids)::text[], \(profileJSON)::text[])",
                on: connection)
            try pool.query(
                """
                INSERT INTO engine_snapshot (user_id, bytes, version)
                SELECT u, decode(b, 'base64'), 1 FROM unnest(\(ids)::text[], \(users.map { Data($0.snapshot).base64EncodedString() })::text[]) AS s(u, b)
                """, on: connection)
            try pool.query(
                """
                INSERT INTO outbox (user_id, request_id, channel, key, due_at, payload)
                SELECT * FROM unnest(\(rows.map(\.userID.rawValue))::text[], \(rows.map(\.requestID.rawValue))::text[],
                    \(rows.map(\.channel.name))::text[], \(rows.map(\.key.rawValue))::text[],
                    \(rows.map(\.dueAt.secondsSinceEpoch))::bigint[], \(rows.map(\.payload.storedText))::text[])
                """, on: connection)
            try pool.query(
                """
                INSERT INTO work_queue (user_id, due_at)
                SELECT * FROM unnest(\(queued.map(\.profile.id.rawValue))::text[],
                    \(queued.map { $0.outbox.map(\.dueAt.secondsSinceEpoch).min()! })::bigint[])
                """, on: connection)
            try pool.query(
                """
                INSERT INTO device (token, user_id, environment, platform, registered_at)
                SELECT * FROM unnest(\(devices.map(\.token))::text[], \(devices.map(\.userID.rawValue))::text[],
                    \(devices.map(\.environment.rawValue))::text[], \(devices.map(\.platform))::text[],
                    \(devices.map(\.registeredAt.secondsSinceEpoch))::bigint[])
                """, on: connection)
        }
    }
}
