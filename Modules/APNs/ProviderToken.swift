import Crypto
public import Delivery
import Foundation
public import Models
import Synchronization

/// An APNs provider token: a JWT signed with ES256, header `{"alg":"ES256","kid":…}`, claims
/// `{"iss":<team id>,"iat":<seconds>}`, as Apple's token-based provider authentication asks.
public struct ProviderToken: Hashable, Sendable {
    /// The compact JWT, as sent after `bearer `.
    public let jwt: String
    /// Its `iat`.
    public let issuedAt: Instant
    /// 1 for the first token a `ProviderTokens` signed, then one more for each renewal.
    public let generation: Int

    /// Signs a token for `credentials`, issued at `issuedAt`.
    public static func sign(
        _ credentials: APNsCredentials, issuedAt: Instant, generation: Int = 1
    ) throws -> ProviderToken {
        let header = #"{"alg":"ES256","kid":"\#(credentials.keyID)"}"#
        let claims = #"{"iss":"\#(credentials.teamID)","iat":\#(issuedAt.secondsSinceEpoch)}"#
        let signingInput = base64URL(Array(header.utf8)) + "." + base64URL(Array(claims.utf8))
        let signature = try credentials.privateKey.signature(for: Array(signingInput.utf8))
        let jwt = signingInput + "." + base64URL(Array(signature.rawRepresentation))
        return ProviderToken(jwt: jwt, issuedAt: issuedAt, generation: generation)
    }

    /// Base64url without padding (RFC 7515 section 2).
    static func base64URL(_ bytes: [UInt8]) -> String {
        var text = Data(bytes).base64EncodedString()
        text = text.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        while text.last == "=" { text.removeLast() }
        return text
    }
}

/// The deployment's one provider token, shared by every connection and every caller.
///
/// APNs wants a token renewed no more often than every 20 minutes (it answers 429
/// TooManyProviderTokenUpdates) and at least every 60 (403 ExpiredProviderToken). `current()`
/// signs the first token, and a new one once the token in use is `refreshAfterSeconds` old;
/// `renew(replacing:)` signs early, only when APNs called the token expired, and only once
/// per token however many sends were refused with it. Signing happens on the actor, one at a
/// time; a send that finds the token fresh reads it without waiting for the actor.
///
/// With `shared` (several worker processes of one deployment), a token is first looked for
/// there and a token signed here is offered there; whichever process kept its token first, all
/// of them send with that one, so the key's token changes once per renewal, not once per process.
public actor ProviderTokens {
    /// APNs' bounds on a token's age when it is replaced.
    public static let allowedRefreshSeconds: ClosedRange<Int64> = (20 * 60)...(60 * 60 - 1)
    /// Renew at 50 minutes: past Apple's 20, and 10 minutes of clock skew short of its 60.
    public static let defaultRefreshAfterSeconds: Int64 = 50 * 60

    private let credentials: APNsCredentials
    private nonisolated let refreshAfterSeconds: Int64
    private nonisolated let now: @Sendable () -> Instant
    private nonisolated let shared: (any ProviderTokenSharing)?
    /// The token in use, readable without the actor (the actor alone replaces it).
    private nonisolated let published = Mutex<ProviderToken?>(nil)
    /// How many tokens were signed: what tests and the benchmark count.
    public private(set) var signedCount = 0

    /// `refreshAfterSeconds` is clamped to `allowedRefreshSeconds`; `now` is the wall clock.
    public init(
        credentials: APNsCredentials, refreshAfterSeconds: Int64 = defaultRefreshAfterSeconds,
        shared: (any ProviderTokenSharing)? = nil, now: @escaping @Sendable () -> Instant
    ) {
        self.credentials = credentials
        self.shared = shared
        self.refreshAfterSeconds = min(
            max(refreshAfterSeconds, Self.allowedRefreshSeconds.lowerBound), Self.allowedRefreshSeconds.upperBound)
        self.now = now
    }

    /// The token to send now.
    public nonisolated func current() async throws -> ProviderToken {
        if let token = published.withLock({ $0 }), isFresh(token, at: now()) { return token }
        return try await currentOnActor()
    }

    /// APNs answered 403 ExpiredProviderToken to `rejected`: the token after it. Only the first
    /// caller with a given token signs; the others get the token that one signed.
    public func renew(replacing rejected: ProviderToken) throws -> ProviderToken {
        if let token = published.withLock({ $0 }), token.generation != rejected.generation { return token }
        return try signNew(at: now(), replacing: rejected)
    }

    /// `current()` when the token must be signed: checked again here, where only one caller runs.
    private func currentOnActor() throws -> ProviderToken {
        let now = now()
        if let token = published.withLock({ $0 }), isFresh(token, at: now) { return token }
        return try signNew(at: now)
    }

    private nonisolated func isFresh(_ token: ProviderToken, at now: Instant) -> Bool {
        isFresh(issuedAt: token.issuedAt, at: now)
    }

    private nonisolated func isFresh(issuedAt: Instant, at now: Instant) -> Bool {
        now.secondsSinceEpoch - issuedAt.secondsSinceEpoch < refreshAfterSeconds
    }

    /// The next token: the deployment's shared one when it is fresh and not the one refused,
    /// else one signed here (and offered to the others). A shared place that cannot be reached
    /// is passed over: sending with a token of our own beats not sending.
    private func signNew(at now: Instant, replacing rejected: ProviderToken? = nil) throws -> ProviderToken {
        let generation = (published.withLock { $0 }?.generation ?? 0) + 1
        if let shared, let kept = try? shared.newest(keyID: credentials.keyID),
            isFresh(issuedAt: kept.issuedAt, at: now), kept.jwt != rejected?.jwt
        {
            return publish(ProviderToken(jwt: kept.jwt, issuedAt: kept.issuedAt, generation: generation))
        }
        var next = try ProviderToken.sign(credentials, issuedAt: now, generation: generation)
        signedCount += 1
        if let shared {
            let cutoff = rejected?.issuedAt ?? (now - refreshAfterSeconds)
            let offered = SharedProviderToken(keyID: credentials.keyID, jwt: next.jwt, issuedAt: next.issuedAt)
            if let kept = try? shared.keep(offered, unlessIssuedAfter: cutoff), kept.jwt != next.jwt {
                next = ProviderToken(jwt: kept.jwt, issuedAt: kept.issuedAt, generation: generation)
            }
        }
        return publish(next)
    }

    private func publish(_ token: ProviderToken) -> ProviderToken {
        published.withLock { $0 = token }
        return token
    }
}
