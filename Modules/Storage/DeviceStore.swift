public import Models

/// A device's push token, registered for one user.
public struct DeviceRegistration: Hashable, Sendable {
    /// The APNs device token in lowercase hex (`DeviceRegistration.normalizedToken`).
    public var token: String
    public var userID: UserID
    public var environment: PushEnvironment
    /// `ios` for now; the field exists so other platforms need no migration.
    public var platform: String
    /// The latest registration of the token (apps register at every launch).
    public var registeredAt: Instant

    /// A user keeps at most this many devices; a registration beyond it removes the user's least
    /// recently registered token (a phone long gone, most likely).
    public static let maxPerUser = 32
    /// Token lengths accepted, in hex characters (APNs tokens are 32 bytes today; 100 bytes is
    /// the ceiling Apple has said they may grow to).
    public static let tokenLengths = 64...200
    public static let platforms: Set<String> = ["ios"]

    public init(token: String, userID: UserID, environment: PushEnvironment, platform: String, registeredAt: Instant) {
        self.token = token
        self.userID = userID
        self.environment = environment
        self.platform = platform
        self.registeredAt = registeredAt
    }

    /// The token in lowercase, or why it is not one: hex digits only (either case), an even
    /// number of them (whole bytes), `tokenLengths` long.
    public static func normalizedToken(_ text: String) -> Result<String, InvalidValue> {
        func refuse(_ problem: String) -> Result<String, InvalidValue> {
            .failure(InvalidValue(field: "token", problem: problem))
        }
        let isHex = text.utf8.allSatisfy { byte in
            (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
                || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(byte)
        }
        guard isHex else { return refuse("a device token is hex digits only (0-9, a-f)") }
        guard tokenLengths.contains(text.utf8.count) else {
            return refuse(
                "a device token is \(tokenLengths.lowerBound) to \(tokenLengths.upperBound) hex digits, "
                    + "got \(text.utf8.count)")
        }
        guard text.utf8.count.isMultiple(of: 2) else {
            return refuse("a device token is whole bytes: an even number of hex digits, got \(text.utf8.count)")
        }
        return .success(text.lowercased())
    }

    /// The first rule the registration breaks, or nil.
    public var validationError: StoreError? {
        if userID.isEmpty { return .invalidBatch(field: "userID", problem: "empty") }
        if case .failure(let error) = Self.normalizedToken(token) {
            return .invalidBatch(field: "token", problem: error.problem)
        }
        if token != token.lowercased() { return .invalidBatch(field: "token", problem: "not lowercase") }
        if !Self.platforms.contains(platform) {
            return .invalidBatch(field: "platform", problem: "\(platform) is not one of \(Self.platforms.sorted())")
        }
        return nil
    }
}

/// Where push tokens are kept: the APNs channel reads a user's devices to send, and removes a
/// token APNs answered 410 Unregistered for.
///
/// Contract (checked by the conformance suite in `Tests/StorageTests`):
/// - **One owner.** A token belongs to one user. Registering it for another user moves it there,
///   unless the registration does not take tokens from others (`takingFromOthers: false`, a
///   user's own app): then a token another user holds is left where it is, nothing is written,
///   and the registration it has is returned.
/// - **Registration** returns the registration the token had before (nil for a new token); it
///   replaces environment, platform and time. Each call is atomic. A user holds at most
///   `DeviceRegistration.maxPerUser` tokens: the registration that would pass it removes the
///   user's least recently registered one, in the same transaction. An invalid registration
///   (`validationError`) changes nothing.
/// - **Removal** by user and token removes it only when it is that user's; removal by token
///   alone removes it whoever holds it. Both report what they removed.
/// - **Listing** is the user's devices, least recently registered first (then by token).
public protocol DeviceStore: Sendable {
    @discardableResult
    func registerDevice(_ device: DeviceRegistration, takingFromOthers: Bool) throws(StoreError)
        -> DeviceRegistration?
    /// Removes the user's token; false when the user has no such token.
    @discardableResult
    func removeDevice(userID: UserID, token: String) throws(StoreError) -> Bool
    /// Removes the token whoever holds it (APNs said it is no longer valid); returns the
    /// registration removed, or nil when there was none.
    @discardableResult
    func removeDevice(token: String) throws(StoreError) -> DeviceRegistration?
    func devices(userID: UserID) throws(StoreError) -> [DeviceRegistration]
}

extension DeviceStore {
    /// Registers `device`, moving the token from another user who holds it.
    @discardableResult
    public func registerDevice(_ device: DeviceRegistration) throws(StoreError) -> DeviceRegistration? {
        try registerDevice(device, takingFromOthers: true)
    }
}
