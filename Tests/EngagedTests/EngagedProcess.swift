import Foundation
import TestSupport
import Testing

/// The built `engaged` binary as an operator runs it, for what only a process shows: its exit
/// status, its log on standard error, its open-file limit (`ulimit -n` in the shell that starts
/// it) and its CPU time.
final class EngagedProcess: @unchecked Sendable {
    let process: SpawnedProcess
    let folder: URL
    let logFile: URL

    static let apiKey = TestServer.apiKey
    static let userTokenKeys = "k1:test-user-token-key-one-0123456789"

    /// `engaged` beside the test bundle (swift test builds every product into the same folder).
    static func binary() throws -> URL {
        let folders = [
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent(),
            Bundle.main.bundleURL.deletingLastPathComponent(), Bundle.main.bundleURL,
        ]
        let found = folders.map { $0.appendingPathComponent("engaged") }
            .first { FileManager.default.isExecutableFile(atPath: $0.path) }
        return try #require(found, "no engaged binary beside \(folders.map(\.path))")
    }

    /// Starts `engaged ARGUMENTS` with the test secrets (or `environment` over them), under
    /// `ulimit -n openFiles` when given.
    init(_ arguments: [String], environment: [String: String] = [:], openFiles: Int? = nil) throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("engaged-process-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        logFile = folder.appendingPathComponent("log")
        FileManager.default.createFile(atPath: logFile.path, contents: nil)
        let binary = try Self.binary().path
        let quoted = ([binary] + arguments).map { "'\($0.replacingOccurrences(of: "'", with: "'\\''"))'" }
        // `SpawnedProcess`, not Foundation's `Process`, whose launch crashes now and then in a
        // process with as many descriptors open as this suite's.
        process = try SpawnedProcess(
            "/bin/sh",
            ["-c", (openFiles.map { "ulimit -n \($0) && " } ?? "") + "exec " + quoted.joined(separator: " ")],
            environment: ProcessInfo.processInfo.environment
                .merging(["ENGAGED_API_KEY": Self.apiKey, "ENGAGED_USER_TOKEN_KEYS": Self.userTokenKeys]) { $1 }
                .merging(environment) { $1 },
            standardError: .file(logFile.path))
    }

    /// A server still running is killed and reaped with `process`.
    deinit { try? FileManager.default.removeItem(at: folder) }

    var log: String { (try? String(contentsOf: logFile, encoding: .utf8)) ?? "" }

    /// The API's port, from the "listening on 127.0.0.1:PORT" line; nil if it exits or takes
    /// longer than `seconds`.
    func port(withinSeconds seconds: Double = 60) async throws -> Int? {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while ContinuousClock.now < deadline, process.isRunning {
            if let range = log.range(of: #"listening on 127\.0\.0\.1:[0-9]+"#, options: .regularExpression) {
                return Int(log[range].split(separator: ":").last ?? "")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        return nil
    }

    /// The exit status, waiting at most `seconds` (nil: still running).
    func exitStatus(withinSeconds seconds: Double = 60) async throws -> Int32? {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while process.isRunning, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        return process.isRunning ? nil : process.terminationStatus
    }

    /// User and system CPU seconds the process has used (Linux `/proc`).
    var cpuSeconds: Double? {
        guard let stat = try? String(contentsOfFile: "/proc/\(process.processIdentifier)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return nil }
        let fields = stat[stat.index(close, offsetBy: 2)...].split(separator: " ")
        // Fields 14 and 15 (utime, stime) of proc(5); the split starts at field 3.
        guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }
}
