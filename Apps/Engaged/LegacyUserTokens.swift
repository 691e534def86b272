import Crypto
import Foundation
import Hummingbird
import Models
import Synchronization

/// Deprecated user tokens, accepted only with `--legacy-user-tokens`: a user's token is the
/// lowercase hex HMAC-SHA256 of their id under `ENGAGED_USER_TOKEN_SECRET` (as Novu's subscriber
/// hash). They never expire and cannot be revoked one user at a time; `UserTokenAuthority`'s
/// signed tokens replace them.
///
/// Shell: `printf %s USER | openssl dgst -sha256 -hmac SECRET`.
struct LegacyUserTokens: Sendable {
    /// The secret's bytes (`SymmetricKey` is not `Sendable` on every platform; making one is cheap).
    private let secret: [UInt8]
    /// The tokens of the users this server knows, to tell another user's token (403) from a
    /// wrong one (401): filled at start from the store and as users are created.
    private let owners = TokenOwners()

    init(secret: String) { self.secret = Array(secret.utf8) }

    /// Learns the tokens of `userIDs` (one HMAC and one table entry each).
    func remember(_ userIDs: some Sequence<UserID>) {
        let tokens = userIDs.map { ($0, token(for: $0)) }
        owners.byToken.withLock { owners in for (userID, token) in tokens { owners[token] = userID } }
    }

    /// The known user whose token `token` is, or nil.
    func owner(of token: Substring) -> UserID? { owners.byToken.withLock { $0[String(token)] } }

    private var key: SymmetricKey { SymmetricKey(data: secret) }

    /// The token of `userID`.
    func token(for userID: UserID) -> String {
        HMAC<SHA256>.authenticationCode(for: Data(userID.rawValue.utf8), using: key).map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined()
    }

    /// Whether `token` (64 lowercase hex digits) is the token of `userID`, compared in constant time.
    func isValid(_ token: Substring, for userID: UserID) -> Bool {
        guard let code = Self.bytes(ofHex: token) else { return false }
        return HMAC<SHA256>.isValidAuthenticationCode(code, authenticating: Data(userID.rawValue.utf8), using: key)
    }

    /// The 32 bytes of 64 lowercase hex digits, or nil. (A token's length and alphabet are public;
    /// only the comparison of its value must take constant time.)
    private static func bytes(ofHex text: Substring) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count == 64 else { return nil }
        func value(_ digit: UInt8) -> UInt8? {
            switch digit {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
            default: nil
            }
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(32)
        for index in stride(from: 0, to: 64, by: 2) {
            guard let high = value(digits[index]), let low = value(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        return bytes
    }
}

/// Known users by their token (shared by the copies of a `LegacyUserTokens`).
final class TokenOwners: Sendable {
    let byToken = Mutex<[String: UserID]>([:])
}
