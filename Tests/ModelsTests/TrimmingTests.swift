import Testing

@testable import Models

/// `trimmedOrNil`: free text without surrounding white space, nil when blank.
@Suite("Trimming free text")
struct TrimmingTests {
    @Test(arguments: [
        ("Ana", "Ana"), ("  Ana  ", "Ana"), ("Ana Lima", "Ana Lima"), ("\tAna\n", "Ana"), ("Ana\r\n", "Ana"),
        ("\u{00A0}Zoë\u{2028}", "Zoë"), ("Zoë", "Zoë"), ("a", "a"), ("!?", "!?"), ("a \u{3000}", "a"),
    ])
    func surroundingWhiteSpaceGoes(text: String, trimmed: String) {
        #expect(text.trimmedOrNil == trimmed)
    }

    @Test(arguments: ["", " ", "\n\t", "\u{00A0}", "\r\n", "\u{2028}\u{3000}"])
    func blankTextIsNil(text: String) {
        #expect(text.trimmedOrNil == nil)
    }
}
