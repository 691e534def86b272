import Foundation
import Logging
import ServiceLifecycle
import Storage
import UnixSignals

/// Waits between attempts at an unreachable database: `firstSeconds`, doubled after each
/// failure up to `maxSeconds`, back to `firstSeconds` after a success.
struct Backoff: Sendable {
    var firstSeconds: Double
    var maxSeconds: Double
    private(set) var nextSeconds: Double
    private(set) var failures = 0

    init(firstSeconds: Double = 0.2, maxSeconds: Double = 2) {
        self.firstSeconds = firstSeconds
        self.maxSeconds = max(firstSeconds, maxSeconds)
        nextSeconds = firstSeconds
    }

    /// Notes a failure and returns how long to wait before the next attempt.
    mutating func failed() -> Double {
        let wait = nextSeconds
        failures += 1
        nextSeconds = min(maxSeconds, nextSeconds * 2)
        return wait
    }

    /// Notes a success: the next failure waits `firstSeconds` again.
    mutating func succeeded() {
        failures = 0
        nextSeconds = firstSeconds
    }
}

/// Opening what needs the database at start-up, for a server or a worker that may start before
/// PostgreSQL does, or while it restarts: each failure to reach it is logged and tried again
/// after a back-off, and SIGTERM or SIGINT stops the waiting (the process then exits 0, as
/// after a graceful stop).
enum DatabaseRetry {
    /// Runs `attempt` until it succeeds; nil when SIGTERM or SIGINT came first. Only an
    /// unreachable database (`StoreError.unavailable`) is tried again: any other error (a
    /// database of a newer build, a full disk) is thrown as it is.
    static func untilOpened<T: Sendable>(
        _ what: String, logger: Logger, backoff: Backoff = Backoff(firstSeconds: 0.5, maxSeconds: 5),
        attempt: @escaping @Sendable () throws(StoreError) -> T
    ) async throws -> T? {
        try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask {
                for await signal in await UnixSignalsSequence(trapping: .sigterm, .sigint) {
                    logger.info("stopping before the database could be reached", metadata: ["signal": "\(signal)"])
                    return nil
                }
                return nil
            }
            group.addTask { try await retrying(what, logger: logger, backoff: backoff, attempt: attempt) }
            let first = try await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }

    /// `attempt` until it succeeds or the task is cancelled (nil).
    static func retrying<T: Sendable>(
        _ what: String, logger: Logger, backoff: Backoff, attempt: @Sendable () throws(StoreError) -> T
    ) async throws -> T? {
        var backoff = backoff
        while !Task.isCancelled {
            do {
                let value = try attempt()
                if backoff.failures > 0 {
                    logger.info(
                        "database reached", metadata: ["what": "\(what)", "attempts": "\(backoff.failures + 1)"])
                }
                return value
            } catch .unavailable(let problem) {
                let wait = backoff.failed()
                logger.error(
                    "database unreachable; trying again",
                    metadata: [
                        "what": "\(what)", "error": "\(problem)", "attempt": "\(backoff.failures)",
                        "retryInSeconds": "\(wait)",
                    ])
                try? await Task.sleep(for: .milliseconds(Int(wait * 1_000)))
            }
        }
        return nil
    }
}
