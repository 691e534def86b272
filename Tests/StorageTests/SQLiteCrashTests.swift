import Foundation
import GRDB
import Models
import Storage
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The crash writer built beside the test binary (`swift build` and `swift test` build every
/// product), or where `STORE_CRASH_WRITER` points.
private func crashWriterURL() -> URL? {
    if let explicit = ProcessInfo.processInfo.environment["STORE_CRASH_WRITER"] {
        return URL(fileURLWithPath: explicit)
    }
    let executable = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
    var directories = [Bundle.main.bundleURL, executable.deletingLastPathComponent()]
    // On Darwin the test binary sits inside `<products>/X.xctest/Contents/MacOS/`.
    directories += directories.map { $0.deletingLastPathComponent().deletingLastPathComponent() }
    directories += directories.map { $0.deletingLastPathComponent() }
    return directories.map { $0.appendingPathComponent("store-crash-writer") }
        .first { FileManager.default.isExecutableFile(atPath: $0.path) }
}

@Suite("SQLite store crash safety")
struct SQLiteCrashTests {
    /// `STORE_CRASH_SEED=<n> swift test --filter SQLiteCrashTests` replays a failing run.
    static let seed = ProcessInfo.processInfo.environment["STORE_CRASH_SEED"].flatMap { UInt64($0) } ?? 0x5EED_C4A5

    @Test("A writer killed with SIGKILL loses no reported batch, duplicates nothing and leaves an intact file")
    func killedWriterLosesNothing() throws {
        guard let writer = crashWriterURL() else {
            Issue.record(
                """
                store-crash-writer was not found beside the test binary (\(CommandLine.arguments[0])). \
                Run `swift build --product store-crash-writer` first, or set STORE_CRASH_WRITER to its path.
                """)
            return
        }
        let seed = Self.seed
        var random = SeededGenerator(seed: seed)
        let reproduce = "STORE_CRASH_SEED=\(seed) swift test --filter SQLiteCrashTests"
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("crash.sqlite").path
            let model = InMemoryEngagementStore()
            var modelThrough = -1  // the model holds batches 0...modelThrough
            var highestReported: Int?
            var next = 0
            for round in 0..<8 {
                // Round 0 is killed on a timer, usually while the store is still being created.
                let lines = round == 0 ? 0 : random.int(in: 1...40)
                let delayMicros = round == 0 ? random.int(in: 0...40_000) : random.int(in: 0...3_000)
                let reported = try runAndKill(
                    writer, path: path, from: next, afterLines: lines, delayMicros: delayMicros)
                if let reported { highestReported = max(highestReported ?? -1, reported) }
                let context = Comment(
                    rawValue: "round \(round) (from \(next), kill after \(lines) lines + \(delayMicros) us, "
                        + "reported through \(highestReported.map(String.init) ?? "none")); reproduce: \(reproduce)")

                let store = try SQLiteEngagementStore(path: path)
                // The batch after the last reported one may have committed before the kill.
                var committed = highestReported ?? -1
                let candidate = committed + 1
                if try store.engagementState(userID: StoreCrashWorkload.userID(forBatch: candidate))?.checkpoint
                    == StoreCrashWorkload.checkpoint(forBatch: candidate)
                {
                    committed = candidate
                }
                while modelThrough < committed {
                    modelThrough += 1
                    try model.apply(StoreCrashWorkload.batch(modelThrough))
                }
                let expected = try CrashWorkloadSnapshot(of: model)
                #expect(try CrashWorkloadSnapshot(of: store) == expected, context)
                if committed >= 0 {
                    // The shell's recovery: replay the last batch. It must change nothing.
                    try store.apply(StoreCrashWorkload.batch(committed))
                    #expect(try CrashWorkloadSnapshot(of: store) == expected, context)
                }
                try store.checkIntegrity()
                #expect(try integrityCheck(path) == ["ok"], context)
                // The next writer starts by replaying the last committed batch, as a restart would.
                next = max(0, committed)
            }
            #expect((highestReported ?? -1) >= 20, "the writer reported too few batches to test anything")
        }
    }

    /// Launches the writer, waits for `afterLines` "committed" lines and `delayMicros` more, kills
    /// it with SIGKILL, and returns the highest batch index it reported.
    private func runAndKill(
        _ writer: URL, path: String, from: Int, afterLines: Int, delayMicros: Int
    ) throws -> Int? {
        var pipe: [Int32] = [0, 0]
        guard Glibc.pipe(&pipe) == 0 else { throw SpawnError(description: "pipe: \(errno)") }
        let output = FileHandle(fileDescriptor: pipe[0], closeOnDealloc: true)
        let process: SpawnedProcess
        do {
            defer { close(pipe[1]) }
            process = try SpawnedProcess(
                writer.path, [path, "--from", String(from), "--count", "100000"], standardOutput: .descriptor(pipe[1]))
        }
        var text = ""
        var seen = 0
        // Bounded: the writer prints a line every few milliseconds; EOF means it exited.
        for _ in 0..<10_000 where seen < afterLines {
            let chunk = output.availableData
            if chunk.isEmpty { break }
            text += String(decoding: chunk, as: UTF8.self)
            seen = text.split(separator: "\n").filter { $0.hasPrefix("committed ") }.count
        }
        usleep(UInt32(delayMicros))
        process.signal(SIGKILL)
        process.waitUntilExit()
        text += String(decoding: output.readDataToEndOfFile(), as: UTF8.self)
        #expect(process.endedBySignal, "the writer exited on its own: \(text.suffix(500))")
        return text.split(separator: "\n").compactMap { line in
            line.hasPrefix("committed ") ? Int(line.dropFirst("committed ".count)) : nil
        }.max()
    }

    private func integrityCheck(_ path: String) throws -> [String] {
        let queue = try DatabaseQueue(path: path)
        defer { try? queue.close() }
        return try queue.read { db in try String.fetchAll(db, sql: "PRAGMA integrity_check") }
    }
}
