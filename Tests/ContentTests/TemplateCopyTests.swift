import Models
import Testing

@testable import Content

// MARK: - Helpers

/// Lock-screen limits: about two lines of title and four of body on an iPhone.
private let maxTitleCharacters = 60
private let maxBodyCharacters = 178

/// Variants every kind and style is rendered with; more than any kind has templates.
private let variants = 0..<8

/// Contexts covering every field the templates read, with short, long, empty and accented names.
private let contexts: [CopyContext] = {
    var list: [CopyContext] = []
    for name in ["Ana", "", "Zoë", "Wolfeschlegelsteinhausenberger"] {
        list.append(CopyContext(firstName: name))
        for meal in MealType.allCases { list.append(CopyContext(firstName: name, meal: meal)) }
        for workout in ["Run", "strength", "High-intensity interval training"] {
            list.append(CopyContext(firstName: name, workoutType: workout))
        }
        for days in [nil, 1, 4, 12, 365] as [Int?] {
            list.append(CopyContext(firstName: name, daysAway: days, stronger: false))
            list.append(CopyContext(firstName: name, daysAway: days, stronger: true))
        }
    }
    return list
}()

extension TemplateLibrary {
    /// The copy of the `variant`-th eligible template.
    fileprivate func copy(
        _ kind: NotificationKind, style: MotivationalStyle, context: CopyContext, variant: Int
    ) -> Copy {
        render(kind, style: style, context: context, variant: variant).copy
    }

    /// The copy for a context built from the arguments.
    fileprivate func sample(
        _ kind: NotificationKind, _ style: MotivationalStyle = .encouraging, name: String = "Ana", variant: Int = 0,
        meal: MealType? = nil, workout: String? = nil, daysAway: Int? = nil, stronger: Bool = false
    ) -> Copy {
        copy(
            kind, style: style,
            context: CopyContext(
                firstName: name, meal: meal, workoutType: workout, daysAway: daysAway, stronger: stronger),
            variant: variant)
    }

    /// The number of templates of a kind and style: the period of the variant sequence.
    fileprivate func templateCount(
        _ kind: NotificationKind, _ style: MotivationalStyle, _ context: CopyContext
    ) -> Int {
        eligibleTemplates(kind, style: style, context: context).count
    }
}

/// True when `text` holds a real emoji: a non-ASCII scalar with the Emoji property (ASCII digits,
/// `#` and `*` have the property too, as keycap bases, and do not count).
private func containsEmoji(_ text: String) -> Bool {
    text.unicodeScalars.contains { $0.properties.isEmoji && !$0.isASCII }
}

/// Fragments left by unfilled templates or by UTF-8 decoded as Latin-1 / Windows-1252.
private let placeholderFragments = ["{", "}", "\\(", "nil", "Optional(", "%@", "null", "undefined", "<", ">"]
private let mojibakeFragments = ["Ã", "Â", "ð", "â€", "ï¸", "\u{FFFD}"]

// MARK: - Every kind and style

@Suite("Template copy: every kind and style")
struct TemplateCopyCoverageTests {
    let english: TemplateLibrary

    init() throws { english = try bundledEnglish() }

    @Test(arguments: NotificationKind.allCases, MotivationalStyle.allCases)
    func titleAndBodyAreNeverEmpty(kind: NotificationKind, style: MotivationalStyle) {
        for context in contexts {
            for variant in variants {
                let copy = english.copy(kind, style: style, context: context, variant: variant)
                #expect(!copy.title.isEmpty, "\(context) variant \(variant)")
                #expect(!copy.body.isEmpty, "\(context) variant \(variant)")
            }
        }
    }

    @Test(arguments: NotificationKind.allCases, MotivationalStyle.allCases)
    func noPlaceholderTextIsLeftOver(kind: NotificationKind, style: MotivationalStyle) {
        for context in contexts {
            for variant in variants {
                let copy = english.copy(kind, style: style, context: context, variant: variant)
                for text in [copy.title, copy.body] {
                    for fragment in placeholderFragments {
                        #expect(!text.contains(fragment), "\"\(text)\" contains \"\(fragment)\"")
                    }
                    #expect(text == text.trimmingSpaces, "\"\(text)\" has leading or trailing whitespace")
                    #expect(!text.contains("  "), "\"\(text)\" has a double space")
                    #expect(!text.contains(" ,") && !text.contains(" ."), "\"\(text)\" has a space before punctuation")
                }
            }
        }
    }

    @Test(arguments: NotificationKind.allCases, MotivationalStyle.allCases)
    func copyFitsTheLockScreen(kind: NotificationKind, style: MotivationalStyle) {
        for context in contexts {
            for variant in variants {
                let copy = english.copy(kind, style: style, context: context, variant: variant)
                #expect(copy.title.count <= maxTitleCharacters, "\(copy.title.count) characters: \"\(copy.title)\"")
                #expect(copy.body.count <= maxBodyCharacters, "\(copy.body.count) characters: \"\(copy.body)\"")
            }
        }
    }

    @Test(arguments: NotificationKind.allCases, MotivationalStyle.allCases)
    func everyTitleCarriesARealEmoji(kind: NotificationKind, style: MotivationalStyle) {
        for variant in variants {
            for stronger in [false, true] {
                let copy = english.sample(kind, style, variant: variant, daysAway: 5, stronger: stronger)
                #expect(containsEmoji(copy.title), "no emoji in \"\(copy.title)\"")
            }
        }
    }

    @Test(arguments: NotificationKind.allCases, MotivationalStyle.allCases)
    func copyHasNoMojibake(kind: NotificationKind, style: MotivationalStyle) {
        for context in contexts {
            for variant in variants {
                let copy = english.copy(kind, style: style, context: context, variant: variant)
                for text in [copy.title, copy.body] {
                    for fragment in mojibakeFragments {
                        #expect(!text.contains(fragment), "\"\(text)\" contains \"\(fragment)\"")
                    }
                    #expect(text.unicodeScalars.allSatisfy { !$0.properties.generalCategory.isControlOrUnassigned })
                }
            }
        }
    }

    @Test func theEmojiCheckTellsRealEmojiFromLookalikes() {
        #expect(containsEmoji("Water break 💧"))
        #expect(containsEmoji("Good morning ☀️"))
        #expect(!containsEmoji("Keep going 123 #1 *"))
        #expect(!containsEmoji("Good morning Ã°Å¸Â§"))
    }

    @Test(arguments: [NotificationKind.workoutReminder, .preWorkout], MotivationalStyle.allCases)
    func titlesStartWithACapitalForALowercaseWorkoutType(kind: NotificationKind, style: MotivationalStyle) {
        for variant in variants {
            let title = english.sample(kind, style, variant: variant, workout: "yoga").title
            #expect(title.first?.isUppercase == true, "\"\(title)\"")
        }
    }

    @Test(arguments: MealType.allCases)
    func mealTitlesStartWithACapital(meal: MealType) {
        for variant in variants {
            let title = english.sample(.mealReminder, variant: variant, meal: meal).title
            #expect(title.first?.isUppercase == true, "\"\(title)\"")
        }
    }
}

// MARK: - The first name

@Suite("Template copy: the first name")
struct TemplateCopyNameTests {
    let english: TemplateLibrary

    init() throws { english = try bundledEnglish() }

    /// Rendering with two names and with none shows where the template uses the name: the name
    /// appears exactly there, and without a name its clause drops and leaves no stand-in word.
    @Test(arguments: NotificationKind.allCases, MotivationalStyle.allCases)
    func theNameAppearsWhereTheTemplateUsesItAndDropsWhenEmpty(kind: NotificationKind, style: MotivationalStyle) {
        for variant in variants {
            for stronger in [false, true] {
                let ana = english.sample(kind, style, name: "Ana", variant: variant, daysAway: 4, stronger: stronger)
                let other = english.sample(
                    kind, style, name: "Bartholomew", variant: variant, daysAway: 4, stronger: stronger)
                let empty = english.sample(kind, style, name: "", variant: variant, daysAway: 4, stronger: stronger)
                if ana == other {
                    #expect(empty == ana, "empty name changes copy that does not use the name")
                    #expect(!"\(ana.title) \(ana.body)".contains("Ana"))
                } else {
                    #expect("\(ana.title) \(ana.body)".contains("Ana"))
                    #expect(ana.replacingName("Ana", with: "Bartholomew") == other)
                    #expect(!"\(empty.title) \(empty.body)".contains("there"), "\(empty)")
                    #expect(CopyRules.firstBreak(in: empty, titleNeedsEmoji: true) == nil, "\(empty)")
                    #expect(empty.title.count + empty.body.count < ana.title.count + ana.body.count)
                }
            }
        }
    }

    @Test(arguments: NotificationKind.allCases, MotivationalStyle.allCases)
    func theNameAppearsExactlyWhenTheChosenTemplateHasANameClause(
        kind: NotificationKind, style: MotivationalStyle
    ) {
        for stronger in [false, true] {
            let context = CopyContext(firstName: "Bartholomew", daysAway: 4, stronger: stronger)
            let templates = english.eligibleTemplates(kind, style: style, context: context)
            for (index, template) in templates.enumerated() {
                let copy = english.sample(
                    kind, style, name: "Bartholomew", variant: index, daysAway: 4, stronger: stronger)
                let usesName = ["{, name}", "{ name}", "{, name,}"].contains {
                    (template.title + template.body).contains($0)
                }
                #expect("\(copy.title) \(copy.body)".contains("Bartholomew") == usesName, "\(template)")
                let unnamed = english.sample(kind, style, name: "", variant: index, daysAway: 4, stronger: stronger)
                #expect(!"\(unnamed.title) \(unnamed.body)".contains("there"), "\(template)")
            }
        }
    }

    @Test func aNameThatLooksLikeAPlaceholderIsInsertedVerbatim() {
        let copy = english.sample(.morningGreeting, name: "{meal}")
        #expect(copy.title == "Good morning, {meal} ☀️")
    }

    @Test(arguments: MotivationalStyle.allCases)
    func theMorningGreetingGreetsByNameOrWithoutOne(style: MotivationalStyle) {
        for variant in variants {
            #expect(english.sample(.morningGreeting, style, name: "Ana", variant: variant).title.contains("Ana"))
            let unnamed = english.sample(.morningGreeting, style, name: "", variant: variant).title
            #expect(!unnamed.contains("there") && !unnamed.contains(","), "\(unnamed)")
        }
    }

    @Test(arguments: MotivationalStyle.allCases, [false, true])
    func reEngagementGreetsByNameOrWithoutOne(style: MotivationalStyle, stronger: Bool) {
        let named = english.sample(.reEngagement, style, name: "Ana", daysAway: 5, stronger: stronger)
        #expect(named.title.contains("Ana"))
        let unnamed = english.sample(.reEngagement, style, name: "", daysAway: 5, stronger: stronger)
        #expect(!unnamed.title.contains("there") && !unnamed.title.contains(","), "\(unnamed)")
    }

    /// What twelve users without a name (or at the private level) were shown before names were
    /// written in clauses that drop, and what they read now.
    @Test func greetingsWithoutANameReadNaturally() {
        #expect(english.sample(.morningGreeting, .encouraging, name: "Ana").title == "Good morning, Ana ☀️")
        #expect(english.sample(.morningGreeting, .encouraging, name: "").title == "Good morning ☀️")
        #expect(english.sample(.morningGreeting, .encouraging, name: "", variant: 1).title == "Rise and shine 🌅")
        #expect(english.sample(.morningGreeting, .supportive, name: "", variant: 1).title == "Hi 🌱")
        let water = english.render(templateNamed: "water.encouraging.thanks", context: CopyContext(firstName: ""))
        #expect(water?.copy.body == "Sip some water. Your body will thank you.")
        let plate = english.render(
            templateNamed: "meal.encouraging.plate", context: CopyContext(firstName: "", meal: .lunch))
        #expect(plate?.copy.body == "What's on the plate? A quick lunch log helps.")
        let week = english.render(templateNamed: "review.encouraging.wrapped", context: CopyContext(firstName: ""))
        #expect(week?.copy.body == "Take a look at your week and set up the next.")
        let named = english.render(templateNamed: "review.encouraging.wrapped", context: CopyContext(firstName: "Ana"))
        #expect(named?.copy.body == "Take a look at your week, Ana, and set up the next.")
    }

    @Test func germanGreetingsWithoutANameReadNaturally() throws {
        let german = try TemplateLibrary.bundled(language: "de")
        let context = CopyContext(firstName: "", daysAway: 3, stronger: true)
        let light = CopyContext(firstName: "")
        #expect(
            german.render(templateNamed: "morning.encouraging.fresh", context: light)?.copy.title == "Guten Morgen ☀️")
        #expect(german.render(templateNamed: "morning.supportive.calm", context: light)?.copy.title == "Hallo 🌱")
        let lapse = german.render(templateNamed: "lapse.encouraging.stronger.talk", context: context)
        #expect(lapse?.copy.title == "Wir melden uns 💙")
        let named = german.render(
            templateNamed: "lapse.encouraging.stronger.talk", context: CopyContext(firstName: "Ana", stronger: true))
        #expect(named?.copy.title == "Wir melden uns, Ana 💙")
    }

    /// The private level hides the first name: the same templates, with the clause dropped.
    @Test(arguments: MotivationalStyle.allCases)
    func thePrivateLevelDropsTheNameLikeAnEmptyOne(style: MotivationalStyle) {
        let hidden = PrivacyPolicy(.private).redact(CopyContext(firstName: "Ana"))
        for variant in variants {
            let copy = english.copy(.morningGreeting, style: style, context: hidden, variant: variant)
            #expect(copy == english.sample(.morningGreeting, style, name: "", variant: variant))
            #expect(!copy.title.contains("Ana"))
        }
    }

    @Test(arguments: ["Zoë", "José", "Nguyễn", "Søren", "Åsa"])
    func accentedNamesAreKeptIntact(name: String) {
        let title = english.sample(.morningGreeting, name: name).title
        #expect(title.contains(name))
        #expect(title.unicodeScalars.count >= name.unicodeScalars.count)
    }

    /// Social and system notifications are read over the shoulder; they stay generic.
    @Test(
        arguments: [
            NotificationKind.newFollower, .followRequest, .workoutKudos, .workoutComment, .mention, .challengeInvite,
            .leaderboardChange, .securityAlert, .privacyUpdate, .featureAnnouncement, .maintenanceNotice,
        ], MotivationalStyle.allCases)
    func socialAndSystemCopyNeverCarriesTheName(kind: NotificationKind, style: MotivationalStyle) {
        for variant in variants {
            let copy = english.sample(kind, style, name: "Bartholomew", variant: variant)
            #expect(!copy.title.contains("Bartholomew") && !copy.body.contains("Bartholomew"))
        }
    }
}

// MARK: - Variants

@Suite("Template copy: variant selection")
struct TemplateCopyVariantTests {
    let english: TemplateLibrary

    init() throws { english = try bundledEnglish() }

    private static let extremeVariants = [
        Int.min, Int.min + 1, -1_000_001, -13, -7, -2, -1, 0, 1, 2, 7, 13, 1_000_000, Int.max - 1, Int.max,
    ]

    @Test(arguments: NotificationKind.allCases, MotivationalStyle.allCases)
    func anyIntegerIsAValidVariantAndFollowsTheSamePeriod(kind: NotificationKind, style: MotivationalStyle) {
        for stronger in [false, true] {
            let context = CopyContext(firstName: "Ana", daysAway: 3, stronger: stronger)
            let period = english.templateCount(kind, style, context)
            #expect(period > 0, "no templates")
            guard period > 0 else { continue }
            // The period seen from outside matches the template count.
            let firstPeriod = (0..<period).map {
                english.copy(kind, style: style, context: context, variant: $0)
            }
            #expect(Set(firstPeriod).count == period, "variants within one period repeat")
            for variant in Self.extremeVariants {
                let copy = english.copy(kind, style: style, context: context, variant: variant)
                let canonical = ((variant % period) + period) % period
                #expect(
                    copy == english.copy(kind, style: style, context: context, variant: canonical), "\(variant)")
            }
        }
    }

    @Test(arguments: NotificationKind.allCases, MotivationalStyle.allCases)
    func renderingIsDeterministic(kind: NotificationKind, style: MotivationalStyle) {
        for context in contexts.prefix(30) {
            for variant in Self.extremeVariants {
                let first = english.copy(kind, style: style, context: context, variant: variant)
                let second = english.copy(kind, style: style, context: context, variant: variant)
                #expect(first == second)
            }
        }
    }

    @Test(arguments: [
        (NotificationKind.morningGreeting, MotivationalStyle.encouraging), (.morningGreeting, .challenging),
        (.morningGreeting, .supportive), (.mealReminder, .encouraging), (.hydration, .challenging),
        (.workoutReminder, .encouraging), (.preWorkout, .supportive),
    ])
    func kindsWithSeveralTemplatesOfferDifferentVariants(kind: NotificationKind, style: MotivationalStyle) {
        let copies = Set(variants.map { english.sample(kind, style, variant: $0, meal: .lunch, workout: "Run") })
        #expect(copies.count >= 2)
        #expect(
            english.sample(kind, style, variant: 0, meal: .lunch)
                != english.sample(kind, style, variant: 1, meal: .lunch))
    }
}

// MARK: - Re-engagement tone

@Suite("Template copy: re-engagement")
struct TemplateCopyReEngagementTests {
    let english: TemplateLibrary

    init() throws { english = try bundledEnglish() }

    @Test(arguments: MotivationalStyle.allCases, [2, 3, 7, 14, 30, 90])
    func theStrongerToneMentionsTheDaysAway(style: MotivationalStyle, days: Int) {
        let stronger = english.sample(.reEngagement, style, daysAway: days, stronger: true)
        #expect("\(stronger.title) \(stronger.body)".contains("\(days) days"), "\(stronger)")
    }

    @Test(arguments: MotivationalStyle.allCases, [nil, 1, 5, 30] as [Int?])
    func theStrongerToneDiffersFromTheLightOne(style: MotivationalStyle, days: Int?) {
        let light = english.sample(.reEngagement, style, daysAway: days, stronger: false)
        let stronger = english.sample(.reEngagement, style, daysAway: days, stronger: true)
        #expect(light.title != stronger.title)
        #expect(light.body != stronger.body)
    }

    @Test(arguments: MotivationalStyle.allCases)
    func oneDayAwayReadsAsADay(style: MotivationalStyle) {
        let body = english.sample(.reEngagement, style, daysAway: 1, stronger: true).body
        #expect(body.contains("a day"), "\(body)")
        #expect(!body.contains("1 days"))
    }

    @Test(arguments: MotivationalStyle.allCases)
    func anUnknownAbsenceReadsAsAWhile(style: MotivationalStyle) {
        let body = english.sample(.reEngagement, style, daysAway: nil, stronger: true).body
        #expect(body.contains("a while"), "\(body)")
    }

    @Test(arguments: MotivationalStyle.allCases)
    func theLightToneDoesNotDwellOnTheAbsence(style: MotivationalStyle) {
        let short = english.sample(.reEngagement, style, daysAway: 4, stronger: false)
        let long = english.sample(.reEngagement, style, daysAway: 40, stronger: false)
        #expect(short == long)
        #expect(!short.body.contains("days"))
    }

    @Test func theChallengingStyleHasItsOwnVoice() {
        for stronger in [false, true] {
            let challenging = english.sample(.reEngagement, .challenging, daysAway: 5, stronger: stronger)
            let supportive = english.sample(.reEngagement, .supportive, daysAway: 5, stronger: stronger)
            #expect(challenging != supportive)
        }
    }
}

// MARK: - Context fields

@Suite("Template copy: context fields")
struct TemplateCopyContextTests {
    let english: TemplateLibrary

    init() throws { english = try bundledEnglish() }

    @Test(arguments: MealType.allCases, MotivationalStyle.allCases)
    func mealRemindersNameTheMeal(meal: MealType, style: MotivationalStyle) {
        for variant in variants {
            let copy = english.sample(.mealReminder, style, variant: variant, meal: meal)
            #expect("\(copy.title) \(copy.body)".lowercased().contains(meal.rawValue), "\(copy)")
        }
    }

    @Test func aMealReminderWithoutAMealStaysGeneric() {
        for variant in variants {
            let copy = english.sample(.mealReminder, variant: variant)
            #expect("\(copy.title) \(copy.body)".lowercased().contains("meal"), "\(copy)")
        }
    }

    @Test(arguments: [NotificationKind.workoutReminder, .preWorkout, .postWorkoutCheckIn], MotivationalStyle.allCases)
    func workoutCopyNamesTheWorkoutType(kind: NotificationKind, style: MotivationalStyle) {
        for variant in variants {
            let copy = english.sample(kind, style, variant: variant, workout: "Pilates")
            #expect("\(copy.title) \(copy.body)".lowercased().contains("pilates"), "\(copy)")
        }
    }

    @Test(arguments: [NotificationKind.workoutReminder, .preWorkout, .postWorkoutCheckIn], MotivationalStyle.allCases)
    func workoutCopyWithoutATypeSaysWorkout(kind: NotificationKind, style: MotivationalStyle) {
        for variant in variants {
            let copy = english.sample(kind, style, variant: variant)
            #expect("\(copy.title) \(copy.body)".lowercased().contains("workout"), "\(copy)")
        }
    }

    /// `ScheduledWorkout.type` is free text and may be empty; the copy should fall back to "workout"
    /// as it does for nil rather than render " coming up" or "Your  starts soon".
    @Test(
        arguments: [NotificationKind.workoutReminder, .preWorkout, .postWorkoutCheckIn], ["", " "])
    func anEmptyWorkoutTypeFallsBackToWorkout(kind: NotificationKind, type: String) {
        for style in MotivationalStyle.allCases {
            for variant in variants {
                let copy = english.sample(kind, style, variant: variant, workout: type)
                #expect(copy == english.sample(kind, style, variant: variant, workout: nil), "\(copy)")
            }
        }
    }
}

// MARK: - Test-only conveniences

extension Copy {
    /// The copy with every occurrence of `name` replaced.
    fileprivate func replacingName(_ name: String, with replacement: String) -> Copy {
        Copy(title: title.replacing(name, with: replacement), body: body.replacing(name, with: replacement))
    }
}

extension String {
    fileprivate var trimmingSpaces: String {
        String(drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed())
    }
}

extension Unicode.GeneralCategory {
    fileprivate var isControlOrUnassigned: Bool {
        switch self {
        case .control, .unassigned, .privateUse, .surrogate: true
        default: false
        }
    }
}
