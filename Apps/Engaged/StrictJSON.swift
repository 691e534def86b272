/// What `JSONDecoder` accepts silently and RFC 8259 does not allow, found before it decodes: a
/// key given twice in one object (one of the two values would win; the simulator's scenario
/// reader refuses them too), a comma before a closing bracket (`{"a": 1,}`), and nesting deeper
/// than `maximumDepth`.
///
/// A scan for those alone: it tokenizes strings (decoding escapes, so `"a"` and `"\u0061"` are
/// one key) and tracks each open container's keys and path. On other malformed input it stops
/// and answers nil: `JSONDecoder` then says what is wrong.
enum StrictJSON {
    enum Finding: Equatable {
        /// The dotted path of the repeated key (`preferences.quietHours.start`, `items[2].id`).
        case duplicateKey(path: String, key: String)
        /// A comma right before the end of the object or array at `path` (empty: the top level).
        case trailingComma(path: String)
        /// Nested deeper than `maximumDepth`, at `path`.
        case tooDeep(path: String)
    }

    /// Deeper nesting is refused: no request of this API nests past a few levels, and each level
    /// costs the scan (and the decoder) memory.
    static let maximumDepth = 64

    /// One open object or array. Its keys are mutated in place (`frames[last].keys.insert`), so a
    /// wide object costs linear time, never a copy of its key set per key.
    private struct Frame {
        var isObject: Bool
        /// The step into this container from its parent: `key`, `[3]`, or empty at the top.
        var step: String
        var keys: Set<String> = []
        var pendingKey: String?
        var index = 0
    }

    /// Keys in a finding's path are clipped, so a path stays small whatever the keys.
    private static func clipped(_ key: String) -> String { key.count <= 64 ? key : String(key.prefix(64)) + "..." }

    /// The dotted path of `frames` and, below them, `last`.
    private static func path(_ frames: [Frame], then last: String? = nil) -> String {
        var text = ""
        for step in frames.map(\.step) + [last].compactMap({ $0 }) where !step.isEmpty {
            text += step.hasPrefix("[") || text.isEmpty ? step : "." + step
        }
        return text
    }

    static func firstFinding(in bytes: [UInt8]) -> Finding? {
        var frames: [Frame] = []
        var index = 0
        var afterComma = false
        /// The step into the value about to start.
        func nextStep() -> String {
            guard let top = frames.last else { return "" }
            return top.isObject ? clipped(top.pendingKey ?? "") : "[\(top.index)]"
        }
        /// After a value ends, an object awaits its next key.
        func valueEnded() {
            if !frames.isEmpty, frames[frames.count - 1].isObject { frames[frames.count - 1].pendingKey = nil }
        }
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                afterComma = false
                guard frames.count < maximumDepth else { return .tooDeep(path: path(frames)) }
                frames.append(Frame(isObject: byte == UInt8(ascii: "{"), step: nextStep()))
                index += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                guard !frames.isEmpty else { return nil }
                if afterComma { return .trailingComma(path: path(frames)) }
                frames.removeLast()
                valueEnded()
                index += 1
            case UInt8(ascii: ","):
                afterComma = true
                if let top = frames.last, !top.isObject { frames[frames.count - 1].index += 1 }
                index += 1
            case UInt8(ascii: "\""):
                afterComma = false
                guard let (text, end) = string(in: bytes, from: index) else { return nil }
                index = end
                if let top = frames.last, top.isObject, top.pendingKey == nil {
                    // A string where a key is awaited is the key.
                    guard frames[frames.count - 1].keys.insert(text).inserted else {
                        return .duplicateKey(path: path(frames, then: clipped(text)), key: clipped(text))
                    }
                    frames[frames.count - 1].pendingKey = text
                } else {
                    valueEnded()
                }
            case UInt8(ascii: ":"), UInt8(ascii: " "), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "\t"):
                index += 1
            default:
                // A number, true, false or null: skip to the next delimiter.
                afterComma = false
                while index < bytes.count, !Self.delimiters.contains(bytes[index]) { index += 1 }
                valueEnded()
            }
        }
        return nil
    }

    private static let delimiters: Set<UInt8> = Set(",:]} \n\r\t\"{[".utf8)

    /// The decoded text of the string opening at `start`, and the index after its closing quote.
    private static func string(in bytes: [UInt8], from start: Int) -> (String, Int)? {
        var scalars = String.UnicodeScalarView()
        var raw: [UInt8] = []
        var index = start + 1
        func flush() {
            scalars.append(contentsOf: String(decoding: raw, as: UTF8.self).unicodeScalars)
            raw.removeAll(keepingCapacity: true)
        }
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                flush()
                return (String(scalars), index + 1)
            }
            guard byte == UInt8(ascii: "\\") else {
                raw.append(byte)
                index += 1
                continue
            }
            guard index + 1 < bytes.count else { return nil }
            let escaped = bytes[index + 1]
            index += 2
            switch escaped {
            case UInt8(ascii: "u"):
                guard let unit = hex4(bytes, index) else { return nil }
                index += 4
                flush()
                var scalar = Unicode.Scalar(unit)
                if (0xD800..<0xDC00).contains(unit), index + 6 <= bytes.count, bytes[index] == UInt8(ascii: "\\"),
                    bytes[index + 1] == UInt8(ascii: "u"), let low = hex4(bytes, index + 2),
                    (0xDC00..<0xE000).contains(low)
                {
                    scalar = Unicode.Scalar(0x10000 + ((UInt32(unit) - 0xD800) << 10) + (UInt32(low) - 0xDC00))
                    index += 6
                }
                scalars.append(scalar ?? "\u{FFFD}")
            case UInt8(ascii: "b"): raw.append(0x08)
            case UInt8(ascii: "f"): raw.append(0x0C)
            case UInt8(ascii: "n"): raw.append(0x0A)
            case UInt8(ascii: "r"): raw.append(0x0D)
            case UInt8(ascii: "t"): raw.append(0x09)
            default: raw.append(escaped)  // \" \\ \/
            }
        }
        return nil
    }

    private static func hex4(_ bytes: [UInt8], _ start: Int) -> UInt16? {
        guard start + 4 <= bytes.count else { return nil }
        var value: UInt16 = 0
        for byte in bytes[start..<start + 4] {
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: return nil
            }
            value = value << 4 | UInt16(digit)
        }
        return value
    }
}
