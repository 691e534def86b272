import Foundation

/// A task executor of dedicated threads, for code that calls the PostgreSQL store: the store's
/// protocol is synchronous, so its calls block their thread while PostgreSQL answers (at most a
/// `PostgresDeadlines` wait each). Swift's cooperative pool has one thread per core; a blocked
/// one there stops every task queued behind it, the signal handler's and the HTTP server's
/// included.
///
/// Use: run a process's services inside `withTaskExecutorPreference(threads)`. Their tasks,
/// their child tasks and the default actors they call (the engine's runtime) then run here,
/// never on the cooperative pool. Unstructured tasks (`Task { }`) do not inherit the preference.
///
/// The threads live as long as the process; jobs run in the order they were enqueued, on
/// whichever thread is free.
public final class DatabaseThreads: TaskExecutor, @unchecked Sendable {
    /// The number of threads.
    public let count: Int
    private let condition = NSCondition()
    /// Guarded by `condition`: jobs waiting, oldest at `head`.
    private var jobs: [UnownedJob] = []
    private var head = 0

    /// Starts `count` threads (at least 1), named `name-1`, `name-2`, ...
    public init(count: Int, name: String = "postgres") {
        self.count = max(1, count)
        for index in 1...self.count {
            let thread = Thread { self.work() }
            thread.name = "\(name)-\(index)"
            thread.start()
        }
    }

    /// Whether the calling thread is one of a `DatabaseThreads`' threads.
    public static var isCurrentThread: Bool { Thread.current.threadDictionary[marker] != nil }
    private static let marker = "EngagementEngine.DatabaseThreads"

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    private func work() {
        Thread.current.threadDictionary[Self.marker] = true
        while true {
            condition.lock()
            while head == jobs.count { condition.wait() }
            let job = jobs[head]
            head += 1
            if head > 1_024, head * 2 > jobs.count {
                jobs.removeFirst(head)
                head = 0
            }
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}
