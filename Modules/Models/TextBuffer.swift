/// Text written into a buffer on the stack, byte by byte, then made a string once: identifiers,
/// dates and times are written this way on every decision (`OccurrenceID.canonicalText`,
/// `CivilText`), where joining small strings cost a dozen allocations each.
struct TextBuffer {
    private let buffer: UnsafeMutableBufferPointer<UInt8>
    private(set) var count = 0

    /// Runs `write` on a buffer of `capacity` bytes on the stack and returns what it wrote.
    /// `capacity` must hold the longest text `write` can write.
    static func text(capacity: Int, _ write: (inout TextBuffer) -> Void) -> String {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: capacity) { buffer in
            var text = TextBuffer(buffer: buffer)
            write(&text)
            return String(decoding: UnsafeBufferPointer(rebasing: buffer[..<text.count]), as: UTF8.self)
        }
    }

    private init(buffer: UnsafeMutableBufferPointer<UInt8>) { self.buffer = buffer }

    mutating func put(_ byte: UInt8) {
        buffer[count] = byte
        count += 1
    }

    mutating func put(_ bytes: some Sequence<UInt8>) {
        for byte in bytes { put(byte) }
    }

    /// `value` in decimal as `pad(value, width)` writes it: at least `width` digits, all of its
    /// digits, a minus sign first when negative.
    mutating func put(decimal value: Int, width: Int) {
        if value < 0 { put(45) }
        let length = max(width, DecimalText.digitCount(of: value))
        var rest = value.magnitude
        var position = count + length - 1
        while position >= count {
            buffer[position] = UInt8(truncatingIfNeeded: 48 &+ rest % 10)
            rest /= 10
            position -= 1
        }
        count += length
    }
}

/// An integer in decimal without making a string of it: its length (a JSON payload is sized on
/// every push), or its bytes on the stack.
public enum DecimalText {
    /// The digits of `value`'s magnitude: 1 for 0.
    public static func digitCount(of value: some BinaryInteger) -> Int {
        var digits = 1
        var rest = value.magnitude
        while rest >= 10 {
            rest /= 10
            digits += 1
        }
        return digits
    }

    /// `String(value).utf8.count`: the digits and a minus sign when negative.
    public static func length(of value: some BinaryInteger) -> Int {
        digitCount(of: value) + (value < 0 ? 1 : 0)
    }

    /// Calls `body` with `String(value)`'s UTF-8 bytes, written on the stack: for text that is
    /// hashed or appended to bytes and never kept as a string.
    public static func withBytes<Result>(
        of value: Int64, _ body: (UnsafeBufferPointer<UInt8>) -> Result
    ) -> Result {
        // At most 20 bytes: 19 digits and a sign.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { buffer in
            var rest = value.magnitude
            var start = buffer.count
            repeat {
                start -= 1
                buffer[start] = 48 + UInt8(rest % 10)
                rest /= 10
            } while rest > 0
            if value < 0 {
                start -= 1
                buffer[start] = UInt8(ascii: "-")
            }
            return body(UnsafeBufferPointer(rebasing: buffer[start...]))
        }
    }
}
