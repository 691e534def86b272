import Foundation

/// A seeded, splittable pseudo-random generator (SplitMix64).
///
/// All randomness in the engine and the simulator comes from values of this type, injected
/// by the caller, so a run is reproducible from its seed. `derived(_:)` gives independent
/// streams (one per user, per purpose) that do not depend on how many values other streams drew.
public struct SeededGenerator: RandomNumberGenerator, Sendable, Hashable {
    public var state: UInt64

    public init(seed: UInt64) { state = seed }

    @inlinable public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        return SeededGenerator.mix(state)
    }

    /// An independent stream for `stream` (a user index, a purpose tag), fixed by this
    /// generator's current state and `stream` alone.
    public func derived(_ stream: UInt64) -> SeededGenerator {
        SeededGenerator(seed: SeededGenerator.mix(state ^ SeededGenerator.mix(stream &+ 0x632B_E59B_D9B4_E019)))
    }

    @inlinable static func mix(_ value: UInt64) -> UInt64 {
        var z = value
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A uniform double in 0 ..< 1.
    @inlinable public mutating func nextUnit() -> Double { Double(next() >> 11) * 0x1.0p-53 }

    /// True with probability `p`.
    @inlinable public mutating func chance(_ p: Double) -> Bool { nextUnit() < p }

    /// A uniform integer in `range`.
    @inlinable public mutating func int(in range: ClosedRange<Int>) -> Int {
        range.lowerBound + Int(next() % UInt64(range.upperBound - range.lowerBound + 1))
    }

    /// An exponentially distributed value with the given mean.
    public mutating func exponential(mean: Double) -> Double {
        -mean * log(1 - nextUnit())
    }

    /// Picks an index with probability proportional to `weights` (non-negative, not all zero).
    public mutating func weightedIndex(_ weights: [Double]) -> Int {
        let total = weights.reduce(0, +)
        var target = nextUnit() * total
        for (index, weight) in weights.enumerated() {
            target -= weight
            if target < 0 { return index }
        }
        return weights.lastIndex { $0 > 0 } ?? 0
    }
}

/// FNV-1a, 64 bits: the one string hash behind every identity-derived value (holdout membership,
/// template seeds, outbox keys, simulated push tokens). Stable across processes and platforms,
/// unlike `Hasher`, which is seeded per process.
public enum FNV1a {
    public static let offsetBasis: UInt64 = 0xCBF2_9CE4_8422_2325
    public static let prime: UInt64 = 0x0000_0100_0000_01B3

    /// The hash of `text`'s UTF-8 bytes, starting from `basis`.
    @inlinable public static func hash(_ text: String, basis: UInt64 = offsetBasis) -> UInt64 {
        text.withUTF8Bytes { hash(bytes: $0, basis: basis) }
    }

    /// The hash of `bytes`, starting from `basis`: a hash over several pieces in turn is the
    /// hash of their concatenation, so text never has to be joined to be hashed.
    @inlinable public static func hash(bytes: some Sequence<UInt8>, basis: UInt64 = offsetBasis) -> UInt64 {
        var hash = basis
        for byte in bytes {
            hash ^= UInt64(byte)
            hash &*= prime
        }
        return hash
    }
}
