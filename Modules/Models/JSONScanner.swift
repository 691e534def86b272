/// The one strict JSON reader of the package, for the texts whose mistakes must be named: the
/// simulator's scenario files, the template files, and the server's request bodies, settings
/// file and token headers.
///
/// It reads the JSON of RFC 8259 and nothing more: no comments, no trailing commas, no leading
/// zeros, strings in valid UTF-8 without raw control characters, surrogates in pairs. A
/// UTF-8 byte-order mark at the start is skipped (RFC 8259 lets a reader ignore one). On top of
/// the grammar it refuses a key given twice in one object (a reader that keeps the last one
/// would act on a value the writer may not have meant) and a container nested inside more than
/// `maximumDepth` others (the reader recurses, so its stack stays bounded). The first problem
/// is thrown as a `JSONSyntaxError` with its line, column and path.
///
/// Memory and time are linear in the text; a column is counted forward from the last one, so
/// a long single line costs no more than many short ones.
public struct JSONScanner {
    /// The nesting limit when a caller names none: deeper than any file or request here needs.
    public static let defaultMaximumDepth = 64

    /// The document's single value, with every value's position. Anything but white space
    /// after it is an error.
    public static func parse(
        _ bytes: [UInt8], maximumDepth: Int = defaultMaximumDepth
    ) throws(JSONSyntaxError) -> JSONNode {
        var scanner = JSONScanner(bytes, maximumDepth: maximumDepth, keepsValues: true)
        return try scanner.document()
    }

    /// Checks the text as `parse` does and keeps nothing: for a caller that decodes the same
    /// bytes with a `Decoder` afterwards and wants only what the decoder forgives (a repeated
    /// key, a trailing comma) refused, with its position, first.
    public static func check(_ bytes: [UInt8], maximumDepth: Int = defaultMaximumDepth) throws(JSONSyntaxError) {
        var scanner = JSONScanner(bytes, maximumDepth: maximumDepth, keepsValues: false)
        _ = try scanner.document()
    }

    /// One step of a path: a member's key or an element's index.
    private enum Step {
        case key(String)
        case index(Int)
    }

    private let bytes: [UInt8]
    private let maximumDepth: Int
    /// False for `check`: containers come back empty and values without positions.
    private let keepsValues: Bool
    private var index = 0
    /// The line of `index` and the offset where it starts. Line feeds occur only in white space
    /// (a string may not hold one), so `skipWhiteSpace` keeps these current.
    private var line = 1
    private var lineStart = 0
    /// A column already counted on the current line, where counting resumes.
    private var markOffset = 0
    private var markColumn = 1
    private var path: [Step] = []
    private var depth = 0

    private init(_ bytes: [UInt8], maximumDepth: Int, keepsValues: Bool) {
        self.bytes = bytes
        self.maximumDepth = maximumDepth
        self.keepsValues = keepsValues
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) {
            index = 3
            lineStart = 3
            markOffset = 3
        }
    }

    private mutating func document() throws(JSONSyntaxError) -> JSONNode {
        let node = try value()
        skipWhiteSpace()
        guard index == bytes.count else { throw fail("unexpected text after the JSON value") }
        return node
    }

    // MARK: Positions and errors

    /// The 1-based column of `offset`, in Unicode scalars (UTF-8 continuation bytes are not
    /// counted).
    private mutating func column(of offset: Int) -> Int {
        guard offset >= lineStart else {
            // Not reached by the reader (every error is on the current line); counted in full.
            let start = bytes[..<offset].lastIndex(of: UInt8(ascii: "\n")).map { $0 + 1 } ?? 0
            return bytes[start..<offset].count { $0 & 0xC0 != 0x80 } + 1
        }
        if markOffset < lineStart || markOffset > offset {
            markOffset = lineStart
            markColumn = 1
        }
        markColumn += bytes[markOffset..<min(offset, bytes.count)].count { $0 & 0xC0 != 0x80 }
        markOffset = offset
        return markColumn
    }

    private func pathText(_ steps: [Step]) -> String {
        var text = ""
        for step in steps {
            switch step {
            case .key(let key):
                if !text.isEmpty { text += "." }
                text += key.count <= 64 ? key : String(key.prefix(64)) + "..."
            case .index(let position): text += "[\(position)]"
            }
        }
        return text
    }

    private mutating func fail(
        _ problem: String, kind: JSONSyntaxError.Kind = .malformed, at offset: Int? = nil, then last: Step? = nil
    ) -> JSONSyntaxError {
        let offset = offset ?? index
        var line = self.line
        if offset < lineStart { line = bytes[..<offset].count(where: { $0 == UInt8(ascii: "\n") }) + 1 }
        let column = column(of: offset)
        return JSONSyntaxError(
            kind: kind, problem: problem, line: line, column: column, path: pathText(path + (last.map { [$0] } ?? [])))
    }

    /// What the reader is looking at, for messages: `end of file`, `character 'x'`, `byte 0xC3`.
    private var found: String {
        guard let byte = current else { return "end of file" }
        if byte >= 0x21 && byte < 0x7F { return "character '\(Character(Unicode.Scalar(byte)))'" }
        return "byte 0x\(String(byte, radix: 16, uppercase: true))"
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

    private mutating func expect(_ byte: UInt8, _ what: String) throws(JSONSyntaxError) {
        guard current == byte else { throw fail("expected \(what), found \(found)") }
        index += 1
    }

    // MARK: Values

    private mutating func value() throws(JSONSyntaxError) -> JSONNode {
        skipWhiteSpace()
        let line = self.line
        let column = keepsValues ? column(of: index) : 0
        let value: JSONNode.Value
        switch current ?? 0 {
        case UInt8(ascii: "{"): value = try object()
        case UInt8(ascii: "["): value = try array()
        case UInt8(ascii: "\""): value = .string(try string())
        case UInt8(ascii: "t"): value = try literal("true", .bool(true))
        case UInt8(ascii: "f"): value = try literal("false", .bool(false))
        case UInt8(ascii: "n"): value = try literal("null", .null)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): value = .number(try number())
        default: throw fail("unexpected \(found); expected a value")
        }
        return JSONNode(value: value, line: line, column: column)
    }

    private mutating func literal(_ word: StaticString, _ value: JSONNode.Value) throws(JSONSyntaxError)
        -> JSONNode.Value
    {
        let expected = UnsafeBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount)
        guard bytes[index...].starts(with: expected) else { throw fail("unexpected word; expected \(word)") }
        index += expected.count
        return value
    }

    /// Opens a container at `index`, refusing one nested inside `maximumDepth` others.
    private mutating func enter() throws(JSONSyntaxError) {
        guard depth < maximumDepth else {
            throw fail("nested deeper than \(maximumDepth) levels", kind: .tooDeep(limit: maximumDepth))
        }
        depth += 1
        index += 1
    }

    private mutating func object() throws(JSONSyntaxError) -> JSONNode.Value {
        try enter()
        defer { depth -= 1 }
        var members: [JSONNode.Member] = []
        var firstLines: [String: Int] = [:]
        skipWhiteSpace()
        if current == UInt8(ascii: "}") {
            index += 1
            return .object([])
        }
        while true {
            let keyOffset = index
            guard current == UInt8(ascii: "\"") else {
                throw fail("unexpected \(found); expected a key in double quotes")
            }
            let key = try string()
            if let firstLine = firstLines[key] {
                throw fail(
                    "duplicate key (first at line \(firstLine))", kind: .duplicateKey(key: key, firstLine: firstLine),
                    at: keyOffset, then: .key(key))
            }
            firstLines[key] = line
            skipWhiteSpace()
            try expect(UInt8(ascii: ":"), "':' after the key")
            path.append(.key(key))
            let node = try value()
            path.removeLast()
            if keepsValues { members.append(JSONNode.Member(key: key, node: node)) }
            skipWhiteSpace()
            if current == UInt8(ascii: ",") {
                index += 1
                skipWhiteSpace()
                if current == UInt8(ascii: "}") {
                    throw fail("a comma before '}'; expected a key in double quotes", kind: .trailingComma)
                }
                continue
            }
            try expect(UInt8(ascii: "}"), "',' or '}'")
            return .object(members)
        }
    }

    private mutating func array() throws(JSONSyntaxError) -> JSONNode.Value {
        try enter()
        defer { depth -= 1 }
        var elements: [JSONNode] = []
        skipWhiteSpace()
        if current == UInt8(ascii: "]") {
            index += 1
            return .array([])
        }
        var count = 0
        while true {
            path.append(.index(count))
            let node = try value()
            path.removeLast()
            if keepsValues { elements.append(node) }
            count += 1
            skipWhiteSpace()
            if current == UInt8(ascii: ",") {
                index += 1
                skipWhiteSpace()
                if current == UInt8(ascii: "]") {
                    throw fail("a comma before ']'; expected a value", kind: .trailingComma)
                }
                continue
            }
            try expect(UInt8(ascii: "]"), "',' or ']'")
            return .array(elements)
        }
    }

    /// The string opening at `index`, escapes decoded; `index` ends after its closing quote.
    private mutating func string() throws(JSONSyntaxError) -> String {
        let start = index
        index += 1
        // Most strings hold no escape: their bytes are the text, validated once.
        var end = index
        while end < bytes.count, bytes[end] != UInt8(ascii: "\""), bytes[end] != UInt8(ascii: "\\"),
            bytes[end] >= 0x20
        {
            end += 1
        }
        if end < bytes.count, bytes[end] == UInt8(ascii: "\"") {
            guard let text = String(validating: bytes[index..<end], as: UTF8.self) else {
                throw fail("a string is not valid UTF-8", at: start)
            }
            index = end + 1
            return text
        }
        var text = Array(bytes[index..<end])
        index = end
        while true {
            guard let byte = current else { throw fail("a string is not closed", at: start) }
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                guard let decoded = String(validating: text, as: UTF8.self) else {
                    throw fail("a string is not valid UTF-8", at: start)
                }
                return decoded
            case UInt8(ascii: "\\"):
                index += 1
                try escape(into: &text)
            case 0..<0x20:
                throw fail("a control character inside a string; write it as an escape such as \\n")
            default:
                text.append(byte)
                index += 1
            }
        }
    }

    /// The escape after a backslash, appended to `text` as UTF-8.
    private mutating func escape(into text: inout [UInt8]) throws(JSONSyntaxError) {
        guard let byte = current else { throw fail("a string is not closed") }
        index += 1
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): text.append(byte)
        case UInt8(ascii: "b"): text.append(0x08)
        case UInt8(ascii: "f"): text.append(0x0C)
        case UInt8(ascii: "n"): text.append(0x0A)
        case UInt8(ascii: "r"): text.append(0x0D)
        case UInt8(ascii: "t"): text.append(0x09)
        case UInt8(ascii: "u"):
            var code = try hexQuad()
            if (0xD800..<0xDC00).contains(code) {
                guard bytes[index...].starts(with: [UInt8(ascii: "\\"), UInt8(ascii: "u")]) else {
                    throw fail("a \\u escape of a high surrogate without its low surrogate")
                }
                index += 2
                let low = try hexQuad()
                guard (0xDC00..<0xE000).contains(low) else { throw fail("a \\u escape of an unpaired surrogate") }
                code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
            }
            guard let scalar = Unicode.Scalar(code) else { throw fail("a \\u escape of an unpaired surrogate") }
            text.append(contentsOf: scalar.utf8)
        default:
            let shown =
                byte >= 0x21 && byte < 0x7F
                ? "\\\(Character(Unicode.Scalar(byte)))"
                : "\\ before byte 0x\(String(byte, radix: 16, uppercase: true))"
            throw fail("unknown escape \(shown)")
        }
    }

    private mutating func hexQuad() throws(JSONSyntaxError) -> UInt32 {
        var code: UInt32 = 0
        for _ in 0..<4 {
            let digit: UInt8
            switch current ?? 0 {
            case let byte where (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte): digit = byte - 48
            case let byte where (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte): digit = byte - 87
            case let byte where (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(byte): digit = byte - 55
            default: throw fail("a \\u escape needs four hexadecimal digits")
            }
            code = code << 4 | UInt32(digit)
            index += 1
        }
        return code
    }

    /// The literal text of the number at `index` (RFC 8259's grammar; empty for `check`).
    private mutating func number() throws(JSONSyntaxError) -> String {
        let start = index
        if current == UInt8(ascii: "-") { index += 1 }
        if current == UInt8(ascii: "0") {
            index += 1
        } else if skipDigits() == 0 {
            throw fail("a number needs a digit after '-'")
        }
        if current == UInt8(ascii: ".") {
            index += 1
            guard skipDigits() > 0 else { throw fail("a number needs digits after '.'") }
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            index += 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
            guard skipDigits() > 0 else { throw fail("a number needs digits in its exponent") }
        }
        if let byte = current, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) {
            throw fail("a number has a leading zero", at: start)
        }
        return keepsValues ? String(decoding: bytes[start..<index], as: UTF8.self) : ""
    }

    /// Skips decimal digits and says how many there were.
    private mutating func skipDigits() -> Int {
        let start = index
        while let byte = current, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) { index += 1 }
        return index - start
    }
}
