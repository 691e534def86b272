public import Crypto
import Foundation

/// Why the APNs credentials cannot be used. Each case says what to fix.
public enum APNsCredentialError: Error, Hashable, Sendable, CustomStringConvertible {
    case keyFileMissing(path: String)
    case keyFileUnreadable(path: String, reason: String)
    /// The file is not PEM text (an Apple `.p8` file starts with `-----BEGIN PRIVATE KEY-----`).
    case notPEM(path: String)
    /// PEM, but not an unencrypted P-256 private key.
    case notP256Key(path: String, reason: String)
    case badKeyID(String)
    case badTeamID(String)

    public var description: String {
        switch self {
        case .keyFileMissing(let path): "the APNs key file \(path) does not exist"
        case .keyFileUnreadable(let path, let reason): "the APNs key file \(path) cannot be read: \(reason)"
        case .notPEM(let path):
            "the APNs key file \(path) is not a PEM file (Apple's .p8 begins with -----BEGIN PRIVATE KEY-----)"
        case .notP256Key(let path, let reason):
            "the APNs key file \(path) does not hold a P-256 private key (Apple's APNs keys are P-256): \(reason)"
        case .badKeyID(let id):
            "the APNs key id \"\(id)\" is not 10 characters of A-Z and 0-9 (Apple's Keys page shows it)"
        case .badTeamID(let id):
            "the APNs team id \"\(id)\" is not 10 characters of A-Z and 0-9 (Apple's Membership page shows it)"
        }
    }
}

/// What signs the provider tokens: an APNs auth key (a P-256 key from Apple's `.p8` file), its
/// key id, and the team id that owns it.
public struct APNsCredentials: Sendable {
    /// `kid` in the token's header.
    public let keyID: String
    /// `iss` in the token's claims.
    public let teamID: String
    /// The key's raw scalar: swift-crypto's key type is not `Sendable`, its bytes are.
    private let rawKey: Data

    /// Credentials from a key already in memory.
    public init(privateKey: P256.Signing.PrivateKey, keyID: String, teamID: String) throws(APNsCredentialError) {
        guard Self.isAppleIdentifier(keyID) else { throw .badKeyID(keyID) }
        guard Self.isAppleIdentifier(teamID) else { throw .badTeamID(teamID) }
        self.rawKey = privateKey.rawRepresentation
        self.keyID = keyID
        self.teamID = teamID
    }

    /// Credentials from a `.p8` file (PKCS #8 PEM, as Apple hands it out; SEC 1 PEM also reads).
    public static func load(keyFile path: String, keyID: String, teamID: String) throws(APNsCredentialError)
        -> APNsCredentials
    {
        guard Self.isAppleIdentifier(keyID) else { throw .badKeyID(keyID) }
        guard Self.isAppleIdentifier(teamID) else { throw .badTeamID(teamID) }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw .keyFileMissing(path: path)
        }
        guard !isDirectory.boolValue else { throw .keyFileUnreadable(path: path, reason: "it is a folder") }
        let data: Data
        do { data = try Data(contentsOf: URL(fileURLWithPath: path)) } catch {
            throw .keyFileUnreadable(path: path, reason: error.localizedDescription)
        }
        guard let text = String(data: data, encoding: .utf8), text.contains("-----BEGIN ") else {
            throw .notPEM(path: path)
        }
        if text.contains("-----BEGIN ENCRYPTED PRIVATE KEY-----") {
            throw .notP256Key(path: path, reason: "the key is encrypted; Apple's .p8 keys are not")
        }
        let key: P256.Signing.PrivateKey
        do { key = try P256.Signing.PrivateKey(pemRepresentation: text) } catch {
            throw .notP256Key(path: path, reason: "\(error)")
        }
        return try APNsCredentials(privateKey: key, keyID: keyID, teamID: teamID)
    }

    /// The private key (made again from its bytes at each call: once per token signed).
    var privateKey: P256.Signing.PrivateKey {
        // The bytes came from a valid key, so they make one again.
        try! P256.Signing.PrivateKey(rawRepresentation: rawKey)
    }

    /// The public half, which verifies the tokens (what Apple keeps).
    public var publicKey: P256.Signing.PublicKey { privateKey.publicKey }

    /// Apple's key ids and team ids: 10 characters of A-Z and 0-9.
    public static func isAppleIdentifier(_ id: String) -> Bool {
        id.utf8.count == 10
            && id.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) }
    }
}
