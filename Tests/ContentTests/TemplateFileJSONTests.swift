import Content
import Testing

/// A template file's JSON is read by the package's strict reader; its refusals keep the template
/// file's form: the line, the column in characters, and the path of the key or value as the name.
@Suite("Template files: malformed JSON")
struct TemplateFileJSONTests {
    /// The bundled English file with `line` inserted as the first template, and the error it
    /// loads with (nil when it loads), with the inserted line's number.
    func load(inserting line: String) throws -> (error: TemplateLoadError?, line: Int) {
        let text = try bundledText("en")
        let at = try #require(lineNumber(of: "\"templates\": [", in: text)) + 1
        do {
            _ = try TemplateLibrary.parse(inserting(line, before: at, in: text), file: "en.json")
            return (nil, at)
        } catch {
            return (error, at)
        }
    }

    @Test func aDuplicateKeyNamesItsPathAndBothLines() throws {
        let (error, at) = try load(inserting: #"{ "name": "x", "kind": "hydration", "name": "y" },"#)
        let failure = try #require(error)
        #expect(failure.line == at)
        #expect(failure.name == "templates[0].name")
        #expect(failure.problem == "malformed JSON at column 37: duplicate key (first at line \(at))")
    }

    @Test func theColumnCountsCharactersNotBytes() throws {
        let (error, at) = try load(inserting: #"{ "name": "é😀", "kind": "hydration" "style": "any" },"#)
        let failure = try #require(error)
        #expect(failure.line == at)
        #expect(failure.name == "templates[0]")
        #expect(failure.problem.hasPrefix("malformed JSON at column 37: expected ',' or '}'"), "\(failure)")
    }

    @Test func nestingPast32LevelsIsRefused() throws {
        let (error, at) = try load(inserting: #"{ "name": "x", "when": "# + String(repeating: "[", count: 40))
        let failure = try #require(error)
        #expect(failure.line == at)
        #expect(failure.name.hasPrefix("templates[0].when[0]"))
        #expect(failure.problem.hasSuffix("nested deeper than 32 levels"))
    }
}
