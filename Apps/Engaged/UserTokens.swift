import Foundation
import JWTKit
import Models
import Synchronization

/// The signing keys of user tokens (`ENGAGED_USER_TOKEN_KEYS`): comma-separated `kid:secret`
/// pairs. The first key signs new tokens; every key verifies, so a key rotates without downtime:
/// put the new key first and keep the old one after it until the tokens it signed have expired.
struct UserTokenKeys: Sendable, Equatable {
    struct Key: Sendable, Equatable {
        var id: String
        var secret: [UInt8]
    }

    /// The key that signs, then the ones that only verify.
    var keys: [Key]
    var signing: Key { keys[0] }

    /// HS256 keys shorter than the hash (32 bytes) weaken it (RFC 7518 section 3.2).
    static let minimumSecretBytes = ServerSecrets.minimumBytes

    /// The keys of `text`, or what is wrong with it (naming the key by position, never its secret).
    static func parse(_ text: String) throws(ConfigurationError) -> UserTokenKeys {
        let name = "ENGAGED_USER_TOKEN_KEYS"
        var keys: [Key] = []
        for (index, entry) in text.split(separator: ",", omittingEmptySubsequences: false).enumerated() {
            let position = "key \(index + 1)"
            guard let colon = entry.firstIndex(of: ":") else {
                throw ConfigurationError(setting: name, problem: "\(position) is not kid:secret")
            }
            let id = String(entry[..<colon])
            let secret = Array(entry[entry.index(after: colon)...].utf8)
            guard Routes.isIdentifier(id) else {
                throw ConfigurationError(
                    setting: name, problem: "\(position): a key id is 1 to 64 characters of A-Z, a-z, 0-9, _, . and -")
            }
            guard secret.count >= minimumSecretBytes else {
                throw ConfigurationError(
                    setting: name,
                    problem:
                        "\(position) (\(id)): a secret is at least \(minimumSecretBytes) bytes, got \(secret.count)")
            }
            guard !ServerSecrets.isBlank(secret) else {
                throw ConfigurationError(setting: name, problem: "\(position) (\(id)): the secret is only whitespace")
            }
            guard !keys.contains(where: { $0.id == id }) else {
                throw ConfigurationError(setting: name, problem: "\(position): key id \(id) is given twice")
            }
            keys.append(Key(id: id, secret: secret))
        }
        return UserTokenKeys(keys: keys)
    }
}

/// A setting that cannot be used; the server refuses to start (exit 78).
struct ConfigurationError: Error, Equatable, CustomStringConvertible {
    var setting: String
    var problem: String
    var description: String { "\(setting): \(problem)" }
}

/// The claims of a user token. All are required but `nbf`; they are judged on the server's
/// clock by `UserTokenAuthority`, not here (a manual clock moves them in tests).
struct UserTokenClaims: JWTPayload, Equatable {
    var sub: SubjectClaim
    var exp: ExpirationClaim
    var iat: IssuedAtClaim
    var nbf: NotBeforeClaim?

    func verify(using algorithm: some JWTAlgorithm) async throws {}
}

/// A token minted for a user.
struct MintedUserToken: Equatable, Sendable {
    var token: String
    var keyID: String
    var issuedAt: Instant
    var expiresAt: Instant
}

/// What a user token says, once its signature and times hold.
enum UserTokenVerdict: Equatable, Sendable {
    /// Valid for `userID`, issued at `issuedAt` (revocation is the caller's to judge).
    case valid(userID: UserID, issuedAt: Instant)
    /// Not a token of this server now; the reason is safe to show its holder.
    case invalid(String)
}

/// Mints and verifies user tokens: JWTs signed with HS256 under `UserTokenKeys`, with `sub` (the
/// user), `iat`, `exp` and the signing key's `kid` in the header.
///
/// Verification refuses, before any signature is computed, a header whose `alg` is not `HS256`
/// (`none`, and an RS256 or ES256 header whose "public key" would be our secret), whose `kid` is
/// missing or not one of ours, or which names critical extensions (`crit`, RFC 7515 section
/// 4.1.11). Then the signature, then the times on the server's clock: expired at or after `exp`,
/// issued (`iat`) or valid from (`nbf`) more than `clockSkewSeconds` ahead.
struct UserTokenAuthority: Sendable {
    let keys: UserTokenKeys
    private let collection: JWTKeyCollection
    private let remembered = SignedTokens()

    /// Between this server's processes, clocks may disagree by this much.
    static let clockSkewSeconds: Int64 = 60

    init(keys: UserTokenKeys) async {
        self.keys = keys
        let collection = JWTKeyCollection()
        for key in keys.keys {
            await collection.add(
                hmac: HMACKey(from: key.secret), digestAlgorithm: .sha256, kid: JWKIdentifier(string: key.id))
        }
        // The first key added became the default, which verifies a token without a `kid` or with
        // an unknown one: no token may fall back to a key it did not name.
        await collection.clearDefault()
        self.collection = collection
    }

    /// A token for `userID`, issued at `now`, valid for `ttlSeconds`.
    func mint(for userID: UserID, now: Instant, ttlSeconds: Int64) async throws -> MintedUserToken {
        let expiresAt = now + ttlSeconds
        let claims = UserTokenClaims(
            sub: SubjectClaim(value: userID.rawValue), exp: ExpirationClaim(value: expiresAt.date),
            iat: IssuedAtClaim(value: now.date))
        let token = try await collection.sign(claims, kid: JWKIdentifier(string: keys.signing.id))
        return MintedUserToken(token: token, keyID: keys.signing.id, issuedAt: now, expiresAt: expiresAt)
    }

    /// What `token` says at `now`. A token whose signature and shape once held is remembered
    /// (`SignedTokens`): its times are judged again on every use, its signature not.
    func verify(_ token: Substring, now: Instant) async -> UserTokenVerdict {
        let signed: SignedToken
        if let known = remembered.find(token) {
            signed = known
        } else {
            switch await verifySignature(token) {
            case .failure(let refusal): return .invalid(refusal.reason)
            case .success(let checked):
                remembered.keep(token, checked)
                signed = checked
            }
        }
        guard now < signed.expiresAt else { return .invalid("the user token expired at \(signed.expiresAt.iso8601)") }
        let latestStart = now.secondsSinceEpoch + Self.clockSkewSeconds
        guard signed.issuedAt.secondsSinceEpoch <= latestStart,
            (signed.notBefore?.secondsSinceEpoch ?? 0) <= latestStart
        else {
            return .invalid("the user token is not valid yet")
        }
        return .valid(userID: signed.userID, issuedAt: signed.issuedAt)
    }

    /// Why a token is not one of ours, whatever the time.
    private struct Refusal: Error {
        var reason: String
    }

    /// The header rules, the signature, and claims in range: everything but the time.
    private func verifySignature(_ token: Substring) async -> Result<SignedToken, Refusal> {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let header = Self.header(parts[0]) else {
            return .failure(Refusal(reason: "the user token is not a JWT (header.payload.signature)"))
        }
        // RFC 7515 section 2: each part is base64url without padding. A decoder that skips `=`
        // would take several spellings of one signature.
        guard parts.allSatisfy(Self.isUnpaddedBase64URL) else {
            return .failure(Refusal(reason: "the user token is not base64url without padding (RFC 7515)"))
        }
        guard header.alg == "HS256" else {
            return .failure(
                Refusal(
                    reason:
                        "the user token's algorithm is \(header.alg.map { "\"\($0.prefix(16))\"" } ?? "missing"), not HS256"
                ))
        }
        guard !header.hasCrit else {
            return .failure(Refusal(reason: "the user token names critical extensions this server lacks"))
        }
        guard let kid = header.kid, keys.keys.contains(where: { $0.id == kid }) else {
            return .failure(
                Refusal(reason: "the user token's key id (kid) is missing or not one of this server's keys"))
        }
        let claims: UserTokenClaims
        do {
            claims = try await collection.verify(String(token), as: UserTokenClaims.self)
        } catch {
            return .failure(Refusal(reason: "the user token's signature or claims are not valid"))
        }
        // A signed token may still carry any number: out of range (past year 9999) is invalid, never a trap.
        let outOfRange = Refusal(reason: "the user token's times are out of range")
        guard let expiresAt = Self.instant(claims.exp.value), let issuedAt = Self.instant(claims.iat.value) else {
            return .failure(outOfRange)
        }
        var notBefore: Instant?
        if let nbf = claims.nbf {
            guard let start = Self.instant(nbf.value) else { return .failure(outOfRange) }
            notBefore = start
        }
        guard Routes.isIdentifier(claims.sub.value) else {
            return .failure(Refusal(reason: "the user token's subject is not a user id"))
        }
        return .success(
            SignedToken(
                userID: UserID(claims.sub.value), issuedAt: issuedAt, expiresAt: expiresAt, notBefore: notBefore))
    }

    /// Only `A-Z a-z 0-9 - _`, not empty: no padding, no standard-base64 `+` or `/`.
    static func isUnpaddedBase64URL(_ part: Substring) -> Bool {
        !part.isEmpty
            && part.utf8.allSatisfy { byte in
                (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                    || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                    || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                    || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
            }
    }

    /// Whole seconds of a claim's time, or nil past the years 0001...9999.
    private static func instant(_ date: Date) -> Instant? {
        let seconds = date.timeIntervalSince1970.rounded(.down)
        guard seconds.isFinite, abs(seconds) < 253_402_300_800 else { return nil }
        return Instant(secondsSinceEpoch: Int64(seconds))
    }

    /// The JOSE header fields this server judges; `hasCrit` is whether `crit` is there at all
    /// (even `null`).
    private struct Header: Decodable {
        var alg: String?
        var kid: String?
        var hasCrit = false

        enum CodingKeys: String, CodingKey { case alg, kid, crit }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            alg = try? container.decodeIfPresent(String.self, forKey: .alg)
            kid = try? container.decodeIfPresent(String.self, forKey: .kid)
            hasCrit = container.contains(.crit)
        }
    }

    /// The header, or nil when it is not base64url JSON, or gives a key twice (two readers of
    /// it, this one and the library's, must not see two different headers).
    private static func header(_ segment: Substring) -> Header? {
        var base64 = segment.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.utf8.count % 4) % 4)
        guard let bytes = Data(base64Encoded: base64), (try? JSONScanner.check(Array(bytes))) != nil else {
            return nil
        }
        return try? JSONDecoder().decode(Header.self, from: bytes)
    }
}

/// A token whose header and signature held, with its claims.
struct SignedToken: Equatable, Sendable {
    var userID: UserID
    var issuedAt: Instant
    var expiresAt: Instant
    var notBefore: Instant?
}

/// Tokens whose signatures held, by their text, so an app's token is verified once, not on
/// every request (the keys do not change while the server runs, and a token's text cannot
/// change without failing its signature). Refused tokens are not kept: a client guessing fills
/// nothing. At most `capacity` are kept; when full, the table starts over.
final class SignedTokens: Sendable {
    private let byToken = Mutex<[String: SignedToken]>([:])
    let capacity: Int

    init(capacity: Int = 10_000) { self.capacity = capacity }

    func find(_ token: Substring) -> SignedToken? {
        let key = String(token)
        return byToken.withLock { $0[key] }
    }

    func keep(_ token: Substring, _ signed: SignedToken) {
        let key = String(token)
        byToken.withLock { known in
            if known.count >= capacity { known.removeAll(keepingCapacity: true) }
            known[key] = signed
        }
    }
}
