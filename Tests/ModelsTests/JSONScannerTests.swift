import Models
import Testing

/// The package's strict JSON reader: the tree and positions it gives, and each refusal with its
/// kind, line, column and path. `check` must refuse exactly what `parse` refuses, in the same words.
@Suite("JSONScanner")
struct JSONScannerTests {
    /// The error `parse` throws for `text`, after checking that `check` throws the same one.
    func refusal(_ text: String, maximumDepth: Int = JSONScanner.defaultMaximumDepth) -> JSONSyntaxError? {
        refusal(Array(text.utf8), maximumDepth: maximumDepth)
    }

    func refusal(_ bytes: [UInt8], maximumDepth: Int = JSONScanner.defaultMaximumDepth) -> JSONSyntaxError? {
        var parsed: JSONSyntaxError?
        var checked: JSONSyntaxError?
        do { _ = try JSONScanner.parse(bytes, maximumDepth: maximumDepth) } catch { parsed = error }
        do { try JSONScanner.check(bytes, maximumDepth: maximumDepth) } catch { checked = error }
        #expect(parsed == checked, "parse and check disagree")
        return parsed
    }

    // MARK: Duplicate keys

    @Test(arguments: [
        (#"{"a": 1, "a": 2}"#, "a", 1, 10, 1),
        (#"{"x": {"y": [1, {"z": 1, "z": 2}]}}"#, "x.y[1].z", 1, 26, 1),
        (#"{"items": [{"id": 1}, {"id": 2, "b": [], "id": 3}]}"#, "items[1].id", 1, 42, 1),
        (
            "{\n  \"a\": {\n    \"k\": 1,\n    \"m\": [[{\"k\": 1,\n\n \"k\": 2}]],\n    \"k\": 3}}", "a.m[0][0].k",
            6, 2, 4
        ),
        (#"[{"a": 1}, {"a": 2, "a": 3}]"#, "[1].a", 1, 21, 1),
        // Keys compare after their escapes are decoded.
        (#"{"a\"b": 1, "a\u0022b": 2}"#, #"a"b"#, 1, 13, 1),
        (#"{"😀": 1, "\ud83d\ude00": 2}"#, "😀", 1, 10, 1),
        (#"{"timeZone": 1, "t\u0069meZone": 2}"#, "timeZone", 1, 17, 1),
    ])
    func aDuplicateKeyIsRefusedWithItsPathAndPosition(
        text: String, path: String, line: Int, column: Int, firstLine: Int
    ) throws {
        let error = try #require(refusal(text))
        // No key in the table holds a dot: the path's last step is the key.
        let key = String(path.split(separator: ".").last ?? "")
        #expect(error.kind == .duplicateKey(key: key, firstLine: firstLine), "\(error)")
        #expect(error.path == path)
        #expect(error.line == line && error.column == column, "\(error)")
        #expect(error.problem == "duplicate key (first at line \(firstLine))")
    }

    @Test(arguments: [
        #"{"a": 1, "b": {"a": 2}}"#, #"[{"a": 1}, {"a": 2}]"#, #"{"a": 1, "A": 2}"#, #"{"a": {}, "b": {}}"#,
    ])
    func equalKeysInDifferentObjectsOrCasesAreKept(text: String) {
        #expect(refusal(text) == nil)
    }

    @Test func aLongKeyIsClippedInThePathButNamedInFullInTheKind() throws {
        let key = String(repeating: "é", count: 100)
        let error = try #require(refusal(#"{"outer": {"\#(key)": 1, "\#(key)": 2}}"#))
        #expect(error.kind == .duplicateKey(key: key, firstLine: 1))
        #expect(error.path == "outer." + String(repeating: "é", count: 64) + "...")
    }

    // MARK: Positions

    /// Columns count Unicode scalars: a two-, three- or four-byte character is one column.
    @Test func positionsCountCharactersNotBytes() throws {
        let text = "{\"é\": \"ü€😀\", \"n\": [1,\n  \"日本\", true]}"
        let root = try JSONScanner.parse(Array(text.utf8))
        guard case .object(let members) = root.value, case .array(let items) = members[1].node.value else {
            Issue.record("not an object with an array: \(root)")
            return
        }
        #expect((root.line, root.column) == (1, 1))
        #expect(members[0].key == "é" && members[0].node == JSONNode(value: .string("ü€😀"), line: 1, column: 7))
        #expect((members[1].node.line, members[1].node.column) == (1, 19))
        #expect(items.map { [$0.line, $0.column] } == [[1, 20], [2, 3], [2, 9]])
        let error = try #require(refusal("{\"é€😀\": x}"))
        #expect((error.line, error.column) == (1, 9), "\(error)")
    }

    @Test func aByteOrderMarkIsSkippedAndNotCounted() throws {
        let root = try JSONScanner.parse([0xEF, 0xBB, 0xBF] + Array(#"{"a": 1}"#.utf8))
        let one = JSONNode(value: .number("1"), line: 1, column: 7)
        #expect(root == JSONNode(value: .object([.init(key: "a", node: one)]), line: 1, column: 1))
        let error = try #require(refusal([0xEF, 0xBB, 0xBF] + Array("{x".utf8)))
        #expect((error.line, error.column) == (1, 2))
    }

    /// The column is counted forward on a long line: a document on one line of 64 KB reads
    /// with the right positions at its end.
    @Test func aLongSingleLineKeepsItsColumns() throws {
        let items = (0..<8_000).map { "\"\($0)\"" }.joined(separator: ",")
        let root = try JSONScanner.parse(Array("[\(items)]".utf8))
        guard case .array(let nodes) = root.value, let last = nodes.last else {
            Issue.record("not an array")
            return
        }
        #expect(nodes.count == 8_000)
        #expect(last.column == items.utf8.count - 6 + 2)
        let error = try #require(refusal("[\(items),]"))
        #expect(error.column == items.utf8.count + 3)
    }

    // MARK: Numbers

    /// A number comes back as written: nothing is rounded through `Double` or wrapped.
    @Test(arguments: [
        "18446744073709551616", "-9223372036854775809", "123456789012345678901234567890.000000000000000000001",
        "1e400", "-0", "0.10", "1E+2", "2e-9",
    ])
    func aNumberKeepsItsLiteralText(literal: String) throws {
        let root = try JSONScanner.parse(Array("[\(literal)]".utf8))
        #expect(root.value == .array([JSONNode(value: .number(literal), line: 1, column: 2)]))
    }

    @Test(arguments: [
        ("012", 1, "leading zero"), ("-", 2, "a digit after '-'"), ("1.", 3, "digits after '.'"),
        ("1e", 3, "digits in its exponent"), ("1e+", 4, "digits in its exponent"), (".5", 1, "expected a value"),
        ("+1", 1, "expected a value"), ("-a", 2, "a digit after '-'"), ("0x1F", 2, "after the JSON value"),
    ])
    func aMalformedNumberIsRefusedWhereItGoesWrong(text: String, column: Int, problem: String) throws {
        let error = try #require(refusal(text))
        #expect(error.kind == .malformed)
        #expect(error.column == column && error.problem.contains(problem), "\(error)")
    }

    // MARK: Empty and truncated input

    @Test(arguments: ["", "   ", "\n\n"])
    func emptyInputIsRefusedAtItsEnd(text: String) throws {
        let error = try #require(refusal(text))
        #expect(error.problem == "unexpected end of file; expected a value")
        #expect(error.line == 1 + text.count { $0 == "\n" } && error.path.isEmpty)
    }

    /// Every proper prefix of a document is refused, at or before its end, never read as a
    /// smaller document and never a crash.
    @Test func everyTruncationOfADocumentIsRefused() throws {
        let text = #"{"name": "café \u00e9 \ud83c\udfc3", "n": [1, -2.5e3, true, false, null], "o": {"k": "v"}}"#
        let bytes = Array(text.utf8)
        _ = try JSONScanner.parse(bytes)
        for length in 0..<bytes.count {
            let error = try #require(refusal(Array(bytes[..<length])), "a prefix of \(length) bytes was read")
            #expect(error.line == 1 && error.column <= length + 1, "\(length): \(error)")
        }
    }

    @Test(arguments: [
        (#"{"a": "unterminated"#, 7, "a string is not closed"), (#"{"a": tr"#, 7, "expected true"),
        (#"{"a": [1, 2"#, 12, "expected ',' or ']', found end of file"),
        (#"{"a""#, 5, "expected ':' after the key, found end of file"),
        (#"{"a": "\u00"#, 12, "four hexadecimal digits"), (#"{"a": "\"#, 9, "not closed"),
    ])
    func aTruncatedDocumentSaysWhatIsMissing(text: String, column: Int, problem: String) throws {
        let error = try #require(refusal(text))
        #expect(error.column == column && error.problem.contains(problem), "\(error)")
    }

    // MARK: Nesting

    @Test(arguments: [64, 32, 1])
    func nestingIsBoundedAtTheContainerPastTheLimit(limit: Int) throws {
        let fits = String(repeating: "[", count: limit) + String(repeating: "]", count: limit)
        #expect(refusal(fits, maximumDepth: limit) == nil)
        let error = try #require(refusal(String(repeating: "[", count: 10_000), maximumDepth: limit))
        #expect(error.kind == .tooDeep(limit: limit))
        #expect(error.column == limit + 1 && error.problem == "nested deeper than \(limit) levels")
        #expect(error.path == String(repeating: "[0]", count: limit))
    }

    @Test func theDefaultLimitIs64ObjectsOrArrays() throws {
        let error = try #require(refusal(String(repeating: #"{"a": "#, count: 70)))
        #expect(error.kind == .tooDeep(limit: 64))
        #expect(error.path == Array(repeating: "a", count: 64).joined(separator: "."))
    }

    // MARK: Other refusals

    @Test(arguments: [
        (#"{"a": 1,}"#, 1, 9, "", JSONSyntaxError.Kind.trailingComma, "a comma before '}'"),
        ("{\"a\": [{\"b\": true,\n}]}", 2, 1, "a[0]", .trailingComma, "expected a key in double quotes"),
        (#"[1, 2 , ]"#, 1, 9, "", .trailingComma, "a comma before ']'; expected a value"),
        (#"{"a": 1} []"#, 1, 10, "", .malformed, "unexpected text after the JSON value"),
        (#"{"a" 1}"#, 1, 6, "", .malformed, "expected ':' after the key, found character '1'"),
        (#"{a: 1}"#, 1, 2, "", .malformed, "unexpected character 'a'; expected a key in double quotes"),
        ("{\"a\": \"x\u{01}\"}", 1, 9, "a", .malformed, "a control character inside a string"),
        ("{\"a\": \"x\ny\"}", 1, 9, "a", .malformed, "a control character inside a string"),
        (#"{"a": "\q"}"#, 1, 10, "a", .malformed, #"unknown escape \q"#),
        (#"{"a": "\ud800"}"#, 1, 14, "a", .malformed, "without its low surrogate"),
        (#"{"a": "\udc00"}"#, 1, 14, "a", .malformed, "unpaired surrogate"),
        (#"{"a": "\ud800\u0041"}"#, 1, 20, "a", .malformed, "unpaired surrogate"),
        ("// note\n{}", 1, 1, "", .malformed, "unexpected character '/'; expected a value"),
        (#"{"a": NaN}"#, 1, 7, "a", .malformed, "unexpected character 'N'; expected a value"),
    ])
    func aRefusalNamesItsKindPositionAndPath(
        text: String, line: Int, column: Int, path: String, kind: JSONSyntaxError.Kind, problem: String
    ) throws {
        let error = try #require(refusal(text))
        #expect(error.kind == kind && error.path == path, "\(error)")
        #expect(error.line == line && error.column == column, "\(error)")
        #expect(error.problem.contains(problem), "\(error)")
    }

    @Test func invalidUTF8InAStringIsRefusedAtTheString() throws {
        let error = try #require(refusal(Array(#"{"a": ""#.utf8) + [0xC3, 0x28] + Array(#""}"#.utf8)))
        #expect(error.problem == "a string is not valid UTF-8")
        #expect((error.column, error.path) == (7, "a"))
        let outside = try #require(refusal([0xC3, 0xA9]))
        #expect(outside.problem == "unexpected byte 0xC3; expected a value")
    }

    @Test func theDescriptionGivesLineColumnPathAndProblem() throws {
        let error = try #require(refusal("{\"a\": {\"b\": 1,\n}}"))
        #expect("\(error)" == "line 2, column 1 at a: a comma before '}'; expected a key in double quotes")
    }

    // MARK: The tree

    @Test func aDocumentReadsAsATreeInTextOrder() throws {
        let text = #"{"z": "a\n\"\/\u00e9\ud83c\udfc3", "a": [true, false, null, {}, []], "m": -1.5}"#
        let root = try JSONScanner.parse(Array(text.utf8))
        func node(_ value: JSONNode.Value, _ column: Int) -> JSONNode {
            JSONNode(value: value, line: 1, column: column)
        }
        let expected = node(
            .object([
                .init(key: "z", node: node(.string("a\n\"/é🏃"), 7)),
                .init(
                    key: "a",
                    node: node(
                        .array([
                            node(.bool(true), 42), node(.bool(false), 48), node(.null, 55), node(.object([]), 61),
                            node(.array([]), 65),
                        ]), 41)),
                .init(key: "m", node: node(.number("-1.5"), 75)),
            ]), 1)
        #expect(root == expected)
    }
}
