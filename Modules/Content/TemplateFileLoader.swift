import Models

/// Reads a template file and checks every rule the library promises, reporting the first
/// problem with its file, line and name.
///
/// The format (one template per line keeps line numbers and diffs readable):
///
/// ```json
/// {
///   "language": "en",
///   "words": { "meal": "meal", "workout": "workout", "achievement": "a new milestone",
///              "topic": "workout", "meals": { "breakfast": "breakfast", ... },
///              "daysAway": { "one": "a day", "other": "{n} days", "unknown": "a while" } },
///   "actions": { "LOG_MOOD": "Log Mood", ... },
///   "social": {
///     "title": "New activity 👥", "hidden": "You have new notifications.", "someone": "Someone",
///     "periods": { "today": "today", "thisWeek": "this week" },
///     "groups": {
///       "workoutKudos": { "one": "{sender} cheered your {topic}.",
///                         "many": "{count} people cheered your {topic}{period}." }, ...
///     }
///   },
///   "templates": [
///     { "name": "morning.encouraging.fresh", "kind": "morningGreeting", "style": "encouraging",
///       "title": "Good morning{, name} ☀️", "body": "A fresh day to move. How are you feeling?" },
///     { "name": "morning.sunny", "kind": "morningGreeting", "style": "any", "when": ["sunny"], ... }
///   ]
/// }
/// ```
struct TemplateFileLoader {
    let file: String
    let limits = CopyLimits.lockScreen

    /// A template file opens four containers at most (`social.groups.<kind>`): deeper is a mistake.
    static let maximumDepth = 32

    init(file: String) { self.file = file }

    func fail(_ line: Int, _ name: String, _ problem: String) -> TemplateLoadError {
        TemplateLoadError(file: file, line: line, name: name, problem: problem)
    }

    func load(_ text: String) throws(TemplateLoadError) -> TemplateLibrary {
        let root: JSONNode
        do {
            root = try JSONScanner.parse(Array(text.utf8), maximumDepth: Self.maximumDepth)
        } catch {
            throw fail(
                error.line, error.path.isEmpty ? "(file)" : error.path,
                "malformed JSON at column \(error.column): \(error.problem)")
        }
        let members = try object(root, "(file)")
        try rejectUnknownKeys(
            members, allowed: ["about", "language", "words", "actions", "social", "templates"], in: "(file)")
        let languageNode = try required("language", in: members, of: root, path: "(file)")
        let language = try string(languageNode, "language")
        guard !language.isEmpty, language.allSatisfy({ $0.isASCII && ($0.isLetter || $0 == "-") }) else {
            throw fail(languageNode.line, "language", "expected a language code such as \"en\" or \"de\"")
        }
        if file.hasSuffix(".json") {
            let stem = String(file.dropLast(5).split(separator: "/").last ?? "")
            guard stem == language else {
                throw fail(languageNode.line, "language", "\"\(language)\" does not match the file name \(file)")
            }
        }
        if let about = members.first(where: { $0.key == "about" }) { _ = try string(about.node, "about") }
        let words = try readWords(try required("words", in: members, of: root, path: "(file)"))
        let categories = try readActions(try required("actions", in: members, of: root, path: "(file)"))
        guard let socialNode = members.first(where: { $0.key == "social" })?.node else {
            throw fail(
                root.line, "social", "missing: the grouped social copy (title, hidden, someone, periods, groups)")
        }
        let social = try readSocial(socialNode, words: words)
        let templatesNode = try required("templates", in: members, of: root, path: "(file)")
        guard case .array(let list) = templatesNode.value else {
            throw fail(
                templatesNode.line, "templates", "expected an array of templates, found \(templatesNode.typeName)")
        }
        var templates: [CopyTemplate] = []
        var compiled: [TemplateLibrary.Compiled] = []
        var names: [String: Int] = [:]
        var texts: [String: String] = [:]
        for (position, node) in list.enumerated() {
            let (template, segments) = try readTemplate(node, position: position, words: words)
            if let earlier = names[template.name] {
                throw fail(node.line, template.name, "duplicate name; first used on line \(earlier)")
            }
            names[template.name] = node.line
            for style in template.style.map({ [$0] }) ?? MotivationalStyle.allCases {
                let key =
                    "\(template.kind.rawValue)/\(style.rawValue)/\(template.conditions.map(\.rawValue).sorted())/"
                    + "\(template.title)|\(template.body)"
                if let other = texts[key] {
                    throw fail(node.line, template.name, "same title and body as template \"\(other)\"")
                }
                texts[key] = template.name
            }
            templates.append(template)
            compiled.append(segments)
        }
        guard templates.count <= Int(UInt16.max) - 1 else {
            throw fail(templatesNode.line, "templates", "more than \(UInt16.max - 1) templates")
        }
        try checkCoverage(templates, compiled, line: templatesNode.line)
        let library = TemplateLibrary(
            language: language, templates: templates, compiled: compiled, words: words, social: social,
            categories: categories)
        _ = try checkCopy(library)
        return library
    }

    // MARK: Sections

    private func readWords(_ node: JSONNode) throws(TemplateLoadError) -> TemplateWords {
        let members = try object(node, "words")
        if let name = members.first(where: { $0.key == "name" }) {
            throw fail(
                name.node.line, "words.name",
                "there is no word for a missing name: write the name in a clause that drops away, "
                    + "e.g. \"Good morning{, name} ☀️\"")
        }
        try rejectUnknownKeys(
            members, allowed: ["meal", "workout", "achievement", "topic", "meals", "daysAway"], in: "words")
        func word(_ key: String) throws(TemplateLoadError) -> String {
            let value = try string(try required(key, in: members, of: node, path: "words"), "words.\(key)")
            guard value.trimmedOrNil == value, !value.contains("{") else {
                throw fail(node.line, "words.\(key)", "must be plain text without surrounding spaces or braces")
            }
            return value
        }
        let mealsNode = try required("meals", in: members, of: node, path: "words")
        let mealMembers = try object(mealsNode, "words.meals")
        try rejectUnknownKeys(mealMembers, allowed: Set(MealType.allCases.map(\.rawValue)), in: "words.meals")
        var meals: [String] = []
        for meal in MealType.allCases {
            let value = try string(
                try required(meal.rawValue, in: mealMembers, of: mealsNode, path: "words.meals"),
                "words.meals.\(meal.rawValue)")
            guard value.trimmedOrNil == value else {
                throw fail(mealsNode.line, "words.meals.\(meal.rawValue)", "must not be empty or padded")
            }
            meals.append(value)
        }
        let daysNode = try required("daysAway", in: members, of: node, path: "words")
        let dayMembers = try object(daysNode, "words.daysAway")
        try rejectUnknownKeys(dayMembers, allowed: ["one", "other", "unknown"], in: "words.daysAway")
        let other = try string(
            try required("other", in: dayMembers, of: daysNode, path: "words.daysAway"), "words.daysAway.other")
        let parts = other.split(separator: "{n}", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 2 else {
            throw fail(daysNode.line, "words.daysAway.other", "must contain {n} exactly once, e.g. \"{n} days\"")
        }
        let one = try string(try required("one", in: dayMembers, of: daysNode, path: "words.daysAway"), "one")
        let unknown = try string(
            try required("unknown", in: dayMembers, of: daysNode, path: "words.daysAway"), "unknown")
        return TemplateWords(
            meal: try word("meal"), workout: try word("workout"),
            achievement: try word("achievement"), topic: try word("topic"), meals: meals,
            mealsCapitalized: meals.map(\.capitalizedFirst), dayOne: one, daysUnknown: unknown, daysPrefix: parts[0],
            daysSuffix: parts[1])
    }

    private func readActions(_ node: JSONNode) throws(TemplateLoadError) -> [NotificationCategory] {
        let members = try object(node, "actions")
        let used = Set(NotificationCategory.all.flatMap { $0.actions.map(\.id.rawValue) })
        try rejectUnknownKeys(members, allowed: used, in: "actions")
        var titles: [String: String] = [:]
        for member in members {
            let title = try string(member.node, "actions.\(member.key)")
            guard title.trimmedOrNil == title, title.count <= 30 else {
                throw fail(member.node.line, "actions.\(member.key)", "must be 1 to 30 characters without padding")
            }
            titles[member.key] = title
        }
        return try NotificationCategory.all.map { (category) throws(TemplateLoadError) -> NotificationCategory in
            var localized = category
            for index in localized.actions.indices {
                let id = localized.actions[index].id.rawValue
                guard let title = titles[id] else {
                    throw fail(node.line, "actions", "missing a title for \(id) (category \(category.id.rawValue))")
                }
                localized.actions[index].title = title
            }
            return localized
        }
    }

    /// The `social` section: what grouped social notifications say. Every entry is required, so
    /// a file missing one names it (`social.groups.mention.many`) instead of showing English.
    private func readTemplate(
        _ node: JSONNode, position: Int, words: TemplateWords
    ) throws(TemplateLoadError) -> (CopyTemplate, TemplateLibrary.Compiled) {
        let anonymous = "templates[\(position)]"
        let members = try object(node, anonymous)
        var name = anonymous
        if let nameNode = members.first(where: { $0.key == "name" })?.node {
            name = try string(nameNode, anonymous)
            guard name.trimmedOrNil == name, !name.contains(where: \.isNewline) else {
                throw fail(node.line, anonymous, "a template's name must be non-empty text without padding")
            }
        } else {
            throw fail(node.line, anonymous, "missing \"name\"")
        }
        try rejectUnknownKeys(members, allowed: ["name", "kind", "style", "when", "title", "body"], in: name)
        let kindNode = try required("kind", in: members, of: node, path: name)
        let kindText = try string(kindNode, name)
        guard let kind = NotificationKind(rawValue: kindText) else {
            throw fail(
                kindNode.line, name,
                "unknown kind \"\(kindText)\"; known: \(NotificationKind.allCases.map(\.rawValue).joined(separator: ", "))"
            )
        }
        let styleNode = try required("style", in: members, of: node, path: name)
        let styleText = try string(styleNode, name)
        let style: MotivationalStyle?
        if styleText == "any" {
            style = nil
        } else if let known = MotivationalStyle(rawValue: styleText) {
            style = known
        } else {
            let known = MotivationalStyle.allCases.map(\.rawValue).joined(separator: ", ")
            throw fail(styleNode.line, name, "unknown style \"\(styleText)\"; known: any, \(known)")
        }
        var conditions: [TemplateCondition] = []
        if let whenNode = members.first(where: { $0.key == "when" })?.node {
            guard case .array(let items) = whenNode.value else {
                throw fail(whenNode.line, name, "\"when\" must be an array of conditions")
            }
            for item in items {
                let text = try string(item, name)
                guard let condition = TemplateCondition(rawValue: text) else {
                    let known = TemplateCondition.allCases.map(\.rawValue).joined(separator: ", ")
                    throw fail(item.line, name, "unknown condition \"\(text)\"; known: \(known)")
                }
                if let clash = conditions.first(where: { $0.group == condition.group }) {
                    throw fail(
                        item.line, name, "conditions \"\(clash.rawValue)\" and \"\(text)\" exclude each other")
                }
                conditions.append(condition)
            }
        }
        let tones = conditions.filter { $0.group == TemplateCondition.light.group }
        if kind == .reEngagement, tones.isEmpty {
            throw fail(node.line, name, "a reEngagement template needs \"when\": [\"light\"] or [\"stronger\"]")
        }
        if kind != .reEngagement, !tones.isEmpty {
            throw fail(node.line, name, "the tone conditions light and stronger apply to reEngagement only")
        }
        let titleNode = try required("title", in: members, of: node, path: name)
        let bodyNode = try required("body", in: members, of: node, path: name)
        let title = try string(titleNode, name)
        let body = try string(bodyNode, name)
        let titleSegments: [TemplateSegment] = try segments(
            title, part: "title", line: titleNode.line, name: name, droppable: TemplateField.droppable)
        let bodySegments: [TemplateSegment] = try segments(
            body, part: "body", line: bodyNode.line, name: name, droppable: TemplateField.droppable)
        try checkText(
            title, longest: longestLength(titleSegments) { $0.maxLength(words) }, part: "title",
            limit: limits.maxTitleCharacters, line: titleNode.line, name: name)
        try checkText(
            body, longest: longestLength(bodySegments) { $0.maxLength(words) }, part: "body",
            limit: limits.maxBodyCharacters, line: bodyNode.line, name: name)
        guard title.unicodeScalars.contains(where: { $0.properties.isEmoji && !$0.isASCII }) else {
            throw fail(titleNode.line, name, "the title has no emoji")
        }
        var requires: UInt32 = 0
        for condition in conditions { requires |= condition.bit }
        for case .field(let field) in titleSegments + bodySegments { requires |= field.requirement }
        let personal = (requires & ~FactBits.tone).nonzeroBitCount
        let template = CopyTemplate(
            name: name, kind: kind, style: style, conditions: conditions, title: title, body: body, line: node.line)
        let compiled = TemplateLibrary.Compiled(
            title: titleSegments, body: bodySegments, requires: requires, weight: UInt64(1 + personal))
        return (template, compiled)
    }

    /// Every kind needs, for every style (and both re-engagement tones), at least two templates
    /// that need nothing optional, so there is always something to say and never the same twice.
    private func checkCoverage(
        _ templates: [CopyTemplate], _ compiled: [TemplateLibrary.Compiled], line: Int
    ) throws(TemplateLoadError) {
        for kind in NotificationKind.allCases {
            for style in MotivationalStyle.allCases {
                let tones: [TemplateCondition] = kind == .reEngagement ? [.light, .stronger] : [.light]
                for tone in tones {
                    let count = templates.indices.filter {
                        templates[$0].kind == kind && (templates[$0].style ?? style) == style
                            && compiled[$0].requires & ~tone.bit == 0
                    }.count
                    guard count >= 2 else {
                        let toneName = kind == .reEngagement ? "/\(tone.rawValue)" : ""
                        throw fail(
                            line, "\(kind.rawValue)/\(style.rawValue)\(toneName)",
                            "\(count) template(s) without optional facts; at least 2 are needed for variety")
                    }
                }
            }
        }
    }

    // MARK: JSON helpers

    func object(_ node: JSONNode, _ name: String) throws(TemplateLoadError) -> [JSONNode.Member] {
        guard case .object(let members) = node.value else {
            throw fail(node.line, name, "expected an object, found \(node.typeName)")
        }
        return members
    }

    func string(_ node: JSONNode, _ name: String) throws(TemplateLoadError) -> String {
        guard case .string(let text) = node.value else {
            throw fail(node.line, name, "expected a string, found \(node.typeName)")
        }
        return text
    }

    func required(
        _ key: String, in members: [JSONNode.Member], of node: JSONNode, path: String
    ) throws(TemplateLoadError) -> JSONNode {
        guard let member = members.first(where: { $0.key == key }) else {
            throw fail(node.line, path, "missing \"\(key)\"")
        }
        return member.node
    }

    func rejectUnknownKeys(
        _ members: [JSONNode.Member], allowed: Set<String>, in name: String
    ) throws(TemplateLoadError) {
        if let unknown = members.first(where: { !allowed.contains($0.key) }) {
            throw fail(
                unknown.node.line, name,
                "unknown key \"\(unknown.key)\"; expected one of \(allowed.sorted().joined(separator: ", "))")
        }
    }
}

extension JSONNode {
    /// The kind of value, for messages: `an object`, `a string`, `null`.
    var typeName: String {
        switch value {
        case .object: "an object"
        case .array: "an array"
        case .string: "a string"
        case .number: "a number"
        case .bool: "a boolean"
        case .null: "null"
        }
    }
}
