import Engagement
public import Models
public import Storage

/// What `putUser(_:)` with an update did: the user as it stands and which version of each
/// field group stands.
public struct UserPutResult: Hashable, Sendable {
    public var profile: UserProfile
    public var created: Bool
    public var versions: UserVersions
    /// The groups of the write that now stand, and those ignored because a newer write stands.
    public var applied: Set<UserFieldGroup>
    public var stale: Set<UserFieldGroup>
}

/// Users with last-write-wins per field group, and their devices.
extension EngineRuntime {
    /// How far after the runtime's clock a writer's `updatedAt` may be. A stamp far in the future
    /// would win over every real write until then; one this far is a broken clock, refused.
    public static let maxUpdateAheadSeconds: Int64 = .secondsPerDay

    /// Writes the update's field groups that are newer than what is stored (`UserMerge`), in one
    /// commit with their versions; creates the user when unknown. A write with nothing newer
    /// commits nothing. Writes of one user are merged one at a time, each on what the previous
    /// one committed.
    public func putUser(_ update: UserUpdate) async throws(RuntimeError) -> UserPutResult {
        let gateKey = "user\u{1F}" + update.proposed.id.rawValue
        await writeGate.acquire(gateKey)
        defer { writeGate.release(gateKey) }
        let now = clock.now()
        let nowMilliseconds = now.secondsSinceEpoch * 1_000
        let stamp = update.updatedAtMilliseconds ?? nowMilliseconds
        guard stamp <= nowMilliseconds + Self.maxUpdateAheadSeconds * 1_000 else {
            throw .invalidInput(
                field: "updatedAt",
                problem: "more than \(Self.maxUpdateAheadSeconds / .secondsPerHour) hours after the server's clock "
                    + "(\(now.iso8601)); check the writer's clock")
        }
        let userID = update.proposed.id
        let stored = try engine(of: userID)?.profile
        var versions = UserVersions()
        if stored != nil {
            do { versions = try store.userVersions(userID: userID) ?? UserVersions() } catch { throw .store(error) }
        }
        let outcome = UserMerge.merge(stored: stored, versions: versions, update: update, stampMilliseconds: stamp)
        var created = false
        if stored == nil || outcome.profile != stored || outcome.versions != versions {
            created = try await putProfile(outcome.profile, versions: outcome.versions)
        }
        return UserPutResult(
            profile: outcome.profile, created: created, versions: outcome.versions, applied: outcome.applied,
            stale: outcome.stale)
    }

    /// The field-group versions of a known user (empty for one never written with versions).
    public func userVersions(of userID: UserID) throws(RuntimeError) -> UserVersions {
        guard try engine(of: userID) != nil else { throw .unknownUser(userID) }
        do { return try store.userVersions(userID: userID) ?? UserVersions() } catch { throw .store(error) }
    }

    /// A known user's profile as stored, and the version of each of its field groups (empty for
    /// one never written with versions). Read under the user's write gate, as `putUser` writes:
    /// a write being committed is either wholly in the answer or not at all (the engine's cache
    /// holds a new profile before its versions are in the store).
    public func storedUser(_ userID: UserID) async throws(RuntimeError) -> (
        profile: UserProfile, versions: UserVersions
    ) {
        let gateKey = "user\u{1F}" + userID.rawValue
        await writeGate.acquire(gateKey)
        defer { writeGate.release(gateKey) }
        guard let profile = try engine(of: userID)?.profile else { throw .unknownUser(userID) }
        do { return (profile, try store.userVersions(userID: userID) ?? UserVersions()) } catch { throw .store(error) }
    }

    // MARK: - Devices

    /// Registers a push token (hex, either case; stored lowercase) for a known user, moving it
    /// from any other user unless `takingFromOthers` is false (the user's own app: a token
    /// another user holds is then refused, `heldByAnotherUser`, so one user's app cannot take
    /// another's pushes). Returns the registration and whether the token is new to this user.
    public func registerDevice(
        token: String, environment: PushEnvironment, platform: String, for userID: UserID,
        takingFromOthers: Bool = true
    ) throws(RuntimeError) -> (registration: DeviceRegistration, isNew: Bool) {
        let normalized: String
        switch DeviceRegistration.normalizedToken(token) {
        case .success(let value): normalized = value
        case .failure(let error): throw .invalidInput(field: error.field, problem: error.problem)
        }
        guard DeviceRegistration.platforms.contains(platform) else {
            throw .invalidInput(
                field: "platform", problem: "\"\(platform)\" is not one of \(DeviceRegistration.platforms.sorted())")
        }
        guard try engine(of: userID) != nil else { throw .unknownUser(userID) }
        let registration = DeviceRegistration(
            token: normalized, userID: userID, environment: environment, platform: platform, registeredAt: clock.now())
        let previous: DeviceRegistration?
        do { previous = try store.registerDevice(registration, takingFromOthers: takingFromOthers) } catch {
            throw .store(error)
        }
        if !takingFromOthers, let previous, previous.userID != userID { throw .heldByAnotherUser("the device token") }
        return (registration, previous?.userID != userID)
    }

    /// Removes the user's token (either case); false when the user has no such token.
    public func removeDevice(token: String, of userID: UserID) throws(RuntimeError) -> Bool {
        guard try engine(of: userID) != nil else { throw .unknownUser(userID) }
        do { return try store.removeDevice(userID: userID, token: token.lowercased()) } catch { throw .store(error) }
    }

    /// Removes a token whoever holds it: for the push channel when APNs answers 410 Unregistered.
    @discardableResult
    public func removeDevice(token: String) throws(RuntimeError) -> DeviceRegistration? {
        do { return try store.removeDevice(token: token.lowercased()) } catch { throw .store(error) }
    }

    /// The user's devices, least recently registered first.
    public func devices(of userID: UserID) throws(RuntimeError) -> [DeviceRegistration] {
        try requireUser(userID)
        do { return try store.devices(userID: userID) } catch { throw .store(error) }
    }
}

// MARK: - User tokens

extension EngineRuntime {
    /// Refuses the known user's tokens issued before `instant` (by default, every token issued so
    /// far: the next second, as tokens carry whole seconds); returns the instant in force, which
    /// only moves forward (`TokenRevocationStore`).
    public func revokeUserTokens(of userID: UserID, issuedBefore instant: Instant? = nil) throws(RuntimeError)
        -> Instant
    {
        try requireUser(userID)
        do {
            return try store.revokeTokens(userID: userID, issuedBefore: instant ?? clock.now() + 1)
        } catch {
            throw .store(error)
        }
    }

    /// The instant before which the user's tokens are refused, or nil. Read on every request a
    /// user token signs, off the actor: the store serialises its own access.
    public nonisolated func userTokensRevokedBefore(of userID: UserID) throws(RuntimeError) -> Instant? {
        do { return try store.tokensRevokedBefore(userID: userID) } catch { throw .store(error) }
    }
}

// MARK: - Readiness

extension EngineRuntime {
    /// Returns when the store answers and its schema is this build's (`RuntimeStore.checkReady`).
    public nonisolated func checkStoreReady() throws(StoreError) { try store.checkReady() }
}
