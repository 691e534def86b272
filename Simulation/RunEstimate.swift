import Foundation

/// What a run will cost, estimated from users x weeks before it starts, so a run far beyond the
/// machine is refused with a reason instead of growing until the system kills it.
///
/// The constants below are a line fitted through measured runs of a release build, rounded up
/// so that the estimate errs on the large side (docs/PERFORMANCE.md lists the runs and the fit);
/// re-measure them when the loop's memory or speed changes.
public struct RunEstimate: Equatable, Sendable {
    /// Peak resident memory, in bytes.
    public var memoryBytes: Int
    /// Wall time on this machine's cores, in seconds.
    public var wallSeconds: Double

    /// The process before the first user: code, templates, zone rules.
    static let baseBytes = 26 << 20
    /// Memory per user that does not grow with the weeks (engine, platform and behaviour state).
    static let bytesPerUser = 37 << 10
    /// Memory per user and week (timing samples and statistics that grow with the events).
    static let bytesPerUserWeek = 14 << 10
    /// Wall time per user and week on one core.
    static let secondsPerUserWeek = 0.0033

    public init(users: Int, weeks: Int, threads: Int, cores: Int? = nil) {
        let cores = cores ?? ProcessInfo.processInfo.activeProcessorCount
        // Users and weeks are within ScenarioLimits, so these products stay far from Int.max.
        memoryBytes = Self.baseBytes + users * (Self.bytesPerUser + weeks * Self.bytesPerUserWeek)
        let parallel = Double(max(1, min(threads, cores, users)))
        wallSeconds = Double(users) * Double(weeks) * Self.secondsPerUserWeek / parallel
    }

    /// Memory this process may use: the kernel's MemAvailable, lowered by a cgroup (container)
    /// limit when one is set; nil when neither can be read.
    public static func availableMemoryBytes() -> Int? {
        var limits: [Int] = []
        if let meminfo = try? String(contentsOfFile: "/proc/meminfo", encoding: .utf8),
            let line = meminfo.split(separator: "\n").first(where: { $0.hasPrefix("MemAvailable:") }),
            let kilobytes = line.split(separator: " ").dropFirst().first.flatMap({ Int($0) })
        {
            limits.append(kilobytes * 1_024)
        }
        if let text = try? String(contentsOfFile: "/sys/fs/cgroup/memory.max", encoding: .utf8),
            let bytes = Int(text.trimmingCharacters(in: .whitespacesAndNewlines))
        {
            limits.append(bytes)
        }
        return limits.min()
            ?? (ProcessInfo.processInfo.physicalMemory > 0 ? Int(ProcessInfo.processInfo.physicalMemory) : nil)
    }

    /// `500M`, `4G`, `1.5G`, `512K`, `2T` (powers of 1024, an optional trailing `B`) or plain bytes;
    /// nil for anything else, zero, or more than 2^60 bytes.
    public static func parseBytes(_ text: String) -> Int? {
        var digits = text.uppercased()
        if digits.hasSuffix("B") { digits.removeLast() }
        let units: [Character: Double] = ["K": 0x1p10, "M": 0x1p20, "G": 0x1p30, "T": 0x1p40]
        var scale = 1.0
        if let last = digits.last, let unit = units[last] {
            scale = unit
            digits.removeLast()
        }
        guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }),
            let number = Double(digits), number.isFinite
        else { return nil }
        let bytes = number * scale
        guard bytes >= 1, bytes <= 0x1p60 else { return nil }
        return Int(bytes)
    }

    /// `812 MB`, `1.2 GB`, `3.4 TB`.
    public static func text(bytes: Int) -> String {
        let value = Double(bytes)
        if value < 0x1p30 { return "\(Int((value / 0x1p20).rounded())) MB" }
        if value < 0x1p40 { return String(format: "%.1f GB", value / 0x1p30) }
        return String(format: "%.1f TB", value / 0x1p40)
    }

    /// `40 s`, `3 min`, `2.5 h`, `4.0 days`.
    public static func text(seconds: Double) -> String {
        if seconds < 90 { return "\(Int(seconds.rounded())) s" }
        if seconds < 5_400 { return "\(Int((seconds / 60).rounded())) min" }
        if seconds < 172_800 { return String(format: "%.1f h", seconds / 3_600) }
        return String(format: "%.1f days", seconds / 86_400)
    }
}
