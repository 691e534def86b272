import Foundation
import Testing

@testable import Models

@Suite("LanguageTag")
struct LanguageTagTests {
    @Test(arguments: [
        ("en", "en"), ("de-DE", "de-DE"), ("de-de", "de-DE"), ("EN-us", "en-US"), ("zh-Hant-TW", "zh-Hant-TW"),
        ("zh-hant-tw", "zh-Hant-TW"), ("es-419", "es-419"), ("sr-Latn-RS", "sr-Latn-RS"), ("de-CH-1996", "de-CH-1996"),
        ("ast", "ast"), ("zh-yue-HK", "zh-yue-HK"), ("en-US-u-ca-gregory", "en-US-u-ca-gregory"),
        ("en-US-x-twain", "en-US-x-twain"), ("sl-rozaj-biske", "sl-rozaj-biske"), ("qq-QQ", "qq-QQ"),
    ])
    func wellFormedTagsAreAcceptedInCanonicalCase(text: String, canonical: String) throws {
        #expect(try LanguageTag.canonical(text).get() == canonical)
    }

    @Test(arguments: [
        ("", "empty"), ("de_DE", "only letters, digits and -"), ("english", "language is 2 or 3 letters"),
        ("e", "language"), ("abcd", "language"), ("en-", "1 to 8 characters"), ("-en", "1 to 8 characters"),
        ("en--US", "1 to 8 characters"), ("en-US-US", "\"US\" is not"), ("en-toolongsubtag", "1 to 8 characters"),
        ("x-private", "language"), ("en-x", "private use part x has no subtags"), ("en-a", "extension a has no"),
        ("en-a-bb-a-cc", "extension a appears twice"), ("de-1996-1996", "variant 1996 appears twice"),
        ("12", "language"), ("en US", "only letters"), ("de-DÉ", "only letters"),
        (String(repeating: "a", count: 2) + String(repeating: "-abcdefgh", count: 8), "longer than 64"),
    ])
    func malformedTagsAreRefusedSayingWhy(text: String, problem: String) {
        switch LanguageTag.canonical(text) {
        case .success(let tag): Issue.record("accepted \(text) as \(tag)")
        case .failure(let error):
            #expect(error.field == "locale")
            #expect(error.problem.contains(problem), "\(error.problem)")
            #expect(error.problem.contains("BCP 47"))
        }
    }

    @Test func aProfileStoredBeforeLocalesReadsAsEnglish() throws {
        let stored = #"{"id": "u1", "displayName": "Ana", "timeZone": "Europe/Berlin"}"#
        let profile = try JSONDecoder().decode(UserProfile.self, from: Data(stored.utf8))
        #expect(profile.locale == "en")
        #expect(profile.locale == UserProfile.defaultLocale)
    }

    @Test func aProfileKeepsItsLocaleThroughJSON() throws {
        let profile = UserProfile(id: "u1", displayName: "Ana", timeZone: "Europe/Berlin", locale: "de-DE")
        let data = try JSONEncoder().encode(profile)
        #expect(String(decoding: data, as: UTF8.self).contains(#""locale":"de-DE""#))
        #expect(try JSONDecoder().decode(UserProfile.self, from: data) == profile)
    }

    @Test func aProfileWithAMalformedLocaleIsRefusedNamingTheField() {
        let stored = #"{"id": "u1", "displayName": "Ana", "timeZone": "UTC", "locale": "de_DE"}"#
        let message = decodingFailure(UserProfile.self, stored)
        #expect(message?.hasPrefix("locale:") == true, "\(message ?? "nil")")
    }

    @Test func aLocaleInNonCanonicalCaseDecodesCanonical() throws {
        let stored = #"{"id": "u1", "displayName": "Ana", "timeZone": "UTC", "locale": "pt-br"}"#
        #expect(try JSONDecoder().decode(UserProfile.self, from: Data(stored.utf8)).locale == "pt-BR")
    }
}
