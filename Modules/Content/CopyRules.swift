/// A rule every piece of copy a person reads obeys: each rendering of a template (with and without
/// a name, at every privacy level, with real values and with fallbacks), each grouped social
/// sentence, and each answer of the coach. The template loader refuses a file one of whose
/// renderings breaks a rule; `CoachOutput.validate` rejects an answer that breaks one, so a
/// template is shown instead.
public enum CopyRule: String, CaseIterable, Hashable, Sendable, CustomStringConvertible {
    /// A `{` or `}` left in the text: "Good morning, {name}".
    case placeholderLeft
    /// Punctuation with nothing between: a comma, colon or semicolon followed only by spaces and
    /// emoji before more punctuation or the end ("Good morning, ☀️", "Well done, !"), text that
    /// starts with punctuation, or empty brackets and quotes.
    case emptyClause
    /// A stand-in word where a name stood: "there" or "du" after a comma, ending its clause
    /// ("Good morning, there ☀️", "What's on the plate, there?", "Wir melden uns, du 💙").
    case fallbackName
    case doubleSpace
    /// A space before `,` `.` `;` `:` `!` or `?`.
    case spaceBeforePunctuation
    /// A title without a real emoji (templates only), or a broken emoji sequence: a variation
    /// selector, joiner, skin tone or keycap mark with no emoji to attach to, or a lone flag letter.
    case invalidEmoji
    /// More than `CopyLimits.maxTitleCharacters` (60) in the title: about two lock-screen lines.
    case titleTooLong
    /// More than `CopyLimits.maxBodyCharacters` (178) in the body: about four lock-screen lines.
    case bodyTooLong
    /// A meal in the wrong letter case: in German every meal is a noun and capitalised
    /// ("Frühstück"); in English `{Meal}` starts a sentence and `{meal}` stands inside one
    /// ("Log your lunch", not "Log your Lunch" or "lunch time"). Checked on templates, where the
    /// loader knows which text the meal filled.
    case mealCase

    public var description: String { rawValue }
}

/// One broken rule: which, in which part ("title" or "body"), and the text that broke it.
public struct CopyRuleBreak: Hashable, Sendable, CustomStringConvertible {
    public var rule: CopyRule
    public var part: String
    public var text: String

    public var description: String { "\(rule) in the \(part): \"\(text)\"" }
}

/// The text rules of `CopyRule`, as pure functions over finished copy.
public enum CopyRules {
    /// Words that stood in for a missing name ("Good morning, there"); copy never uses them as a
    /// form of address.
    static let fallbackNames: Set<String> = ["there", "du"]

    /// The stand-ins' lengths in characters.
    static let fallbackNameLengths: [Int] = Array(Set(fallbackNames.map(\.count)))

    /// The first rule `copy` breaks, title first; nil when it reads right. `titleNeedsEmoji`:
    /// templates carry an emoji in every title; the coach's answers need not.
    public static func firstBreak(
        in copy: Copy, limits: CopyLimits = .lockScreen, titleNeedsEmoji: Bool
    ) -> CopyRuleBreak? {
        if let rule = firstBreak(in: copy.title) { return CopyRuleBreak(rule: rule, part: "title", text: copy.title) }
        if let rule = firstBreak(in: copy.body) { return CopyRuleBreak(rule: rule, part: "body", text: copy.body) }
        if titleNeedsEmoji, !copy.title.unicodeScalars.contains(where: isEmoji) {
            return CopyRuleBreak(rule: .invalidEmoji, part: "title", text: copy.title)
        }
        if copy.title.count > limits.maxTitleCharacters {
            return CopyRuleBreak(rule: .titleTooLong, part: "title", text: copy.title)
        }
        if copy.body.count > limits.maxBodyCharacters {
            return CopyRuleBreak(rule: .bodyTooLong, part: "body", text: copy.body)
        }
        return nil
    }

    /// The first rule one piece of text breaks, of those that need no more than the text.
    ///
    /// Every check reads the text's characters (grapheme clusters) once, in one array, and compares
    /// characters one by one: no string is rebuilt and no substring searched, since the coach's
    /// every answer passes here inside the scheduling decision.
    static func firstBreak(in text: String) -> CopyRule? {
        let characters = Array(text)
        if characters.contains(where: { $0 == "{" || $0 == "}" }) { return .placeholderLeft }
        if hasEmptyClause(characters) { return .emptyClause }
        if hasFallbackName(characters) { return .fallbackName }
        if contains([" ", " "], in: characters) { return .doubleSpace }
        for index in characters.indices.dropLast() where characters[index] == " " {
            if isPunctuation(characters[index + 1]) { return .spaceBeforePunctuation }
        }
        if hasBrokenEmoji(text) { return .invalidEmoji }
        return nil
    }

    static func isPunctuation(_ character: Character) -> Bool {
        switch character {
        case ",", ".", ";", ":", "!", "?": true
        default: false
        }
    }

    /// Punctuation that opens a clause: what follows it must be more than spaces and emoji.
    static func isClausePunctuation(_ character: Character) -> Bool {
        switch character {
        case ",", ";", ":": true
        default: false
        }
    }

    /// A character made only of emoji scalars (with their selectors and joiners).
    static func isEmojiCharacter(_ character: Character) -> Bool {
        character.unicodeScalars.contains(where: isEmoji)
            && character.unicodeScalars.allSatisfy { isEmoji($0) || $0.value == 0xFE0F || $0.value == 0x200D }
    }

    /// A real emoji scalar: ASCII digits, `#` and `*` have the property too, as keycap bases.
    static func isEmoji(_ scalar: Unicode.Scalar) -> Bool { scalar.properties.isEmoji && !scalar.isASCII }

    /// Brackets and quotes with nothing between them.
    static let emptyPairs: [[Character]] = [["(", ")"], ["(", " ", ")"], ["“", "”"], ["\"", "\""], ["„", "“"]]

    /// Whether `run` appears in `characters`, character for character.
    static func contains(_ run: [Character], in characters: [Character]) -> Bool {
        guard let first = run.first, run.count <= characters.count else { return run.isEmpty }
        for start in 0...(characters.count - run.count) where characters[start] == first {
            if characters[start..<(start + run.count)].elementsEqual(run) { return true }
        }
        return false
    }

    private static func hasEmptyClause(_ characters: [Character]) -> Bool {
        if let first = characters.first, isPunctuation(first) { return true }
        for pair in emptyPairs where contains(pair, in: characters) { return true }
        for (index, character) in characters.enumerated() where isClausePunctuation(character) {
            var next = index + 1
            while next < characters.count, characters[next] == " " || isEmojiCharacter(characters[next]) {
                next += 1
            }
            if next == characters.count || isPunctuation(characters[next]) { return true }
        }
        return false
    }

    /// `Character.isLetter`, answered without Unicode's tables for ASCII.
    static func isLetter(_ character: Character) -> Bool {
        guard let ascii = character.asciiValue else { return character.isLetter }
        return (ascii | 0x20) >= UInt8(ascii: "a") && (ascii | 0x20) <= UInt8(ascii: "z")
    }

    /// Whether a stand-in for a name ends a clause after a comma. A word is lower-cased and looked
    /// up only when it is as long as a stand-in: letter case maps one letter to one letter.
    private static func hasFallbackName(_ characters: [Character]) -> Bool {
        var index = 0
        while index < characters.count {
            guard isLetter(characters[index]) else {
                index += 1
                continue
            }
            var end = index
            while end < characters.count, isLetter(characters[end]) { end += 1 }
            if fallbackNameLengths.contains(end - index),
                fallbackNames.contains(String(characters[index..<end]).lowercased())
            {
                var before = index - 1
                while before >= 0, characters[before] == " " { before -= 1 }
                var after = end
                while after < characters.count, characters[after] == " " || isEmojiCharacter(characters[after]) {
                    after += 1
                }
                let afterComma = before >= 0 && characters[before] == ","
                let endsClause = after == characters.count || isPunctuation(characters[after])
                if afterComma && endsClause { return true }
            }
            index = end
        }
        return false
    }

    /// Scalars that only make sense attached to an emoji, found without one.
    static func hasBrokenEmoji(_ text: String) -> Bool {
        let scalars = Array(text.unicodeScalars)
        var regionalRun = 0
        for (index, scalar) in scalars.enumerated() {
            let previous = index > 0 ? scalars[index - 1] : nil
            let next = index + 1 < scalars.count ? scalars[index + 1] : nil
            let value = scalar.value
            if (0x1F1E6...0x1F1FF).contains(value) {
                regionalRun += 1
                continue
            }
            if regionalRun % 2 == 1 { return true }
            regionalRun = 0
            switch value {
            case 0xFE0F:
                guard let previous, previous.properties.isEmoji else { return true }
            case 0x200D:
                guard let previous, previous.properties.isEmoji || previous.value == 0xFE0F,
                    let next, isEmoji(next)
                else { return true }
            case 0x1F3FB...0x1F3FF:
                guard let previous, previous.properties.isEmojiModifierBase else { return true }
            case 0x20E3:
                guard let previous, previous.value == 0xFE0F || "0123456789#*".unicodeScalars.contains(previous)
                else { return true }
            default: break
            }
        }
        return regionalRun % 2 == 1
    }
}
