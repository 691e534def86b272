/// Capped exponential back-off with jitter, for the answers worth another attempt.
public struct RetryPolicy: Hashable, Sendable {
    /// Attempts in all, the first included (at least 1).
    public var maxAttempts: Int
    /// The wait after the first failed attempt, before jitter; doubles after each one.
    public var baseDelay: Duration
    /// No wait is longer, before jitter.
    public var maxDelay: Duration

    public init(maxAttempts: Int = 4, baseDelay: Duration = .milliseconds(100), maxDelay: Duration = .seconds(5)) {
        self.maxAttempts = max(1, maxAttempts)
        self.baseDelay = baseDelay
        self.maxDelay = maxDelay
    }

    /// The wait after failed attempt `attempt` (1-based): `min(maxDelay, baseDelay * 2^(attempt-1))`,
    /// then "equal jitter": half of it fixed, half scaled by `unitRandom` in 0..<1. Concurrent
    /// senders refused together come back spread out, never sooner than half the back-off.
    public func delay(afterAttempt attempt: Int, unitRandom: Double) -> Duration {
        let doublings = min(max(attempt - 1, 0), 30)
        var ceiling = baseDelay * (1 << doublings)
        if ceiling > maxDelay || ceiling < .zero { ceiling = maxDelay }
        let jitter = min(max(unitRandom, 0), 1)
        return ceiling / 2 + (ceiling / 2) * jitter
    }
}
