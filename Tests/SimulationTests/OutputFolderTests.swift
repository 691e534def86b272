import Foundation
import Models
import Testing

@testable import Simulation

/// The output folder: one run at a time, a complete run's files or the earlier run's, and nothing
/// deleted that the simulator did not write.
@Suite struct OutputFolderTests {
    static func freshFolder(_ name: String) -> String {
        let path = NSTemporaryDirectory() + "simulate-out-\(name)-\(getpid())"
        defer { try? FileManager.default.removeItem(atPath: path) }
        try? FileManager.default.removeItem(atPath: path)
        return path
    }

    static func write(_ text: String, to path: String) throws {
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
    }

    static func read(_ path: String) -> String? { try? String(contentsOfFile: path, encoding: .utf8) }

    @Test func aSecondClaimOnTheSameFolderFailsAtOnce() throws {
        let path = Self.freshFolder("lock")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let first = try OutputFolder.claim(path)
        #expect {
            _ = try OutputFolder.claim(path)
        } throws: { error in
            (error as? OutputFolderError)?.problem.contains("another simulate run is using it") == true
        }
        first.abandon()
        withExtendedLifetime(first) {}
    }

    @Test func theLockIsReleasedWhenTheFirstRunEnds() throws {
        let path = Self.freshFolder("release")
        defer { try? FileManager.default.removeItem(atPath: path) }
        do {
            let first = try OutputFolder.claim(path)
            first.abandon()
        }
        let second = try OutputFolder.claim(path)
        second.abandon()
    }

    @Test func aCommitReplacesTheEarlierRunsFilesReportLast() throws {
        let path = Self.freshFolder("commit")
        defer { try? FileManager.default.removeItem(atPath: path) }
        do {
            let first = try OutputFolder.claim(path)
            try Self.write("population 1", to: first.stagingPath + "/population.json")
            try Self.write("report 1", to: first.stagingPath + "/report.json")
            try Self.write("events 1", to: first.stagingPath + "/events.jsonl")
            try first.commit()
            #expect(!FileManager.default.fileExists(atPath: first.stagingPath))
        }  // the first run ends: its lock is released
        #expect(Self.read(path + "/report.json") == "report 1")
        #expect(Self.read(path + "/" + OutputFolder.manifestName) == "events.jsonl\npopulation.json\nreport.json\n")

        // A run without --events: the earlier run's events.jsonl goes, it would not match.
        let second = try OutputFolder.claim(path)
        try Self.write("population 2", to: second.stagingPath + "/population.json")
        try Self.write("report 2", to: second.stagingPath + "/report.json")
        try second.commit()
        #expect(Self.read(path + "/report.json") == "report 2")
        #expect(Self.read(path + "/population.json") == "population 2")
        #expect(!FileManager.default.fileExists(atPath: path + "/events.jsonl"))
    }

    @Test func aKilledRunLeavesTheEarlierOutputsAndItsStagingIsRemovedNextTime() throws {
        let path = Self.freshFolder("killed")
        defer { try? FileManager.default.removeItem(atPath: path) }
        do {
            let first = try OutputFolder.claim(path)
            try Self.write("report 1", to: first.stagingPath + "/report.json")
            try first.commit()
        }
        // A run that was killed: its staging folder (with the marker) stays behind, unlocked.
        let killed = path + "/.staging-999999"
        try FileManager.default.createDirectory(atPath: killed, withIntermediateDirectories: false)
        try Self.write("", to: killed + "/" + OutputFolder.stagingMarkerName)
        try Self.write("half a population", to: killed + "/population.json")
        // A folder that merely looks like one (no marker) is somebody else's.
        let lookalike = path + "/.staging-notours"
        try FileManager.default.createDirectory(atPath: lookalike, withIntermediateDirectories: false)
        #expect(Self.read(path + "/report.json") == "report 1")

        let next = try OutputFolder.claim(path)
        #expect(!FileManager.default.fileExists(atPath: killed))
        #expect(FileManager.default.fileExists(atPath: lookalike))
        next.abandon()
    }

    @Test(arguments: ["store.sqlite", "events.jsonl", "report.json"])
    func aFolderWithAnOutputsNameIsRefusedNotDeleted(name: String) throws {
        let path = Self.freshFolder("folder-\(name)")
        defer { try? FileManager.default.removeItem(atPath: path) }
        try FileManager.default.createDirectory(atPath: path + "/" + name, withIntermediateDirectories: true)
        try Self.write("precious", to: path + "/" + name + "/keep.txt")
        #expect {
            _ = try OutputFolder.claim(path)
        } throws: { error in
            guard let error = error as? OutputFolderError else { return false }
            return error.problem.contains("\"\(name)\" is a folder") && error.problem.contains("deletes nothing")
        }
        #expect(Self.read(path + "/" + name + "/keep.txt") == "precious")
    }

    @Test func aFileTheSimulatorDidNotWriteIsRefusedNotReplaced() throws {
        let path = Self.freshFolder("foreign")
        defer { try? FileManager.default.removeItem(atPath: path) }
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        try Self.write("my own notes", to: path + "/report.json")
        #expect {
            _ = try OutputFolder.claim(path)
        } throws: { ($0 as? OutputFolderError)?.problem.contains("was not written by simulate") == true }
        #expect(Self.read(path + "/report.json") == "my own notes")
    }

    @Test func anOutputFolderThatIsAFileIsRefused() throws {
        let path = Self.freshFolder("file")
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Self.write("x", to: path)
        #expect {
            _ = try OutputFolder.claim(path)
        } throws: { ($0 as? OutputFolderError)?.problem == "is a file, not a folder" }
        try FileManager.default.removeItem(atPath: path)
    }

    @Test func aFolderThatCannotBeCreatedNamesTheLevelAndTheReason() {
        #expect {
            _ = try OutputFolder.claim("/dev/null/out")
        } throws: { ($0 as? OutputFolderError)?.problem == "cannot be created: /dev/null/out: Not a directory" }
    }

    @Test(arguments: [
        ("default", "default"), ("../../etc", "_.._etc"), ("/tmp/x", "_tmp_x"), ("..", "scenario"),
        (".hidden", "hidden"), ("a b/c", "a_b_c"), ("smoke-2.v1", "smoke-2.v1"),
    ])
    func aScenarioNameBecomesASafeFolderName(name: String, folder: String) {
        #expect(OutputFolder.folderName(forScenario: name) == folder)
    }
}

@Suite struct RunEstimateTests {
    @Test(arguments: [
        ("500M", 500 << 20), ("4G", 4 << 30), ("4GB", 4 << 30), ("1.5g", 3 << 29), ("512k", 512 << 10),
        ("1073741824", 1 << 30),
    ])
    func aSizeIsRead(text: String, bytes: Int) { #expect(RunEstimate.parseBytes(text) == bytes) }

    @Test(arguments: ["", "G", "-1G", "lots", "0", "1e3", "1.2.3M", "99999999999T", "nan"])
    func aBadSizeIsRefused(text: String) { #expect(RunEstimate.parseBytes(text) == nil) }

    @Test func theEstimateGrowsWithUsersAndWeeksAndStaysWithinIntForTheLargestRun() {
        let small = RunEstimate(users: 200, weeks: 1, threads: 2, cores: 2)
        let large = RunEstimate(users: 10_000, weeks: 8, threads: 2, cores: 2)
        let largest = RunEstimate(
            users: ScenarioLimits.users.upperBound, weeks: ScenarioLimits.weeks.upperBound, threads: 64, cores: 2)
        #expect(small.memoryBytes < large.memoryBytes && large.memoryBytes < largest.memoryBytes)
        #expect(small.wallSeconds < large.wallSeconds && large.wallSeconds < largest.wallSeconds)
        #expect(largest.memoryBytes > 1 << 40, "10 million users for ten years need terabytes")
        #expect(RunEstimate(users: 10_000, weeks: 8, threads: 1, cores: 2).wallSeconds == large.wallSeconds * 2)
    }

    @Test func sizesAndDurationsReadAsAPersonWritesThem() {
        #expect(RunEstimate.text(bytes: 300 << 20) == "300 MB")
        #expect(RunEstimate.text(bytes: 3 << 29) == "1.5 GB")
        #expect(RunEstimate.text(seconds: 42) == "42 s")
        #expect(RunEstimate.text(seconds: 600) == "10 min")
        #expect(RunEstimate.text(seconds: 9_000) == "2.5 h")
    }
}

@Suite struct ProgressLineTests {
    @Test func offATerminalALineIsWrittenAtEveryTenthOnly() {
        var progress = ProgressLine(start: Instant(secondsSinceEpoch: 0), days: 56, onTerminal: false)
        let lines = (0..<56).compactMap { progress.line(day: $0, elapsedSeconds: Double($0)) }
        #expect(lines.count == 9, "10 % ... 90 %; the last line comes with clear()")
        #expect(lines.first == "simulate: 10% (day 6/56), 6 s elapsed, 50 s left\n")
    }

    @Test func onATerminalABarShowsTheShareAndTheTimeLeft() {
        var progress = ProgressLine(start: Instant(secondsSinceEpoch: 0), days: 10, onTerminal: true)
        let line = progress.line(day: 5, elapsedSeconds: 30)
        #expect(line == "\r[###############...............] 50% day 6/10, 30 s left \u{1B}[K")
        #expect(ProgressLine.duration(3_725) == "1 h 2 min")
    }
}
