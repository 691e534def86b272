import Models

/// A template's patterns as the loader reads them: split into literal text, fields and clauses,
/// and checked for what a lock screen shows.
extension TemplateFileLoader {
    /// Splits a pattern into literal text, fields and clauses; `{` and `}` are reserved for
    /// placeholders. Only the fields in `allowed` (in their declared order; all of them by
    /// default) are known. A field in `droppable` is written only in a clause, its name between
    /// spaces and punctuation inside the braces (`{, name}`, `{ name}`, `{, name,}`), never bare.
    func segments<Field: RawRepresentable & CaseIterable & Sendable & Hashable>(
        _ pattern: String, part: String, line: Int, name: String, allowed: [Field] = Array(Field.allCases),
        droppable: [Field] = []
    ) throws(TemplateLoadError) -> [Segment<Field>] where Field.RawValue == String {
        var result: [Segment<Field>] = []
        var rest = Substring(pattern)
        while let open = rest.firstIndex(where: { $0 == "{" || $0 == "}" }) {
            guard rest[open] == "{" else { throw fail(line, name, "stray \"}\" in the \(part)") }
            guard let close = rest[open...].firstIndex(of: "}") else {
                throw fail(line, name, "unclosed placeholder in the \(part): \"\(rest[open...])\"")
            }
            let inside = String(rest[rest.index(after: open)..<close])
            if open > rest.startIndex { result.append(.text(String(rest[..<open]))) }
            result.append(
                try segment(inside, part: part, line: line, name: name, allowed: allowed, droppable: droppable))
            rest = rest[rest.index(after: close)...]
        }
        if !rest.isEmpty { result.append(.text(String(rest))) }
        return result
    }

    /// What one pair of braces holds: a field, or a clause around a droppable field.
    private func segment<Field: RawRepresentable & CaseIterable & Sendable & Hashable>(
        _ inside: String, part: String, line: Int, name: String, allowed: [Field], droppable: [Field]
    ) throws(TemplateLoadError) -> Segment<Field> where Field.RawValue == String {
        if let field = Field(rawValue: inside), allowed.contains(field) {
            guard !droppable.contains(field) else {
                throw fail(
                    line, name,
                    "{\(inside)} in the \(part) must sit in a clause that drops away when it may not be shown, "
                        + "e.g. \"Good morning{, \(inside)} ☀️\"")
            }
            return .field(field)
        }
        for field in droppable where allowed.contains(field) {
            guard let range = inside.firstRange(of: field.rawValue) else { continue }
            let before = String(inside[..<range.lowerBound])
            let after = String(inside[range.upperBound...])
            let joiners = before + after
            guard !joiners.isEmpty, !joiners.contains(where: { $0.isLetter || $0.isNumber }) else { continue }
            guard !before.hasSuffix(" ") || !after.hasPrefix(" ") else {
                throw fail(line, name, "the clause {\(inside)} in the \(part) leaves spaces on both sides")
            }
            return .clause(before: before, field, after: after)
        }
        let known = allowed.isEmpty ? "none" : allowed.map { "{\($0.rawValue)}" }.joined(separator: " ")
        throw fail(line, name, "unknown placeholder {\(inside)} in the \(part); known: \(known)")
    }

    /// The rules every shown pattern obeys; `longest` is its length with its fields at their longest.
    func checkText(
        _ pattern: String, longest: Int, part: String, limit: Int, line: Int, name: String
    ) throws(TemplateLoadError) {
        guard pattern.trimmedOrNil == pattern else {
            throw fail(line, name, "the \(part) is empty or starts or ends with white space")
        }
        if let fragment = ["Ã", "Â", "â€", "ï¸", "ðŸ", "\u{FFFD}"].first(where: { pattern.contains($0) }) {
            throw fail(line, name, "the \(part) contains \"\(fragment)\": UTF-8 read as Latin-1 (mojibake)")
        }
        guard
            !pattern.unicodeScalars.contains(where: {
                $0.properties.generalCategory == .control || $0.properties.generalCategory == .unassigned
            })
        else { throw fail(line, name, "the \(part) contains a control or unassigned character") }
        guard !pattern.contains("  ") else { throw fail(line, name, "the \(part) contains a double space") }
        guard longest <= limit else {
            throw fail(
                line, name,
                "the \(part) can reach \(longest) characters with its fields at their longest (limit \(limit))")
        }
    }
}
