public import Models

/// The in-memory store's user records (field-group versions, idempotency records, social event
/// ids, devices, token revocations): a value inside the store's locked storage, so a commit writes them under the
/// same lock as the snapshot, and readers never see one without the other.
struct InMemoryUserRecords {
    private struct Slot: Hashable {
        var userID: UserID
        var key: String
    }

    private var versions: [UserID: UserVersions] = [:]
    private var idempotency: [Slot: IdempotencyRecord] = [:]
    /// Social event ids taken in, by user and id (`SocialEventStore`).
    private var socialEvents: [Slot: SocialEventRecord] = [:]
    /// By token: one owner per token.
    private var devices: [String: DeviceRegistration] = [:]
    private var tokensRevokedBefore: [UserID: Instant] = [:]

    /// The commit's part: versions merged group by group, the record stored, expired ones pruned.
    mutating func write(_ commit: RuntimeCommit) {
        if let update = commit.userVersions {
            versions[commit.userID, default: UserVersions()].millisecondsByGroup.merge(update.millisecondsByGroup) {
                _, new in new
            }
        }
        if let record = commit.idempotency {
            let cutoff = record.createdAt - IdempotencyRecord.retentionSeconds
            let expired = idempotency.filter { $0.value.createdAt < cutoff }
                .sorted {
                    ($0.value.createdAt, $0.key.userID, $0.key.key) < ($1.value.createdAt, $1.key.userID, $1.key.key)
                }
                .prefix(IdempotencyRecord.prunedPerCommit)
            for (slot, _) in expired { idempotency[slot] = nil }
            idempotency[Slot(userID: record.userID, key: record.key)] = record
        }
        if let record = commit.socialEvent { write(record) }
    }

    /// A social event's record: expired ones pruned, the record kept unless a live one holds its id.
    private mutating func write(_ record: SocialEventRecord) {
        let expired = socialEvents.filter { $0.value.expiresAt <= record.seenAt }
            .sorted {
                ($0.value.expiresAt, $0.key.userID, $0.key.key) < ($1.value.expiresAt, $1.key.userID, $1.key.key)
            }
            .prefix(SocialEventRecord.prunedPerCommit)
        for (slot, _) in expired { socialEvents[slot] = nil }
        let slot = Slot(userID: record.userID, key: record.eventID)
        if socialEvents[slot]?.isLive(at: record.seenAt) != true { socialEvents[slot] = record }
    }

    func socialEventRecord(userID: UserID, eventID: String) -> SocialEventRecord? {
        socialEvents[Slot(userID: userID, key: eventID)]
    }

    var socialEventRecordCount: Int { socialEvents.count }

    func userVersions(userID: UserID) -> UserVersions? { versions[userID] }

    func idempotencyRecord(userID: UserID, key: String) -> IdempotencyRecord? {
        idempotency[Slot(userID: userID, key: key)]
    }

    var idempotencyRecordCount: Int { idempotency.count }

    mutating func registerDevice(_ device: DeviceRegistration, takingFromOthers: Bool) -> DeviceRegistration? {
        if !takingFromOthers, let held = devices[device.token], held.userID != device.userID { return held }
        let previous = devices.updateValue(device, forKey: device.token)
        let owned = devices(userID: device.userID)
        if owned.count > DeviceRegistration.maxPerUser, let oldest = owned.first {
            devices[oldest.token] = nil
        }
        return previous
    }

    mutating func removeDevice(userID: UserID, token: String) -> Bool {
        guard devices[token]?.userID == userID else { return false }
        devices[token] = nil
        return true
    }

    mutating func removeDevice(token: String) -> DeviceRegistration? { devices.removeValue(forKey: token) }

    mutating func revokeTokens(userID: UserID, issuedBefore instant: Instant) -> Instant {
        let inForce = max(tokensRevokedBefore[userID] ?? instant, instant)
        tokensRevokedBefore[userID] = inForce
        return inForce
    }

    func tokensRevokedBefore(userID: UserID) -> Instant? { tokensRevokedBefore[userID] }

    func devices(userID: UserID) -> [DeviceRegistration] {
        devices.values.filter { $0.userID == userID }.sorted {
            ($0.registeredAt, $0.token) < ($1.registeredAt, $1.token)
        }
    }
}

extension InMemoryEngagementStore {
    public func userVersions(userID: UserID) throws(StoreError) -> UserVersions? {
        lockedUserRecords { $0.userVersions(userID: userID) }
    }

    public func idempotencyRecord(userID: UserID, key: String) throws(StoreError) -> IdempotencyRecord? {
        lockedUserRecords { $0.idempotencyRecord(userID: userID, key: key) }
    }

    public func idempotencyRecordCount() throws(StoreError) -> Int { lockedUserRecords { $0.idempotencyRecordCount } }

    public func socialEventRecord(userID: UserID, eventID: String) throws(StoreError) -> SocialEventRecord? {
        lockedUserRecords { $0.socialEventRecord(userID: userID, eventID: eventID) }
    }

    public func socialEventRecordCount() throws(StoreError) -> Int {
        lockedUserRecords { $0.socialEventRecordCount }
    }

    public func registerDevice(_ device: DeviceRegistration, takingFromOthers: Bool) throws(StoreError)
        -> DeviceRegistration?
    {
        if let error = device.validationError { throw error }
        return lockedUserRecords { $0.registerDevice(device, takingFromOthers: takingFromOthers) }
    }

    public func removeDevice(userID: UserID, token: String) throws(StoreError) -> Bool {
        lockedUserRecords { $0.removeDevice(userID: userID, token: token) }
    }

    public func removeDevice(token: String) throws(StoreError) -> DeviceRegistration? {
        lockedUserRecords { $0.removeDevice(token: token) }
    }

    public func devices(userID: UserID) throws(StoreError) -> [DeviceRegistration] {
        lockedUserRecords { $0.devices(userID: userID) }
    }

    /// Always ready: memory answers, and there is no schema.
    public func checkReady() throws(StoreError) {}

    public func revokeTokens(userID: UserID, issuedBefore instant: Instant) throws(StoreError) -> Instant {
        lockedUserRecords { $0.revokeTokens(userID: userID, issuedBefore: instant) }
    }

    public func tokensRevokedBefore(userID: UserID) throws(StoreError) -> Instant? {
        lockedUserRecords { $0.tokensRevokedBefore(userID: userID) }
    }
}
