public import Models
import Synchronization

/// Where the runtime reads the time. The engine never reads a clock: the runtime stamps each
/// input with `now()` and wakes its due-work loop by it.
///
/// Contract: `now()` never goes backwards between two calls on the same clock, and is safe to
/// call from any thread. The system clock lives in the executable (the composition root);
/// tests and `engaged serve --manual-clock` use `ManualClock`.
public protocol RuntimeClock: Sendable {
    func now() -> Instant
}

/// A clock that moves only when told to: for tests and end-to-end runs.
public final class ManualClock: RuntimeClock {
    private let current: Mutex<Instant>

    public init(_ start: Instant) { current = Mutex(start) }

    public func now() -> Instant { current.withLock { $0 } }

    /// Moves the clock forward by `seconds` (at least 0) and returns the new time.
    @discardableResult
    public func advance(by seconds: Int64) -> Instant {
        current.withLock { now in
            now = now + max(0, seconds)
            return now
        }
    }
}
