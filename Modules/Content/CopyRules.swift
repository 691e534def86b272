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
    /// The text is read once into its characters (grapheme clusters) and, beside them, one code
    /// each (`CharacterCodes`); the rules compare codes, not characters, since the coach's every
    /// answer passes here inside the scheduling decision.
    static func firstBreak(in text: String) -> CopyRule? {
        let text = CharacterCodes(text)
        let codes = text.codes
        if codes.contains(where: { $0 == 0x7B || $0 == 0x7D }) { return .placeholderLeft }  // { }
        if hasEmptyClause(text) { return .emptyClause }
        if hasFallbackName(text) { return .fallbackName }
        if text.contains([space, space]) { return .doubleSpace }
        for index in codes.indices.dropLast() where codes[index] == space {
            if isPunctuation(codes[index + 1]) { return .spaceBeforePunctuation }
        }
        if hasBrokenEmoji(text.text) { return .invalidEmoji }
        return nil
    }

    /// A text's characters and a code for each: the scalar's value for a character of one scalar
    /// (its canonical equivalent's among those the rules name), `CharacterCodes.cluster` for one
    /// of several. A rule about a character of one scalar (a comma, a space, a quote) then
    /// compares a number, and a cluster never equals one (a comma with a combining mark is not a
    /// comma).
    struct CharacterCodes {
        static let cluster: UInt32 = .max

        let text: String
        let characters: [Character]
        let codes: [UInt32]

        init(_ text: String) {
            self.text = text
            characters = Array(text)
            codes = characters.map { character in
                var scalars = character.unicodeScalars.makeIterator()
                guard let first = scalars.next(), scalars.next() == nil else { return Self.cluster }
                return Self.canonical(first.value)
            }
        }

        /// The one scalar a rule names that another scalar is canonically equivalent to, as
        /// `Character`'s equality finds: the Greek question mark is a semicolon.
        static func canonical(_ scalar: UInt32) -> UInt32 { scalar == 0x037E ? 0x3B : scalar }

        /// Whether `run`'s scalars stand as characters of one scalar each in the text, in a row.
        func contains(_ run: [UInt32]) -> Bool {
            guard let first = run.first, run.count <= codes.count else { return run.isEmpty }
            for start in 0...(codes.count - run.count) where codes[start] == first {
                if codes[start..<(start + run.count)].elementsEqual(run) { return true }
            }
            return false
        }

        /// A space, or a character made only of emoji: what may stand in an empty clause.
        func isBlank(_ index: Int) -> Bool { codes[index] == space || isEmojiCharacter(characters[index]) }
    }

    static let space = UInt32(0x20)

    static func isPunctuation(_ code: UInt32) -> Bool {
        switch code {
        case 0x2C, 0x2E, 0x3B, 0x3A, 0x21, 0x3F: true  // , . ; : ! ?
        default: false
        }
    }

    /// Punctuation that opens a clause: what follows it must be more than spaces and emoji.
    static func isClausePunctuation(_ code: UInt32) -> Bool {
        switch code {
        case 0x2C, 0x3B, 0x3A: true  // , ; :
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

    /// Brackets and quotes with nothing between them: `()`, `( )`, `“”`, `""` and `„“`.
    static let emptyPairs: [[UInt32]] = [
        [0x28, 0x29], [0x28, 0x20, 0x29], [0x201C, 0x201D], [0x22, 0x22], [0x201E, 0x201C],
    ]

    private static func hasEmptyClause(_ text: CharacterCodes) -> Bool {
        let codes = text.codes
        if let first = codes.first, isPunctuation(first) { return true }
        for pair in emptyPairs where text.contains(pair) { return true }
        for index in codes.indices where isClausePunctuation(codes[index]) {
            var next = index + 1
            while next < codes.count, text.isBlank(next) { next += 1 }
            if next == codes.count || isPunctuation(codes[next]) { return true }
        }
        return false
    }

    /// `Character.isLetter` for a character of `text`, answered from its code for ASCII.
    private static func isLetter(_ text: CharacterCodes, _ index: Int) -> Bool {
        let code = text.codes[index]
        guard code < 0x80 else { return text.characters[index].isLetter }
        return (code | 0x20) >= 0x61 && (code | 0x20) <= 0x7A
    }

    /// Whether a stand-in for a name ends a clause after a comma. A word is lower-cased and looked
    /// up only when it is as long as a stand-in: letter case maps one letter to one letter.
    private static func hasFallbackName(_ text: CharacterCodes) -> Bool {
        let codes = text.codes
        var index = 0
        while index < codes.count {
            guard isLetter(text, index) else {
                index += 1
                continue
            }
            var end = index
            while end < codes.count, isLetter(text, end) { end += 1 }
            if fallbackNameLengths.contains(end - index),
                fallbackNames.contains(String(text.characters[index..<end]).lowercased())
            {
                var before = index - 1
                while before >= 0, codes[before] == space { before -= 1 }
                var after = end
                while after < codes.count, text.isBlank(after) { after += 1 }
                let afterComma = before >= 0 && codes[before] == 0x2C
                let endsClause = after == codes.count || isPunctuation(codes[after])
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
