import Models
import Storage

/// The user records of the group-commit tests' store: its base's.
extension ControlledStore {
    func userVersions(userID: UserID) throws(StoreError) -> UserVersions? { try base.userVersions(userID: userID) }
    func idempotencyRecord(userID: UserID, key: String) throws(StoreError) -> IdempotencyRecord? {
        try base.idempotencyRecord(userID: userID, key: key)
    }
    func idempotencyRecordCount() throws(StoreError) -> Int { try base.idempotencyRecordCount() }
    func socialEventRecord(userID: UserID, eventID: String) throws(StoreError) -> SocialEventRecord? {
        try base.socialEventRecord(userID: userID, eventID: eventID)
    }
    func socialEventRecordCount() throws(StoreError) -> Int { try base.socialEventRecordCount() }
    func registerDevice(_ device: DeviceRegistration, takingFromOthers: Bool) throws(StoreError)
        -> DeviceRegistration?
    {
        try base.registerDevice(device, takingFromOthers: takingFromOthers)
    }
    func removeDevice(userID: UserID, token: String) throws(StoreError) -> Bool {
        try base.removeDevice(userID: userID, token: token)
    }
    func removeDevice(token: String) throws(StoreError) -> DeviceRegistration? { try base.removeDevice(token: token) }
    func devices(userID: UserID) throws(StoreError) -> [DeviceRegistration] { try base.devices(userID: userID) }
    func revokeTokens(userID: UserID, issuedBefore instant: Instant) throws(StoreError) -> Instant {
        try base.revokeTokens(userID: userID, issuedBefore: instant)
    }
    func checkReady() throws(StoreError) { try base.checkReady() }
    func tokensRevokedBefore(userID: UserID) throws(StoreError) -> Instant? {
        try base.tokensRevokedBefore(userID: userID)
    }
}
