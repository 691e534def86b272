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
        var digits = 1
        var probe = value.magnitude
        while probe >= 10 {
            probe /= 10
            digits += 1
        }
        let length = max(width, digits)
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
