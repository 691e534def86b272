// The scenario file's JSON reader. Foundation's JSONSerialization and JSONDecoder keep the last of
// two equal keys without a word, turn a number into a Double or an NSNumber that wraps when it is
// too large, and report malformed text without a uniform line and column. A scenario decides a
// whole run, so its reader keeps each number's literal text, the position of every value, and
// refuses duplicate keys. It reads the JSON of RFC 8259, nothing more.

/// A JSON value and where it starts in the file (1-based line and column, in characters).
struct JSONNode: Equatable {
    var value: JSONValue
    var line: Int
    var column: Int
}

/// A JSON value. Numbers keep their literal text so whole numbers are read exactly.
enum JSONValue: Equatable {
    /// Members in file order; keys are unique (the reader refuses duplicates).
    case object([(key: String, node: JSONNode)])
    case array([JSONNode])
    case string(String)
    case number(String)
    case bool(Bool)
    case null

    static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.object(let left), .object(let right)):
            left.count == right.count && zip(left, right).allSatisfy { $0.key == $1.key && $0.node == $1.node }
        case (.array(let left), .array(let right)): left == right
        case (.string(let left), .string(let right)): left == right
        case (.number(let left), .number(let right)): left == right
        case (.bool(let left), .bool(let right)): left == right
        case (.null, .null): true
        default: false
        }
    }

    /// The value as a message shows it: strings quoted, numbers as written, containers by kind.
    var quoted: String {
        switch self {
        case .object: "an object"
        case .array: "an array"
        case .string(let text): "\"\(text)\""
        case .number(let literal): literal
        case .bool(let flag): flag ? "true" : "false"
        case .null: "null"
        }
    }
}

/// Malformed JSON or a duplicate key: what, and where (1-based line and column).
struct JSONSyntaxError: Error, Equatable {
    var line: Int
    var column: Int
    /// The key path of a duplicate key, e.g. `preferences.quietHours.22:00-07:00`; nil otherwise.
    var key: String?
    var problem: String
}

/// Reads one JSON document from UTF-8 bytes.
struct JSONReader {
    /// Deeper nesting is refused rather than risking the stack; a scenario needs three levels.
    static let maximumDepth = 64

    private let bytes: [UInt8]
    private var index = 0
    /// The line of `index` and the offset where it starts; newlines occur only in white space
    /// (a string may not hold one), so `skipWhiteSpace` keeps these current.
    private var line = 1
    private var lineStart = 0

    private init(_ bytes: [UInt8]) {
        // A UTF-8 byte-order mark, as some editors write, is not part of the document.
        self.bytes = bytes
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) {
            index = 3
            lineStart = 3
        }
    }

    /// The document's single value; anything but white space after it is an error.
    static func parse(_ bytes: [UInt8]) throws(JSONSyntaxError) -> JSONNode {
        var reader = JSONReader(bytes)
        let node = try reader.value(path: "", depth: 0)
        reader.skipWhiteSpace()
        guard reader.index == reader.bytes.count else { throw reader.fail("unexpected text after the JSON value") }
        return node
    }

    private func position(of offset: Int) -> (line: Int, column: Int) {
        if offset >= lineStart {
            let column = bytes[lineStart..<min(offset, bytes.count)].count { $0 & 0xC0 != 0x80 }
            return (line, column + 1)
        }
        var line = 1
        var column = 1
        for byte in bytes[..<min(offset, bytes.count)] {
            if byte == UInt8(ascii: "\n") {
                line += 1
                column = 1
            } else if byte & 0xC0 != 0x80 {  // count characters, not UTF-8 continuation bytes
                column += 1
            }
        }
        return (line, column)
    }

    private func fail(_ problem: String, at offset: Int? = nil, key: String? = nil) -> JSONSyntaxError {
        let (line, column) = position(of: offset ?? index)
        return JSONSyntaxError(line: line, column: column, key: key, problem: problem)
    }

    private var current: UInt8? { index < bytes.count ? bytes[index] : nil }

    private mutating func skipWhiteSpace() {
        while let byte = current, byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 {
            index += 1
            if byte == 0x0A {
                line += 1
                lineStart = index
            }
        }
    }

    /// What the reader is looking at, for messages: "end of file", "character 'x'", "byte 0x0".
    private var found: String {
        guard let byte = current else { return "end of file" }
        if byte >= 0x21 && byte < 0x7F { return "character '\(Character(Unicode.Scalar(byte)))'" }
        return "byte 0x\(String(byte, radix: 16, uppercase: true))"
    }

    private mutating func expect(_ byte: UInt8, _ what: String) throws(JSONSyntaxError) {
        guard current == byte else { throw fail("expected \(what), found \(found)") }
        index += 1
    }

    private mutating func value(path: String, depth: Int) throws(JSONSyntaxError) -> JSONNode {
        skipWhiteSpace()
        let (line, column) = position(of: index)
        guard depth < Self.maximumDepth else { throw fail("nested deeper than \(Self.maximumDepth) levels") }
        let value: JSONValue
        switch current ?? 0 {
        case UInt8(ascii: "{"): value = try object(path: path, depth: depth)
        case UInt8(ascii: "["): value = try array(path: path, depth: depth)
        case UInt8(ascii: "\""): value = .string(try string())
        case UInt8(ascii: "t"): value = try literal("true", .bool(true))
        case UInt8(ascii: "f"): value = try literal("false", .bool(false))
        case UInt8(ascii: "n"): value = try literal("null", .null)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): value = .number(try number())
        default: throw fail("unexpected \(found); expected a value")
        }
        return JSONNode(value: value, line: line, column: column)
    }

    private mutating func literal(_ word: String, _ value: JSONValue) throws(JSONSyntaxError) -> JSONValue {
        let expected = Array(word.utf8)
        guard bytes[index...].starts(with: expected) else { throw fail("unexpected word; expected \(word)") }
        index += expected.count
        return value
    }

    private mutating func object(path: String, depth: Int) throws(JSONSyntaxError) -> JSONValue {
        index += 1
        var members: [(key: String, node: JSONNode)] = []
        var firstLines: [String: Int] = [:]
        skipWhiteSpace()
        if current == UInt8(ascii: "}") {
            index += 1
            return .object([])
        }
        while true {
            skipWhiteSpace()
            let keyOffset = index
            guard current == UInt8(ascii: "\"") else {
                throw fail("unexpected \(found); expected a key in double quotes")
            }
            let key = try string()
            let keyPath = path.isEmpty ? key : path + "." + key
            if let firstLine = firstLines[key] {
                throw fail("duplicate key (first at line \(firstLine))", at: keyOffset, key: keyPath)
            }
            firstLines[key] = position(of: keyOffset).line
            skipWhiteSpace()
            try expect(UInt8(ascii: ":"), "':' after the key")
            members.append((key, try value(path: keyPath, depth: depth + 1)))
            skipWhiteSpace()
            if current == UInt8(ascii: ",") {
                index += 1
                continue
            }
            try expect(UInt8(ascii: "}"), "',' or '}'")
            return .object(members)
        }
    }

    private mutating func array(path: String, depth: Int) throws(JSONSyntaxError) -> JSONValue {
        index += 1
        var elements: [JSONNode] = []
        skipWhiteSpace()
        if current == UInt8(ascii: "]") {
            index += 1
            return .array([])
        }
        while true {
            elements.append(try value(path: "\(path)[\(elements.count)]", depth: depth + 1))
            skipWhiteSpace()
            if current == UInt8(ascii: ",") {
                index += 1
                continue
            }
            try expect(UInt8(ascii: "]"), "',' or ']'")
            return .array(elements)
        }
    }

    private mutating func string() throws(JSONSyntaxError) -> String {
        let start = index
        index += 1
        var scalars: [UInt8] = []
        while true {
            guard let byte = current else { throw fail("a string is not closed", at: start) }
            index += 1
            switch byte {
            case UInt8(ascii: "\""):
                guard let text = String(validating: scalars, as: UTF8.self) else {
                    throw fail("a string is not valid UTF-8", at: start)
                }
                return text
            case UInt8(ascii: "\\"):
                try escape(into: &scalars)
            case 0..<0x20:
                index -= 1
                throw fail("a control character inside a string; write it as an escape such as \\n")
            default:
                scalars.append(byte)
            }
        }
    }

    private mutating func escape(into scalars: inout [UInt8]) throws(JSONSyntaxError) {
        guard let byte = current else { throw fail("a string is not closed") }
        index += 1
        let simple: [UInt8: UInt8] = [
            UInt8(ascii: "\""): 0x22, UInt8(ascii: "\\"): 0x5C, UInt8(ascii: "/"): 0x2F, UInt8(ascii: "b"): 0x08,
            UInt8(ascii: "f"): 0x0C, UInt8(ascii: "n"): 0x0A, UInt8(ascii: "r"): 0x0D, UInt8(ascii: "t"): 0x09,
        ]
        if let replacement = simple[byte] {
            scalars.append(replacement)
            return
        }
        guard byte == UInt8(ascii: "u") else { throw fail("unknown escape \\\(Character(Unicode.Scalar(byte)))") }
        var code = try hexQuad()
        if (0xD800..<0xDC00).contains(code) {
            guard bytes[index...].starts(with: [UInt8(ascii: "\\"), UInt8(ascii: "u")]) else {
                throw fail("a \\u escape of a high surrogate without its low surrogate")
            }
            index += 2
            let low = try hexQuad()
            guard (0xDC00..<0xE000).contains(low) else { throw fail("a \\u escape of an unpaired surrogate") }
            code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
        } else if (0xDC00..<0xE000).contains(code) {
            throw fail("a \\u escape of an unpaired surrogate")
        }
        scalars.append(contentsOf: Array(String(Character(Unicode.Scalar(code)!)).utf8))
    }

    private mutating func hexQuad() throws(JSONSyntaxError) -> UInt32 {
        var code: UInt32 = 0
        for _ in 0..<4 {
            guard let byte = current, let digit = Character(Unicode.Scalar(byte)).hexDigitValue else {
                throw fail("a \\u escape needs four hexadecimal digits")
            }
            code = code * 16 + UInt32(digit)
            index += 1
        }
        return code
    }

    private mutating func number() throws(JSONSyntaxError) -> String {
        let start = index
        func digits(_ reader: inout JSONReader) -> Int {
            var count = 0
            while let byte = reader.current, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) {
                reader.index += 1
                count += 1
            }
            return count
        }
        if current == UInt8(ascii: "-") { index += 1 }
        if current == UInt8(ascii: "0") {
            index += 1
        } else if digits(&self) == 0 {
            throw fail("a number needs a digit after '-'")
        }
        if current == UInt8(ascii: ".") {
            index += 1
            guard digits(&self) > 0 else { throw fail("a number needs digits after '.'") }
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            index += 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
            guard digits(&self) > 0 else { throw fail("a number needs digits in its exponent") }
        }
        if let byte = current, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) {
            throw fail("a number has a leading zero", at: start)
        }
        return String(decoding: bytes[start..<index], as: UTF8.self)
    }
}
