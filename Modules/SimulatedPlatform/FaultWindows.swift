public import Models

/// The windows of a fault that strikes now and then for a while (an APNs outage, a stalled
/// server): a window starts in any hour with probability `ratePerWeek / 168`, at a second drawn
/// in that hour, and lasts `lengthSeconds`. A pure function of the seed, the stream and the
/// hour, so every shard and every thread count sees the same windows.
public struct FaultWindows: Hashable, Sendable {
    public var ratePerWeek: Double
    public var lengthSeconds: Int64
    public let seed: UInt64
    /// Tells apart the faults drawn from one seed.
    public let stream: UInt64

    public init(ratePerWeek: Double, lengthSeconds: Int64, seed: UInt64, stream: UInt64) {
        self.ratePerWeek = ratePerWeek
        self.lengthSeconds = max(1, lengthSeconds)
        self.seed = seed
        self.stream = stream
    }

    /// The window `instant` falls in (the earliest that started, of overlapping ones), as the
    /// instant it began and the instant it ends (excluded); nil outside every window.
    public func window(containing instant: Instant) -> (begins: Instant, ends: Instant)? {
        guard ratePerWeek > 0 else { return nil }
        let hour = instant.secondsSinceEpoch.floorDivided(by: 3_600)
        let reach = (lengthSeconds + 3_599) / 3_600
        for start in (hour - reach)...hour {
            var draws = SeededGenerator(seed: seed ^ stream).derived(UInt64(bitPattern: start))
            guard draws.chance(ratePerWeek / 168) else { continue }
            let begins = start * 3_600 + Int64(draws.int(in: 0...3_599))
            if instant.secondsSinceEpoch >= begins && instant.secondsSinceEpoch < begins + lengthSeconds {
                return (Instant(secondsSinceEpoch: begins), Instant(secondsSinceEpoch: begins + lengthSeconds))
            }
        }
        return nil
    }
}
