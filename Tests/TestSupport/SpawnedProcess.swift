public import Glibc
import Synchronization

/// A child process for a test, started with `posix_spawn` and waited for with `waitpid`.
///
/// Not Foundation's `Process`: on Linux its `run()` lists `/proc/self/fd` copying each directory
/// entry's whole 256-byte name field, which reads past the end of the entry and now and then
/// crashes a process with many descriptors open, as the server tests are (a crash in `memcpy`
/// under `Process.run()`; fixed in swift-corelibs-foundation after this toolchain). It also
/// reaps its children on a thread of its own, which a test process does not always run.
///
/// The child reads standard input from /dev/null, writes standard output and error where asked,
/// and inherits no other descriptor of the test process: a server it leaves running holds
/// nothing of the test's (a socket, a lock file the test runner was started under).
public final class SpawnedProcess: Sendable {
    /// Where a standard stream goes.
    public enum Output: Sendable {
        case null
        /// The file at this path, created or appended to.
        case file(String)
        /// This descriptor of the test process (a pipe's write end), duplicated in the child.
        case descriptor(Int32)
    }

    public let processIdentifier: pid_t

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (since 2.34): a GNU extension the Glibc
    /// module does not import, looked up by name. Without it (an older glibc) the child inherits
    /// what the test process did not mark close-on-exec.
    private static let addCloseFrom:
        (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>?, Int32) -> Int32)? = {
            guard let symbol = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np") else { return nil }
            return unsafeBitCast(
                symbol, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>?, Int32) -> Int32).self)
        }()
    /// The wait status once the child was reaped.
    private let reaped = Mutex<Int32?>(nil)

    /// Starts the program at `path` with `arguments`, in `environment` (nil: the test process's).
    public init(
        _ path: String, _ arguments: [String], environment: [String: String]? = nil,
        standardOutput: Output = .null, standardError: Output = .null
    ) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        for (stream, output) in [(Int32(1), standardOutput), (2, standardError)] {
            switch output {
            case .null: posix_spawn_file_actions_addopen(&actions, stream, "/dev/null", O_WRONLY, 0)
            case .file(let file):
                posix_spawn_file_actions_addopen(&actions, stream, file, O_WRONLY | O_CREAT | O_APPEND, 0o644)
            case .descriptor(let descriptor): posix_spawn_file_actions_adddup2(&actions, descriptor, stream)
            }
        }
        _ = Self.addCloseFrom?(&actions, 3)
        // A dispatch worker thread blocks every signal, and the child would inherit that mask:
        // the child starts with none blocked and every signal at its default.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        sigemptyset(&none)
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let spawned: Int32
        if let environment {
            let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
            defer { for pointer in envp { free(pointer) } }
            spawned = posix_spawn(&pid, path, &actions, &attributes, argv, envp)
        } else {
            spawned = posix_spawn(&pid, path, &actions, &attributes, argv, environ)
        }
        guard spawned == 0 else {
            throw SpawnError(description: "cannot run \(path): \(String(cString: strerror(spawned)))")
        }
        processIdentifier = pid
    }

    deinit {
        if isRunning {
            signal(SIGKILL)
            waitUntilExit()
        }
    }

    /// Whether the child has not exited yet (it is reaped when it has).
    public var isRunning: Bool { wait(blocking: false) == nil }

    /// Sends `signal` to the child, unless it was reaped.
    public func signal(_ signal: Int32) {
        reaped.withLock { status in
            if status == nil { _ = kill(processIdentifier, signal) }
        }
    }

    /// SIGTERM, as `Process.terminate()`.
    public func terminate() { signal(SIGTERM) }

    /// Waits for the child to exit; returns `terminationStatus`.
    @discardableResult
    public func waitUntilExit() -> Int32 {
        _ = wait(blocking: true)
        return terminationStatus
    }

    /// The exit status, or the number of the signal that ended the child (as `Process`);
    /// -1 while it runs.
    public var terminationStatus: Int32 {
        guard let status = wait(blocking: false) else { return -1 }
        return status & 0x7f == 0 ? (status >> 8) & 0xff : status & 0x7f
    }

    /// Whether a signal ended the child.
    public var endedBySignal: Bool {
        guard let status = wait(blocking: false) else { return false }
        return status & 0x7f != 0
    }

    /// The wait status, reaping the child when it has exited; nil while it runs. A blocking wait
    /// polls every 10 ms, so no lock is held while the child runs (another thread may signal it).
    private func wait(blocking: Bool) -> Int32? {
        while true {
            let status = reaped.withLock { reaped -> Int32? in
                if let reaped { return reaped }
                var status: Int32 = 0
                var result: pid_t
                repeat { result = waitpid(processIdentifier, &status, WNOHANG) } while result == -1 && errno == EINTR
                // Reaped by someone else (ECHILD): gone, with no status to tell.
                if result == -1 { status = 0 } else if result != processIdentifier { return nil }
                reaped = status
                return status
            }
            if status != nil || !blocking { return status }
            usleep(10_000)
        }
    }
}

public struct SpawnError: Error, CustomStringConvertible {
    public let description: String

    public init(description: String) { self.description = description }
}
