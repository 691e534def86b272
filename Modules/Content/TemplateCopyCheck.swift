import Models

/// The copy check a template file passes before it loads: every template and every grouped social
/// sentence is rendered as users will see it and each rendering must keep every `CopyRule`.
///
/// Each template is rendered with the facts its `when` conditions need, for every privacy level
/// (`PrivacyPolicy.redact` first, as `ContentGenerator` does), with a short, an accented, a
/// 30-character, an over-long and no first name, and with real values (each meal, typed workouts
/// short and over-long, day counts, streaks, figures, senders who are and are not mutual friends)
/// and with every fallback; a rendering whose template would not be eligible is skipped. Grouped
/// social copy is rendered for groups of one and several, with and without a sender's name (none,
/// a mutual friend, a stranger, an over-long name), each topic and period, at every level.
extension TemplateFileLoader {
    /// Checks every rendering of `library`; throws for the first that breaks a rule, naming the
    /// file, the line, the template and the rule. Returns the number of renderings checked.
    func checkCopy(_ library: TemplateLibrary) throws(TemplateLoadError) -> Int {
        var checked = 0
        for (index, template) in library.templates.enumerated() {
            let compiled = library.compiled[index]
            let usesName = (compiled.title + compiled.body).contains {
                if case .clause(_, .name, _) = $0 { true } else { false }
            }
            let usesMeal = (compiled.title + compiled.body).contains {
                $0 == .field(.meal) || $0 == .field(.mealCapitalized)
            }
            // Renderings seen already need no second look: most contexts differ in what the
            // template does not read.
            var seen: Set<Copy> = []
            for (context, about) in CopyCheckContexts.contexts(for: template, names: usesName) {
                guard compiled.requires & ~FactBits.of(context) == 0 else { continue }
                let copy = library.render(template: index, context).copy
                checked += 1
                guard seen.insert(copy).inserted else { continue }
                if let broken = CopyRules.firstBreak(in: copy, limits: limits, titleNeedsEmoji: true) {
                    throw fail(template.line, template.name, "\(broken) (\(about))")
                }
                guard usesMeal else { continue }
                for (part, segments) in [("title", compiled.title), ("body", compiled.body)] {
                    if let wrong = mealCaseProblem(segments, library: library, context: context) {
                        throw fail(template.line, template.name, "mealCase in the \(part): \(wrong) (\(about))")
                    }
                }
            }
        }
        return checked + (try checkSocial(library))
    }

    private func checkSocial(_ library: TemplateLibrary) throws(TemplateLoadError) -> Int {
        var checked = 0
        var seen: Set<Copy> = []
        for kind in SocialCopy.kinds {
            guard let sentences = library.social.sentences[kind.ordinal] else { continue }
            for privacy in PrivacyLevel.allCases {
                for count in [1, 3, 999] {
                    for actor in CopyCheckContexts.senders {
                        for topic in ["morning run", "", String(repeating: "long topic ", count: 4)] {
                            for period in GroupPeriod.allCases {
                                let copy = library.groupSummary(
                                    kind, count: count, topic: topic, firstActor: actor, period: period,
                                    privacy: privacy)
                                checked += 1
                                guard seen.insert(copy).inserted,
                                    let broken = CopyRules.firstBreak(
                                        in: copy, limits: limits, titleNeedsEmoji: true)
                                else { continue }
                                let (line, name) =
                                    privacy == .private
                                    ? (library.social.hiddenLine, "social.hidden")
                                    : count <= 1
                                        ? (sentences.oneLine, "social.groups.\(kind.rawValue).one")
                                        : (sentences.manyLine, "social.groups.\(kind.rawValue).many")
                                let sender = actor.map { "sender \"\($0.name)\"" } ?? "no sender"
                                throw fail(
                                    line, name,
                                    "\(broken) (\(privacy.rawValue), count \(count), \(sender), topic \"\(topic)\", "
                                        + "period \(period.rawValue))")
                            }
                        }
                    }
                }
            }
        }
        return checked
    }

    /// Why a meal in `segments` is in the wrong case, rendered for `context`; nil when right.
    private func mealCaseProblem(
        _ segments: [TemplateSegment], library: TemplateLibrary, context: CopyContext
    ) -> String? {
        var before = ""
        for segment in segments {
            switch segment {
            case .text(let text):
                before += text
            case .clause(let opening, let field, let closing):
                before += library.words.clauseText(opening, field, closing, context)
            case .field(let field):
                let value = library.words.value(of: field, in: context)
                before += value
                guard field == .meal || field == .mealCapitalized, let first = value.first else { continue }
                let preceding = String(before.dropLast(value.count)).trimmedOrNil
                let sentenceStart = preceding?.last.map { ".!?".contains($0) } ?? true
                if library.language.hasPrefix("de") {
                    if !first.isUppercase { return "\"\(value)\" is a noun and takes a capital in German" }
                } else if sentenceStart && !first.isUppercase {
                    return "\"\(value)\" starts a sentence: write {Meal}"
                } else if !sentenceStart && field == .mealCapitalized {
                    return "\"\(value)\" inside a sentence: write {meal}"
                }
            }
        }
        return nil
    }
}

/// The contexts a template is rendered in by the copy check, each with a short description for
/// the failure message.
enum CopyCheckContexts {
    /// Short, accented, exactly 30 characters (the longest shown), over-long (dropped) and none.
    static let names = ["Ana", "Zoë", "Wolfeschlegelsteinhausenberger", "Wolfeschlegelsteinhausenbergerdorff", ""]

    /// No sender, a mutual friend, a stranger, and a name clipped with an ellipsis.
    static let senders: [SocialSender?] = [
        nil, SocialSender(name: "Ben Okafor", isMutualFriend: true, text: "Great pace on that hill today!"),
        SocialSender(name: "Carla Diaz", isMutualFriend: false, text: "Which shoes do you run in?"),
        SocialSender(
            name: "Maximiliane Charlotte von Hohenstein", isMutualFriend: true,
            text: String(repeating: "So proud of you, keep going! ", count: 4)),
    ]

    /// Real values, one set per meal; the values are varied together so every one is seen.
    private static let workouts = ["Run", "yoga", "High-intensity interval training", "Pilates"]
    private static let days = [1, 12, 365, 9_999]
    private static let streaks = [2, 12, 365, 9_999]
    private static let achievements = [
        "First 5K", "Forty days of morning stretching, unbroken", "10 workouts", "Early bird",
    ]
    private static let topics = ["morning run", "yoga session", "Long ride along the river at sunrise", "swim"]

    /// With `names` false (a template without a name clause), one name stands for all.
    static func contexts(for template: CopyTemplate, names: Bool) -> [(CopyContext, String)] {
        var result: [(CopyContext, String)] = []
        for name in names ? Self.names : ["Ana"] {
            var values: [(CopyContext, String)] = [(fallbacks(template, name: name), "fallbacks")]
            for (index, meal) in MealType.allCases.enumerated() {
                values.append((real(template, name: name, index: index, meal: meal), "real values \(index + 1)"))
            }
            for (context, about) in values {
                for level in PrivacyLevel.allCases {
                    let shown = name.isEmpty ? "no name" : "name \"\(name)\""
                    result.append((PrivacyPolicy(level).redact(context), "\(shown), \(level.rawValue), \(about)"))
                }
            }
        }
        return result
    }

    /// Every optional fact missing, but for those the template's conditions name.
    private static func fallbacks(_ template: CopyTemplate, name: String) -> CopyContext {
        var context = CopyContext(firstName: name)
        apply(template.conditions, to: &context, index: 0)
        return context
    }

    private static func real(_ template: CopyTemplate, name: String, index: Int, meal: MealType) -> CopyContext {
        var context = CopyContext(
            firstName: name, meal: meal, workoutType: workouts[index], daysAway: days[index],
            streakDays: streaks[index], achievementName: achievements[index],
            sender: senders[1 + index % (senders.count - 1)], topic: topics[index], groupCount: [2, 3, 17, 999][index])
        context.workoutsCompleted = [9, 4, 0, 12][index]
        context.workoutsPlanned = [10, 5, 3, 10][index]
        apply(template.conditions, to: &context, index: index)
        return context
    }

    /// Sets the facts each condition needs: a weather, a night's sleep, a workout, a completion.
    private static func apply(_ conditions: [TemplateCondition], to context: inout CopyContext, index: Int) {
        for condition in conditions {
            switch condition {
            case .light: context.stronger = false
            case .stronger: context.stronger = true
            case .sleptWell: context.sleepQuality = index.isMultiple(of: 2) ? .good : .excellent
            case .sleptPoorly: context.sleepQuality = index.isMultiple(of: 2) ? .poor : .fair
            case .sunny: context.weather = .sunny
            case .cloudy: context.weather = .cloudy
            case .rainy: context.weather = .rainy
            case .snowy: context.weather = .snowy
            case .workoutPlanned: context.workoutType = context.workoutType ?? workouts[index]
            case .completionHigh: (context.workoutsCompleted, context.workoutsPlanned) = (9, 10)
            case .completionMid: (context.workoutsCompleted, context.workoutsPlanned) = (7, 10)
            case .completionLow: (context.workoutsCompleted, context.workoutsPlanned) = (2, 10)
            }
        }
    }
}
