import Foundation

/// The offset history of one IANA time zone, with wall-clock to UTC conversion that is exact
/// across daylight-saving changes.
///
/// Built once per zone from the system's tz database (through Foundation's `TimeZone`), then
/// answered by binary search over a small array: no Foundation call on the hot path.
///
/// Conversion rules, for wall times that do not name exactly one instant:
/// - a time that does not exist (the spring-forward gap, 02:30 in New York on the second
///   Sunday of March) resolves to the first instant after the gap (03:00 EDT);
/// - a time that occurs twice (the fall-back repeat) resolves to its first occurrence, so a
///   daily reminder at 01:30 fires once that day, not twice.
public struct ZoneRules: Sendable, Hashable, CustomStringConvertible {
    /// The IANA identifier, e.g. `Asia/Kathmandu`.
    public let identifier: String
    /// Instants (seconds since the epoch) at which the offset changes, ascending.
    @usableFromInline let transitionInstants: [Int64]
    /// `offsetsAfter[i]` is the UTC offset in seconds from `transitionInstants[i]` on.
    @usableFromInline let offsetsAfter: [Int32]
    /// The offset before the first transition.
    @usableFromInline let initialOffset: Int32
    /// `firstTransitionInBucket[k]` is the index of the first transition at or after
    /// `bucketBase + k << bucketShift`: a lookup scans at most the one or two transitions of its bucket.
    @usableFromInline let firstTransitionInBucket: [Int32]
    @usableFromInline let bucketBase: Int64
    @usableFromInline static var bucketShift: Int64 { 22 }  // about 48.5 days

    /// Rules covering `from ..< through` (default 1970-2100); outside that range the nearest
    /// known offset holds. Returns nil for an identifier the tz database does not know.
    public init?(
        identifier: String, from: Instant = Instant(secondsSinceEpoch: 0),
        through: Instant = Instant(secondsSinceEpoch: 4_102_444_800)
    ) {
        guard ZoneRules.isValidIdentifier(identifier), let zone = TimeZone(identifier: identifier) else { return nil }
        self.identifier = identifier
        var instants: [Int64] = []
        var offsets: [Int32] = []
        initialOffset = Int32(zone.secondsFromGMT(for: from.date))
        var cursor = from.date
        var previousOffset = initialOffset
        while instants.count < 1_000, let next = zone.nextDaylightSavingTimeTransition(after: cursor),
            next < through.date
        {
            let offset = Int32(zone.secondsFromGMT(for: next))
            if offset != previousOffset {
                instants.append(Int64(next.timeIntervalSince1970.rounded()))
                offsets.append(offset)
                previousOffset = offset
            }
            cursor = next
        }
        transitionInstants = instants
        offsetsAfter = offsets
        (bucketBase, firstTransitionInBucket) = ZoneRules.buckets(instants)
    }

    private static func buckets(_ instants: [Int64]) -> (Int64, [Int32]) {
        guard let first = instants.first, let last = instants.last else { return (0, []) }
        let base = (first >> bucketShift) << bucketShift
        let count = Int((last - base) >> bucketShift) + 1
        var table = [Int32](repeating: 0, count: count)
        var index = 0
        for bucket in 0..<count {
            let bucketStart = base + (Int64(bucket) << bucketShift)
            while index < instants.count && instants[index] < bucketStart { index += 1 }
            table[bucket] = Int32(index)
        }
        return (base, table)
    }

    /// A fixed-offset zone with no transitions (tests, and `UTC`).
    public init(fixedIdentifier identifier: String, offsetSeconds: Int) {
        self.identifier = identifier
        transitionInstants = []
        offsetsAfter = []
        initialOffset = Int32(offsetSeconds)
        firstTransitionInBucket = []
        bucketBase = 0
    }

    public static let utc = ZoneRules(fixedIdentifier: "UTC", offsetSeconds: 0)

    /// True for identifiers of the IANA form (`Area/Location`, or `UTC`) that the tz database
    /// knows. Abbreviations such as `EST` or `GMT+5` are rejected: they do not follow DST.
    public static func isValidIdentifier(_ identifier: String) -> Bool {
        guard identifier == "UTC" || identifier.contains("/") else { return false }
        guard !identifier.hasPrefix("Etc/") || identifier == "Etc/UTC" else { return false }
        return TimeZone(identifier: identifier) != nil
    }

    /// The UTC offset in seconds in effect at `instant`.
    @inlinable public func offsetSeconds(at instant: Instant) -> Int {
        Int(offset(atSeconds: instant.secondsSinceEpoch))
    }

    @inlinable func offset(atSeconds seconds: Int64) -> Int32 { offsetAndNextTransition(atSeconds: seconds).offset }

    /// The offset in effect at `seconds` and the first transition after it (nil: none).
    @inlinable func offsetAndNextTransition(atSeconds seconds: Int64) -> (offset: Int32, next: Int64?) {
        guard let first = transitionInstants.first else { return (initialOffset, nil) }
        guard seconds >= first else { return (initialOffset, first) }
        let bucket = Int((seconds - bucketBase) >> ZoneRules.bucketShift)
        guard bucket < firstTransitionInBucket.count else { return (offsetsAfter[offsetsAfter.count - 1], nil) }
        // Index of the first transition after `seconds`, scanning from the bucket's first.
        var index = Int(firstTransitionInBucket[bucket])
        while index < transitionInstants.count && transitionInstants[index] <= seconds { index += 1 }
        return (offsetsAfter[index - 1], index < transitionInstants.count ? transitionInstants[index] : nil)
    }

    /// The wall-clock reading at `instant`.
    @inlinable public func localDateTime(at instant: Instant) -> LocalDateTime {
        LocalDateTime(localSeconds: instant.secondsSinceEpoch + Int64(offset(atSeconds: instant.secondsSinceEpoch)))
    }

    /// The local calendar date at `instant`.
    public func localDate(at instant: Instant) -> LocalDate { localDateTime(at: instant).date }

    /// ISO 8601 local time with its offset, e.g. `2027-03-14T03:00:00-04:00`.
    public func formatted(_ instant: Instant) -> String {
        localDateTime(at: instant).formatted(offsetSeconds: offsetSeconds(at: instant))
    }

    /// How a wall time mapped to an instant.
    public enum Resolution: Sendable, Equatable {
        /// The wall time names exactly one instant.
        case exact
        /// The wall time fell in a spring-forward gap; the instant is the end of the gap.
        case skippedGap
        /// The wall time occurs twice; the instant is the first occurrence.
        case firstOfRepeated
    }

    /// The instant at which the wall clock reads `local`, with the gap and repeat rules above.
    public func instant(for local: LocalDateTime) -> Instant { resolve(local).instant }

    /// The offset that turns every wall time of local day `day` (days since 1970-01-01) into
    /// the instant `instant(for:)` gives it, wall time minus offset; nil when a transition lies
    /// within a day of that day, where the gap and repeat rules may apply. For callers that
    /// convert many times of one day (the planner's routine times).
    public func uniformOffset(onLocalDay day: Int64) -> Int64? {
        let firstWall = day * .secondsPerDay
        // `resolve` asks the offset a day before each wall time and finds no transition within
        // a day after it: that holds for the whole day when it holds from its first second to
        // its last.
        let (offset, nextTransition) = offsetAndNextTransition(atSeconds: firstWall - .secondsPerDay)
        guard nextTransition.map({ $0 > firstWall + .secondsPerDay - 1 + .secondsPerDay }) ?? true else { return nil }
        return Int64(offset)
    }

    /// The instant for `local` and how it was resolved.
    public func resolve(_ local: LocalDateTime) -> (instant: Instant, resolution: Resolution) {
        let wall = local.localSeconds
        // Most wall times have no transition within a day either side (offsets are under a day):
        // one offset, one instant.
        let (offsetADayBefore, nextTransition) = offsetAndNextTransition(atSeconds: wall - .secondsPerDay)
        if nextTransition.map({ $0 > wall + .secondsPerDay }) ?? true {
            return (Instant(secondsSinceEpoch: wall - Int64(offsetADayBefore)), .exact)
        }
        return resolveNearTransition(wall)
    }

    /// `resolve` for any wall time (in local seconds), a transition near or not (the tests compare
    /// the two everywhere).
    func resolveNearTransition(_ wall: Int64) -> (instant: Instant, resolution: Resolution) {
        // No zone changes offset twice within two days, so the offsets a day either side
        // are the only candidates.
        let offsetBefore = Int64(offset(atSeconds: wall - .secondsPerDay))
        let offsetAfter = Int64(offset(atSeconds: wall + .secondsPerDay))
        let early = wall - max(offsetBefore, offsetAfter)  // the candidate under the larger offset
        let late = wall - min(offsetBefore, offsetAfter)
        let earlyValid = Int64(offset(atSeconds: early)) == max(offsetBefore, offsetAfter)
        let lateValid = Int64(offset(atSeconds: late)) == min(offsetBefore, offsetAfter)
        switch (earlyValid, lateValid) {
        case (true, true) where early != late: return (Instant(secondsSinceEpoch: early), .firstOfRepeated)
        case (true, _): return (Instant(secondsSinceEpoch: early), .exact)
        case (false, true): return (Instant(secondsSinceEpoch: late), .exact)
        case (false, false):
            // In a gap: the first instant after it is the transition between the candidates.
            let transition = transitionInstants.first { $0 > min(early, late) && $0 <= max(early, late) }
            return (Instant(secondsSinceEpoch: transition ?? late), .skippedGap)
        }
    }

    public var description: String { identifier }
}
