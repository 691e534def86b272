import Foundation
import Simulation
import Testing

/// The built `simulate` binary as a user runs it: exit statuses, messages on standard error,
/// `SEED=` on a pipe before the run ends, and an output folder that never holds a mix.
@Suite(.serialized) struct ProcessTests {
    /// `simulate` beside the test bundle (swift test builds every product into the same folder).
    static func binary() throws -> URL {
        let folders = [
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent(),
            Bundle.main.bundleURL.deletingLastPathComponent(), Bundle.main.bundleURL,
        ]
        let found = folders.map { $0.appendingPathComponent("simulate") }
            .first { FileManager.default.isExecutableFile(atPath: $0.path) }
        return try #require(found, "no simulate binary beside \(folders.map(\.path))")
    }

    static func launch(_ arguments: [String]) throws -> (process: Process, stdout: Pipe, stderr: Pipe) {
        let process = Process()
        process.executableURL = try binary()
        process.arguments = arguments
        // Scenario names resolve against the package root, as `make simulate` runs it.
        process.currentDirectoryURL =
            URL(fileURLWithPath: scenarioFile("smoke")).deletingLastPathComponent()
            .appendingPathComponent("../..").standardized
        let stdout = Pipe()
        let stderr = Pipe()
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        return (process, stdout, stderr)
    }

    static func run(_ arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
        let (process, stdout, stderr) = try launch(arguments)
        let output = stdout.fileHandleForReading.readDataToEndOfFile()
        let errors = stderr.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (
            process.terminationStatus, String(decoding: output, as: UTF8.self), String(decoding: errors, as: UTF8.self)
        )
    }

    static func freshFolder(_ name: String) -> String {
        let path = NSTemporaryDirectory() + "simulate-process-\(name)-\(getpid())"
        defer { try? FileManager.default.removeItem(atPath: path) }
        try? FileManager.default.removeItem(atPath: path)
        return path
    }

    @Test func aWeekCountBeyondTheLimitExits64WithTheFlagAndTheUsage() throws {
        let result = try Self.run(["--weeks", "2000000000000000"])
        #expect(result.status == 64)
        #expect(result.stderr.contains("--weeks must be in 1...520 (the scenario file's limit), got 2000000000000000"))
        #expect(result.stderr.contains("Usage: simulate"))
    }

    @Test func aSeedBeyondUInt64InTheFileExits65NamingTheKeyAndLine() throws {
        let path = NSTemporaryDirectory() + "simulate-seed-\(getpid()).json"
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Data("{\n\"name\": \"big\",\n\"start\": \"2027-03-01\",\n\"seed\": 18446744073709551616\n}".utf8)
            .write(to: URL(fileURLWithPath: path))
        let result = try Self.run(["--scenario", path])
        #expect(result.status == 65)
        #expect(
            result.stderr
                == "simulate: \(path):4:9: seed: must be in 0...18446744073709551615, got 18446744073709551616\n")
    }

    @Test func aSecondRunOnTheSameFolderExits74AtOnce() throws {
        let path = Self.freshFolder("locked")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let holder = try OutputFolder.claim(path)
        defer { holder.abandon() }
        let result = try Self.run(["--scenario", "smoke", "--users", "5", "--out", path])
        #expect(result.status == 74)
        #expect(result.stderr.contains("output folder \(path): another simulate run is using it"))
        #expect(!result.stdout.contains("SEED="), "refused before the run starts")
        withExtendedLifetime(holder) {}
    }

    @Test func aSmallRunWritesItsOutputsAndNoEventLogByDefault() throws {
        let path = Self.freshFolder("small")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let result = try Self.run(["--scenario", "smoke", "--users", "12", "--out", path])
        #expect(result.status == 0 || result.status == 1, "no invariant violated: \(result.stdout)")
        #expect(result.stdout.hasPrefix("SEED=7\n"))
        #expect(result.stderr.contains("simulate: 100% (day 7/7)"), "progress lines on a pipe: \(result.stderr)")
        let files = try FileManager.default.contentsOfDirectory(atPath: path).sorted()
        #expect(files == [".simulate-outputs", ".simulate.lock", "population.json", "report.html", "report.json"])
    }

    @Test func aKilledRunHasPrintedItsSeedAndLeavesNoHalfOutput() throws {
        let path = Self.freshFolder("killed")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let (process, stdout, _) = try Self.launch([
            "--scenario", "smoke", "--users", "3000", "--weeks", "8", "--seed", "42", "--out", path,
        ])
        var seen = ""
        while !seen.contains("\n") {
            let chunk = stdout.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            seen += String(decoding: chunk, as: UTF8.self)
        }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        #expect(seen.hasPrefix("SEED=42\n"), "SEED= reaches a pipe at once: \(seen)")
        #expect(!FileManager.default.fileExists(atPath: path + "/report.json"))
        #expect(!FileManager.default.fileExists(atPath: path + "/population.json"))

        // The next run takes the folder over and clears the killed run's staging folder.
        let next = try Self.run(["--scenario", "smoke", "--users", "4", "--out", path])
        #expect(next.status == 0 || next.status == 1)
        let files = try FileManager.default.contentsOfDirectory(atPath: path)
        #expect(!files.contains { $0.hasPrefix(".staging-") }, "\(files)")
        #expect(files.contains("report.json"))
    }
}
