// The kit's background refresh over Apple's BackgroundTasks. This file is compiled on Apple
// platforms only; on Linux its syntax is checked (`swiftc -parse` in CI), and when to refresh is
// `PlanRefresh`, tested here.
#if canImport(BackgroundTasks)
    public import BackgroundTasks
    public import Foundation
    public import Models

    /// The app refresh task that keeps the device's plan current while the app is not running.
    /// Its identifier must be listed under `BGTaskSchedulerPermittedIdentifiers` in the app's
    /// Info.plist.
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

        /// Registers the handler; call it before the app finishes launching. `refresh` is the
        /// app's own composition of the kit (flush the `EventQueue`, pull the plan with
        /// `PlanSync.ifNoneMatch` and apply it); it is cancelled when the system ends the task's
        /// time. Each run asks for the next one (`PlanRefresh.nextRefresh`). False when the
        /// identifier is not permitted.
        @discardableResult
        public static func register(
            identifier: String, policy: PlanRefresh = PlanRefresh(), now: @escaping @Sendable () -> Instant,
            refresh: @escaping @Sendable () async -> Result
        ) -> Bool {
            BGTaskScheduler.shared.register(forTaskWithIdentifier: identifier, using: nil) { task in
                nonisolated(unsafe) let task = task
                let work = Task {
                    let result = await refresh()
                    try? schedule(
                        identifier: identifier, at: policy.nextRefresh(at: now(), horizonEnd: result.horizonEnd))
                    task.setTaskCompleted(success: result.succeeded && !Task.isCancelled)
                }
                task.expirationHandler = { work.cancel() }
            }
        }

        /// Asks the system to run the refresh no earlier than `instant`; throws the scheduler's
        /// refusal (too many requests, not permitted, background refresh off).
        public static func schedule(identifier: String, at instant: Instant) throws {
            let request = BGAppRefreshTaskRequest(identifier: identifier)
            request.earliestBeginDate = Date(timeIntervalSince1970: TimeInterval(instant.secondsSinceEpoch))
            try BGTaskScheduler.shared.submit(request)
        }
    }
#endif
