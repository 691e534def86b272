/// A JSON value read by `JSONScanner`, and where it starts in its text.
///
/// Foundation's readers keep the last of two equal keys without a word, turn a number into a
/// `Double` (or an `NSNumber` that wraps when it is too large), and say where a problem is in
/// their own terms if at all. A file that decides a whole run, or a library of copy, wants each
/// value's position for its messages, each number exactly as written, and a repeated key refused.
public struct JSONNode: Sendable, Equatable {
    /// One member of an object: its key (escapes decoded) and its value.
    public struct Member: Sendable, Equatable {
        public var key: String
        public var node: JSONNode

        public init(key: String, node: JSONNode) {
            self.key = key
            self.node = node
        }
    }

    public enum Value: Sendable, Equatable {
        /// Members in text order; no two share a key (the scanner refuses that).
        case object([Member])
        case array([JSONNode])
        case string(String)
        /// The number's literal text as written (`18446744073709551615`, `1e3`, `-0.50`): the
        /// reader converts it to the type it needs, so a whole number is read exactly.
        case number(String)
        case bool(Bool)
        case null
    }

    public var value: Value
    /// 1-based line of the value's first character; a line ends at a line feed.
    public var line: Int
    /// 1-based column of the value's first character, counted in Unicode scalars, not bytes.
    public var column: Int

    public init(value: Value, line: Int, column: Int) {
        self.value = value
        self.line = line
        self.column = column
    }
}

/// Why and where `JSONScanner` refused a text: the first problem, at the byte it was found.
public struct JSONSyntaxError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The problems a caller may word in its own terms; every other one is `malformed`.
    public enum Kind: Sendable, Equatable {
        /// Not JSON as RFC 8259 defines it, for a reason other than the ones below.
        case malformed
        /// A comma right before `}` or `]`: tolerant readers forgive it, RFC 8259 does not.
        case trailingComma
        /// An object gives `key` a second time; `firstLine` is the line where it was first given.
        case duplicateKey(key: String, firstLine: Int)
        /// A container opened inside `limit` others.
        case tooDeep(limit: Int)
    }

    public var kind: Kind
    /// What is wrong, without where (`expected ',' or '}', found character 'x'`).
    public var problem: String
    /// 1-based line and column (in Unicode scalars) of the byte at fault.
    public var line: Int
    public var column: Int
    /// Where in the document, as dotted keys and indexes (`preferences.quietHours.start`,
    /// `items[2].id`): the repeated key itself, the value that nests too deep, or else the
    /// container (or member) being read. Empty at the top level. Each key is clipped to 64
    /// characters, so a path stays short whatever the keys.
    public var path: String

    public init(kind: Kind, problem: String, line: Int, column: Int, path: String) {
        self.kind = kind
        self.problem = problem
        self.line = line
        self.column = column
        self.path = path
    }

    /// `line 4, column 3 at preferences.quietHours: <problem>`.
    public var description: String {
        "line \(line), column \(column)\(path.isEmpty ? "" : " at \(path)"): \(problem)"
    }
}
