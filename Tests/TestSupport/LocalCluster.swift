public import Foundation
import Glibc

/// A PostgreSQL server of one test's own (`scripts/pg-local.sh` in a new folder), for what the
/// shared test server must not suffer: being stopped, restarted, frozen.
public final class LocalCluster: @unchecked Sendable {
    public let folder: URL
    /// postgres://engaged@127.0.0.1:PORT/postgres; the same after `stop` and `start`.
    public private(set) var url: String

    /// The package's root, where `scripts/pg-local.sh` is.
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// Initialises and starts a server in a new folder under the temporary directory.
    public init() throws {
        // The postgres user runs the server when the tests run as root: /tmp, not a private folder.
        folder = URL(fileURLWithPath: "/tmp").appendingPathComponent("engaged-pg-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: folder.path)
        url = try Self.script(["start", folder.path])
    }

    deinit {
        _ = try? Self.script(["stop", folder.path])
        try? FileManager.default.removeItem(at: folder)
    }

    public func stop() throws { try Self.script(["stop", folder.path]) }
    public func start() throws { url = try Self.script(["start", folder.path]) }
    /// Restarts the server with a `fast` or `immediate` shutdown; returns once it accepts connections.
    public func restart(mode: String) throws { try Self.script(["restart", folder.path, mode]) }

    /// The server's processes: the postmaster (from `postmaster.pid`) and its children.
    public func processIDs() throws -> [pid_t] {
        let pidFile = folder.appendingPathComponent("data/postmaster.pid")
        let first = try String(contentsOf: pidFile, encoding: .utf8).split(separator: "\n").first ?? ""
        guard let postmaster = pid_t(first.trimmingCharacters(in: .whitespaces)) else {
            throw LocalClusterError(description: "no server process in \(pidFile.path)")
        }
        var children: [pid_t] = []
        for entry in try FileManager.default.contentsOfDirectory(atPath: "/proc") {
            guard let pid = pid_t(entry),
                let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")")
            else { continue }
            // Field 4 of proc(5) is the parent's id; the split starts at field 3.
            let fields = stat[stat.index(close, offsetBy: 2)...].split(separator: " ")
            if fields.count > 1, pid_t(fields[1]) == postmaster { children.append(pid) }
        }
        return [postmaster] + children
    }

    /// Sends `signal` to every process of the server.
    public func signal(_ signal: Int32) throws {
        for pid in try processIDs() { kill(pid, signal) }
    }

    /// Runs `scripts/pg-local.sh ARGUMENTS` and returns its standard output, trimmed
    /// (`SpawnedProcess`: the server it starts inherits no descriptor of the test process).
    @discardableResult
    public static func script(_ arguments: [String]) throws -> String {
        try run(root.appendingPathComponent("scripts/pg-local.sh").path, arguments)
    }

    /// Runs the program at `path` with `arguments` and returns its standard output, trimmed;
    /// throws when it exits with another status than 0.
    @discardableResult
    public static func run(_ path: String, _ arguments: [String]) throws -> String {
        var pipe: [Int32] = [0, 0]
        // Close-on-exec: only the copy on standard output reaches the script, and no server it
        // starts keeps the pipe open.
        guard Glibc.pipe(&pipe) == 0 else { throw LocalClusterError(description: "pipe: \(errno)") }
        for descriptor in pipe { _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC) }
        let child: SpawnedProcess
        do {
            defer { close(pipe[1]) }
            child = try SpawnedProcess(
                path, arguments, standardOutput: .descriptor(pipe[1]), standardError: .descriptor(2))
        } catch {
            close(pipe[0])
            throw LocalClusterError(description: "\(error)")
        }
        defer { close(pipe[0]) }
        var output: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4_096)
        while true {
            let count = read(pipe[0], &buffer, buffer.count)
            if count > 0 { output += buffer[0..<count] } else if count == 0 || errno != EINTR { break }
        }
        let status = child.waitUntilExit()
        guard !child.endedBySignal, status == 0 else {
            throw LocalClusterError(description: "\(path) \(arguments) exited with status \(status)")
        }
        return String(decoding: output, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

public struct LocalClusterError: Error, CustomStringConvertible {
    public let description: String
}
