import ArgumentParser
import Foundation
import Logging

/// `--log-format json`: one JSON object per line on standard error, for log shippers:
/// `{"time":"2027-03-01T06:00:00.123Z","level":"info","label":"engaged","message":"...","metadata":{...}}`.
/// Metadata values are flattened to text (nested ones as their description). One `write` per
/// line: lines from several threads do not interleave as long as each fits the pipe's atomic
/// write (`PIPE_BUF`, 4 KB on Linux); a longer one may.
struct JSONLogHandler: LogHandler {
    let label: String
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]

    init(label: String) { self.label = label }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    private struct Line: Encodable {
        var time: String
        var level: String
        var label: String
        var message: String
        var metadata: [String: String]?
    }

    /// RFC 3339 with milliseconds and the offset, UTC's `Z`: `2027-03-01T06:00:00.123Z`.
    static func timestamp(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true, timeZone: .gmt))
    }

    func log(
        level: Logger.Level, message: Logger.Message, metadata: Logger.Metadata?, source: String, file: String,
        function: String, line: UInt
    ) {
        let merged = self.metadata.merging(metadata ?? [:]) { _, new in new }
        let entry = Line(
            time: Self.timestamp(Date()),
            level: level.rawValue, label: label, message: message.description,
            metadata: merged.isEmpty ? nil : merged.mapValues(\.description))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard var bytes = try? encoder.encode(entry) else { return }
        bytes.append(UInt8(ascii: "\n"))
        FileHandle.standardError.write(bytes)
    }
}

/// `--log-format`, of `serve` and `worker`.
struct LogFormatOption: ParsableArguments {
    @Option(name: .customLong("log-format"), help: "text, or json: one JSON object per line on standard error.")
    var format = LogFormat.text
}

/// The format of the server's and the workers' logs (`--log-format`).
enum LogFormat: String, CaseIterable, Sendable, ExpressibleByArgument {
    case text, json

    func bootstrap() {
        switch self {
        case .text: LoggingSystem.bootstrap(StreamLogHandler.standardError)
        case .json: LoggingSystem.bootstrap(JSONLogHandler.init(label:))
        }
    }
}
