import Models
import Testing

@testable import Content

@Suite struct TemplatePlaceholderTests {
    @Test func everyTemplateUsesOnlyKnownPlaceholders() {
        for kind in NotificationKind.allCases {
            for style in MotivationalStyle.allCases {
                for stronger in [false, true] {
                    for template in TemplateCopy.templates(kind, style: style, stronger: stronger) {
                        for text in [template.title, template.body] {
                            var rest = Substring(text)
                            while let open = rest.firstIndex(of: "{") {
                                let close = rest[open...].firstIndex(of: "}")
                                #expect(close != nil, "unclosed placeholder in \(text)")
                                guard let close else { break }
                                let field = String(rest[rest.index(after: open)..<close])
                                #expect(
                                    CopyTemplate.fields.contains(field), "unknown placeholder {\(field)} in \(kind)")
                                rest = rest[rest.index(after: close)...]
                            }
                        }
                    }
                }
            }
        }
    }

    @Test func placeholdersAreFilledFromTheContext() {
        let context = CopyContext(firstName: "Ana", meal: .lunch, workoutType: "Run", daysAway: 9)
        #expect(
            TemplateCopy.fill("Hi {name}, {Meal} and {workout} after {daysAway}", context)
                == "Hi Ana, Lunch and run after 9 days")
        #expect(TemplateCopy.fill("No placeholders", context) == "No placeholders")
        #expect(TemplateCopy.fill("Hi {name}", CopyContext(firstName: "")) == "Hi there")
    }
}
