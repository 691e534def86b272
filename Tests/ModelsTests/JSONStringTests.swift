import Foundation
import Testing

@testable import Models

/// The three styles of JSON string literal write exactly the bytes their readers expect.
@Suite("JSON string literals")
struct JSONStringTests {
    let text = "a\"b\\c/d\u{08}e\u{0C}f\ng\rh\ti\u{01}j\u{1F}k\u{7F}l é💧\u{2028}"

    @Test func theEventLogEscapesEveryControlCharacterAsHex() {
        #expect(
            JSONString.literal(text, style: .hexControls)
                == #""a\"b\\c/d\u0008e\u000cf\u000ag\u000dh\u0009i\u0001j\u001fk"# + "\u{7F}l é💧\u{2028}\"")
    }

    @Test func payloadsUseShortWhitespaceEscapes() {
        #expect(
            JSONString.literal(text, style: .payload)
                == #""a\"b\\c/d\u0008e\u000cf\ng\rh\ti\u0001j\u001fk"# + "\u{7F}l é💧\u{2028}\"")
    }

    /// Foundation's encoder, with and without escaping slashes, over random text.
    @Test func theFoundationStyleIsWhatJSONEncoderWrites() throws {
        var generator = SeededGenerator(seed: 5)
        let pieces = [
            "a", "\"", "\\", "/", "\u{08}", "\u{0C}", "\n", "\r", "\t", "\u{00}", "\u{1F}", "\u{7F}", "é", "💧",
        ]
        for escapingSlashes in [true, false] {
            let encoder = JSONEncoder()
            encoder.outputFormatting = escapingSlashes ? [] : [.withoutEscapingSlashes]
            for _ in 0..<500 {
                let value = (0..<Int.random(in: 0...10, using: &generator))
                    .map { _ in pieces.randomElement(using: &generator)! }.joined()
                let expected = String(decoding: try encoder.encode(value), as: UTF8.self)
                #expect(JSONString.literal(value, style: .foundation(escapingSlashes: escapingSlashes)) == expected)
            }
        }
    }

    @Test func theCountedSizeIsTheWrittenSize() {
        for style in [JSONEscapeStyle.hexControls, .payload, .foundation(escapingSlashes: true)] {
            for value in ["", "plain", text, String(repeating: "\u{01}", count: 9)] {
                #expect(
                    JSONString.byteCount(of: value, style: style) == JSONString.literal(value, style: style).utf8.count)
            }
        }
    }
}
