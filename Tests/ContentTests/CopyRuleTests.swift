import Foundation
import Models
import Testing

@testable import Content

// MARK: - The rules on text

@Suite("Copy rules: what each rule catches")
struct CopyRuleTextTests {
    /// One example per rule, the first of each from the templates as they were before names were
    /// written in clauses (rendered for a user without a name).
    @Test(arguments: [
        ("Good morning, there ☀️", CopyRule.fallbackName),
        ("What's on the plate, there? A quick lunch log helps.", .fallbackName),
        ("Sip some water, there. Your body will thank you.", .fallbackName),
        ("Wir melden uns, du 💙", .fallbackName),
        ("Gut geschlafen, du? 😴", .fallbackName),
        ("Good morning, ☀️", .emptyClause),
        ("Well done, !", .emptyClause),
        ("Take a look at your week, , and set up the next.", .emptyClause),
        (", your streak is alive", .emptyClause),
        ("Great pace “” today", .emptyClause),
        ("Good morning, {name} ☀️", .placeholderLeft),
        ("Hi {nmae}", .placeholderLeft),
        ("Drink  up 💧", .doubleSpace),
        ("Drink up !", .spaceBeforePunctuation),
        ("Ready ? Let's go", .spaceBeforePunctuation),
        ("Water \u{FE0F} break", .invalidEmoji),
        ("Flag 🇩 half", .invalidEmoji),
        ("Tone \u{1F3FD} alone", .invalidEmoji),
        ("Joined \u{200D} nothing", .invalidEmoji),
    ])
    func eachRuleCatchesItsExample(text: String, rule: CopyRule) {
        #expect(CopyRules.firstBreak(in: text) == rule, "\(text)")
    }

    /// Text that reads right, including what looks close to a broken rule.
    @Test(arguments: [
        "Hi there 🌱", "Wet out there? Take your run indoors today.", "Komm, du schaffst das.",
        "Setz den Ton: eine starke Entscheidung vor 9 Uhr.", "Good morning ☀️", "Good morning, Ana ☀️",
        "Take a look at your week and set up the next.", "Family 👨‍👩‍👧 time", "Hallo 🇩🇪", "Keycap 1️⃣ first",
        "Nice 👍🏽", "12 of 14 workouts done (86%).", "“Great pace on that hill today!”", "Zoë, one more? 💪",
    ])
    func copyThatReadsRightPasses(text: String) {
        #expect(CopyRules.firstBreak(in: text) == nil, "\(text)")
    }

    @Test func theLockScreenLimitsAre60And178Characters() {
        let title = String(repeating: "a", count: 59) + "💧"
        let body = String(repeating: "b", count: 178)
        #expect(CopyRules.firstBreak(in: Copy(title: title, body: body), titleNeedsEmoji: true) == nil)
        let longTitle = Copy(title: "a" + title, body: body)
        #expect(CopyRules.firstBreak(in: longTitle, titleNeedsEmoji: true)?.rule == .titleTooLong)
        let longBody = Copy(title: title, body: body + "b")
        #expect(CopyRules.firstBreak(in: longBody, titleNeedsEmoji: true)?.rule == .bodyTooLong)
        #expect(CopyLimits.lockScreen.maxTitleCharacters == 60 && CopyLimits.lockScreen.maxBodyCharacters == 178)
    }

    @Test func aTemplateTitleNeedsAnEmojiAndACoachTitleDoesNot() {
        let plain = Copy(title: "Water break", body: "A glass now.")
        let broken = CopyRules.firstBreak(in: plain, titleNeedsEmoji: true)
        #expect(broken == CopyRuleBreak(rule: .invalidEmoji, part: "title", text: "Water break"))
        #expect(CopyRules.firstBreak(in: plain, titleNeedsEmoji: false) == nil)
    }

    @Test func theBreakSaysWhichPartAndWhatText() {
        let broken = CopyRules.firstBreak(
            in: Copy(title: "Water 💧", body: "Sip some water, there."), titleNeedsEmoji: true)
        #expect(broken?.description == #"fallbackName in the body: "Sip some water, there.""#)
    }
}

// MARK: - Every rendering of the bundled files

@Suite("Copy rules: every rendering of the bundled templates")
struct CopyRuleBundledTests {
    /// Both files load, so every rendering passed; the count proves the check ran wide: every
    /// template in several contexts and every grouped social sentence.
    @Test(arguments: ["en", "de"])
    func everyRenderingOfEveryTemplateKeepsTheRules(language: String) throws {
        let library = try TemplateLibrary.bundled(language: language)
        let checked = try TemplateFileLoader(file: "\(language).json").checkCopy(library)
        #expect(checked > library.templates.count * 15)
    }

    /// With and without a name, at every level: no kind and style is left without copy, and no
    /// copy carries a stand-in word.
    @Test(arguments: ["en", "de"], PrivacyLevel.allCases)
    func everyKindAndStyleReadsRightWithoutAName(language: String, level: PrivacyLevel) throws {
        let library = try TemplateLibrary.bundled(language: language)
        for kind in NotificationKind.allCases {
            for style in MotivationalStyle.allCases {
                for name in ["", "Ana"] {
                    let context = PrivacyPolicy(level).redact(CopyContext(firstName: name, daysAway: 3))
                    let eligible = library.eligibleTemplates(kind, style: style, context: context)
                    #expect(eligible.count >= 2, "\(kind)/\(style)")
                    for variant in eligible.indices {
                        let copy = library.render(kind, style: style, context: context, variant: variant).copy
                        #expect(CopyRules.firstBreak(in: copy, titleNeedsEmoji: true) == nil, "\(copy)")
                        #expect(!copy.title.contains("Ana") || (level != .private && !name.isEmpty))
                    }
                }
            }
        }
    }

    /// German meals are nouns: capitalised wherever `{meal}` or `{Meal}` stands.
    @Test(arguments: [MealType?.none] + MealType.allCases.map { Optional($0) })
    func germanMealsAreCapitalised(meal: MealType?) throws {
        let german = try TemplateLibrary.bundled(language: "de")
        for style in MotivationalStyle.allCases {
            let context = CopyContext(firstName: "", meal: meal)
            for template in german.eligibleTemplates(.mealReminder, style: style, context: context) {
                let copy = try #require(german.render(templateNamed: template.name, context: context)).copy
                let word = meal.map { german.words.meals[$0.index] } ?? german.words.meal
                #expect(word.first?.isUppercase == true)
                #expect(!"\(copy.title) \(copy.body)".contains(word.lowercased()), "\(copy)")
            }
        }
    }
}

// MARK: - The loader refuses a file whose copy breaks a rule

@Suite("Copy rules: a template file that breaks one does not load")
struct CopyRuleLoaderTests {
    /// Inserts `line` before the last template and loads; returns the error and the line number.
    private func load(_ language: String, inserting line: String) throws -> (TemplateLoadError, Int) {
        let text = try bundledText(language)
        let at = try #require(lineNumber(of: "\"templates\": [", in: text)) + 1
        do {
            _ = try TemplateLibrary.parse(inserting(line, before: at, in: text), file: "\(language).json")
        } catch {
            return (error, at)
        }
        Issue.record("loaded")
        return (TemplateLoadError(file: "", line: 0, name: "", problem: ""), at)
    }

    @Test(arguments: [
        (
            #"{ "name": "bad.space", "kind": "hydration", "style": "any", "title": "Water 💧", "body": "Drink up{, name} !" },"#,
            "spaceBeforePunctuation in the body: \"Drink up, Ana !\" (name \"Ana\", public, fallbacks)"
        ),
        (
            #"{ "name": "bad.clause", "kind": "hydration", "style": "any", "title": "Water,{ name} 💧", "body": "Drink." },"#,
            "emptyClause in the title: \"Water, 💧\" (name \"Ana\", private, fallbacks)"
        ),
        (
            #"{ "name": "bad.there", "kind": "hydration", "style": "any", "title": "Water 💧", "body": "Drink up, there." },"#,
            "fallbackName in the body: \"Drink up, there.\" (name \"Ana\", public, fallbacks)"
        ),
        (
            #"{ "name": "bad.meal", "kind": "mealReminder", "style": "any", "title": "Food 🍽️", "body": "Log your {Meal}." },"#,
            "mealCase in the body: \"Meal\" inside a sentence: write {meal} (name \"Ana\", public, fallbacks)"
        ),
        (
            #"{ "name": "bad.start", "kind": "mealReminder", "style": "any", "title": "{meal} time 🍽️", "body": "Log it." },"#,
            "mealCase in the title: \"meal\" starts a sentence: write {Meal} (name \"Ana\", public, fallbacks)"
        ),
        (
            #"{ "name": "bad.long", "kind": "hydration", "style": "any", "title": "Water 💧", "body": "Your {workout}{, name}, is it done ?" },"#,
            "spaceBeforePunctuation in the body: \"Your workout, Ana, is it done ?\" (name \"Ana\", public, fallbacks)"
        ),
    ])
    func aRenderingThatBreaksARuleStopsTheLoadWithFileLineAndRule(line: String, problem: String) throws {
        let (error, at) = try load("en", inserting: line)
        #expect(error.file == "en.json")
        #expect(error.line == at)
        #expect(error.problem == problem)
        #expect(error.description.hasPrefix("en.json:\(at): bad."))
    }

    @Test func aGermanMealInLowerCaseStopsTheLoad() throws {
        // {Meal} capitalises whatever the words say; {meal} shows the word as written.
        let text = try bundledText("de").replacingOccurrences(of: "\"Frühstück\"", with: "\"frühstück\"")
            .replacingOccurrences(of: "Trag {Meal} ein und", with: "Trag {meal} ein und")
        let error = try #require(throws: TemplateLoadError.self) { try TemplateLibrary.parse(text, file: "de.json") }
        #expect(error.problem.contains("mealCase"))
        #expect(error.problem.contains("\"frühstück\" is a noun and takes a capital in German"))
    }

    @Test func aBareNameIsRefusedWithTheClauseToWrite() throws {
        let (error, _) = try load(
            "de",
            inserting:
                #"{ "name": "bad.bare", "kind": "hydration", "style": "any", "title": "Wasser 💧", "body": "Trink, {name}." },"#
        )
        #expect(error.name == "bad.bare")
        #expect(error.problem.hasPrefix("{name} in the body must sit in a clause that drops away"))
    }

    @Test func aGroupedSocialSentenceThatBreaksARuleNamesItsLine() throws {
        let text = try bundledText("en")
        let broken = text.replacingOccurrences(
            of: #""one": "{sender} mentioned you.""#, with: #""one": "{sender} mentioned you !""#)
        let line = try #require(lineNumber(of: "mentioned you !", in: broken))
        let error = try #require(throws: TemplateLoadError.self) { try TemplateLibrary.parse(broken, file: "en.json") }
        #expect(error.line == line)
        #expect(error.name == "social.groups.mention.one")
        #expect(error.problem.hasPrefix("spaceBeforePunctuation in the body: \"Someone mentioned you !\""))
    }
}

// MARK: - The coach keeps the same rules

@Suite("Copy rules: the coach's answers")
struct CopyRuleCoachTests {
    @Test(arguments: [
        ("Good morning, there ☀️|Ready for today?", CopyRule.fallbackName),
        ("Guten Morgen, du ☀️|Bereit für heute?", .fallbackName),
        ("Good morning, ☀️|Ready for today?", .emptyClause),
        ("Good morning ☀️|Ready for today ?", .spaceBeforePunctuation),
        ("Good morning \u{FE0F}|Ready for today?", .invalidEmoji),
    ])
    func anAnswerThatBreaksARuleIsRejected(text: String, rule: CopyRule) {
        let result = CoachOutput.validate(
            text, recipient: recipient(.public),
            envelope: NotificationContent(kind: .morningGreeting, title: "", body: ""))
        #expect(result == .failure(.copyRule(rule)))
        #expect(OutputProblem.copyRule(rule).code == "copyRule.\(rule.rawValue)")
    }

    @Test func aRejectedAnswerFallsBackToATemplateThatReadsRight() throws {
        let generator = try bundledGenerator()
        var memory = TemplateMemory()
        var random = SeededGenerator(seed: 7)
        let nameless = request(.morningGreeting, level: .private)
        let decision = generator.decide(
            .text("Good morning, there ☀️|Ready for today?", latencyMillis: 300), for: nameless, memory: &memory,
            generator: &random)
        #expect(decision.source == .template)
        #expect(decision.reason.code == "malformedOutput.copyRule.fallbackName")
        #expect(CopyRules.firstBreak(in: decision.copy, titleNeedsEmoji: true) == nil)
        #expect(!decision.copy.title.contains("there") && !decision.copy.title.contains("Ana"))
    }
}
