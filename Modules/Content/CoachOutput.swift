public import Models

/// Why the coach's answer was not shown.
public enum OutputProblem: Error, Hashable, Sendable, CustomStringConvertible {
    /// Nothing but white space.
    case empty
    /// No `|` between title and body.
    case missingSeparator
    /// More than one `|` between non-empty parts.
    case extraSeparators
    case emptyTitle
    case emptyBody
    case titleTooLong(characters: Int, limit: Int)
    case bodyTooLong(characters: Int, limit: Int)
    /// Template or programming leftovers: `{name}`, `TODO`, `lorem`, `null`, `Optional(`, ...
    case placeholder(String)
    /// UTF-8 read as Latin-1 (`Ã`, `â€`) or replacement characters.
    case encodingGarbage(String)
    /// Control, bidirectional-override or unassigned characters.
    case controlCharacter
    /// Personal data the recipient's privacy level does not allow.
    case personalData(PersonalDataKind)
    /// Copy no person would write, by the rules every template keeps (`CopyRule`): an empty
    /// clause, "there" where a name stood, a space before punctuation, a broken emoji.
    case copyRule(CopyRule)
    /// The whole push payload would exceed the APNs limit.
    case payloadTooLarge(bytes: Int, limit: Int)

    /// A stable, low-cardinality code for traces and reports, e.g. `missingSeparator`,
    /// `personalData.email`.
    public var code: String {
        switch self {
        case .empty: "empty"
        case .missingSeparator: "missingSeparator"
        case .extraSeparators: "extraSeparators"
        case .emptyTitle: "emptyTitle"
        case .emptyBody: "emptyBody"
        case .titleTooLong: "titleTooLong"
        case .bodyTooLong: "bodyTooLong"
        case .placeholder: "placeholder"
        case .encodingGarbage: "encodingGarbage"
        case .controlCharacter: "controlCharacter"
        case .personalData(let kind): "personalData.\(kind.rawValue)"
        case .copyRule(let rule): "copyRule.\(rule.rawValue)"
        case .payloadTooLarge: "payloadTooLarge"
        }
    }

    public var description: String {
        switch self {
        case .titleTooLong(let characters, let limit): "title of \(characters) characters (limit \(limit))"
        case .bodyTooLong(let characters, let limit): "body of \(characters) characters (limit \(limit))"
        case .placeholder(let text): "placeholder text \"\(text)\""
        case .encodingGarbage(let text): "encoding garbage \"\(text)\""
        case .payloadTooLarge(let bytes, let limit): "payload of \(bytes) bytes (limit \(limit))"
        default: code
        }
    }
}

/// Parses and validates the coach's `title|body` answers.
public enum CoachOutput {
    /// Splits an answer into title and body, leniently where the intent is clear:
    /// - white space (including line breaks) is collapsed to single spaces and trimmed, around
    ///   the whole answer and each part;
    /// - one pair of quotes around the whole answer is removed;
    /// - empty parts at either end are dropped when there are more than two (`Title|Body|`);
    /// - otherwise it takes exactly one separator with text on both sides: no separator is
    ///   `missingSeparator`, two or more `extraSeparators` (a `|` inside a body is never
    ///   meant), `|Body` is `emptyTitle`, `Title|` is `emptyBody`.
    public static func parse(_ text: String) -> Result<Copy, OutputProblem> {
        var whole = collapsingWhitespace(Array(text.utf8))
        for (open, close) in quotePairs where whole.count >= open.count + close.count {
            if whole.starts(with: open) && whole.suffix(close.count).elementsEqual(close) {
                whole = collapsingWhitespace(Array(whole[open.count..<(whole.count - close.count)]))
                break
            }
        }
        guard !whole.isEmpty else { return .failure(.empty) }
        // Whitespace is collapsed already; each part only needs trimming.
        var parts = whole.split(separator: 0x7C, omittingEmptySubsequences: false).map(trimmingSpaces)
        while parts.count > 2, parts.first?.isEmpty == true { parts.removeFirst() }
        while parts.count > 2, parts.last?.isEmpty == true { parts.removeLast() }
        guard parts.count >= 2 else { return .failure(.missingSeparator) }
        guard parts.count == 2 else { return .failure(.extraSeparators) }
        guard !parts[0].isEmpty else { return .failure(.emptyTitle) }
        guard !parts[1].isEmpty else { return .failure(.emptyBody) }
        return .success(
            Copy(title: String(decoding: parts[0], as: UTF8.self), body: String(decoding: parts[1], as: UTF8.self)))
    }

    /// Parses, then checks the copy: characters, leftovers, the copy rules templates keep
    /// (`CopyRules`; an answer's title needs no emoji), lock-screen lengths, personal data for
    /// `recipient` (and the `senders` the notification is about), and the size of the whole
    /// payload built from `envelope` (the rest of the notification) with this copy.
    public static func validate(
        _ text: String, recipient: Recipient, senders: [SocialSender] = [], envelope: NotificationContent,
        imageKey: String? = nil, limits: CopyLimits = .lockScreen
    ) -> Result<Copy, OutputProblem> {
        let copy: Copy
        switch parse(text) {
        case .success(let parsed): copy = parsed
        case .failure(let problem): return .failure(problem)
        }
        for part in [copy.title, copy.body] {
            if let problem = characterProblem(part) { return .failure(problem) }
            if let rule = CopyRules.firstBreak(in: part) { return .failure(.copyRule(rule)) }
        }
        let titleLength = TextScan.characterCount(copy.title)
        guard titleLength <= limits.maxTitleCharacters else {
            return .failure(.titleTooLong(characters: titleLength, limit: limits.maxTitleCharacters))
        }
        let bodyLength = TextScan.characterCount(copy.body)
        guard bodyLength <= limits.maxBodyCharacters else {
            return .failure(.bodyTooLong(characters: bodyLength, limit: limits.maxBodyCharacters))
        }
        var content = envelope
        content.title = copy.title
        content.body = copy.body
        if let violation = PrivacyAudit.violations(in: content, for: recipient, senders: senders).first {
            return .failure(.personalData(violation.kind))
        }
        let bytes = PayloadBuilder.byteCount(of: content, imageKey: imageKey)
        guard bytes <= limits.maxPayloadBytes else {
            return .failure(.payloadTooLarge(bytes: bytes, limit: limits.maxPayloadBytes))
        }
        return .success(copy)
    }

    static let leftoverFragments = [
        "{", "}", "Optional(", "%@", "%s", "%d", "\\(", "${", "[name]", "<name>", "[insert",
    ]
    static let leftoverWords: Set<String> = [
        "todo", "fixme", "tbd", "lorem", "ipsum", "null", "nil", "undefined", "nan",
    ]
    static let garbageFragments = ["Ã", "Â", "â€", "ï¸", "ðŸ", "\u{FFFD}"]
    private static let leftoverBytes = leftoverFragments.map { Array($0.utf8) }
    private static let garbageBytes = garbageFragments.map { Array($0.utf8) }
    private static let leftoverWordBytes = leftoverWords.sorted().map { Array($0.utf8) }
    /// Whether a leftover fragment starts with the byte, by byte value.
    private static let leftoverFirstBytes: [Bool] = (0..<256).map { byte in
        leftoverBytes.contains { $0.first == UInt8(byte) }
    }

    /// Byte scans: this runs on every answer the coach gives.
    static func characterProblem(_ text: String) -> OutputProblem? {
        text.withUTF8Bytes { bytes in problem(in: text, bytes: bytes) }
    }

    /// `characterProblem(_:)` over the text's UTF-8, read in place.
    private static func problem(in text: String, bytes: UnsafeBufferPointer<UInt8>) -> OutputProblem? {
        // One pass over the bytes says which checks can find anything: most answers are printable
        // ASCII (no control, override or unassigned character, no mojibake) and hold no byte a
        // leftover fragment starts with.
        var printableASCII = true
        var mayHoldLeftover = false
        for byte in bytes {
            if byte < 0x20 || byte >= 0x7F { printableASCII = false }
            if leftoverFirstBytes[Int(byte)] { mayHoldLeftover = true }
        }
        if !printableASCII, let problem = scalarProblem(text, bytes) { return problem }
        if mayHoldLeftover {
            for (index, fragment) in leftoverBytes.enumerated()
            where TextScan.find(fragment, in: bytes, wholeWord: false) {
                return .placeholder(leftoverFragments[index])
            }
        }
        return leftoverWord(in: bytes)
    }

    /// Control, bidirectional-override and unassigned characters, then mojibake: for text that
    /// is not all printable ASCII.
    private static func scalarProblem(_ text: String, _ bytes: UnsafeBufferPointer<UInt8>) -> OutputProblem? {
        for scalar in text.unicodeScalars where scalar.value < 0x20 || scalar.value >= 0x7F {
            switch scalar.properties.generalCategory {
            case .control, .unassigned, .privateUse, .surrogate: return .controlCharacter
            default: break
            }
            // Bidirectional overrides and isolates can disguise text.
            if (0x202A...0x202E).contains(scalar.value) || (0x2066...0x2069).contains(scalar.value) {
                return .controlCharacter
            }
        }
        if bytes.contains(where: { $0 >= 0x80 }) {
            for (index, fragment) in garbageBytes.enumerated()
            where TextScan.find(fragment, in: bytes, wholeWord: false) {
                return .encodingGarbage(garbageFragments[index])
            }
        }
        return nil
    }

    /// A leftover word (`todo`, `null`, ...) standing as a whole ASCII word: "vanilla" and "annul"
    /// are fine.
    private static func leftoverWord(in bytes: UnsafeBufferPointer<UInt8>) -> OutputProblem? {
        var start = 0
        while start < bytes.count {
            guard TextScan.isASCIILetter(bytes[start]) else {
                start += 1
                continue
            }
            var end = start
            while end < bytes.count, TextScan.isASCIILetter(bytes[end]) { end += 1 }
            let boundedBefore = start == 0 || bytes[start - 1] < 0x80
            let boundedAfter = end == bytes.count || bytes[end] < 0x80
            if (3...9).contains(end - start), boundedBefore, boundedAfter,
                let word = leftoverWordBytes.first(where: {
                    $0.count == end - start && zip($0, bytes[start..<end]).allSatisfy { $0 == $1 | 0x20 }
                })
            {
                return .placeholder(String(decoding: word, as: UTF8.self))
            }
            start = end
        }
        return nil
    }

    private static let quotePairs: [([UInt8], [UInt8])] = [
        ([0x22], [0x22]), (Array("“".utf8), Array("”".utf8)), ([0x27], [0x27]),
    ]

    /// The length of the white-space character starting at `index` (ASCII white space, NEL,
    /// no-break and typographic spaces, line and paragraph separators), or 0.
    static func whitespaceLength(_ bytes: [UInt8], _ index: Int) -> Int {
        let byte = bytes[index]
        if byte == 0x20 || (0x09...0x0D).contains(byte) { return 1 }
        guard byte >= 0xC2, index + 1 < bytes.count else { return 0 }
        let next = bytes[index + 1]
        if byte == 0xC2 { return next == 0x85 || next == 0xA0 ? 2 : 0 }
        guard index + 2 < bytes.count else { return 0 }
        let last = bytes[index + 2]
        switch (byte, next) {
        case (0xE1, 0x9A): return last == 0x80 ? 3 : 0
        case (0xE2, 0x80): return (0x80...0x8A).contains(last) || last == 0xA8 || last == 0xA9 || last == 0xAF ? 3 : 0
        case (0xE2, 0x81): return last == 0x9F ? 3 : 0
        case (0xE3, 0x80): return last == 0x80 ? 3 : 0
        default: return 0
        }
    }

    /// Runs of white space become one ASCII space; none at either end.
    static func collapsingWhitespace(_ bytes: [UInt8]) -> [UInt8] {
        var result: [UInt8] = []
        result.reserveCapacity(bytes.count)
        var pendingSpace = false
        var index = 0
        while index < bytes.count {
            let length = whitespaceLength(bytes, index)
            if length > 0 {
                pendingSpace = !result.isEmpty
                index += length
            } else {
                if pendingSpace { result.append(0x20) }
                pendingSpace = false
                result.append(bytes[index])
                index += 1
            }
        }
        return result
    }

    private static func trimmingSpaces(_ part: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        var part = part
        while part.first == 0x20 { part.removeFirst() }
        while part.last == 0x20 { part.removeLast() }
        return part
    }
}
