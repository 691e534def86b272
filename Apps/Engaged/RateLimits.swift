import ArgumentParser
import Foundation
import Hummingbird
import NIOCore
import Synchronization

/// One token bucket's setting: `ratePerSecond` tokens a second, up to `burst` at once. Written
/// `RATE/BURST` (`100/200`), or `0` for no limit.
struct RateLimit: Sendable, Equatable, CustomStringConvertible {
    var ratePerSecond: Double
    var burst: Double

    static let off = RateLimit(ratePerSecond: 0, burst: 0)
    var isOff: Bool { ratePerSecond == 0 }

    var description: String { isOff ? "0" : "\(Int(ratePerSecond))/\(Int(burst))" }

    /// `RATE/BURST` with whole numbers, burst >= rate (at least one second of requests), or `0`.
    init?(_ text: String) {
        if text == "0" {
            self = .off
            return
        }
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let rate = Int(parts[0]), let burst = Int(parts[1]), rate >= 1, burst >= rate,
            burst <= 1_000_000
        else { return nil }
        self.init(ratePerSecond: Double(rate), burst: Double(burst))
    }

    init(ratePerSecond: Double, burst: Double) {
        self.ratePerSecond = ratePerSecond
        self.burst = burst
    }
}

extension RateLimit: ExpressibleByArgument {
    init?(argument: String) { self.init(argument) }
    var defaultValueDescription: String { description }
}

/// Who a bucket limits.
enum RateLimitScope: String, Sendable, CaseIterable {
    /// The backend's API key (one bucket).
    case apiKey = "api_key"
    /// One user's token (a bucket per user).
    case user
    /// One client address (a bucket per address): every request, and failed authentication at
    /// `failedAuthenticationCost` more.
    case address
}

/// The server's limits (`--rate-limit-*`).
struct RateLimitSettings: Sendable, Equatable {
    var apiKey = RateLimit(ratePerSecond: 10_000, burst: 20_000)
    var user = RateLimit(ratePerSecond: 10, burst: 30)
    var address = RateLimit(ratePerSecond: 1_000, burst: 2_000)
    /// What a request refused with 401 or 403 costs its address, in requests: a client guessing
    /// keys or tokens is held back long before it has tried many.
    var failedAuthenticationCost: Double = 20

    static let off = RateLimitSettings(apiKey: .off, user: .off, address: .off, failedAuthenticationCost: 0)

    func limit(_ scope: RateLimitScope) -> RateLimit {
        switch scope {
        case .apiKey: apiKey
        case .user: user
        case .address: address
        }
    }
}

/// Token buckets by scope and id, on a monotonic clock of its own (rate limits are about real
/// time, not the runtime's clock, which a test or `--manual-clock` moves).
///
/// A bucket starts full. A charge beyond what a bucket holds is refused (nothing taken) with the
/// seconds until it would be allowed; `penalize` takes even from an empty bucket, down to minus
/// its burst, so repeated failures push a client's next allowed request further out.
/// Buckets that have refilled are forgotten when more than `maxTrackedBuckets` are held, so a
/// flood of addresses or users cannot grow the table without bound.
final class RateLimiter: Sendable {
    private struct Key: Hashable {
        var scope: RateLimitScope
        var id: String
    }

    private struct Bucket {
        var tokens: Double
        var updatedAt: Double
    }

    let settings: RateLimitSettings
    /// Seconds on a monotonic clock.
    private let now: @Sendable () -> Double
    private let buckets = Mutex<[Key: Bucket]>([:])
    /// Past this many buckets, refilled ones are forgotten.
    let maxTrackedBuckets: Int

    init(
        settings: RateLimitSettings, maxTrackedBuckets: Int = 100_000,
        now: @escaping @Sendable () -> Double = RateLimiter.monotonicSeconds
    ) {
        self.settings = settings
        self.maxTrackedBuckets = maxTrackedBuckets
        self.now = now
    }

    static let monotonicSeconds: @Sendable () -> Double = {
        let origin = ContinuousClock.now
        return {
            let elapsed = ContinuousClock.now - origin
            return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        }
    }()

    /// Takes `cost` from the bucket of `id`: nil when allowed, else the whole seconds until it
    /// would be (for `Retry-After`, at least 1).
    func take(_ scope: RateLimitScope, _ id: String, cost: Double = 1) -> Int? {
        let limit = settings.limit(scope)
        guard !limit.isOff else { return nil }
        let at = now()
        return buckets.withLock { buckets in
            let key = Key(scope: scope, id: id)
            var bucket = Self.refilled(buckets[key], limit: limit, at: at)
            defer {
                buckets[key] = bucket
                if buckets.count > maxTrackedBuckets { forgetRefilled(&buckets, at: at) }
            }
            guard bucket.tokens >= cost else {
                return max(1, Int(((cost - bucket.tokens) / limit.ratePerSecond).rounded(.up)))
            }
            bucket.tokens -= cost
            return nil
        }
    }

    /// Takes `cost` whatever the bucket holds, down to minus its burst.
    func penalize(_ scope: RateLimitScope, _ id: String, cost: Double) {
        let limit = settings.limit(scope)
        guard !limit.isOff, cost > 0 else { return }
        let at = now()
        buckets.withLock { buckets in
            let key = Key(scope: scope, id: id)
            var bucket = Self.refilled(buckets[key], limit: limit, at: at)
            bucket.tokens = max(-limit.burst, bucket.tokens - cost)
            buckets[key] = bucket
        }
    }

    var trackedBuckets: Int { buckets.withLock { $0.count } }

    private static func refilled(_ bucket: Bucket?, limit: RateLimit, at: Double) -> Bucket {
        guard let bucket else { return Bucket(tokens: limit.burst, updatedAt: at) }
        // `at` was read before the lock: a thread that read it earlier may come later, and the
        // bucket's time must never go back (it would refill the same seconds twice).
        let tokens = min(limit.burst, bucket.tokens + max(0, at - bucket.updatedAt) * limit.ratePerSecond)
        return Bucket(tokens: tokens, updatedAt: max(at, bucket.updatedAt))
    }

    /// Drops buckets that are full again (a full bucket and no bucket behave alike); if that is
    /// not enough, the fullest ones, down to 90 % of the bound.
    private func forgetRefilled(_ buckets: inout [Key: Bucket], at: Double) {
        let levels = buckets.map { key, bucket in
            let limit = settings.limit(key.scope)
            return (key, Self.refilled(bucket, limit: limit, at: at).tokens / max(limit.burst, 1))
        }
        for (key, level) in levels where level >= 1 { buckets[key] = nil }
        let target = maxTrackedBuckets * 9 / 10
        guard buckets.count > target else { return }
        for (key, _) in levels.filter({ $0.1 < 1 }).sorted(by: { $0.1 > $1.1 }).prefix(buckets.count - target) {
            buckets[key] = nil
        }
    }
}

/// The per-address limit, first of all: a request from an address whose bucket is empty is 429
/// before its body is read or its credential checked; each request takes one token, and one
/// refused with 401 or 403 takes `failedAuthenticationCost` more.
///
/// The probes (`/healthz`, `/readyz`) are never limited: a flood from the prober's address must
/// not make an orchestrator restart a healthy server. `/metrics` has a listener of its own
/// (served on the API's only in-process, in tests), unlimited too.
/// Requests with the API key are the API key's bucket's alone (a backend sends many from few
/// addresses, and a client guessing keys at the same address must not lock it out). Requests
/// without a known peer address (in-process tests) are not limited here. Behind a proxy every
/// client shares the proxy's address: limit there, and set `--rate-limit-address 0`.
struct AddressRateLimitMiddleware<Context: RemoteAddressRequestContext>: RouterMiddleware {
    let apiKey: String
    let limiter: RateLimiter
    let metrics: ServerMetrics

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        guard let address = context.remoteAddress.flatMap(Self.bucketID),
            !Self.unlimitedPaths.contains(request.uri.path),
            !APIKey.carriedBy(request, apiKey)
        else {
            return try await next(request, context)
        }
        if let retryAfter = limiter.take(.address, address) {
            metrics.rateLimited(.address)
            throw Problem.tooManyRequests(scope: .address, retryAfterSeconds: retryAfter)
        }
        do {
            return try await next(request, context)
        } catch {
            if let status = Problem.thrown(error)?.status, status == .unauthorized || status == .forbidden {
                limiter.penalize(.address, address, cost: limiter.settings.failedAuthenticationCost)
            }
            throw error
        }
    }
}

extension AddressRateLimitMiddleware {
    static var unlimitedPaths: Set<String> { ["/healthz", "/readyz", "/metrics"] }

    /// The bucket of a peer: an IPv4 address (also when mapped into IPv6), or an IPv6 address's
    /// /64 prefix, since one client holds a whole /64 and would otherwise get a bucket per address.
    static func bucketID(_ address: SocketAddress) -> String? {
        switch address {
        case .v4: return address.ipAddress
        case .v6(let v6):
            var raw = v6.address.sin6_addr
            let bytes = withUnsafeBytes(of: &raw) { Array($0) }
            if bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xFF, bytes[11] == 0xFF {
                return bytes[12..<16].map(String.init).joined(separator: ".")
            }
            let prefix = stride(from: 0, to: 8, by: 2).map {
                String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16)
            }
            return prefix.joined(separator: ":") + "::/64"
        case .unixDomainSocket: return nil
        }
    }
}

extension RateLimiter {
    /// Charges an authenticated request to its principal's bucket; 429 when it is empty.
    func charge(_ scope: RateLimitScope, _ id: String, metrics: ServerMetrics) throws(Problem) {
        if let retryAfter = take(scope, id) {
            metrics.rateLimited(scope)
            throw Problem.tooManyRequests(scope: scope, retryAfterSeconds: retryAfter)
        }
    }
}

extension Problem {
    /// A bucket is empty; `Retry-After` says when to come back.
    static func tooManyRequests(scope: RateLimitScope, retryAfterSeconds: Int) -> Problem {
        let who =
            switch scope {
            case .apiKey: "the API key"
            case .user: "this user's token"
            case .address: "this client address"
            }
        var problem = Problem(
            slug: "rate-limited", title: "Too many requests", status: .tooManyRequests,
            detail: "\(who) is over its rate limit; retry after \(retryAfterSeconds) seconds")
        problem.retryAfterSeconds = retryAfterSeconds
        return problem
    }
}
