public import Foundation

/// A point in time: whole seconds since 1970-01-01T00:00:00Z.
///
/// The engine works in whole seconds: notification triggers have minute resolution and
/// integer arithmetic keeps every computation exact and reproducible. `Instant` encodes as an
/// ISO 8601 UTC string (`2027-03-01T07:00:00Z`) so files stay readable.
public struct Instant: Hashable, Comparable, Sendable, CustomStringConvertible {
    public var secondsSinceEpoch: Int64

    @inlinable public init(secondsSinceEpoch: Int64) { self.secondsSinceEpoch = secondsSinceEpoch }

    public init(_ date: Date) { secondsSinceEpoch = Int64(date.timeIntervalSince1970.rounded(.down)) }

    public var date: Date { Date(timeIntervalSince1970: TimeInterval(secondsSinceEpoch)) }

    @inlinable public static func < (a: Instant, b: Instant) -> Bool { a.secondsSinceEpoch < b.secondsSinceEpoch }

    @inlinable public static func + (a: Instant, seconds: Int64) -> Instant {
        Instant(secondsSinceEpoch: a.secondsSinceEpoch + seconds)
    }

    @inlinable public static func - (a: Instant, seconds: Int64) -> Instant {
        Instant(secondsSinceEpoch: a.secondsSinceEpoch - seconds)
    }

    /// Seconds from `b` to `a` (positive when `a` is later).
    @inlinable public static func - (a: Instant, b: Instant) -> Int64 { a.secondsSinceEpoch - b.secondsSinceEpoch }

    /// ISO 8601 in UTC, e.g. `2027-03-01T07:00:00Z`.
    public var iso8601: String { LocalDateTime(localSeconds: secondsSinceEpoch).formatted(offsetSeconds: 0) }

    public var description: String { iso8601 }

    /// Parses `YYYY-MM-DD`, `YYYY-MM-DDTHH:MM[:SS]Z` or the same with a `±HH:MM` offset.
    public init?(iso8601 text: String) {
        guard let parsed = LocalDateTime.parseWithOffset(text) else { return nil }
        self.init(secondsSinceEpoch: parsed.local.localSeconds - Int64(parsed.offsetSeconds))
    }
}

extension Instant: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let instant = Instant(iso8601: text) else {
            throw DecodingError.dataCorruptedError(
                in: container,
                debugDescription: "expected an ISO 8601 date such as 2027-03-01T07:00:00Z, got \"\(text)\"")
        }
        self = instant
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(iso8601)
    }
}

/// Durations in seconds, named so call sites read as prose (`3 * .secondsPerDay`).
extension Int64 {
    public static let secondsPerMinute: Int64 = 60
    public static let secondsPerHour: Int64 = 3_600
    public static let secondsPerDay: Int64 = 86_400
}

extension Int64 {
    /// Division rounding toward negative infinity (instants before 1970 included).
    @inlinable public func floorDivided(by divisor: Int64) -> Int64 {
        let quotient = self / divisor
        return (self % divisor != 0 && (self < 0) != (divisor < 0)) ? quotient - 1 : quotient
    }
}
