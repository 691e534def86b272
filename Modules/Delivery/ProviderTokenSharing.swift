public import Models

/// A provider token as several processes of one deployment share it: the compact JWT, the key
/// that signed it, and its `iat`.
public struct SharedProviderToken: Hashable, Sendable {
    public var keyID: String
    public var jwt: String
    public var issuedAt: Instant

    public init(keyID: String, jwt: String, issuedAt: Instant) {
        self.keyID = keyID
        self.jwt = jwt
        self.issuedAt = issuedAt
    }
}

/// Where the processes of one deployment keep their one APNs provider token. APNs answers 429
/// TooManyProviderTokenUpdates when a key's token changes more often than every 20 minutes, so
/// workers that each signed their own would keep replacing one another's.
///
/// Contract: `newest` returns the token kept for the key, or nil when none is; `keep` stores
/// `token` unless the token kept for its key was issued after `cutoff`, atomically (two processes
/// keeping at once: one wins), and returns the token kept once it is done (either `token` or the
/// one that won). Both may block briefly (a database round trip) and throw when the place cannot
/// be reached; the caller then signs on its own.
public protocol ProviderTokenSharing: Sendable {
    func newest(keyID: String) throws -> SharedProviderToken?
    func keep(_ token: SharedProviderToken, unlessIssuedAfter cutoff: Instant) throws -> SharedProviderToken
}
