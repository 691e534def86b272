import Models
import Testing

@testable import Content

@Suite struct TemplatePlaceholderTests {
    @Test(arguments: ["en", "de"])
    func everyTemplateUsesOnlyKnownPlaceholders(language: String) throws {
        for template in try TemplateLibrary.bundled(language: language).templates {
            for text in [template.title, template.body] {
                var rest = Substring(text)
                while let open = rest.firstIndex(of: "{") {
                    let close = rest[open...].firstIndex(of: "}")
                    #expect(close != nil, "unclosed placeholder in \(text)")
                    guard let close else { break }
                    let inside = String(rest[rest.index(after: open)..<close])
                    // A clause around the name: only spaces and punctuation beside it.
                    let field =
                        inside.contains("name") && inside != "name"
                        ? inside.filter { $0.isLetter } : inside
                    #expect(CopyTemplate.fields.contains(field), "unknown placeholder {\(inside)} in \(template.name)")
                    #expect(field != "name" || inside != "name", "a bare {name} in \(template.name)")
                    rest = rest[rest.index(after: close)...]
                }
            }
        }
    }

    @Test func placeholdersAreFilledFromTheContext() throws {
        let english = try bundledEnglish()
        let context = CopyContext(firstName: "Ana", meal: .lunch, workoutType: "Run", daysAway: 9)
        #expect(
            try english.fill("Hi{ name}, {Meal} and {workout} after {daysAway}", context)
                == "Hi Ana, Lunch and run after 9 days")
        #expect(try english.fill("No placeholders", context) == "No placeholders")
        #expect(try english.fill("Hi{ name} 👋", CopyContext(firstName: "")) == "Hi 👋")
        #expect(try english.fill("Well done{, name}!", CopyContext(firstName: "")) == "Well done!")
        #expect(try english.fill("Look back{, name,} and plan", context) == "Look back, Ana, and plan")
        #expect(try english.fill("Look back{, name,} and plan", CopyContext(firstName: " ")) == "Look back and plan")
    }

    @Test func copyOfAnyLengthIsFilledWhole() throws {
        let english = try bundledEnglish()
        let context = CopyContext(firstName: "Ana", meal: .lunch, daysAway: 9)
        // Around the stack buffer's 512 bytes (16 a repeat): under, at, just past and well past it.
        for repeats in [1, 31, 32, 33, 60] {
            let pattern = String(repeating: "Hi{ name} é {Meal} ", count: repeats)
            let expected = String(repeating: "Hi Ana é Lunch ", count: repeats)
            #expect(try english.fill(pattern, context) == expected)
        }
        #expect(try english.fill("{ name}", context) == " Ana")
    }

    @Test func theGermanWordsFillTheSamePlaceholders() throws {
        let german = try TemplateLibrary.bundled(language: "de")
        let context = CopyContext(firstName: "", meal: .dinner, daysAway: 1)
        #expect(
            try german.fill("Hallo{ name}: {Meal}, seit {daysAway}", context) == "Hallo: Abendessen, seit einem Tag")
        #expect(try german.fill("seit {daysAway}", CopyContext(firstName: "", daysAway: 12)) == "seit 12 Tagen")
        #expect(try german.fill("seit {daysAway}", CopyContext(firstName: "")) == "seit einer Weile")
    }

    @Test func anUnknownPlaceholderInAPatternIsAnError() throws {
        let english = try bundledEnglish()
        #expect(throws: TemplateLoadError.self) {
            try english.fill("Hi {nmae}", CopyContext(firstName: ""))
        }
    }

    /// A name that may not be shown leaves no stand-in word, so the name is written only in a
    /// clause; a clause needs punctuation or a space beside the name and nothing else.
    @Test(arguments: ["Hi {name}", "Hi {dear name}", "Hi {, name2}", "Hi {name, name}", "Hi { name }"])
    func aNameOutsideAClauseThatDropsIsAnError(pattern: String) throws {
        let english = try bundledEnglish()
        #expect(throws: TemplateLoadError.self) { try english.fill(pattern, CopyContext(firstName: "Ana")) }
    }

    @Test func optionalFactsRenderWhenPresent() throws {
        let english = try bundledEnglish()
        let context = CopyContext(
            firstName: "Ana", streakDays: 12, workoutsCompleted: 4, workoutsPlanned: 5, achievementName: "First 5K",
            sender: SocialSender(name: "Ben", isMutualFriend: true, text: "Great pace!"), topic: "morning run",
            groupCount: 3)
        #expect(
            try english.fill(
                "{streak} {completed}/{planned} {percent}% {achievement} {sender} {senderText} {topic} {count}", context
            )
                == "12 4/5 80% First 5K Ben Great pace! morning run 3")
    }

    @Test func overlongFreeTextFallsBackOrIsCut() throws {
        let english = try bundledEnglish()
        let long = String(repeating: "x", count: 80)
        let context = CopyContext(
            firstName: long, workoutType: long, achievementName: long,
            sender: SocialSender(name: long, isMutualFriend: true, text: long), topic: long)
        #expect(try english.fill("Hi{ name}|{workout}|{topic}", context) == "Hi|workout|workout")
        let cut = try english.fill("{sender}|{senderText}|{achievement}", context).split(separator: "|")
        #expect(cut.map(\.count) == [30, 60, 40])
        #expect(cut.allSatisfy { $0.hasSuffix("…") })
    }
}
