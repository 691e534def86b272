// The writer of the SQLite store's crash test, and a front end to its benchmark.
//
//     store-crash-writer <path> [--from N] [--count N]
//         Opens the store at <path> and applies StoreCrashWorkload.batch(N), batch(N + 1), ...
//         printing "committed <index>" (flushed) after each apply returns. The test kills it with
//         SIGKILL and checks that every printed batch is on disk, once.
//     store-crash-writer --bench <path> [--users N] [--weeks N] [--json]
//         Runs StoreBenchmark on a new store at <path> (release build, please).
//
// Exit status: 0 done, 1 store error, 64 usage.
import Foundation
import Models
import Storage

func fail(_ message: String, status: Int32) -> Never {
    FileHandle.standardError.write(Data((message + "\n").utf8))
    exit(status)
}

let usage = """
    usage: store-crash-writer <path> [--from N] [--count N]
           store-crash-writer --bench <path> [--users N] [--weeks N] [--json]
    """

var arguments = Array(CommandLine.arguments.dropFirst())
var bench = false
var json = false
var path: String?
var from = 0
var count = 1_000_000
var users = 10_000
var weeks = 8

@MainActor func integer(after flag: String) -> Int {
    guard !arguments.isEmpty, let value = Int(arguments.removeFirst()), value >= 0 else {
        fail("\(flag) needs a non-negative integer\n\(usage)", status: 64)
    }
    return value
}

while !arguments.isEmpty {
    let argument = arguments.removeFirst()
    switch argument {
    case "--bench": bench = true
    case "--json": json = true
    case "--from": from = integer(after: argument)
    case "--count": count = integer(after: argument)
    case "--users": users = integer(after: argument)
    case "--weeks": weeks = integer(after: argument)
    case "-h", "--help":
        print(usage)
        exit(0)
    default:
        guard path == nil, !argument.hasPrefix("-") else { fail("unexpected \(argument)\n\(usage)", status: 64) }
        path = argument
    }
}
guard let path else { fail(usage, status: 64) }

if bench {
    do {
        let report = try StoreBenchmark.run(path: path, users: users, weeks: weeks)
        if json {
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
    for index in from..<(from + count) {
        try store.apply(StoreCrashWorkload.batch(index))
        // An unbuffered write: the line is in the pipe before the next batch starts.
        FileHandle.standardOutput.write(Data("committed \(index)\n".utf8))
    }
} catch {
    fail("store-crash-writer: \(error)", status: 1)
}
