import Foundation
import Models

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
        at: Instant, user: UserID, event: StaticString, zone: ZoneRules, chaining digest: UInt64,
        _ fields: (inout LineBuilder) -> Void
    ) throws -> UInt64 {
        Self.compose(&line, at: at, user: user, event: event, zone: zone, fields)
        return try end(chaining: digest)
    }

    private static func compose(
        _ line: inout LineBuilder, at: Instant, user: UserID, event: StaticString, zone: ZoneRules,
        _ fields: (inout LineBuilder) -> Void
    ) {
        line.removeAll()
        line.raw("{\"at\":")
        line.timestampValue(LocalDateTime(localSeconds: at.secondsSinceEpoch), offsetSeconds: 0)
        line.field("user", user.rawValue)
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
        let hash = line.withBytes { bytes in
            if handle != nil { pending.append(contentsOf: bytes) }
            return EventDigest.fold(UnsafeRawBufferPointer(bytes), into: digest)
        }
        if pending.count >= 1 << 22 { try flush() }
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
        bytes.withUnsafeBytes { fold($0, into: state) }
    }

    /// `fold` over bytes read in place.
    public static func fold(_ raw: UnsafeRawBufferPointer, into state: UInt64) -> UInt64 {
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
