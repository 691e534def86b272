import Foundation
import Models
import Testing

@testable import Simulation

/// A minimal valid scenario as JSON values, to break one key at a time.
func baseScenario() -> [String: Any] {
    [
        "name": "test", "seed": 7, "start": "2027-03-10", "weeks": 1, "users": 40, "threads": 1,
        "timeZones": ["America/New_York": 2, "Asia/Kathmandu": 1, "Pacific/Chatham": 1, "Australia/Sydney": 1],
        "personas": ["morningRunner": 1, "lapsing": 1, "giveMeSpace": 1, "traveller": 1, "nightShift": 1],
        "preferences": [
            "quietHours": ["none": 1, "22:00-07:00": 2, "23:00-06:00@sat,sun": 1],
            "hydration": ["hourly": 1, "off": 1],
            "maxPerHour": ["1": 1, "10": 1],
            "maxPerDay": ["none": 1, "5": 1],
        ],
        "faults": ["travelPerTravellerDay": 0.5],
        // No drain phase: most tests do not need it and it doubles a run (DrainTests set it).
        "drainDays": 0,
    ]
}

/// A JSON value from its text, e.g. `"-5"` or `{"EST": 1}`.
func jsonValue(_ text: String) -> Any {
    (try! JSONSerialization.jsonObject(with: Data("[\(text)]".utf8)) as! [Any])[0]
}

let scenariosFolder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .appendingPathComponent("../../Simulation/Scenarios").standardized.path

@Suite struct ScenarioValidationTests {
    @Test func theShippedScenariosAreValid() throws {
        let smoke = try Scenario.load(path: scenariosFolder + "/smoke.json")
        #expect(smoke.users >= 150 && smoke.users <= 250 && smoke.weeks == 1)
        let standard = try Scenario.load(path: scenariosFolder + "/default.json")
        #expect(standard.users == 10_000 && standard.weeks == 8 && standard.start.description == "2027-03-01")
        // Offsets of +5:30, +5:45 and +12:45, and both hemispheres.
        for zone in ["Asia/Kolkata", "Asia/Kathmandu", "Pacific/Chatham", "Australia/Sydney", "Europe/London"] {
            #expect(standard.timeZones.names.contains(zone))
        }
    }

    @Test(arguments: [
        ("bogus", "1", "bogus", "unknown key"),
        ("users", "-5", "users", "must be in 1"),
        ("weeks", "0", "weeks", "must be in 1"),
        ("weeks", #""two""#, "weeks", "expected a whole number"),
        ("weeks", "1.5", "weeks", "expected a whole number"),
        ("weeks", "true", "weeks", "expected a whole number"),
        ("start", #""2027-02-30""#, "start", "expected a date"),
        ("start", #""March 1""#, "start", "expected a date"),
        ("timeZones", #"{"Mars/Olympus": 1}"#, "timeZones.Mars/Olympus", "unknown IANA time zone"),
        ("timeZones", #"{"EST": 1}"#, "timeZones.EST", "unknown IANA time zone"),
        ("timeZones", "{}", "timeZones", "non-empty"),
        ("personas", #"{"sleepwalker": 1}"#, "personas.sleepwalker", "unknown choice"),
        ("personas", #"{"lapsing": -1}"#, "personas.lapsing", "must be in 0"),
        ("personas", #"{"lapsing": 0}"#, "personas", "all weights are zero"),
    ])
    func aBadTopLevelValueNamesTheKeyAndTheProblem(key: String, json: String, reportedKey: String, problem: String) {
        expectScenarioError(setting: key, to: json, reportedKey: reportedKey, problem: problem)
    }

    @Test(arguments: [
        ("quietHours", #"{"22:00-22:00": 1}"#, "preferences.quietHours.22:00-22:00", "start equals end"),
        ("quietHours", #"{"25:00-07:00": 1}"#, "preferences.quietHours.25:00-07:00", "expected"),
        ("quietHours", #"{"22:00-07:00@someday": 1}"#, "preferences.quietHours.22:00-07:00@someday", "weekday"),
        ("maxPerHour", #"{"0": 1}"#, "preferences.maxPerHour.0", "1...60"),
        ("maxPerDay", #"{"lots": 1}"#, "preferences.maxPerDay.lots", "whole number"),
        ("hydration", #"{"hourlyish": 1}"#, "preferences.hydration.hourlyish", "unknown choice"),
        ("colour", #"{"red": 1}"#, "preferences.colour", "unknown key"),
    ])
    func aBadPreferenceDistributionNamesTheKey(key: String, json: String, reportedKey: String, problem: String) {
        var object = baseScenario()
        var preferences = object["preferences"] as! [String: Any]
        preferences[key] = jsonValue(json)
        object["preferences"] = preferences
        #expect {
            try Scenario.parse(object, file: "bad.json")
        } throws: { error in
            guard let error = error as? ScenarioError else { return false }
            return error.key == reportedKey && error.problem.contains(problem)
        }
    }

    @Test func aNegativeFaultRateAndAnUnknownFaultAreRejected() {
        for faults in [["backgroundNeverRun": -0.1], ["meteorStrike": 0.5]] as [[String: Any]] {
            var object = baseScenario()
            object["faults"] = faults
            #expect(throws: ScenarioError.self) { try Scenario.parse(object, file: "bad.json") }
        }
    }

    @Test func aMissingOrMalformedFileIsAnErrorNamingTheFile() throws {
        #expect {
            try Scenario.load(path: "/nonexistent/scenario.json")
        } throws: { ($0 as? ScenarioError)?.file == "/nonexistent/scenario.json" }
        let path = NSTemporaryDirectory() + "malformed-scenario.json"
        try Data("{ not json".utf8).write(to: URL(fileURLWithPath: path))
        #expect {
            try Scenario.load(path: path)
        } throws: { ($0 as? ScenarioError)?.problem.contains("not valid JSON") == true }
    }
}

/// Expects the base scenario with `key` set to the JSON `json` to be refused, naming
/// `reportedKey` and a problem that contains `problem`.
func expectScenarioError(
    setting key: String, to json: String, reportedKey: String, problem: String,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    var object = baseScenario()
    object[key] = jsonValue(json)
    #expect(sourceLocation: sourceLocation) {
        try Scenario.parse(object, file: "bad.json")
    } throws: { error in
        guard let error = error as? ScenarioError else { return false }
        return error.file == "bad.json" && error.key == reportedKey && error.problem.contains(problem)
    }
}
