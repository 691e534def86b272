/// BCP 47 language tags (RFC 5646), checked for well-formedness and written in their canonical
/// case: `en`, `de-DE`, `zh-Hant-TW`, `es-419`, `sr-Latn-RS`, `de-CH-1996`, `en-US-x-twain`.
///
/// Well-formed is a matter of syntax, not of registry: `qq-QQ` passes (the subtags have the
/// right shapes), `de_DE` does not. The language is 2 or 3 letters (ISO 639): the 5 to 8 letter
/// subtags RFC 5646 reserves have never been assigned, and refusing them catches `english`.
/// Grandfathered tags (`i-klingon`) and a bare private-use tag (`x-whatever`) are refused too:
/// an app's locale is always a language first.
public enum LanguageTag {
    /// Longest tag accepted; real tags are far shorter (RFC 5646 section 4.4.1 asks for at least 35).
    public static let maxLength = 64

    /// The tag in canonical case (language lower, script title, region upper, the rest lower),
    /// or the reason it is not a well-formed tag.
    public static func canonical(_ text: String) -> Result<String, InvalidValue> {
        func refuse(_ problem: String) -> Result<String, InvalidValue> {
            .failure(InvalidValue(field: "locale", problem: "\"\(text)\" is not a BCP 47 language tag: \(problem)"))
        }
        guard !text.isEmpty else { return refuse("empty") }
        guard text.utf8.count <= maxLength else { return refuse("longer than \(maxLength) characters") }
        guard text.utf8.allSatisfy({ isAlphanumeric($0) || $0 == UInt8(ascii: "-") }) else {
            return refuse("only letters, digits and - are allowed (de-DE, not de_DE)")
        }
        let subtags = text.split(separator: "-", omittingEmptySubsequences: false).map(String.init)
        guard subtags.allSatisfy({ (1...8).contains($0.count) }) else {
            return refuse("every subtag is 1 to 8 characters")
        }
        var output: [String] = []
        var index = 0
        let language = subtags[0]
        guard isAlpha(language), (2...3).contains(language.count) else {
            return refuse("the language is 2 or 3 letters (en, ast)")
        }
        output.append(language.lowercased())
        index = 1
        // Up to three extended language subtags (zh-yue).
        var extlangs = 0
        while index < subtags.count, extlangs < 3, subtags[index].count == 3,
            isAlpha(subtags[index])
        {
            output.append(subtags[index].lowercased())
            index += 1
            extlangs += 1
        }
        if index < subtags.count, subtags[index].count == 4, isAlpha(subtags[index]) {
            output.append(subtags[index].prefix(1).uppercased() + subtags[index].dropFirst().lowercased())
            index += 1
        }
        if index < subtags.count,
            (subtags[index].count == 2 && isAlpha(subtags[index]))
                || (subtags[index].count == 3 && subtags[index].utf8.allSatisfy(isDigit))
        {
            output.append(subtags[index].uppercased())
            index += 1
        }
        var variants = Set<String>()
        while index < subtags.count, isVariant(subtags[index]) {
            guard variants.insert(subtags[index].lowercased()).inserted else {
                return refuse("the variant \(subtags[index]) appears twice")
            }
            output.append(subtags[index].lowercased())
            index += 1
        }
        var singletons = Set<String>()
        while index < subtags.count, subtags[index].count == 1, subtags[index].lowercased() != "x" {
            let singleton = subtags[index].lowercased()
            guard singletons.insert(singleton).inserted else {
                return refuse("the extension \(singleton) appears twice")
            }
            output.append(singleton)
            index += 1
            let start = index
            while index < subtags.count, (2...8).contains(subtags[index].count) {
                output.append(subtags[index].lowercased())
                index += 1
            }
            guard index > start else { return refuse("the extension \(singleton) has no subtags") }
        }
        if index < subtags.count, subtags[index].lowercased() == "x" {
            output.append("x")
            index += 1
            guard index < subtags.count else { return refuse("the private use part x has no subtags") }
            while index < subtags.count {
                output.append(subtags[index].lowercased())
                index += 1
            }
        }
        guard index == subtags.count else {
            return refuse("\"\(subtags[index])\" is not a script, region, variant or extension here")
        }
        return .success(output.joined(separator: "-"))
    }

    private static func isVariant(_ subtag: String) -> Bool {
        let bytes = Array(subtag.utf8)
        if (5...8).contains(bytes.count) { return bytes.allSatisfy(isAlphanumeric) }
        return bytes.count == 4 && isDigit(bytes[0]) && bytes.allSatisfy(isAlphanumeric)
    }

    private static func isAlpha(_ text: String) -> Bool { text.utf8.allSatisfy(isLetter) }

    private static func isLetter(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
    }

    private static func isDigit(_ byte: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }

    private static func isAlphanumeric(_ byte: UInt8) -> Bool { isLetter(byte) || isDigit(byte) }
}
