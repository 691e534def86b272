import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The test processes' launcher (`SpawnedProcess`): exit statuses, signals, where the output
/// goes, and that the child inherits no descriptor of the test process.
@Suite("Spawned process")
struct SpawnedProcessTests {
    func file() -> String { FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString).path }

    @Test func anExitStatusAndASignalAreTold() throws {
        let exited = try SpawnedProcess("/bin/sh", ["-c", "exit 3"])
        #expect(exited.waitUntilExit() == 3 && !exited.endedBySignal && !exited.isRunning)
        let sleeper = try SpawnedProcess("/bin/sleep", ["30"])
        #expect(sleeper.isRunning && sleeper.terminationStatus == -1)
        sleeper.terminate()
        #expect(sleeper.waitUntilExit() == SIGTERM && sleeper.endedBySignal)
        #expect(throws: SpawnError.self) { try SpawnedProcess("/nonexistent/program", []) }
    }

    @Test func theChildWritesWhereAskedInItsEnvironmentAndHoldsNothingElse() throws {
        let output = file()
        defer { try? FileManager.default.removeItem(atPath: output) }
        // A descriptor of the test process that is not close-on-exec.
        let held = open("/dev/null", O_RDONLY)
        defer { close(held) }
        let child = try SpawnedProcess(
            "/bin/sh", ["-c", "echo \"$GREETING\"; ls /proc/self/fd >&2"], environment: ["GREETING": "hello"],
            standardOutput: .file(output), standardError: .file(output))
        #expect(child.waitUntilExit() == 0)
        let lines = try String(contentsOfFile: output, encoding: .utf8).split(separator: "\n")
        #expect(lines.first == "hello")
        // 0, 1, 2 and the one `ls` opens to list the folder: none of the test process's.
        #expect(lines.dropFirst().compactMap { Int32($0) }.filter { $0 > 2 }.count <= 1, "held \(held): \(lines)")
    }
}
