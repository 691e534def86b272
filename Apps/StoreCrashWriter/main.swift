// The writer of the SQLite store's crash test, and a front end to its benchmark.
//
//     store-crash-writer <path> [--from N] [--count N]
//         Opens the store at <path> and applies StoreCrashWorkload.batch(N), batch(N + 1), ...
//         printing "committed <index>" (flushed) after each apply returns. The test kills it with
//         SIGKILL and checks that every printed batch is on disk, once.
//     store-crash-writer --bench <path> [--users N] [--weeks N] [--json]
//         Runs StoreBenchmark on a new store at <path> (release build, please).
//
// Exit status: 0 done, 1 store error, 64 usage (swift-argument-parser's help and errors).
import ArgumentParser
import Foundation
import Models
import Storage

func fail(_ message: String, status: Int32) -> Never {
    FileHandle.standardError.write(Data((message + "\n").utf8))
    exit(status)
}

/// The command line: usage errors print the help's synopsis and exit 64.
struct StoreCrashWriter: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "store-crash-writer",
        abstract: "The SQLite store's crash-test writer, and a front end to the store benchmark.")

    @Argument(help: "The store's file (created when missing; a new one for --bench).")
    var path: String

    @Flag(help: "Run the store benchmark instead of the crash-test writer (release build, please).")
    var bench = false

    @Flag(help: "With --bench: the report as JSON.")
    var json = false

    @Option(help: "The first batch to apply.")
    var from = 0

    @Option(help: "How many batches to apply.")
    var count = 1_000_000

    @Option(help: "With --bench: users in the workload.")
    var users = 10_000

    @Option(help: "With --bench: weeks of history per user.")
    var weeks = 8

    func validate() throws {
        for (flag, value, range) in [
            ("--from", from, 0...Int(Int32.max)), ("--count", count, 1...Int(Int32.max)),
            ("--users", users, 1...1_000_000), ("--weeks", weeks, 1...520),
        ] where !range.contains(value) {
            throw ValidationError("\(flag) must be in \(range.lowerBound)...\(range.upperBound), got \(value)")
        }
        if !bench, json { throw ValidationError("--json is for --bench only") }
    }
}

let command = StoreCrashWriter.parseOrExit()
let path = command.path

if command.bench {
    do {
        let report = try StoreBenchmark.run(path: path, users: command.users, weeks: command.weeks)
        if command.json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            print(String(decoding: try encoder.encode(report), as: UTF8.self))
        } else {
            print(report)
        }
    } catch {
        fail("store-crash-writer: \(error)", status: 1)
    }
    exit(0)
}

do {
    let store = try SQLiteEngagementStore(path: path)
    FileHandle.standardOutput.write(Data("opened \(path)\n".utf8))
    for index in command.from..<(command.from + command.count) {
        try store.apply(StoreCrashWorkload.batch(index))
        // An unbuffered write: the line is in the pipe before the next batch starts.
        FileHandle.standardOutput.write(Data("committed \(index)\n".utf8))
    }
} catch {
    fail("store-crash-writer: \(error)", status: 1)
}
