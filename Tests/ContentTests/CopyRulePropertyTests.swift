import Models
import Testing

@testable import Content

/// `CopyRules.firstBreak(in:)` compares characters in one array; these hold it to the rules written
/// the plain way, with string searches, over random text built from the pieces the rules look at.
@Suite("Copy rules: the character scan equals the plain reading")
struct CopyRulePropertyTests {
    /// The pieces random text is made of: every character a rule names, words that stand in for a
    /// name in either case, emoji with their selectors, joiners, tones and flags, and combining
    /// marks that make one character of two scalars.
    static let pieces: [String] = [
        "(", ")", " ", "“", "”", "\"", "„", ",", ";", ":", ".", "!", "?", "{", "}", "there", "There",
        "THERE", "du", "Du", "then", "dust", "a", "Zoë", "e\u{301}", "\u{301}", "(\u{301}", ",\u{301}", " \u{301}",
        "“\u{301}", "\u{037E}", "💪", "☀️",
        "\u{FE0F}", "\u{200D}", "👨‍👩‍👧", "🇩", "🇪", "1", "1️⃣", "\u{20E3}", "👍", "\u{1F3FD}", "Straße", "ß",
    ]

    @Test func randomTextBreaksTheSameRuleAsThePlainReading() {
        var generator = SeededGenerator(seed: 54)
        var breaking = 0
        for _ in 0..<20_000 {
            let count = Int.random(in: 0...9, using: &generator)
            let text = (0..<count).map { _ in Self.pieces.randomElement(using: &generator)! }.joined()
            let expected = Self.plainFirstBreak(in: text)
            #expect(CopyRules.firstBreak(in: text) == expected, "\(text.unicodeScalars.map(\.value))")
            if expected != nil { breaking += 1 }
        }
        // Both answers occur often, so the comparison covers each.
        #expect(breaking > 2_000 && breaking < 18_000)
    }

    @Test func emptyAndOneCharacterText() {
        for text in ["", " ", ",", "a", "💪", "\u{FE0F}", "{"] {
            #expect(CopyRules.firstBreak(in: text) == Self.plainFirstBreak(in: text), "\(text)")
        }
    }

    @Test func aRunIsFoundWhereverItStands() {
        let text = CopyRules.CharacterCodes("ab(c)“”")
        #expect(text.contains([0x201C, 0x201D]))
        #expect(text.contains([0x61]))
        #expect(!text.contains([0x28, 0x29]))
        #expect(text.contains([]))
        #expect(!text.contains(Array("ab(c)“”x".unicodeScalars.map(\.value))))
        // A comma with a combining mark is one character, and not a comma.
        let marked = CopyRules.CharacterCodes(",\u{301} a")
        #expect(marked.codes == [CopyRules.CharacterCodes.cluster, 0x20, 0x61])
    }

    // MARK: - The plain reading

    /// The text rules as first written: substring searches on the whole string, sets of
    /// punctuation as strings, every word lower-cased.
    static func plainFirstBreak(in text: String) -> CopyRule? {
        let characters = Array(text)
        if text.contains("{") || text.contains("}") { return .placeholderLeft }
        if plainEmptyClause(text, characters) { return .emptyClause }
        if plainFallbackName(characters) { return .fallbackName }
        if text.contains("  ") { return .doubleSpace }
        for index in characters.indices.dropLast() where characters[index] == " " {
            if ",.;:!?".contains(characters[index + 1]) { return .spaceBeforePunctuation }
        }
        return CopyRules.hasBrokenEmoji(text) ? .invalidEmoji : nil
    }

    static func plainEmptyClause(_ text: String, _ characters: [Character]) -> Bool {
        if let first = characters.first, ",.;:!?".contains(first) { return true }
        for pair in ["()", "( )", "“”", "\"\"", "„“"] where text.contains(pair) { return true }
        for (index, character) in characters.enumerated() where ",;:".contains(character) {
            let rest = characters[(index + 1)...].drop { $0 == " " || CopyRules.isEmojiCharacter($0) }
            if rest.isEmpty || ",.;:!?".contains(rest.first!) { return true }
        }
        return false
    }

    static func plainFallbackName(_ characters: [Character]) -> Bool {
        var index = 0
        while index < characters.count {
            let word = characters[index...].prefix { $0.isLetter }
            guard !word.isEmpty else {
                index += 1
                continue
            }
            let end = index + word.count
            if ["there", "du"].contains(String(word).lowercased()) {
                let before = characters[..<index].last { $0 != " " }
                let after = characters[end...].first { $0 != " " && !CopyRules.isEmojiCharacter($0) }
                if before == "," && (after == nil || ",.;:!?".contains(after!)) { return true }
            }
            index = end
        }
        return false
    }
}
