/// Civil dates and times as text, written into a buffer on the stack and made a string once:
/// the same characters as joining `pad`ded numbers with separators (a test compares the two over
/// random values), without the pieces. Trace details, ISO 8601 instants and Live Activity
/// attributes write these on every decision; piece by piece each was half a dozen strings.
enum CivilText {
    /// `YYYY-MM-DD`, then `THH:MM:SS` when `secondOfDay` is given, then `Z` (offset 0) or
    /// `±HH:MM` when `offsetSeconds` is given. Each number as `pad` writes it: at least its
    /// width in digits, all of its digits, a minus sign first when negative.
    static func text(date: LocalDate, secondOfDay: Int? = nil, offsetSeconds: Int? = nil) -> String {
        // Eight numbers of at most 20 digits and a sign, with their separators: 176 bytes.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 192) { buffer in
            var count = 0
            put(date.year, width: 4, into: buffer, at: &count)
            put(45, into: buffer, at: &count)
            put(date.month, width: 2, into: buffer, at: &count)
            put(45, into: buffer, at: &count)
            put(date.day, width: 2, into: buffer, at: &count)
            if let secondOfDay {
                put(84, into: buffer, at: &count)
                put(secondOfDay / 3_600, width: 2, into: buffer, at: &count)
                put(58, into: buffer, at: &count)
                put(secondOfDay / 60 % 60, width: 2, into: buffer, at: &count)
                put(58, into: buffer, at: &count)
                put(secondOfDay % 60, width: 2, into: buffer, at: &count)
            }
            if let offsetSeconds {
                if offsetSeconds == 0 {
                    put(90, into: buffer, at: &count)
                } else {
                    let minutes = abs(offsetSeconds) / 60
                    put(offsetSeconds < 0 ? 45 : 43, into: buffer, at: &count)
                    put(minutes / 60, width: 2, into: buffer, at: &count)
                    put(58, into: buffer, at: &count)
                    put(minutes % 60, width: 2, into: buffer, at: &count)
                }
            }
            return String(decoding: UnsafeBufferPointer(rebasing: buffer[..<count]), as: UTF8.self)
        }
    }

    /// `HH:MM`.
    static func time(hour: Int, minute: Int) -> String {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 48) { buffer in
            var count = 0
            put(hour, width: 2, into: buffer, at: &count)
            put(58, into: buffer, at: &count)
            put(minute, width: 2, into: buffer, at: &count)
            return String(decoding: UnsafeBufferPointer(rebasing: buffer[..<count]), as: UTF8.self)
        }
    }

    @inline(__always)
    private static func put(_ byte: UInt8, into buffer: UnsafeMutableBufferPointer<UInt8>, at count: inout Int) {
        buffer[count] = byte
        count += 1
    }

    /// `value` as `pad(value, width)` writes it.
    @inline(__always)
    private static func put(
        _ value: Int, width: Int, into buffer: UnsafeMutableBufferPointer<UInt8>, at count: inout Int
    ) {
        if value < 0 { put(45, into: buffer, at: &count) }
        var digits = 1
        var probe = value.magnitude
        while probe >= 10 {
            probe /= 10
            digits += 1
        }
        var rest = value.magnitude
        var position = count + max(width, digits) - 1
        while position >= count {
            buffer[position] = UInt8(truncatingIfNeeded: 48 &+ rest % 10)
            rest /= 10
            position -= 1
        }
        count += max(width, digits)
    }
}
