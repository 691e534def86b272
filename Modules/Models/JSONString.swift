/// Which characters of a JSON string literal are written as two-character escapes. Quotes and
/// backslashes always are; any other control character is written `\u00XX`. The engine's JSON
/// writers differ only here: the event log's bytes are its digest, APNs payloads follow Apple's
/// examples, and Live Activity payloads must be what Foundation's `JSONEncoder` writes.
public struct JSONEscapeStyle: Sendable, Hashable {
    /// `\n`, `\r` and `\t`.
    public var shortWhitespace: Bool
    /// `\b` and `\f`.
    public var shortFeeds: Bool
    /// `/` as `\/`.
    public var slash: Bool

    public init(shortWhitespace: Bool, shortFeeds: Bool, slash: Bool) {
        self.shortWhitespace = shortWhitespace
        self.shortFeeds = shortFeeds
        self.slash = slash
    }

    /// Every control character as `\u00XX`: the event log.
    public static let hexControls = JSONEscapeStyle(shortWhitespace: false, shortFeeds: false, slash: false)
    /// `\n \r \t`, other controls as `\u00XX`: APNs payloads.
    public static let payload = JSONEscapeStyle(shortWhitespace: true, shortFeeds: false, slash: false)
    /// What `JSONEncoder` writes: `\b \t \n \f \r`, and `\/` unless `.withoutEscapingSlashes`.
    public static func foundation(escapingSlashes: Bool) -> JSONEscapeStyle {
        JSONEscapeStyle(shortWhitespace: true, shortFeeds: true, slash: escapingSlashes)
    }

    /// The escape's second byte for `byte` when it has a two-character one in this style.
    @inlinable func shortEscape(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 0x22, 0x5C: byte
        case 0x2F: slash ? byte : nil
        case 0x0A: shortWhitespace ? UInt8(ascii: "n") : nil
        case 0x0D: shortWhitespace ? UInt8(ascii: "r") : nil
        case 0x09: shortWhitespace ? UInt8(ascii: "t") : nil
        case 0x08: shortFeeds ? UInt8(ascii: "b") : nil
        case 0x0C: shortFeeds ? UInt8(ascii: "f") : nil
        default: nil
        }
    }

    /// Whether `byte` is written other than as itself.
    @inlinable public func escapes(_ byte: UInt8) -> Bool {
        byte < 0x20 || byte == 0x22 || byte == 0x5C || (slash && byte == 0x2F)
    }
}

/// JSON string literals (RFC 8259), quotes included, in a `JSONEscapeStyle`; text other than
/// the escaped bytes is written as its UTF-8, unchanged.
public enum JSONString {
    @usableFromInline static let hexDigits = Array("0123456789abcdef".utf8)

    /// Appends `text` as a JSON string literal to `bytes`.
    @inlinable public static func append(_ text: String, style: JSONEscapeStyle, to bytes: inout [UInt8]) {
        text.withUTF8Bytes { utf8 in
            bytes.append(0x22)
            // Most text has nothing to escape: its bytes go in at once.
            if utf8.contains(where: style.escapes) {
                appendEscaping(utf8, style: style, to: &bytes)
            } else {
                bytes.append(contentsOf: utf8)
            }
            bytes.append(0x22)
        }
    }

    /// Appends `text` as a JSON string literal to `json`.
    public static func append(_ text: String, style: JSONEscapeStyle, to json: inout String) {
        let escaped: [UInt8]? = text.withUTF8Bytes { utf8 in
            guard utf8.contains(where: style.escapes) else { return nil }
            var bytes: [UInt8] = []
            bytes.reserveCapacity(utf8.count + 16)
            bytes.append(0x22)
            appendEscaping(utf8, style: style, to: &bytes)
            bytes.append(0x22)
            return bytes
        }
        if let escaped {
            json += String(decoding: escaped, as: UTF8.self)
        } else {
            json += "\""
            json += text
            json += "\""
        }
    }

    /// `utf8` with the bytes `style` escapes written as escapes, without the quotes.
    @inlinable static func appendEscaping(
        _ utf8: UnsafeBufferPointer<UInt8>, style: JSONEscapeStyle, to bytes: inout [UInt8]
    ) {
        for byte in utf8 {
            guard style.escapes(byte) else {
                bytes.append(byte)
                continue
            }
            bytes.append(0x5C)
            if let short = style.shortEscape(byte) {
                bytes.append(short)
            } else {
                bytes.append(UInt8(ascii: "u"))
                bytes.append(0x30)
                bytes.append(0x30)
                bytes.append(hexDigits[Int(byte >> 4)])
                bytes.append(hexDigits[Int(byte & 0xF)])
            }
        }
    }

    /// `text` as a JSON string literal.
    public static func literal(_ text: String, style: JSONEscapeStyle) -> String {
        var json = ""
        append(text, style: style, to: &json)
        return json
    }

    /// The literal's size in bytes, without writing it.
    public static func byteCount(of text: String, style: JSONEscapeStyle) -> Int {
        text.withUTF8Bytes { bytes in
            var count = 2 + bytes.count
            for byte in bytes where style.escapes(byte) { count += style.shortEscape(byte) != nil ? 1 : 5 }
            return count
        }
    }
}
