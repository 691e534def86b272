import APNs
import Foundation
import Logging
import Models
import Runtime
import ServiceLifecycle
import Storage
import Synchronization

/// The wall clock, for `engaged serve` without `--manual-clock`. Never goes backwards (the
/// runtime's contract), even when the system clock is set back.
final class SystemClock: RuntimeClock {
    private let forward = NeverBackwards()

    func now() -> Instant { forward.clamp(Instant(Date())) }
}

/// The latest instant handed out: a clock reading before it is answered with it, so the
/// runtime's clocks never go backwards (their contract) when the system clock is set back.
final class NeverBackwards: Sendable {
    private let last = Mutex(Instant(secondsSinceEpoch: .min))

    func clamp(_ current: Instant) -> Instant {
        last.withLock { last in
            last = max(last, current)
            return last
        }
    }
}

/// The transport of `serve` and `worker`: APNs through `apns` when it is configured
/// (`APNsOptions.makeClient`), else `LoggingTransport`.
func channelTransport(
    _ apns: (client: APNsClient, topic: String)?, runtime: EngineRuntime, metrics: ServerMetrics, logger: Logger
) -> any ChannelTransport {
    apns.map {
        PushChannelTransport(runtime: runtime, push: $0.client, topic: $0.topic, metrics: metrics, logger: logger)
    } ?? LoggingTransport(logger: logger)
}

/// Without APNs settings (`APNsSettings`), a due push row is "sent" by logging it with its
/// `apns-id` (the row's key) and completed, so the queue drains. Inbox rows never come here:
/// the runtime delivers them to the inbox itself, in the transaction that completes them.
struct LoggingTransport: ChannelTransport {
    let logger: Logger

    func perform(_ row: OutboxRow) async throws -> SendReport {
        logger.info(
            "due on \(row.channel.name) (logged only: nothing sends this channel here)",
            metadata: [
                "user": "\(row.userID)", "request": "\(row.requestID)", "channel": "\(row.channel.name)",
                "key": "\(row.key)",
                "dueAt": "\(row.dueAt.iso8601)",
            ])
        return .accepted
    }
}

/// Runs one dispatch at a time. `EngineRuntime.dispatchDue` suspends while a transport performs
/// a row, and the actor lets another call in meanwhile, which would perform the same rows twice.
actor SerialGate {
    private var busy = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    func run<T: Sendable>(_ body: @Sendable () async -> T) async -> T {
        if busy {
            await withCheckedContinuation { waiters.append($0) }
        } else {
            busy = true
        }
        let result = await body()
        if waiters.isEmpty {
            busy = false
        } else {
            waiters.removeFirst().resume()  // the gate passes straight to the next in line
        }
        return result
    }
}

/// Performs due outbox rows: from the due-work loop on the system clock, or from
/// `POST /v1/admin/clock` on the manual clock.
struct Dispatcher: Sendable {
    let runtime: EngineRuntime
    let transport: any ChannelTransport
    let metrics: ServerMetrics
    let gate = SerialGate()
    let logger: Logger

    /// Rows per `dispatchDue` call, and calls per round: a round performs at most their product.
    static let batchLimit = 256
    static let batchesPerRound = 64

    /// Performs every row due by the clock's time (bounded); returns how many were completed.
    func dispatchAllDue() async -> Int {
        await gate.run {
            var completed = 0
            for _ in 0..<Self.batchesPerRound {
                do {
                    let batch = try await runtime.dispatchDueBatch(limit: Self.batchLimit, through: transport)
                    completed += batch.completed.count
                    metrics.dispatched(batch.completed)
                    for (key, reason) in batch.discarded {
                        logger.warning(
                            "due row completed unperformed", metadata: ["key": "\(key)", "reason": "\(reason)"])
                    }
                    // A failure would only repeat; otherwise ask again while rows may be due.
                    if batch.leftPending > 0 || (batch.listed < Self.batchLimit && batch.heldBack == 0) { break }
                } catch {
                    logger.error("dispatching due work failed", metadata: ["error": "\(error)"])
                    break
                }
            }
            return completed
        }
    }

    /// Moves `clock` forward by `seconds`, stopping at every due instant on the way and
    /// dispatching there, so work runs at the time it was due, not all at the end.
    func advance(_ clock: ManualClock, bySeconds seconds: Int64) async -> Int {
        let target = clock.now() + seconds
        var dispatched = await dispatchAllDue()
        // Bounded: each step moves at least a minute, or to the next due instant (at most 31 days).
        for _ in 0..<(Int(seconds / 60) + 2) {
            let now = clock.now()
            guard now < target else { break }
            var next = now + 60
            // A row stuck in the past (its transport refused it) is not a step: go a minute on.
            if let due = try? await runtime.nextDueAt(), due > now { next = due }
            clock.advance(by: min(next, target) - now)
            dispatched += await dispatchAllDue()
        }
        if clock.now() < target {  // many due instants closer than a minute: jump the rest
            clock.advance(by: target - clock.now())
            dispatched += await dispatchAllDue()
        }
        return dispatched
    }
}

/// The due-work loop on the system clock: wakes at the next due instant, and at least every
/// second (inputs add rows while it sleeps), performs what is due, and stops at graceful shutdown
/// after the round in progress.
struct DueWorkLoop: Service {
    let dispatcher: Dispatcher
    let clock: any RuntimeClock

    func run() async throws {
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            _ = await dispatcher.dispatchAllDue()
            var wait: Int64 = 1
            if let due = try? await dispatcher.runtime.nextDueAt() {
                let until = due - clock.now()
                if until > 0 { wait = min(until, 1) }
            }
            let delay = wait
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: .seconds(delay)) }
        }
    }
}
