/// The bounds of a run: one definition, used by the scenario file's reader and by the command
/// line, so a flag can never ask for what the file may not.
public enum ScenarioLimits {
    /// Population size.
    public static let users: ClosedRange<Int> = 1...10_000_000
    /// Weeks of virtual time (ten years).
    public static let weeks: ClosedRange<Int> = 1...520
    /// Worker threads (each runs one shard).
    public static let threads: ClosedRange<Int> = 1...64
    /// A per-day cap a user may choose, besides "none".
    public static let maxPerDay: ClosedRange<Int> = 1...10_000
    /// A per-hour cap a user may choose.
    public static let maxPerHour: ClosedRange<Int> = 1...60
}
