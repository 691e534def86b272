import Foundation
import Models
import Testing

@testable import Simulation

/// The scenario file's text as a person writes it: malformed JSON, duplicate keys, numbers that
/// do not fit, strings where numbers belong. Each is a `ScenarioError` naming the key and where.
@Suite struct ScenarioLoaderTests {
    /// A small valid scenario file with `members` on its fourth line.
    static func text(_ members: String) -> [UInt8] {
        Array(
            """
            {
              "name": "probe",
              "start": "2027-03-10",
              \(members)
            }
            """.utf8)
    }

    static func error(_ bytes: [UInt8]) -> ScenarioError? {
        do {
            _ = try Scenario.parse(json: bytes, file: "probe.json")
            return nil
        } catch {
            return error
        }
    }

    @Test func aValidFileLoads() throws {
        let scenario = try Scenario.parse(
            json: Self.text(#""users": 12, "seed": 18446744073709551615"#), file: "ok.json")
        #expect(scenario.users == 12 && scenario.seed == UInt64.max)
    }

    @Test(arguments: [
        // The issue's probe: each was accepted, wrapped, or printed unquoted.
        (#""seed": 18446744073709551616"#, "seed", "must be in 0...18446744073709551615, got 18446744073709551616"),
        (#""seed": -1"#, "seed", "got -1"),
        (#""seed": 1.5"#, "seed", "expected a whole number"),
        (#""seed": "7""#, "seed", #"got "7""#),
        (#""users": 99999999999999999999"#, "users", "must be in 1...10000000, got 99999999999999999999"),
        (#""users": 1e300"#, "users", "got 1e300"),
        (#""weeks": 2000000000000000"#, "weeks", "must be in 1...520, got 2000000000000000"),
        (#""weeks": "5""#, "weeks", #"got "5""#),
        (#""description": 123"#, "description", "expected a string, got 123"),
        (#""holdoutShare": 1e999"#, "holdoutShare", "got 1e999"),
        (#""preferences": {"quietHours": {"": 1}}"#, "preferences.quietHours.", "expected"),
        (#""preferences": {"quietHours": {"@": 1}}"#, "preferences.quietHours.@", "expected"),
        (#""preferences": {"quietHours": {"22:00-07:00@": 1}}"#, "preferences.quietHours.22:00-07:00@", "no weekdays"),
        (
            #""preferences": {"quietHours": {"22:00-07:00@sat,,sun": 1}}"#,
            "preferences.quietHours.22:00-07:00@sat,,sun",
            "unknown weekday"
        ),
        (#""preferences": {"quietHours": {"-": 1}}"#, "preferences.quietHours.-", "expected"),
        (
            #""preferences": {"maxPerDay": {"99999999999999999999": 1}}"#, "preferences.maxPerDay.99999999999999999999",
            "cap must be in"
        ),
        (#""preferences": {"maxPerHour": {"": 1}}"#, "preferences.maxPerHour.", "a whole number"),
        (#""timeZones": []"#, "timeZones", "got an array"),
        (#""deployment": "cloud""#, "deployment", "unknown deployment \"cloud\"; expected one of device, server"),
        (#""deployment": 1"#, "deployment", "expected a non-empty string"),
    ])
    func aBadValueIsRefusedWithItsKeyAndProblem(members: String, key: String, problem: String) throws {
        let error = try #require(Self.error(Self.text(members)))
        #expect(error.key == key)
        #expect(error.problem.contains(problem), "\(error)")
        #expect(error.line == 4, "the value's line: \(error)")
    }

    @Test func aDuplicateKeyIsRefusedWithBothLines() throws {
        let error = try #require(Self.error(Self.text("\"users\": 10,\n  \"users\": 20")))
        #expect(error.key == "users")
        #expect(error.problem == "duplicate key (first at line 4)")
        #expect(error.line == 5 && error.column == 3)
        #expect(error.description == "probe.json:5:3: users: duplicate key (first at line 4)")
    }

    @Test func aDuplicateKeyInsideANestedObjectNamesItsPath() throws {
        let members = #""preferences": {"quietHours": {"none": 1, "22:00-07:00": 2, "none": 3}}"#
        let error = try #require(Self.error(Self.text(members)))
        #expect(error.key == "preferences.quietHours.none")
        #expect(error.problem.contains("duplicate key"))
    }

    @Test(arguments: [
        ("{\n  \"name\": \"x\",\n  \"users\": 10,\n}", 4, 1, "expected a key in double quotes"),
        ("{\n  \"name\": \"x\" \"users\": 10\n}", 2, 15, "expected ',' or '}'"),
        ("{\"name\": \"unterminated", 1, 10, "not closed"),
        ("{\"users\": 012}", 1, 11, "leading zero"),
        ("{\"users\": 1.}", 1, 13, "digits after '.'"),
        ("{\"users\": tru}", 1, 11, "expected true"),
        ("{\"name\": \"a\u{01}\"}", 1, 12, "control character"),
        ("{\"name\": \"\\q\"}", 1, 13, "unknown escape"),
        ("{\"name\": \"\\uD800\"}", 1, 17, "surrogate"),
        ("{} []", 1, 4, "after the JSON value"),
        ("", 1, 1, "end of file"),
        (String(repeating: "[", count: 200), 1, 65, "nested deeper"),
    ])
    func malformedJSONGivesTheLineAndColumn(text: String, line: Int, column: Int, problem: String) throws {
        let error = try #require(Self.error(Array(text.utf8)))
        #expect(error.key == "(file)")
        #expect(error.problem.hasPrefix("not valid JSON: ") && error.problem.contains(problem), "\(error)")
        #expect(error.line == line && error.column == column, "\(error)")
    }

    @Test func invalidUTF8InAStringIsRefused() throws {
        let bytes = Array("{\"name\": \"".utf8) + [0xFF, 0xFE] + Array("\"}".utf8)
        let error = try #require(Self.error(bytes))
        #expect(error.problem.contains("not valid UTF-8"))
    }

    @Test func escapesAndAByteOrderMarkAreRead() throws {
        let text = "\u{FEFF}{\"name\": \"caf\\u00e9 \\ud83c\\udfc3\", \"start\": \"2027-03-10\"}"
        let scenario = try Scenario.parse(json: Array(text.utf8), file: "escapes.json")
        #expect(scenario.name == "café 🏃")
    }

    /// Random mutations of a shipped scenario (byte flips, deletions, duplications, number
    /// changes) never crash the loader: each gives a scenario or a `ScenarioError` naming a key.
    @Test func randomMutationsOfAValidScenarioNeverCrashTheLoader() throws {
        let original = try #require(FileManager.default.contents(atPath: scenariosFolder + "/smoke.json"))
        var generator = SeededGenerator(seed: 12)
        var loaded = 0
        var refused = 0
        for _ in 0..<3_000 {
            var bytes = Array(original)
            for _ in 0...Int(generator.next() % 3) { Self.mutate(&bytes, &generator) }
            do {
                _ = try Scenario.parse(json: bytes, file: "mutant.json")
                loaded += 1
            } catch {
                #expect(!error.key.isEmpty && !error.problem.isEmpty)
                #expect(!error.description.contains("Error Domain"), "no raw NSError: \(error)")
                refused += 1
            }
        }
        #expect(loaded + refused == 3_000 && loaded > 0 && refused > 0)
    }

    static func mutate(_ bytes: inout [UInt8], _ generator: inout SeededGenerator) {
        guard !bytes.isEmpty else { return }
        let at = Int(generator.next() % UInt64(bytes.count))
        switch generator.next() % 6 {
        case 0: bytes[at] ^= UInt8(1 << (generator.next() % 8))
        case 1: bytes.removeSubrange(at..<min(bytes.count, at + 1 + Int(generator.next() % 8)))
        case 2:
            let slice = bytes[at..<min(bytes.count, at + 1 + Int(generator.next() % 40))]
            bytes.insert(contentsOf: slice, at: at)
        case 3:
            // A digit becomes a long or a negative number.
            if let digit = bytes[at...].firstIndex(where: { (48...57).contains($0) }) {
                let numbers = ["99999999999999999999999", "-1", "0", "1e400", "18446744073709551616", "0.5"]
                bytes.replaceSubrange(digit...digit, with: Array(numbers[Int(generator.next() % 6)].utf8))
            }
        case 4:
            let tokens = ["\"", "{", "}", "[", "]", ",", ":", "@", "\\", "\u{0}", "null", "true"]
            bytes.insert(contentsOf: Array(tokens[Int(generator.next() % UInt64(tokens.count))].utf8), at: at)
        default: bytes.insert(UInt8(truncatingIfNeeded: generator.next()), at: at)
        }
    }
}
