import Synchronization

/// Lets one task at a time hold each key; the others wait in arrival order. The runtime's
/// writes that read before they commit (a last-write-wins merge, an idempotency-key lookup)
/// hold their key across the commit: the runtime's actor is reentrant while a commit is being
/// written, and two such writes of one key must not both read the state before either landed.
///
/// Bounded by the tasks waiting, that is by the requests in flight.
final class KeyedGate: Sendable {
    private let waiters = Mutex<[String: [CheckedContinuation<Void, Never>]]>([:])

    /// Returns once the caller holds `key`; it must call `release(key)` exactly once after.
    func acquire(_ key: String) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let free = waiters.withLock { waiters in
                guard waiters[key] != nil else {
                    waiters[key] = []
                    return true
                }
                waiters[key]?.append(continuation)
                return false
            }
            if free { continuation.resume() }
        }
    }

    /// Takes `key` when no one holds it, without waiting: true when the caller now holds it (and
    /// must `release(key)` exactly once after), false when another task does.
    func tryAcquire(_ key: String) -> Bool {
        waiters.withLock { waiters in
            guard waiters[key] == nil else { return false }
            waiters[key] = []
            return true
        }
    }

    /// Hands `key` to the next waiter, or frees it.
    func release(_ key: String) {
        let next = waiters.withLock { waiters -> CheckedContinuation<Void, Never>? in
            guard var queue = waiters[key], !queue.isEmpty else {
                waiters[key] = nil
                return nil
            }
            let next = queue.removeFirst()
            waiters[key] = queue
            return next
        }
        next?.resume()
    }

    /// Keys held or waited for (for tests).
    var heldCount: Int { waiters.withLock { $0.count } }
}
