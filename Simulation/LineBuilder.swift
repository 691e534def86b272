import Models

/// Builds one JSON line of events.jsonl (millions per run) without Foundation's encoders, in a
/// byte buffer of its own that grows when a line needs more and is kept from line to line.
/// Every append is a bounds check and a copy, far cheaper than `Array.append(contentsOf:)`, and
/// a line takes a dozen or more. Not copyable: it owns its buffer.
struct LineBuilder: ~Copyable {
    private var base: UnsafeMutablePointer<UInt8>
    private var capacity: Int
    private(set) var count = 0
    /// The last two dates written, `YYYY-MM-DD` (`dates`, 10 bytes each, the latest first), and
    /// their day numbers: a line's two timestamps (UTC and the user's zone) fall on one or two
    /// days, and a shard's lines on the same ones for a simulated day, so a date's digits are
    /// worked out about once a day instead of twice a line.
    private let dates: UnsafeMutablePointer<UInt8>
    private var latestDay = Int64.min
    private var earlierDay = Int64.min

    /// A line is a few hundred bytes.
    init(capacity: Int = 1 << 12) {
        self.capacity = max(capacity, 64)
        base = .allocate(capacity: self.capacity)
        dates = .allocate(capacity: 2 * Self.dateBytes)
        dates.initialize(repeating: 0, count: 2 * Self.dateBytes)
    }

    deinit {
        base.deallocate()
        dates.deallocate()
    }

    /// The line so far.
    var bytes: [UInt8] { withBytes { Array($0) } }

    /// Calls `body` with the line so far, read in place.
    func withBytes<Result>(_ body: (UnsafeBufferPointer<UInt8>) throws -> Result) rethrows -> Result {
        try body(UnsafeBufferPointer(start: base, count: count))
    }

    mutating func removeAll() { count = 0 }

    /// Makes room for `extra` more bytes.
    @inline(__always) private mutating func reserve(_ extra: Int) {
        if extra > capacity - count { grow(toHold: count + extra) }
    }

    private mutating func grow(toHold needed: Int) {
        let larger = max(capacity * 2, needed)
        let moved = UnsafeMutablePointer<UInt8>.allocate(capacity: larger)
        moved.initialize(from: base, count: count)
        base.deallocate()
        base = moved
        capacity = larger
    }

    @inline(__always) private mutating func put(_ byte: UInt8) {
        reserve(1)
        base[count] = byte
        count += 1
    }

    @inline(__always) private mutating func put(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let source = bytes.baseAddress, !bytes.isEmpty else { return }
        reserve(bytes.count)
        (base + count).initialize(from: source, count: bytes.count)
        count += bytes.count
    }

    /// Inlined, so a literal's length is a constant where it is written: its bytes become a few
    /// moves instead of a call to copy memory (millions of times a run, two to six bytes each).
    @inline(__always) mutating func raw(_ text: StaticString) {
        text.withUTF8Buffer { put($0) }
    }

    /// A JSON string; escapes quotes, backslashes and every control character as `\u00XX`.
    mutating func string(_ text: String) {
        // Most text has nothing to escape: its bytes go in at once, read in place.
        let written = text.withUTF8Bytes { utf8 -> Bool in
            guard !utf8.contains(where: JSONEscapeStyle.hexControls.escapes) else { return false }
            put(0x22)
            put(utf8)
            put(0x22)
            return true
        }
        if !written {
            var escaped: [UInt8] = []
            JSONString.append(text, style: .hexControls, to: &escaped)
            escaped.withUnsafeBufferPointer { put($0) }
        }
    }

    /// `,"name":"<request identifier>"` for what a trace entry is about: an occurrence's
    /// identifier is written straight into the line; one that came from outside as text is
    /// escaped (`field`), as it may hold anything.
    mutating func id(_ name: StaticString, _ subject: TraceSubject) {
        switch subject {
        case .occurrence(let occurrence): id(name, occurrence)
        case .external(let text), .socialEvent(let text): field(name, text)
        }
    }

    /// `,"name":"<request identifier>"` for an occurrence, written straight into the line.
    mutating func id(_ name: StaticString, _ occurrence: OccurrenceID) {
        raw(",\"")
        raw(name)
        raw("\":\"")
        occurrence.withRequestIDBytes { put($0) }
        put(34)
    }

    /// `,"detail":"..."` for a trace entry's detail, written piece by piece into the line
    /// (`TraceEntry.writeDetail`): no string is made of it.
    mutating func detail(of entry: TraceEntry) {
        raw(",\"detail\":\"")
        entry.writeDetail(to: &self)
        put(34)
    }

    @inline(__always) mutating func field(_ name: StaticString, _ value: String) {
        raw(",\"")
        raw(name)
        raw("\":")
        string(value)
    }

    /// A field whose value needs no escaping (identifiers the simulator or the engine made, raw
    /// values of enums): no quotes, backslashes or control characters. Text from elsewhere (an
    /// error's description, a social event's id) goes through `field`.
    @inline(__always) mutating func id(_ name: StaticString, _ value: String) {
        raw(",\"")
        raw(name)
        raw("\":\"")
        value.withUTF8Bytes { put($0) }
        put(34)
    }

    /// `,"name":value` for an integer.
    mutating func integer(_ name: StaticString, _ value: Int) {
        raw(",\"")
        raw(name)
        raw("\":")
        String(value).withUTF8Bytes { put($0) }
    }

    /// `instant` in `zone`'s wall time with its offset.
    mutating func local(_ zone: ZoneRules, _ instant: Instant, name: StaticString = "local") {
        // The offset is looked up once: the wall time is the instant moved by it.
        let offset = zone.offsetSeconds(at: instant)
        timestamp(
            name, LocalDateTime(localSeconds: instant.secondsSinceEpoch + Int64(offset)), offsetSeconds: offset)
    }

    /// `"YYYY-MM-DDTHH:MM:SS"` followed by `Z` or the offset.
    @inline(__always) mutating func timestamp(_ name: StaticString, _ local: LocalDateTime, offsetSeconds: Int) {
        raw(",\"")
        raw(name)
        raw("\":")
        timestampValue(local, offsetSeconds: offsetSeconds)
    }

    /// The longest timestamp `timestampValue` writes: `"YYYY-MM-DDTHH:MM:SS+HH:MM"`.
    private static let timestampBytes = 27

    /// A quoted ISO 8601 timestamp, written straight into the buffer (two or three on every line).
    /// Each number is written in exactly its width, its lowest digits, without a sign (a year
    /// before 0 is written as its magnitude; no simulated instant has one). The civil date is
    /// computed once (each of `year`, `month` and `day` computes it), and the digits go through a
    /// plain index rather than a variable captured by a nested function.
    mutating func timestampValue(_ local: LocalDateTime, offsetSeconds: Int) {
        let day = local.daysSinceEpoch
        let secondOfDay = local.secondOfDay
        reserve(Self.timestampBytes)
        let buffer = UnsafeMutableBufferPointer(start: base + count, count: Self.timestampBytes)
        var written = 0
        Self.put(34, into: buffer, at: &written)
        (buffer.baseAddress! + written).update(from: date(day), count: Self.dateBytes)
        written += Self.dateBytes
        Self.put(84, into: buffer, at: &written)
        Self.put(secondOfDay / 3_600, width: 2, into: buffer, at: &written)
        Self.put(58, into: buffer, at: &written)
        Self.put(secondOfDay / 60 % 60, width: 2, into: buffer, at: &written)
        Self.put(58, into: buffer, at: &written)
        Self.put(secondOfDay % 60, width: 2, into: buffer, at: &written)
        if offsetSeconds == 0 {
            Self.put(90, into: buffer, at: &written)
        } else {
            Self.put(offsetSeconds < 0 ? 45 : 43, into: buffer, at: &written)
            let minutes = abs(offsetSeconds) / 60
            Self.put(minutes / 60, width: 2, into: buffer, at: &written)
            Self.put(58, into: buffer, at: &written)
            Self.put(minutes % 60, width: 2, into: buffer, at: &written)
        }
        Self.put(34, into: buffer, at: &written)
        count += written
    }

    /// `YYYY-MM-DD`.
    private static let dateBytes = 10

    /// The date of `day` as `YYYY-MM-DD` (each number in exactly its width, its lowest digits),
    /// from the two kept when it is one of them; else written over the earlier of the two.
    private mutating func date(_ day: Int64) -> UnsafeMutablePointer<UInt8> {
        if day == latestDay { return dates }
        if day == earlierDay { return dates + Self.dateBytes }
        (dates + Self.dateBytes).update(from: dates, count: Self.dateBytes)
        earlierDay = latestDay
        latestDay = day
        let date = LocalDate(daysSinceEpoch: day)
        let buffer = UnsafeMutableBufferPointer(start: dates, count: Self.dateBytes)
        var written = 0
        Self.put(date.year, width: 4, into: buffer, at: &written)
        Self.put(45, into: buffer, at: &written)
        Self.put(date.month, width: 2, into: buffer, at: &written)
        Self.put(45, into: buffer, at: &written)
        Self.put(date.day, width: 2, into: buffer, at: &written)
        return dates
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

/// A trace entry's text goes into the line as the inside of a JSON string, escaped where it needs
/// it.
extension LineBuilder: TextSink {
    mutating func write(_ text: String) {
        let plain = text.withUTF8Bytes { utf8 -> Bool in
            guard !utf8.contains(where: JSONEscapeStyle.hexControls.escapes) else { return false }
            put(utf8)
            return true
        }
        guard !plain else { return }
        var escaped: [UInt8] = []
        JSONString.append(text, style: .hexControls, to: &escaped)
        // Without its quotes: the caller writes them around the whole value.
        escaped.withUnsafeBufferPointer { put(UnsafeBufferPointer(rebasing: $0.dropFirst().dropLast())) }
    }

    mutating func write(_ value: Int) { String(value).withUTF8Bytes { put($0) } }

    mutating func write(utf8: UnsafeBufferPointer<UInt8>) { put(utf8) }
}
