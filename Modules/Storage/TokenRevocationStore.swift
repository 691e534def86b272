public import Models

/// Per user, the instant before which their user tokens are refused: the backend's way to
/// revoke every token it has handed out for a user (a lost phone, a signed-out account) without
/// rotating a key, which would sign every other user out too.
///
/// The instant only moves forward: revoking with an earlier instant than the one in force
/// changes nothing, so two revocations in either order leave the later one.
public protocol TokenRevocationStore: Sendable {
    /// Refuses the user's tokens issued before `instant` from now on; returns the instant in
    /// force afterwards (the later of the stored one and `instant`).
    func revokeTokens(userID: UserID, issuedBefore instant: Instant) throws(StoreError) -> Instant
    /// The instant before which the user's tokens are refused, or nil when none was revoked.
    func tokensRevokedBefore(userID: UserID) throws(StoreError) -> Instant?
}
