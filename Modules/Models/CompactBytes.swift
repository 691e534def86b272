/// Writes values as compact bytes: unsigned integers as LEB128 varints (7 bits a byte), signed
/// ones zigzag-encoded first (small magnitudes of either sign stay short), strings as a varint
/// length and their UTF-8 bytes. `CompactReader` reads them back in the same order.
public struct CompactWriter: Sendable {
    public private(set) var bytes: [UInt8] = []

    public init() {}

    public mutating func unsigned(_ value: UInt64) {
        var rest = value
        while rest >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        bytes.append(UInt8(rest))
    }

    public mutating func count(_ value: Int) { unsigned(UInt64(max(0, value))) }

    public mutating func signed(_ value: Int64) { unsigned(UInt64(bitPattern: (value << 1) ^ (value >> 63))) }

    public mutating func fixed64(_ value: UInt64) {
        for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
    }

    public mutating func bool(_ value: Bool) { bytes.append(value ? 1 : 0) }

    public mutating func byte(_ value: UInt8) { bytes.append(value) }

    public mutating func string(_ value: String) {
        let utf8 = Array(value.utf8)
        count(utf8.count)
        bytes += utf8
    }

    /// An optional: a presence byte, then the value.
    public mutating func optional<T>(_ value: T?, _ write: (inout CompactWriter, T) -> Void) {
        bool(value != nil)
        if let value { write(&self, value) }
    }

    /// A list: its count, then each element.
    public mutating func list<T>(_ values: some Collection<T>, _ write: (inout CompactWriter, T) -> Void) {
        count(values.count)
        for value in values { write(&self, value) }
    }
}

/// What is wrong with bytes a `CompactReader` was given.
public struct CompactBytesError: Error, Hashable, Sendable, CustomStringConvertible {
    public var offset: Int
    public var problem: String

    public init(offset: Int, problem: String) {
        self.offset = offset
        self.problem = problem
    }

    public var description: String { "at byte \(offset): \(problem)" }
}

/// Reads what a `CompactWriter` wrote; every read checks the bounds and throws, never traps.
public struct CompactReader: Sendable {
    private let bytes: [UInt8]
    public private(set) var offset = 0

    public init(_ bytes: [UInt8]) { self.bytes = bytes }

    public var isAtEnd: Bool { offset == bytes.count }

    func fail(_ problem: String) -> CompactBytesError { CompactBytesError(offset: offset, problem: problem) }

    public mutating func unsigned() throws(CompactBytesError) -> UInt64 {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            guard offset < bytes.count else { throw fail("truncated number") }
            let byte = bytes[offset]
            offset += 1
            guard shift < 64, shift < 63 || byte <= 1 else { throw fail("number too long") }
            value |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return value }
            shift += 7
        }
    }

    /// A count, at most `limit` (a bound on every list, so bad bytes cannot ask for a huge allocation).
    public mutating func count(limit: Int) throws(CompactBytesError) -> Int {
        let value = try unsigned()
        guard value <= UInt64(limit) else { throw fail("count \(value) over its limit \(limit)") }
        return Int(value)
    }

    public mutating func signed() throws(CompactBytesError) -> Int64 {
        let value = try unsigned()
        return Int64(bitPattern: value >> 1) ^ -Int64(bitPattern: value & 1)
    }

    /// A signed number whose magnitude is at most `limit` (times and day counts: arithmetic on
    /// them can then never overflow).
    public mutating func signed(limit: Int64) throws(CompactBytesError) -> Int64 {
        let value = try signed()
        guard value >= -limit, value <= limit else { throw fail("number \(value) beyond ±\(limit)") }
        return value
    }

    public mutating func fixed64() throws(CompactBytesError) -> UInt64 {
        guard offset + 8 <= bytes.count else { throw fail("truncated fixed number") }
        var value: UInt64 = 0
        for index in 0..<8 { value |= UInt64(bytes[offset + index]) << UInt64(8 * index) }
        offset += 8
        return value
    }

    public mutating func byte() throws(CompactBytesError) -> UInt8 {
        guard offset < bytes.count else { throw fail("truncated") }
        offset += 1
        return bytes[offset - 1]
    }

    public mutating func bool() throws(CompactBytesError) -> Bool {
        switch try byte() {
        case 0: return false
        case 1: return true
        case let other: throw fail("expected a flag, got \(other)")
        }
    }

    public mutating func string(limit: Int = 1 << 20) throws(CompactBytesError) -> String {
        let length = try count(limit: limit)
        guard offset + length <= bytes.count else { throw fail("truncated text") }
        let slice = bytes[offset..<offset + length]
        guard let text = String(validating: slice, as: UTF8.self) else { throw fail("text is not UTF-8") }
        offset += length
        return text
    }

    public mutating func optional<T>(_ read: (inout CompactReader) throws -> T) throws -> T? {
        try bool() ? try read(&self) : nil
    }

    public mutating func list<T>(limit: Int, _ read: (inout CompactReader) throws -> T) throws -> [T] {
        let count = try count(limit: limit)
        var result: [T] = []
        // Every element takes at least a byte: bytes that claim more cannot make a huge allocation.
        result.reserveCapacity(min(count, bytes.count - offset))
        for _ in 0..<count { result.append(try read(&self)) }
        return result
    }
}
