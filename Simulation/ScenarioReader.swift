import Models

/// Typed reads from a scenario file's JSON values, each failing with the key path, the problem
/// and the value's line and column. Strings are quoted in messages and numbers shown as written,
/// so `"5"` and `5` never read alike.
struct Reader {
    var file: String

    func fail(_ key: String, _ node: JSONNode?, _ problem: String) -> ScenarioError {
        ScenarioError(file: file, key: key, problem: problem, line: node?.line, column: node?.column)
    }

    /// An object's members by key (the JSON reader has refused duplicates); an absent object is
    /// empty. A key outside `allowed` is an error naming it.
    func dictionary(_ node: JSONNode?, key: String, allowed: Set<String>) throws(ScenarioError) -> [String: JSONNode] {
        guard let node else { return [:] }
        guard case .object(let members) = node.value else {
            throw fail(key, node, "expected an object, got \(node.value.quoted)")
        }
        let prefix = key == "(top level)" ? "" : key + "."
        if let unknown = members.first(where: { !allowed.contains($0.key) }) {
            throw fail(
                prefix + unknown.key, unknown.node,
                "unknown key; expected one of \(allowed.sorted().joined(separator: ", "))")
        }
        return Dictionary(uniqueKeysWithValues: members.map { ($0.key, $0.node) })
    }

    /// A required, non-empty string.
    func string(_ node: JSONNode?, key: String) throws(ScenarioError) -> String {
        guard let node else { throw fail(key, nil, "missing required key") }
        guard case .string(let text) = node.value, !text.isEmpty else {
            throw fail(key, node, "expected a non-empty string, got \(node.value.quoted)")
        }
        return text
    }

    /// An optional string (possibly empty); nil when absent.
    func text(_ node: JSONNode?, key: String) throws(ScenarioError) -> String? {
        guard let node else { return nil }
        guard case .string(let text) = node.value else {
            throw fail(key, node, "expected a string, got \(node.value.quoted)")
        }
        return text
    }

    /// A whole number in `range`, read exactly from its literal; `fallback` when absent. `1.0`
    /// is whole; `1e3` is 1000.
    func integer(_ node: JSONNode?, key: String, range: ClosedRange<Int>, default fallback: Int) throws(ScenarioError)
        -> Int
    {
        guard let node else { return fallback }
        let bounds = "in \(range.lowerBound)...\(range.upperBound)"
        guard case .number(let literal) = node.value else {
            throw fail(key, node, "expected a whole number \(bounds), got \(node.value.quoted)")
        }
        if let exact = Int(literal) {
            guard range.contains(exact) else { throw fail(key, node, "must be \(bounds), got \(literal)") }
            return exact
        }
        guard let double = Double(literal), double.isFinite, double == double.rounded() else {
            throw fail(key, node, "expected a whole number \(bounds), got \(literal)")
        }
        // Compared as doubles first: converting a double beyond Int's range would trap.
        guard double >= Double(range.lowerBound), double <= Double(range.upperBound) else {
            throw fail(key, node, "must be \(bounds), got \(literal)")
        }
        return Int(double)
    }

    /// A whole number in 0...UInt64.max written without a fraction or exponent (a seed).
    func unsigned(_ node: JSONNode, key: String) throws(ScenarioError) -> UInt64 {
        let bounds = "a whole number in 0...\(UInt64.max)"
        guard case .number(let literal) = node.value else {
            throw fail(key, node, "expected \(bounds), got \(node.value.quoted)")
        }
        guard let value = UInt64(literal) else {
            let isWholeLiteral = literal.utf8.allSatisfy { $0 == UInt8(ascii: "-") || ($0 >= 48 && $0 <= 57) }
            throw fail(
                key, node,
                isWholeLiteral ? "must be in 0...\(UInt64.max), got \(literal)" : "expected \(bounds), got \(literal)")
        }
        return value
    }

    /// A finite number in `range`.
    func number(_ node: JSONNode, key: String, range: ClosedRange<Double>) throws(ScenarioError) -> Double {
        guard case .number(let literal) = node.value else {
            throw fail(key, node, "expected a number, got \(node.value.quoted)")
        }
        guard let value = Double(literal), value.isFinite, range.contains(value) else {
            throw fail(
                key, node, "must be in \(range.lowerBound.shortText)...\(range.upperBound.shortText), got \(literal)")
        }
        return value
    }

    func date(_ node: JSONNode?, key: String) throws(ScenarioError) -> LocalDate {
        let text = try string(node, key: key)
        guard text.count == 10, let parsed = LocalDateTime.parseWithOffset(text) else {
            throw fail(key, node, "expected a date YYYY-MM-DD, got \"\(text)\"")
        }
        return parsed.local.date
    }

    /// A non-empty object of choice: weight, each choice checked by `validate` (nil when valid).
    func weights(_ node: JSONNode, key: String, validate: (String) -> String?) throws(ScenarioError) -> Weights {
        guard case .object(let members) = node.value, !members.isEmpty else {
            throw fail(key, node, "expected a non-empty object of choice: weight, got \(node.value.quoted)")
        }
        var pairs: [(String, Double)] = []
        for member in members.sorted(by: { $0.key < $1.key }) {
            if let problem = validate(member.key) { throw fail("\(key).\(member.key)", member.node, problem) }
            pairs.append((member.key, try number(member.node, key: "\(key).\(member.key)", range: 0...1e9)))
        }
        guard pairs.contains(where: { $0.1 > 0 }) else { throw fail(key, node, "all weights are zero") }
        return Weights(pairs)
    }
}

extension JSONNode.Value {
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

extension Double {
    /// `1` rather than `1.0`, `0.5` as is, `1e9` as `1000000000`: bounds as a person writes them.
    var shortText: String { self == rounded() && abs(self) < 1e15 ? String(Int(self)) : String(self) }
}
