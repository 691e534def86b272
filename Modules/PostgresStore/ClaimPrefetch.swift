import Models
import PostgresNIO
public import Storage

/// What performing a claim's rows reads for every alert (whether the user has a profile, their
/// devices and inbox counts), read once for all the claim's users in three statements instead of several round
/// trips per row. It lives as long as the claim: the next claim replaces it, and any write of
/// the worker's to one of those records drops the user's entry (`ClaimingRuntimeStore`).
struct ClaimPrefetch: Sendable {
    /// Users read, and those of them with a profile.
    var read: Set<UserID> = []
    var withProfile: Set<UserID> = []
    var devices: [UserID: [DeviceRegistration]] = [:]
    var counts: [UserID: InboxCounts] = [:]

    /// Reads the records of `users` (all three for each user, so a miss means "not prefetched").
    static func read(_ users: [UserID], knownToHaveProfile known: Set<UserID>, pool: PostgresPool)
        throws(StoreError) -> ClaimPrefetch
    {
        guard !users.isEmpty else { return ClaimPrefetch() }
        let names = users.map(\.rawValue)
        return try pool.withConnection { connection in
            var prefetch = ClaimPrefetch()
            for user in users {
                prefetch.devices[user] = []
                prefetch.counts[user] = .zero
            }
            prefetch.read = Set(users)
            prefetch.withProfile = known.intersection(users)
            let unknown = users.filter { !known.contains($0) }
            if !unknown.isEmpty {
                for row in try pool.query(
                    "SELECT user_id FROM profile WHERE user_id = ANY(\(unknown.map(\.rawValue)))", on: connection)
                {
                    prefetch.withProfile.insert(UserID(try row.decode(String.self)))
                }
            }
            let deviceRows = try pool.query(
                """
                SELECT token, user_id, environment, platform, registered_at FROM device WHERE user_id = ANY(\(names))
                ORDER BY user_id, registered_at, token COLLATE "C"
                """, on: connection)
            for row in deviceRows {
                let (token, user, environment, platform, registeredAt) = try row.decode(
                    (String, String, String, String, Int64).self)
                guard let environment = PushEnvironment(rawValue: environment) else {
                    throw StoreError.corrupt("table device, column environment: \"\(environment)\" for device \(token)")
                }
                prefetch.devices[UserID(user), default: []].append(
                    DeviceRegistration(
                        token: token, userID: UserID(user), environment: environment, platform: platform,
                        registeredAt: Instant(secondsSinceEpoch: registeredAt)))
            }
            let countRows = try pool.query(
                """
                SELECT i.user_id, COUNT(*),
                    COUNT(*) FILTER (WHERE i.seq > COALESCE(u.read_through, 0) AND i.state < 2),
                    COUNT(*) FILTER (WHERE i.seq > COALESCE(u.read_through, 0) AND i.state = 0)
                FROM inbox_item i LEFT JOIN inbox_user u ON u.user_id = i.user_id
                WHERE i.user_id = ANY(\(names)) AND i.state < 3 GROUP BY i.user_id
                """, on: connection)
            for row in countRows {
                let (user, total, unread, unseen) = try row.decode((String, Int, Int, Int).self)
                prefetch.counts[UserID(user)] = InboxCounts(total: total, unread: unread, unseen: unseen)
            }
            return prefetch
        }
    }

    /// Drops everything known of `user` (a write of the worker's changed it).
    mutating func forget(_ user: UserID) {
        read.remove(user)
        withProfile.remove(user)
        devices[user] = nil
        counts[user] = nil
    }
}
