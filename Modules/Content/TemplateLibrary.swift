public import Foundation
public import Models

/// A template as its file states it.
public struct CopyTemplate: Hashable, Sendable {
    /// Unique within its file; traces and the variety memory refer to it.
    public var name: String
    public var kind: NotificationKind
    /// nil: the template serves every motivational style.
    public var style: MotivationalStyle?
    public var conditions: [TemplateCondition]
    /// Patterns with `{field}` placeholders.
    public var title: String
    public var body: String
    /// 1-based line of the template in its file.
    public var line: Int

    /// The placeholders a template may use.
    public static let fields: Set<String> = Set(TemplateField.allCases.map(\.rawValue))
}

/// A template file that cannot be used, with where and what: `en.json:42: morning.sunny: unknown
/// placeholder {nmae}`.
public struct TemplateLoadError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The file's name (or the name the text was parsed under).
    public var file: String
    /// 1-based line of the offending template or key.
    public var line: Int
    /// The template's name, or the key path for problems outside templates (`words.meals`).
    public var name: String
    public var problem: String

    public init(file: String, line: Int, name: String, problem: String) {
        self.file = file
        self.line = line
        self.name = name
        self.problem = problem
    }

    public var description: String { "\(file):\(line): \(name): \(problem)" }
}

/// Copy that was rendered from a template.
public struct RenderedCopy: Hashable, Sendable {
    public var copy: Copy
    public var templateName: String
}

/// What a user was last shown per kind, so the next choice differs: a small value the caller
/// keeps per user (about 200 bytes) and passes back in.
public struct TemplateMemory: Hashable, Sendable, Codable {
    struct Entry: Hashable, Sendable, Codable {
        /// Index + 1 of the template in its library; 0 for none (AI copy).
        var template: UInt16
        /// FNV-1a of the body shown; 0 for nothing shown yet.
        var bodyHash: UInt32
    }

    var entries: [Entry] = []

    public init() {}

    /// Remembers copy shown for `kind` that did not come from a template (the coach's).
    public mutating func record(_ kind: NotificationKind, body: String) {
        set(kind, Entry(template: 0, bodyHash: TemplateMemory.hash(body)))
    }

    /// Whether `body` is what the user was last shown for `kind`.
    public func lastBody(of kind: NotificationKind, is body: String) -> Bool {
        let hash = entry(kind).bodyHash
        return hash != 0 && hash == TemplateMemory.hash(body)
    }

    func entry(_ kind: NotificationKind) -> Entry {
        kind.ordinal < entries.count ? entries[kind.ordinal] : Entry(template: 0, bodyHash: 0)
    }

    mutating func set(_ kind: NotificationKind, _ entry: Entry) {
        if entries.count <= kind.ordinal {
            entries.append(
                contentsOf: repeatElement(
                    Entry(template: 0, bodyHash: 0), count: NotificationKind.allCases.count - entries.count))
        }
        entries[kind.ordinal] = entry
    }

    /// FNV-1a of the text's UTF-8, never 0 (0 is "nothing recorded"). Read in place, not through
    /// the `utf8` view's iterator: it runs on every body rendered.
    static func hash(_ text: String) -> UInt32 {
        text.withUTF8Bytes { bytes in
            var hash: UInt32 = 2_166_136_261
            for byte in bytes { hash = (hash ^ UInt32(byte)) &* 16_777_619 }
            return hash == 0 ? 1 : hash
        }
    }
}

/// The templates of one locale, loaded from a data file and validated as a whole: every
/// placeholder known, every title with a real emoji, every template within the lock-screen
/// limits with its fields at their longest, every kind with at least two templates for each
/// motivational style (and tone) that need no optional facts, the grouped social copy complete
/// for every social kind, and every rendering of every template and social sentence within the
/// `CopyRule`s (with and without a name, at each privacy level, with real values and fallbacks).
/// A file that breaks a rule does not load, so a typo is an error at start-up, not a broken
/// notification at 3 a.m.
///
/// Nothing here reads a file behind the caller's back: a library comes from `bundled(language:)`,
/// `load(contentsOf:)` or `parse(_:file:)`, all of which throw, and the composition root (an
/// executable's `main`) decides what a failure means.
///
/// Rendering is pure and allocation-light (templates are pre-split into literal and field
/// segments at load); it runs for every notification the engine schedules.
public struct TemplateLibrary: Sendable {
    /// The language code of the file, e.g. "en".
    public let language: String
    /// Every template, in file order.
    public let templates: [CopyTemplate]
    /// The notification categories with their action titles in this language.
    public let categories: [NotificationCategory]

    struct Compiled: Sendable {
        var title: [TemplateSegment]
        var body: [TemplateSegment]
        /// Condition and fact bits the context must have.
        var requires: UInt32
        /// Templates using more of what is known about the user are picked more often.
        var weight: UInt64
    }

    let compiled: [Compiled]
    /// Template indices per kind and style (`kind.ordinal * 3 + style.index`), in file order.
    let pools: [[UInt16]]
    let words: TemplateWords
    /// The grouped social copy (`groupSummary`).
    let social: SocialCopy

    // MARK: Loading

    /// Reads and validates the bundled file of `language` ("en", "de"). Reads the bundle on every
    /// call: load once at start-up and pass the library (or a `TemplateCatalog`) down.
    public static func bundled(language: String) throws(TemplateLoadError) -> TemplateLibrary {
        guard let url = bundledURL(language) else {
            throw TemplateLoadError(
                file: "\(language).json", line: 0, name: language,
                problem: "no bundled template file; bundled languages: \(bundledLanguages.joined(separator: ", "))")
        }
        return try load(contentsOf: url)
    }

    /// Language codes of the bundled template files, sorted.
    public static var bundledLanguages: [String] {
        guard let directory = templatesDirectory,
            let names = try? FileManager.default.contentsOfDirectory(atPath: directory.path)
        else { return [] }
        return names.filter { $0.hasSuffix(".json") }.map { String($0.dropLast(5)) }.sorted()
    }

    private static var templatesDirectory: URL? {
        Bundle.module.resourceURL?.appendingPathComponent("Templates", isDirectory: true)
    }

    static func bundledURL(_ language: String) -> URL? {
        if let url = Bundle.module.url(forResource: language, withExtension: "json", subdirectory: "Templates") {
            return url
        }
        guard let url = templatesDirectory?.appendingPathComponent("\(language).json"),
            FileManager.default.fileExists(atPath: url.path)
        else { return nil }
        return url
    }

    /// Loads and validates a template file; the file's name (`de.json`) must match its language.
    public static func load(contentsOf url: URL) throws(TemplateLoadError) -> TemplateLibrary {
        let file = url.lastPathComponent
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw TemplateLoadError(file: file, line: 0, name: file, problem: "cannot read: \(error)")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw TemplateLoadError(file: file, line: 0, name: file, problem: "not UTF-8 text")
        }
        return try parse(text, file: file)
    }

    /// Parses and validates the text of a template file; `file` names it in errors and, when it
    /// ends in `.json`, must be `<language>.json`.
    public static func parse(_ text: String, file: String) throws(TemplateLoadError) -> TemplateLibrary {
        try TemplateFileLoader(file: file).load(text)
    }

    init(
        language: String, templates: [CopyTemplate], compiled: [Compiled], words: TemplateWords,
        social: SocialCopy, categories: [NotificationCategory]
    ) {
        self.language = language
        self.templates = templates
        self.compiled = compiled
        self.words = words
        self.social = social
        self.categories = categories
        var pools = [[UInt16]](repeating: [], count: NotificationKind.allCases.count * 3)
        for (index, template) in templates.enumerated() {
            for style in MotivationalStyle.allCases where template.style == nil || template.style == style {
                pools[template.kind.ordinal * 3 + style.index].append(UInt16(index))
            }
        }
        self.pools = pools
    }

    // MARK: Rendering

    /// The templates that could be chosen for the context, in file order.
    public func eligibleTemplates(
        _ kind: NotificationKind, style: MotivationalStyle, context: CopyContext
    ) -> [CopyTemplate] {
        let facts = FactBits.of(context)
        return pools[kind.ordinal * 3 + style.index].filter { compiled[Int($0)].requires & ~facts == 0 }
            .map { templates[Int($0)] }
    }

    /// Renders the `variant`-th eligible template (any integer; taken modulo the number
    /// eligible). Deterministic and memoryless: for callers with a stable hash at hand.
    public func render(
        _ kind: NotificationKind, style: MotivationalStyle, context: CopyContext, variant: Int
    ) -> RenderedCopy {
        let pool = pools[kind.ordinal * 3 + style.index]
        let facts = FactBits.of(context)
        var count = 0
        for index in pool where compiled[Int(index)].requires & ~facts == 0 { count += 1 }
        // Validation guarantees at least two templates without requirements; guard anyway.
        guard count > 0 else { return render(template: Int(pool[0]), context) }
        var wanted = ((variant % count) + count) % count
        for index in pool where compiled[Int(index)].requires & ~facts == 0 {
            if wanted == 0 { return render(template: Int(index), context) }
            wanted -= 1
        }
        return render(template: Int(pool[0]), context)
    }

    /// Picks and renders a template with `generator`, never repeating the body the user was
    /// last shown for `kind` (as `memory` remembers it), and updates `memory`. Draws exactly one
    /// value from `generator`.
    public func render(
        _ kind: NotificationKind, style: MotivationalStyle, context: CopyContext, memory: inout TemplateMemory,
        generator: inout SeededGenerator
    ) -> RenderedCopy {
        let pool = pools[kind.ordinal * 3 + style.index]
        let facts = FactBits.of(context)
        let last = memory.entry(kind)
        var total: UInt64 = 0
        var eligible = 0
        for index in pool where compiled[Int(index)].requires & ~facts == 0 {
            eligible += 1
            if Int(index) + 1 != Int(last.template) { total += compiled[Int(index)].weight }
        }
        let draw = generator.next()
        var chosen = Int(pool[0])
        if total > 0 {
            var target = draw % total
            for index in pool where compiled[Int(index)].requires & ~facts == 0 && Int(index) + 1 != Int(last.template)
            {
                let weight = compiled[Int(index)].weight
                if target < weight {
                    chosen = Int(index)
                    break
                }
                target -= weight
            }
        } else if let only = pool.first(where: { compiled[Int($0)].requires & ~facts == 0 }) {
            chosen = Int(only)
        }
        var rendered = render(template: chosen, context)
        var hash = TemplateMemory.hash(rendered.copy.body)
        if hash == last.bodyHash, eligible > 1 {
            // Two templates rendered to the same body (or the coach wrote it): take the next one.
            let start = pool.firstIndex(of: UInt16(chosen)) ?? 0
            for step in 1..<pool.count {
                let index = Int(pool[(start + step) % pool.count])
                guard compiled[index].requires & ~facts == 0 else { continue }
                let other = render(template: index, context)
                let otherHash = TemplateMemory.hash(other.copy.body)
                if otherHash != last.bodyHash {
                    chosen = index
                    rendered = other
                    hash = otherHash
                    break
                }
            }
        }
        memory.set(kind, TemplateMemory.Entry(template: UInt16(chosen + 1), bodyHash: hash))
        return rendered
    }

    /// Renders the template named `name`; nil when there is none.
    public func render(templateNamed name: String, context: CopyContext) -> RenderedCopy? {
        templates.firstIndex { $0.name == name }.map { render(template: $0, context) }
    }

    /// Fills one pattern with this library's words: for tests and ad-hoc copy.
    func fill(_ pattern: String, _ context: CopyContext) throws(TemplateLoadError) -> String {
        let segments: [TemplateSegment] = try TemplateFileLoader(file: "\(language).json").segments(
            pattern, part: "pattern", line: 0, name: "pattern", droppable: TemplateField.droppable)
        return words.render(segments, context)
    }

    func render(template index: Int, _ context: CopyContext) -> RenderedCopy {
        let template = compiled[index]
        return RenderedCopy(
            copy: Copy(title: words.render(template.title, context), body: words.render(template.body, context)),
            templateName: templates[index].name)
    }
}

/// Templates of several locales with a default; picks a library for a user's language.
public struct TemplateCatalog: Sendable {
    /// The default library first, then each other language once (a later library of a language
    /// replaces an earlier one, the default's own language included).
    private let libraries: [TemplateLibrary]
    /// Where each language's library is in `libraries`.
    private let indexByLanguage: [String: Int]

    /// The library for a language no other library answers.
    public var defaultLibrary: TemplateLibrary { libraries[0] }

    public init(default defaultLibrary: TemplateLibrary, others: [TemplateLibrary] = []) {
        var libraries = [defaultLibrary]
        var indexByLanguage = [defaultLibrary.language: 0]
        for library in others {
            if let index = indexByLanguage[library.language], index > 0 {
                libraries[index] = library
            } else {
                indexByLanguage[library.language] = libraries.count
                libraries.append(library)
            }
        }
        self.libraries = libraries
        self.indexByLanguage = indexByLanguage
    }

    /// Reads every bundled file, English as the default; fails on the first file that does not
    /// load. Reads the bundle on every call: the composition root calls it once.
    public static func bundled() throws(TemplateLoadError) -> TemplateCatalog {
        var others: [TemplateLibrary] = []
        for language in TemplateLibrary.bundledLanguages where language != "en" {
            others.append(try TemplateLibrary.bundled(language: language))
        }
        return TemplateCatalog(default: try TemplateLibrary.bundled(language: "en"), others: others)
    }

    /// The library for a BCP 47 language tag: exact ("de"), then the language alone ("de-AT"
    /// -> "de"), then the default.
    public func library(for language: String) -> TemplateLibrary { libraries[index(for: language)] }

    /// Calls `body` with `library(for: language)` read in place: a content decision picks a
    /// library for every notification, and a copy retains and releases each of the library's
    /// stored arrays.
    public func withLibrary<Result>(for language: String, _ body: (TemplateLibrary) -> Result) -> Result {
        body(libraries[index(for: language)])
    }

    /// `library(for:)`'s choice, as a place in `libraries`.
    private func index(for language: String) -> Int {
        if let exact = indexByLanguage[language] { return exact }
        let base = language.split(whereSeparator: { $0 == "-" || $0 == "_" }).first.map(String.init) ?? language
        return indexByLanguage[base.lowercased()] ?? 0
    }

    public var languages: [String] { indexByLanguage.keys.sorted() }
}
