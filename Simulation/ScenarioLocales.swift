import Content
import Models

/// The scenario's `locales`: weights over the users' languages, each a BCP 47 tag with a bundled
/// template file (`TemplateLibrary.bundledLanguages`), e.g. `{"en": 3, "de": 1}`; default every
/// user English. A user's locale is drawn from a generator of its own (`Population.locale`), so
/// adding languages changes no other draw.
extension Scenario {
    static func parseLocales(_ node: JSONNode?, reader: Reader) throws(ScenarioError) -> Weights {
        guard let node else { return Weights([(UserProfile.defaultLocale, 1)]) }
        let bundled = TemplateLibrary.bundledLanguages
        return try reader.weights(node, key: "locales") { tag in
            switch LanguageTag.canonical(tag) {
            case .failure(let error): return "not a language tag: \(error.problem)"
            case .success(let canonical) where canonical != tag:
                return "write the tag in canonical case, \"\(canonical)\""
            case .success:
                let language = String(tag.split(separator: "-").first ?? Substring(tag))
                return bundled.contains(tag) || bundled.contains(language)
                    ? nil : "no bundled template file; bundled languages: \(bundled.joined(separator: ", "))"
            }
        }
    }
}

extension Population {
    /// User `index`'s locale, from the scenario's weights and a generator of its own.
    static func locale(index: Int, scenario: Scenario) -> String {
        guard scenario.locales.names.count > 1 else { return scenario.locales.names.first ?? UserProfile.defaultLocale }
        var generator = SeededGenerator(seed: scenario.seed).derived(0x10CA_1E00_0000 &+ UInt64(index))
        return scenario.locales.pick(&generator)
    }
}
