import ArgumentParser
import Foundation
import Simulation
import Testing

@testable import simulate

/// `simulate`'s flags: the scenario file's limits, field-named errors and exit 64.
@Suite struct CommandLineTests {
    /// The exit status and message ArgumentParser gives for `arguments`, or nil when they parse.
    static func refusal(_ arguments: [String]) -> (status: Int32, message: String)? {
        do {
            _ = try Simulate.parse(arguments)
            return nil
        } catch {
            return (Simulate.exitCode(for: error).rawValue, Simulate.message(for: error))
        }
    }

    @Test(arguments: [
        // The issue's probe: these trapped, aborted or were accepted beyond the file's limits.
        (
            ["--weeks", "2000000000000000"],
            "--weeks must be in 1...520 (the scenario file's limit), got 2000000000000000"
        ),
        (["--users", "100000000000"], "--users must be in 1...10000000 (the scenario file's limit), got 100000000000"),
        (["--users", "0"], "--users must be in 1...10000000"),
        (["--users", "-3"], "--users must be in 1...10000000 (the scenario file's limit), got -3"),
        (["--weeks", "-1"], "--weeks must be in 1...520"),
        (["--threads", "65"], "--threads must be in 1...64"),
        (["--weeks", "99999999999999999999"], "--weeks"),
        (["--seed", "18446744073709551616"], "--seed"),
        (["--seed", "-1"], "--seed"),
        (["--users", "ten"], "--users"),
        (["--store", "postgres"], "--store must be none, memory or sqlite, got \"postgres\""),
        (["--max-memory", "lots"], "--max-memory must be a size such as 500M"),
        (["--out", ""], "--out must not be empty"),
        (["--frobnicate"], "--frobnicate"),
        (["--weeks"], "--weeks"),
    ])
    func aBadFlagExits64NamingTheFlag(arguments: [String], message: String) throws {
        let refusal = try #require(Self.refusal(arguments), "\(arguments) should be refused")
        #expect(refusal.status == 64)
        #expect(refusal.message.contains(message), "\(refusal.message)")
    }

    @Test func eventsAreWrittenOnlyWhenAskedAndNoEventsStaysAccepted() throws {
        #expect(try Simulate.parse([]).events == false)
        #expect(try Simulate.parse(["--no-events"]).events == false)
        #expect(try Simulate.parse(["--events"]).events == true)
        let full = try Simulate.parse([
            "--seed", "18446744073709551615", "--users", "10000000", "--weeks", "520", "--threads", "64",
            "--store", "sqlite", "--max-memory", "2G",
        ])
        #expect(full.seed == UInt64.max && full.users == 10_000_000 && full.storeKind == .sqlite)
    }

    @Test func theHelpListsTheExitStatuses() {
        let help = Simulate.helpMessage().split(whereSeparator: \.isWhitespace).joined(separator: " ")
        for text in ["--events", "--max-memory", "64 bad usage", "65 bad scenario file", "74 output error"] {
            #expect(help.contains(text), "help lacks \(text)")
        }
    }

    @Test func aRunFarBeyondTheMachineIsRefusedBeforeItStarts() throws {
        let command = try Simulate.parse(["--scenario", scenarioFile("smoke")])
        var scenario = try command.resolveScenario()
        scenario.users = 10_000_000
        scenario.weeks = 520
        #expect {
            _ = try command.checkEstimate(of: scenario)
        } throws: { error in
            guard let failure = error as? CommandFailure else { return false }
            return failure.status == 64
                && failure.message.contains("users x weeks = 10000000 x 520 needs about")
                && failure.message.contains("more than the memory available on this machine")
        }
    }

    @Test func maxMemoryLowersTheLimit() throws {
        let command = try Simulate.parse(["--scenario", scenarioFile("smoke"), "--max-memory", "1M"])
        let scenario = try command.resolveScenario()
        #expect {
            _ = try command.checkEstimate(of: scenario)
        } throws: { ($0 as? CommandFailure)?.message.contains("more than --max-memory (1 MB)") == true }
        let generous = try Simulate.parse(["--scenario", scenarioFile("smoke"), "--max-memory", "4G"])
        #expect(try generous.checkEstimate(of: scenario).memoryBytes < 4 << 30)
    }

    @Test func theFlagsOverrideTheFileWithinTheSameLimits() throws {
        let command = try Simulate.parse([
            "--scenario", scenarioFile("smoke"), "--users", "30", "--weeks", "2", "--seed", "9", "--threads", "1",
        ])
        let scenario = try command.resolveScenario()
        #expect(scenario.users == 30 && scenario.weeks == 2 && scenario.seed == 9 && scenario.threads == 1)
    }

    @Test func aMissingOrBadScenarioFileGivesItsStatus() throws {
        #expect {
            _ = try Simulate.parse(["--scenario", "/nonexistent/x.json"]).resolveScenario()
        } throws: { ($0 as? CommandFailure)?.status == 64 }
        let path = NSTemporaryDirectory() + "simulate-bad-\(getpid()).json"
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Data(#"{"name": "bad", "start": "2027-03-01", "preferences": {"quietHours": {"": 1}}}"#.utf8)
            .write(to: URL(fileURLWithPath: path))
        #expect {
            _ = try Simulate.parse(["--scenario", path]).resolveScenario()
        } throws: { error in
            guard let failure = error as? CommandFailure else { return false }
            return failure.status == 65 && failure.message.contains("preferences.quietHours.")
        }
    }

    @Test func theDefaultOutputFolderIsTheSanitisedScenarioName() throws {
        let command = try Simulate.parse([])
        var scenario = try Simulate.parse(["--scenario", scenarioFile("smoke")]).resolveScenario()
        scenario.name = "../../outside"
        #expect(command.outputPath(for: scenario) == ".simulate/_.._outside")
        #expect(try Simulate.parse(["--out", "/tmp/x"]).outputPath(for: scenario) == "/tmp/x")
    }
}

@Suite struct OutputErrorTests {
    @Test func anOutputErrorIsOneLineWithoutAFoundationDump() {
        let missing = CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: "/x/report.json"])
        #expect(Simulate.explain(missing) == "no such file or folder: /x/report.json")
        #expect(
            Simulate.explain(SimulationError.eventLog(missing))
                == "writing events.jsonl failed: no such file or folder: /x/report.json")
        #expect(Simulate.explain(POSIXError(.ENOSPC)) == "No space left on device")
    }
}

/// The path of a shipped scenario file.
func scenarioFile(_ name: String) -> String {
    URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../Simulation/Scenarios/\(name).json").standardized.path
}
