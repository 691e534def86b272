import Foundation
import Histogram

/// CPU time of the calling thread, in nanoseconds: the cost of an engine call, unaffected by the
/// thread being preempted while the other core's shard (or anything else) runs. A system call
/// (the thread CPU clock has no vDSO path), which is why scheduling decisions are sampled.
@inline(__always) func threadCPUNanoseconds() -> UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
    return UInt64(time.tv_sec) &* 1_000_000_000 &+ UInt64(time.tv_nsec)
}

/// Picks which scheduling decisions are timed: one call in `every`, counted per shard. The two
/// clock reads around a call are themselves system calls, so timing every call would add their
/// cost to the run it measures; the report says how many calls were timed (`samples`). Timings
/// are outside the digest, so sampling changes no result of the run.
struct DecisionSampler {
    static let every = 64
    private var countdown = 0

    /// Whether the next call is timed.
    mutating func next() -> Bool {
        if countdown == 0 {
            countdown = Self.every - 1
            return true
        }
        countdown -= 1
        return false
    }
}

/// A distribution of non-negative integer samples (nanoseconds, milliseconds) in an HdrHistogram:
/// constant memory however many samples, three significant digits. Merging is exact.
struct LatencyHistogram {
    private(set) var histogram = Histogram<UInt64>(
        lowestDiscernibleValue: 1, highestTrackableValue: 3_600_000_000_000, numberOfSignificantValueDigits: .three)

    var count: Int { Int(histogram.totalCount) }

    mutating func record(_ value: UInt64) {
        // Values beyond an hour (of nanoseconds) are clamped: the highest bucket still says "too long".
        _ = histogram.record(min(value, 3_600_000_000_000))
    }

    mutating func merge(_ other: LatencyHistogram) { histogram.add(other.histogram) }

    /// The value at percentile `p` (0...1]: the highest value equivalent to the sample of that
    /// rank (exact below 2,048); 0 when there are no samples.
    func value(at p: Double) -> Double {
        count == 0 ? 0 : Double(histogram.valueAtPercentile(p * 100))
    }

    /// The largest sample, exact; 0 when there are none.
    var max: Double { count == 0 ? 0 : Double(histogram.maxRecorded) }
}
