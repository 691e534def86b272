/// A JSON value that remembers the line it starts on, so a template file's errors can name the
/// line of the offending template (Foundation's decoders do not say where a value was).
struct JSONNode: Sendable {
    struct Member: Sendable {
        var key: String
        var value: JSONNode
    }

    enum Value: Sendable {
        case object([Member])
        case array([JSONNode])
        case string(String)
        case number(Double)
        case bool(Bool)
        case null
    }

    var value: Value
    /// 1-based line of the value's first character.
    var line: Int

    var typeName: String {
        switch value {
        case .object: "an object"
        case .array: "an array"
        case .string: "a string"
        case .number: "a number"
        case .bool: "a boolean"
        case .null: "null"
        }
    }
}

/// A syntax error with its 1-based position.
struct JSONSyntaxError: Error, Equatable {
    var line: Int
    var column: Int
    var message: String
}

/// A strict RFC 8259 reader (no comments, no trailing commas) over UTF-8 bytes. Duplicate keys
/// are an error: in a template file they are always a mistake. Nesting is bounded.
struct LineJSONReader {
    private let bytes: [UInt8]
    private var index = 0
    private var line = 1
    private var lineStart = 0
    private var depth = 0
    private static let maxDepth = 32

    init(_ text: String) { bytes = Array(text.utf8) }

    static func parse(_ text: String) throws(JSONSyntaxError) -> JSONNode {
        var reader = LineJSONReader(text)
        if reader.bytes.starts(with: [0xEF, 0xBB, 0xBF]) { reader.index = 3 }
        let node = try reader.readValue()
        reader.skipWhitespace()
        guard reader.index == reader.bytes.count else {
            throw reader.error("unexpected text after the top-level value")
        }
        return node
    }

    private func error(_ message: String) -> JSONSyntaxError {
        JSONSyntaxError(line: line, column: index - lineStart + 1, message: message)
    }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x0A:
                index += 1
                line += 1
                lineStart = index
            case 0x20, 0x09, 0x0D: index += 1
            default: return
            }
        }
    }

    private mutating func readValue() throws(JSONSyntaxError) -> JSONNode {
        skipWhitespace()
        guard index < bytes.count else { throw error("unexpected end of file") }
        let startLine = line
        switch bytes[index] {
        case UInt8(ascii: "{"): return JSONNode(value: try readObject(), line: startLine)
        case UInt8(ascii: "["): return JSONNode(value: try readArray(), line: startLine)
        case UInt8(ascii: "\""): return JSONNode(value: .string(try readString()), line: startLine)
        case UInt8(ascii: "t"):
            try expectWord("true")
            return JSONNode(value: .bool(true), line: startLine)
        case UInt8(ascii: "f"):
            try expectWord("false")
            return JSONNode(value: .bool(false), line: startLine)
        case UInt8(ascii: "n"):
            try expectWord("null")
            return JSONNode(value: .null, line: startLine)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return JSONNode(value: .number(try readNumber()), line: startLine)
        default:
            throw error("unexpected character \(describe(bytes[index]))")
        }
    }

    private func describe(_ byte: UInt8) -> String {
        byte >= 0x20 && byte < 0x7F ? "'\(Character(Unicode.Scalar(byte)))'" : "byte 0x\(String(byte, radix: 16))"
    }

    private mutating func expectWord(_ word: StaticString) throws(JSONSyntaxError) {
        let expected = UnsafeBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount)
        guard bytes.count - index >= expected.count, bytes[index..<(index + expected.count)].elementsEqual(expected)
        else { throw error("unexpected character \(describe(bytes[index]))") }
        index += expected.count
    }

    private mutating func enter() throws(JSONSyntaxError) {
        depth += 1
        guard depth <= Self.maxDepth else { throw error("nested deeper than \(Self.maxDepth) levels") }
    }

    private mutating func readObject() throws(JSONSyntaxError) -> JSONNode.Value {
        try enter()
        defer { depth -= 1 }
        index += 1
        var members: [JSONNode.Member] = []
        var seen: Set<String> = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            return .object(members)
        }
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else {
                throw error("expected a key in double quotes")
            }
            let keyLine = line
            let keyColumn = index - lineStart + 1
            let key = try readString()
            guard seen.insert(key).inserted else {
                throw JSONSyntaxError(line: keyLine, column: keyColumn, message: "duplicate key \"\(key)\"")
            }
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else {
                throw error("expected ':' after a key")
            }
            index += 1
            members.append(JSONNode.Member(key: key, value: try readValue()))
            skipWhitespace()
            guard index < bytes.count else { throw error("unexpected end of file inside an object") }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
                continue
            }
            if bytes[index] == UInt8(ascii: "}") {
                index += 1
                return .object(members)
            }
            throw error("expected ',' or '}' in an object, found \(describe(bytes[index]))")
        }
    }

    private mutating func readArray() throws(JSONSyntaxError) -> JSONNode.Value {
        try enter()
        defer { depth -= 1 }
        index += 1
        var elements: [JSONNode] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            return .array(elements)
        }
        while true {
            elements.append(try readValue())
            skipWhitespace()
            guard index < bytes.count else { throw error("unexpected end of file inside an array") }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
                continue
            }
            if bytes[index] == UInt8(ascii: "]") {
                index += 1
                return .array(elements)
            }
            throw error("expected ',' or ']' in an array, found \(describe(bytes[index]))")
        }
    }

    private mutating func readString() throws(JSONSyntaxError) -> String {
        index += 1  // the opening quote
        var result: [UInt8] = []
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                guard let text = String(validating: result, as: UTF8.self) else { throw error("invalid UTF-8") }
                return text
            case UInt8(ascii: "\\"):
                index += 1
                guard index < bytes.count else { break }
                let escape = bytes[index]
                index += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): result.append(escape)
                case UInt8(ascii: "b"): result.append(0x08)
                case UInt8(ascii: "f"): result.append(0x0C)
                case UInt8(ascii: "n"): result.append(0x0A)
                case UInt8(ascii: "r"): result.append(0x0D)
                case UInt8(ascii: "t"): result.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = try readHex4()
                    if (0xD800..<0xDC00).contains(scalar) {
                        guard bytes.count - index >= 6, bytes[index] == UInt8(ascii: "\\"),
                            bytes[index + 1] == UInt8(ascii: "u")
                        else { throw error("unpaired surrogate in \\u escape") }
                        index += 2
                        let low = try readHex4()
                        guard (0xDC00..<0xE000).contains(low) else { throw error("unpaired surrogate in \\u escape") }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    }
                    guard let unicode = Unicode.Scalar(scalar) else { throw error("invalid \\u escape") }
                    result.append(contentsOf: String(Character(unicode)).utf8)
                default:
                    throw error("invalid escape \\\(describe(escape))")
                }
            case 0x0A, 0x0D:
                throw error("line break inside a string (write \\n)")
            case 0..<0x20:
                throw error("control character inside a string")
            default:
                result.append(byte)
                index += 1
            }
        }
        throw error("unterminated string")
    }

    private mutating func readHex4() throws(JSONSyntaxError) -> UInt32 {
        guard bytes.count - index >= 4 else { throw error("short \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default: throw error("invalid hex digit in \\u escape")
            }
            value = value << 4 | digit
            index += 1
        }
        return value
    }

    private mutating func readNumber() throws(JSONSyntaxError) -> Double {
        let start = index
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "+"), UInt8(ascii: "."),
                UInt8(ascii: "e"), UInt8(ascii: "E"):
                index += 1
            default:
                guard let value = Double(String(decoding: bytes[start..<index], as: UTF8.self)) else {
                    throw error("invalid number")
                }
                return value
            }
        }
        guard let value = Double(String(decoding: bytes[start..<index], as: UTF8.self)) else {
            throw error("invalid number")
        }
        return value
    }
}
