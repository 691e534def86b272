import Foundation

/// A task executor of dedicated threads, for code that calls the PostgreSQL store: the store's
/// protocol is synchronous, so its calls block their thread while PostgreSQL answers (at most a
/// `PostgresDeadlines` wait each). Swift's cooperative pool has one thread per core; a blocked
/// one there stops every task queued behind it, the signal handler's and the HTTP server's
/// included.
///
/// Use: run a process's services inside `threads.run { }`. Their tasks, their child tasks and
/// the default actors they call (the engine's runtime) then run here, never on the cooperative
/// pool. Unstructured tasks (`Task { }`) do not inherit the preference: one that calls the store
/// must be given it (`Task(executorPreference:)`). `run` watches for those it was not given:
/// each wait on PostgreSQL (`PostgresPool`) by a task started inside `run` that is not on these
/// threads is a stray wait, counted in `strayWaits` and reported to `onStrayWait`.
///
/// The threads live as long as the process; jobs run in the order they were enqueued, on
/// whichever thread is free.
public final class DatabaseThreads: TaskExecutor, @unchecked Sendable {
    /// The number of threads.
    public let count: Int
    private let onStrayWait: @Sendable (String) -> Void
    private let condition = NSCondition()
    /// Guarded by `condition`.
    private var strays = 0
    /// Guarded by `condition`: jobs waiting, oldest at `head`.
    private var jobs: [UnownedJob] = []
    private var head = 0

    /// Starts `count` threads (at least 1), named `name-1`, `name-2`, ... `onStrayWait` is told
    /// what waited, on the waiting thread, for each stray wait (a process logs it).
    public init(count: Int, name: String = "postgres", onStrayWait: @escaping @Sendable (String) -> Void = { _ in }) {
        self.count = max(1, count)
        self.onStrayWait = onStrayWait
        for index in 1...self.count {
            let thread = Thread { self.work() }
            thread.name = "\(name)-\(index)"
            thread.start()
        }
    }

    /// Whether the calling thread is one of a `DatabaseThreads`' threads.
    public static var isCurrentThread: Bool { Thread.current.threadDictionary[marker] != nil }
    private static let marker = "EngagementEngine.DatabaseThreads"

    /// Runs `operation` on these threads, with them as its tasks' executor preference, watching
    /// its waits on PostgreSQL (see the type's notes).
    public func run<T>(_ operation: () async throws -> T) async rethrows -> T {
        try await Self.$watching.withValue(self) {
            try await withTaskExecutorPreference(self) {
                // The preference moves the task at its next suspension, not at once: until then
                // it stays on the thread it was on, and a default actor it calls would run there.
                await Task.yield()
                return try await operation()
            }
        }
    }

    /// Waits on PostgreSQL made off these threads by tasks started inside `run` so far.
    public var strayWaits: Int {
        condition.lock()
        defer { condition.unlock() }
        return strays
    }

    /// The threads whose `run` the current task was started in (inherited by unstructured
    /// tasks, unlike the preference).
    @TaskLocal static var watching: DatabaseThreads?

    /// Called before a wait on PostgreSQL (`what`) blocks the calling thread: counts and reports
    /// it when it is a stray wait.
    static func noteWait(_ what: String) {
        guard let threads = watching, !isCurrentThread else { return }
        threads.condition.lock()
        threads.strays += 1
        threads.condition.unlock()
        threads.onStrayWait(what)
    }

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
