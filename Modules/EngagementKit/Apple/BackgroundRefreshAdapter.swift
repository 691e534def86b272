// The kit's background refresh over Apple's BackgroundTasks. This file is compiled on Apple
// platforms only; on Linux its syntax is checked (`swiftc -parse` in CI), and when to refresh is
// `PlanRefresh`, tested here. BGTaskScheduler is unavailable on macOS, though the module exists.
#if canImport(BackgroundTasks) && !os(macOS)
    public import BackgroundTasks
    public import Foundation
    public import Models

    /// The app refresh task that keeps the device's plan current while the app is not running.
    /// Its identifier must be listed under `BGTaskSchedulerPermittedIdentifiers` in the app's
    /// Info.plist. The app calls `register` before it finishes launching, and `schedule` once
    /// after (each run then asks for the next).
    public enum PlanRefreshTask {
        /// What one refresh did: whether it succeeded, and the plan's horizon end after it.
        public struct Result: Sendable {
            public var succeeded: Bool
            public var horizonEnd: Instant?

            public init(succeeded: Bool, horizonEnd: Instant?) {
                self.succeeded = succeeded
                self.horizonEnd = horizonEnd
            }
        }

        /// Registers the handler. `refresh` is the app's own composition of the kit (flush the
        /// `EventQueue`, pull the plan with `PlanSync.startPull`'s `ifNoneMatch` and apply the answer with it). Each run first
        /// asks for the next one (`PlanRefresh.nextRefresh` from `horizonEnd`, the plan held
        /// before the run), so a run the system cuts short still leaves one asked for; when the
        /// system ends the task's time, the refresh is cancelled and the task completed at once.
        /// False when the identifier is not permitted.
        @discardableResult
        public static func register(
            identifier: String, policy: PlanRefresh = PlanRefresh(), now: @escaping @Sendable () -> Instant,
            horizonEnd: @escaping @Sendable () -> Instant?, refresh: @escaping @Sendable () async -> Result
        ) -> Bool {
            BGTaskScheduler.shared.register(forTaskWithIdentifier: identifier, using: nil) { task in
                try? schedule(identifier: identifier, at: policy.nextRefresh(at: now(), horizonEnd: horizonEnd()))
                let completion = Completion(task)
                let work = Task {
                    let result = await refresh()
                    completion.complete(success: result.succeeded && !Task.isCancelled)
                }
                task.expirationHandler = {
                    work.cancel()
                    completion.complete(success: false)
                }
            }
        }

        /// Asks the system to run the refresh no earlier than `instant`; throws the scheduler's
        /// refusal (too many requests, not permitted, background refresh off).
        public static func schedule(identifier: String, at instant: Instant) throws {
            let request = BGAppRefreshTaskRequest(identifier: identifier)
            request.earliestBeginDate = Date(timeIntervalSince1970: TimeInterval(instant.secondsSinceEpoch))
            try BGTaskScheduler.shared.submit(request)
        }

        /// Completes a task once, whichever of the work and the expiration comes first.
        private final class Completion: @unchecked Sendable {
            // @unchecked Sendable is safe: `task` is touched only under `lock`, once.
            private let lock = NSLock()
            private var task: BGTask?

            init(_ task: BGTask) { self.task = task }

            func complete(success: Bool) {
                lock.lock()
                let pending = task
                task = nil
                lock.unlock()
                pending?.setTaskCompleted(success: success)
            }
        }
    }
#endif
