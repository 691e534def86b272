/// Text written into a buffer on the stack, byte by byte, then made a string once: identifiers,
/// dates and times are written this way on every decision (`OccurrenceID.canonicalText`,
/// `CivilText`), where joining small strings allocates for each piece (docs/PERFORMANCE.md,
/// Models).
struct TextBuffer {
    private let buffer: UnsafeMutableBufferPointer<UInt8>
    private(set) var count = 0

    /// Runs `write` on a buffer of `capacity` bytes on the stack and returns what it wrote.
    /// `capacity` must hold the longest text `write` can write.
    static func text(capacity: Int, _ write: (inout TextBuffer) -> Void) -> String {
        withBytes(capacity: capacity, write) { String(decoding: $0, as: UTF8.self) }
    }

    /// Runs `write` on a buffer of `capacity` bytes on the stack, then `body` on what it wrote.
    static func withBytes<Result>(
        capacity: Int, _ write: (inout TextBuffer) -> Void, _ body: (UnsafeBufferPointer<UInt8>) -> Result
    ) -> Result {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: capacity) { buffer in
            var text = TextBuffer(buffer: buffer)
            write(&text)
            return body(UnsafeBufferPointer(rebasing: buffer[..<text.count]))
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
        TextBuffer.withBytes(capacity: 20, { $0.put(decimal: Int(value), width: 1) }, body)
    }
}

/// Text for a person or a wire format written as UTF-8 bytes, then made a string once (or sent
/// as bytes): appending bytes skips the `String` bookkeeping of each piece (docs/PERFORMANCE.md).
/// Trace details and push payloads are written this way.
public struct UTF8Text: Sendable {
    public private(set) var bytes: [UInt8] = []

    public init(capacity: Int = 0) { bytes.reserveCapacity(capacity) }

    public var string: String { String(decoding: bytes, as: UTF8.self) }

    public mutating func add(_ literal: StaticString) { literal.withUTF8Buffer { bytes.append(contentsOf: $0) } }

    public mutating func add(_ text: String) { text.withUTF8Bytes { bytes.append(contentsOf: $0) } }

    public mutating func add(utf8: UnsafeBufferPointer<UInt8>) { bytes.append(contentsOf: utf8) }

    /// `String(value)`'s bytes.
    public mutating func add(_ value: some FixedWidthInteger & SignedInteger) {
        DecimalText.withBytes(of: Int64(value)) { bytes.append(contentsOf: $0) }
    }

    /// `text` as a JSON string literal (`JSONString.append`).
    public mutating func addJSONString(_ text: String, style: JSONEscapeStyle) {
        JSONString.append(text, style: style, to: &bytes)
    }
}
