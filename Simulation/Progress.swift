import Dispatch
import Foundation
import Models

/// The run's progress on standard error, by the virtual day of the shard that shows it. On a
/// terminal: a bar rewritten in place with the time left; otherwise (a pipe, a CI log): one line
/// at every tenth of the run, so a log shows that the run is alive without a line per day.
struct ProgressLine {
    let start: Instant
    let days: Int
    let onTerminal: Bool
    private let startedNanos = DispatchTime.now().uptimeNanoseconds
    private var shownDay = -1
    private var shownTenth = 0

    init(start: Instant, days: Int, onTerminal: Bool = isatty(2) == 1) {
        self.start = start
        self.days = max(1, days)
        self.onTerminal = onTerminal
    }

    /// Called for every event: cheap unless the virtual day changed.
    mutating func show(at time: Int64) {
        let day = Int((time - start.secondsSinceEpoch) / .secondsPerDay)
        guard day != shownDay else { return }
        shownDay = day
        if let line = line(day: day, elapsedSeconds: elapsedSeconds()) { write(line) }
    }

    /// The text for reaching `day` (0-based) after `elapsedSeconds`, or nil when nothing is shown.
    mutating func line(day: Int, elapsedSeconds: Double) -> String? {
        let done = min(1, Double(day) / Double(days))
        let left = done > 0 ? Self.duration(elapsedSeconds / done - elapsedSeconds) : "unknown"
        if onTerminal {
            let width = 30
            let filled = Int(done * Double(width))
            let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
            return "\r[\(bar)] \(Int(done * 100))% day \(min(day + 1, days))/\(days), \(left) left \u{1B}[K"
        }
        let tenth = Int(done * 10)
        guard tenth > shownTenth else { return nil }
        shownTenth = tenth
        return
            "simulate: \(Int(done * 100))% (day \(day)/\(days)), \(Self.duration(elapsedSeconds)) elapsed, \(left) left\n"
    }

    /// Clears the bar; a log gets its last line.
    func clear() {
        if onTerminal {
            write("\r\u{1B}[K")
        } else {
            write("simulate: 100% (day \(days)/\(days)), \(Self.duration(elapsedSeconds())) elapsed\n")
        }
    }

    private func elapsedSeconds() -> Double { Double(DispatchTime.now().uptimeNanoseconds - startedNanos) / 1e9 }

    private func write(_ text: String) { FileHandle.standardError.write(Data(text.utf8)) }

    /// `42 s`, `3 min 5 s`, `2 h 10 min`.
    static func duration(_ seconds: Double) -> String {
        let whole = Int(seconds.rounded())
        if whole < 60 { return "\(whole) s" }
        if whole < 3_600 { return "\(whole / 60) min \(whole % 60) s" }
        return "\(whole / 3_600) h \(whole % 3_600 / 60) min"
    }
}
