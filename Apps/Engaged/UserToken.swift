import Crypto
import Foundation
import Hummingbird
import Synchronization

/// The user tokens of the inbox routes: a user's token is the lowercase hex HMAC-SHA256 of their
/// id under `ENGAGED_USER_TOKEN_SECRET` (as Novu's subscriber hash), so a backend that knows the
/// secret hands each app its own user's token, and the server keeps no list of tokens.
///
/// Shell: `printf %s USER | openssl dgst -sha256 -hmac SECRET`.
struct UserTokens: Sendable {
    /// The secret's bytes (`SymmetricKey` is not `Sendable` on every platform; making one is cheap).
    private let secret: [UInt8]
    /// The tokens of the users this server knows, to tell another user's token (403) from a
    /// wrong one (401): filled at start from the store and as users are created.
    private let owners = TokenOwners()

    init(secret: String) { self.secret = Array(secret.utf8) }

    /// Learns the tokens of `userIDs` (32 bytes of memory and one HMAC each).
    func remember(_ userIDs: some Sequence<String>) {
        let tokens = userIDs.map { ($0, token(for: $0)) }
        owners.byToken.withLock { owners in for (userID, token) in tokens { owners[token] = userID } }
    }

    /// The known user whose token `token` is, or nil.
    func owner(of token: Substring) -> String? { owners.byToken.withLock { $0[String(token)] } }

    private var key: SymmetricKey { SymmetricKey(data: secret) }

    /// The token of `userID`.
    func token(for userID: String) -> String {
        HMAC<SHA256>.authenticationCode(for: Data(userID.utf8), using: key).map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined()
    }

    /// Whether `token` (64 lowercase hex digits) is the token of `userID`, compared in constant time.
    func isValid(_ token: Substring, for userID: String) -> Bool {
        guard let code = Self.bytes(ofHex: token) else { return false }
        return HMAC<SHA256>.isValidAuthenticationCode(code, authenticating: Data(userID.utf8), using: key)
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

/// Known users by their token (shared by the copies of a `UserTokens`).
final class TokenOwners: Sendable {
    let byToken = Mutex<[String: String]>([:])
}

/// The inbox routes' `Authorization: Bearer <credential>`: the API key (a backend, any user), or
/// a user token for the user of the path (an app reading its own inbox).
///
/// A credential is either a bare token (checked against the path's user) or `<userID>.<token>`,
/// which names the user it is for (ids may contain dots; the token never does, so the last dot
/// splits them). Missing, malformed or wrong: 401 with `WWW-Authenticate: Bearer`. A valid token
/// of another user: 403 (a bare token is recognised among the tokens of the users the server
/// knows, `UserTokens.remember`). The
/// other `/v1` routes take the API key only: a user token there is a wrong key (401).
struct InboxAuthMiddleware<Context: RequestContext>: RouterMiddleware {
    let apiKey: String
    let userTokens: UserTokens

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        switch verdict(request.headers[.authorization], pathUserID: context.parameters.get("id") ?? "") {
        case .allowed: return try await next(request, context)
        case .unauthorized(let detail): throw Problem.unauthorized(detail)
        case .forbidden(let detail): throw Problem.forbidden(detail)
        }
    }

    func verdict(_ header: String?, pathUserID: String) -> InboxAccess {
        guard let header else {
            return .unauthorized(
                "missing Authorization header; send Authorization: Bearer <api key> or Bearer <user token>")
        }
        guard let credential = APIKeyMiddleware<Context>.bearerCredential(header) else {
            return .unauthorized("the Authorization header is not Bearer <api key> or Bearer <user token>")
        }
        if APIKeyMiddleware<Context>.constantTimeEqual(Array(credential.utf8), apiKey) { return .allowed }
        let named = credential.lastIndex(of: ".").map {
            (credential[..<$0], credential[credential.index(after: $0)...])
        }
        let claimedUserID = named.map { String($0.0) } ?? pathUserID
        guard userTokens.isValid(named?.1 ?? credential, for: claimedUserID) else {
            if named == nil, userTokens.owner(of: credential) != nil {
                return .forbidden("the user token is for another user; it opens only that user's inbox")
            }
            return .unauthorized("neither the API key nor a user token of this user")
        }
        guard claimedUserID == pathUserID else {
            return .forbidden("the user token is for another user; it opens only that user's inbox")
        }
        return .allowed
    }
}

/// What `InboxAuthMiddleware` decides about a request, with the detail of a refusal.
enum InboxAccess: Equatable, Sendable {
    case allowed
    case unauthorized(String)
    case forbidden(String)
}

extension Problem {
    /// The credential is valid but not for this resource (another user's token).
    static func forbidden(_ detail: String) -> Problem {
        Problem(slug: "forbidden", title: "Forbidden", status: .forbidden, detail: detail)
    }
}
