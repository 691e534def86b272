public import Delivery
public import Models
import PostgresNIO

/// The deployment's one APNs provider token, kept in the database every worker shares
/// (`provider_token`, one row per key id). `keep` is one conditional upsert, so two workers
/// keeping at once end with one token, the first one's.
public struct PostgresProviderTokens: ProviderTokenSharing {
    public let pool: PostgresPool

    public init(pool: PostgresPool) { self.pool = pool }

    public func newest(keyID: String) throws -> SharedProviderToken? {
        try pool.withConnection { connection in
            try pool.query(
                "SELECT jwt, issued_at FROM provider_token WHERE key_id = \(keyID)", on: connection
            ).first.map { row in
                let (jwt, issuedAt) = try row.decode((String, Int64).self)
                return SharedProviderToken(keyID: keyID, jwt: jwt, issuedAt: Instant(secondsSinceEpoch: issuedAt))
            }
        }
    }

    public func keep(_ token: SharedProviderToken, unlessIssuedAfter cutoff: Instant) throws -> SharedProviderToken {
        try pool.withConnection { connection in
            let written = try pool.query(
                """
                INSERT INTO provider_token (key_id, jwt, issued_at)
                VALUES (\(token.keyID), \(token.jwt), \(token.issuedAt.secondsSinceEpoch))
                ON CONFLICT (key_id) DO UPDATE SET jwt = excluded.jwt, issued_at = excluded.issued_at
                WHERE provider_token.issued_at <= \(cutoff.secondsSinceEpoch)
                RETURNING jwt
                """, on: connection)
            if !written.isEmpty { return token }
            let rows = try pool.query(
                "SELECT jwt, issued_at FROM provider_token WHERE key_id = \(token.keyID)", on: connection)
            guard let row = rows.first else { return token }
            let (jwt, issuedAt) = try row.decode((String, Int64).self)
            return SharedProviderToken(keyID: token.keyID, jwt: jwt, issuedAt: Instant(secondsSinceEpoch: issuedAt))
        }
    }
}
