import Foundation
import Models

/// Builds the JSON lines of events.jsonl into a byte buffer without Foundation's encoders
/// (millions of lines per run), and chains each user's lines into that user's digest.
struct LineBuilder {
    private(set) var bytes: [UInt8] = []

    /// A line is a few hundred bytes; the buffer keeps its capacity from line to line.
    init() { bytes.reserveCapacity(1 << 12) }

    mutating func removeAll() { bytes.removeAll(keepingCapacity: true) }

    mutating func raw(_ text: StaticString) {
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    /// A JSON string; escapes quotes, backslashes and every control character as `\u00XX`.
    mutating func string(_ text: String) { JSONString.append(text, style: .hexControls, to: &bytes) }

    mutating func field(_ name: StaticString, _ value: String) {
        raw(",\"")
        raw(name)
        raw("\":")
        string(value)
    }

    /// A field whose value needs no escaping (identifiers, raw values of enums): no quotes,
    /// backslashes or control characters.
    mutating func id(_ name: StaticString, _ value: String) {
        raw(",\"")
        raw(name)
        raw("\":\"")
        var value = value
        value.withUTF8 { bytes.append(contentsOf: $0) }
        bytes.append(34)
    }

    /// `instant` in `zone`'s wall time with its offset.
    mutating func local(_ zone: ZoneRules, _ instant: Instant, name: StaticString = "local") {
        timestamp(name, zone.localDateTime(at: instant), offsetSeconds: zone.offsetSeconds(at: instant))
    }

    /// `"YYYY-MM-DDTHH:MM:SS"` followed by `Z` or the offset.
    mutating func timestamp(_ name: StaticString, _ local: LocalDateTime, offsetSeconds: Int) {
        raw(",\"")
        raw(name)
        raw("\":")
        timestampValue(local, offsetSeconds: offsetSeconds)
    }

    /// A quoted ISO 8601 timestamp, written into a buffer on the stack and appended at once (two
    /// or three on every line: appending byte by byte cost 3 % of a run). Each number is written
    /// in exactly its width, its lowest digits, without a sign (a year before 0 is written as
    /// its magnitude; no simulated instant has one). The civil date is computed once (each of
    /// `year`, `month` and `day` computes it), and the digits go through a plain index rather
    /// than a variable captured by a nested function: 1,100 instructions a timestamp before.
    mutating func timestampValue(_ local: LocalDateTime, offsetSeconds: Int) {
        let date = local.date
        let secondOfDay = local.secondOfDay
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 32) { buffer in
            var count = 0
            Self.put(34, into: buffer, at: &count)
            Self.put(date.year, width: 4, into: buffer, at: &count)
            Self.put(45, into: buffer, at: &count)
            Self.put(date.month, width: 2, into: buffer, at: &count)
            Self.put(45, into: buffer, at: &count)
            Self.put(date.day, width: 2, into: buffer, at: &count)
            Self.put(84, into: buffer, at: &count)
            Self.put(secondOfDay / 3_600, width: 2, into: buffer, at: &count)
            Self.put(58, into: buffer, at: &count)
            Self.put(secondOfDay / 60 % 60, width: 2, into: buffer, at: &count)
            Self.put(58, into: buffer, at: &count)
            Self.put(secondOfDay % 60, width: 2, into: buffer, at: &count)
            if offsetSeconds == 0 {
                Self.put(90, into: buffer, at: &count)
            } else {
                Self.put(offsetSeconds < 0 ? 45 : 43, into: buffer, at: &count)
                let minutes = abs(offsetSeconds) / 60
                Self.put(minutes / 60, width: 2, into: buffer, at: &count)
                Self.put(58, into: buffer, at: &count)
                Self.put(minutes % 60, width: 2, into: buffer, at: &count)
            }
            Self.put(34, into: buffer, at: &count)
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[..<count]))
        }
    }

    @inline(__always)
    private static func put(_ byte: UInt8, into buffer: UnsafeMutableBufferPointer<UInt8>, at count: inout Int) {
        buffer[count] = byte
        count += 1
    }

    /// `value`'s lowest `width` decimal digits (a negative value's magnitude).
    @inline(__always)
    private static func put(
        _ value: Int, width: Int, into buffer: UnsafeMutableBufferPointer<UInt8>, at count: inout Int
    ) {
        var rest = value.magnitude
        var position = count + width - 1
        while position >= count {
            buffer[position] = UInt8(truncatingIfNeeded: 48 + rest % 10)
            rest /= 10
            position -= 1
        }
        count += width
    }
}

/// Writes one shard's events to a file in large chunks.
final class EventSink {
    private let handle: FileHandle?
    private(set) var line = LineBuilder()
    private var pending: [UInt8] = []
    /// Lines ended so far (written or, without a file, only folded into the digest).
    private(set) var lines = 0

    init(path: String?) throws {
        if let path {
            guard FileManager.default.createFile(atPath: path, contents: nil) else {
                throw SimulationError.output("cannot create \(path)")
            }
            guard let handle = FileHandle(forWritingAtPath: path) else {
                throw SimulationError.output("cannot write \(path)")
            }
            self.handle = handle
        } else {
            handle = nil
        }
        // Lines are gathered into 4 MB writes, and only when there is a file to write.
        if handle != nil { pending.reserveCapacity(1 << 22) }
    }

    /// Writes one line, `{"at":...,"user":...,"event":...` with the members `fields` writes and
    /// `"local"` (`at` in `zone`), and returns the user's digest with the line folded in
    /// (`EventDigest.fold`). The line is composed under one access to the builder (each call
    /// on a class's stored property is an exclusivity check).
    func write(
        at: Instant, user: String, event: StaticString, zone: ZoneRules, chaining digest: UInt64,
        _ fields: (inout LineBuilder) -> Void
    ) throws -> UInt64 {
        Self.compose(&line, at: at, user: user, event: event, zone: zone, fields)
        return try end(chaining: digest)
    }

    private static func compose(
        _ line: inout LineBuilder, at: Instant, user: String, event: StaticString, zone: ZoneRules,
        _ fields: (inout LineBuilder) -> Void
    ) {
        line.removeAll()
        line.raw("{\"at\":")
        line.timestampValue(LocalDateTime(localSeconds: at.secondsSinceEpoch), offsetSeconds: 0)
        line.field("user", user)
        line.raw(",\"event\":\"")
        line.raw(event)
        line.raw("\"")
        fields(&line)
        line.local(zone, at)
        line.raw("}\n")
    }

    /// Counts the line composed, writes it when there is a file, and folds it into `digest`.
    private func end(chaining digest: UInt64) throws -> UInt64 {
        lines += 1
        let hash = EventDigest.fold(line.bytes, into: digest)
        if handle != nil {
            pending.append(contentsOf: line.bytes)
            if pending.count >= 1 << 22 { try flush() }
        }
        return hash
    }

    func flush() throws {
        guard let handle, !pending.isEmpty else { return }
        try handle.write(contentsOf: pending)
        pending.removeAll(keepingCapacity: true)
    }

    func close() throws {
        try flush()
        try handle?.close()
    }
}

/// The event-log digest. Each user's lines, newline included and in file order, are folded
/// into a 64-bit state that starts at 0xcbf29ce484222325: 8 bytes at a time as a little-endian
/// word `w`, `h = (h ^ w) * 0x100000001b3; h ^= h >> 32` (wrapping), the last partial word
/// zero-padded and folded the same way after xoring in its length shifted left by 56. The run's
/// digest folds each user's final state, in user order, as one word. It depends on the content
/// and order of each user's events only, not on how users were split across threads.
public enum EventDigest {
    public static let initial: UInt64 = 0xcbf2_9ce4_8422_2325

    @inline(__always) public static func mix(_ state: UInt64, _ word: UInt64) -> UInt64 {
        var h = (state ^ word) &* 0x100_0000_01b3
        h ^= h >> 32
        return h
    }

    public static func fold(_ bytes: [UInt8], into state: UInt64) -> UInt64 {
        bytes.withUnsafeBytes { raw in
            var h = state
            var offset = 0
            let count = raw.count
            while offset + 8 <= count {
                h = mix(h, UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self)))
                offset += 8
            }
            if offset < count {
                var word: UInt64 = 0
                for index in 0..<(count - offset) { word |= UInt64(raw[offset + index]) << (8 * UInt64(index)) }
                h = mix(h, word ^ (UInt64(count - offset) << 56))
            }
            return h
        }
    }
}
