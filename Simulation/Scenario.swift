public import Content
import Foundation
public import Models

/// A bad scenario file: which file, which key, what is wrong. Exit status 65.
public struct ScenarioError: Error, CustomStringConvertible, Equatable {
    public var file: String
    public var key: String
    public var problem: String

    public var description: String { "\(file): \(key): \(problem)" }
}

/// Relative weights over named choices, e.g. time zones or personas.
public struct Weights: Hashable, Sendable {
    public var names: [String]
    public var values: [Double]

    public init(_ pairs: [(String, Double)]) {
        let sorted = pairs.sorted { $0.0 < $1.0 }
        names = sorted.map(\.0)
        values = sorted.map(\.1)
    }

    public func pick(_ generator: inout SeededGenerator) -> String { names[generator.weightedIndex(values)] }
}

/// Rates of the faults the simulator injects.
public struct FaultRates: Hashable, Sendable {
    /// Share of background task requests the system never launches.
    public var backgroundNeverRun: Double = 0.05
    /// Mean lateness of background launches after their earliest begin date, in minutes.
    public var backgroundMeanDelayMinutes: Double = 45
    /// Share of background launches whose expiration comes before the full budget.
    public var backgroundEarlyExpiration: Double = 0.05
    /// Probability per user and week that the user switches notifications off in Settings.
    public var permissionRevokedPerUserWeek: Double = 0.002
    /// Probability per traveller and day of a time-zone change.
    public var travelPerTravellerDay: Double = 0.2
}

/// Everything that defines a run. Command-line flags override the file's values.
public struct Scenario: Hashable, Sendable {
    public var name: String
    public var seed: UInt64
    /// Local midnight UTC of the first simulated day.
    public var start: LocalDate
    public var weeks: Int
    public var users: Int
    public var threads: Int
    public var timeZones: Weights
    public var personas: Weights
    public var quietHours: Weights
    public var hydration: Weights
    public var maxPerHour: Weights
    public var maxPerDay: Weights
    public var absenceResponse: Weights
    public var motivationalStyle: Weights
    public var privacyLevel: Weights
    public var disabledKinds: Weights
    /// The setting users choose for kudos: batched, daily or weekly digest, immediate, enabled.
    public var kudosSetting: Weights
    public var faults: FaultRates
    /// How the simulated AI coach answers: latency, slow, failing and malformed shares.
    public var coach: CoachBehaviour
    /// Share of users in the re-engagement control group (no nudges), for the lift figure.
    public var holdoutShare: Double

    public var startInstant: Instant { Instant(secondsSinceEpoch: start.daysSinceEpoch * .secondsPerDay) }
    public var endInstant: Instant { startInstant + Int64(weeks) * 7 * .secondsPerDay }
}

extension Scenario {
    /// Reads and validates a scenario file (JSON). Every key is checked: an unknown key, a
    /// wrong type, a bad time zone, a negative count or a malformed date is a `ScenarioError`.
    public static func load(path: String) throws(ScenarioError) -> Scenario {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ScenarioError(file: path, key: "(file)", problem: "cannot be read")
        }
        let object: Any
        do {
            object = try JSONSerialization.jsonObject(with: data)
        } catch {
            throw ScenarioError(file: path, key: "(file)", problem: "not valid JSON: \(error.localizedDescription)")
        }
        return try parse(object, file: path)
    }

    static let knownPersonas = Set(Persona.allCases.map(\.rawValue))
    static let topKeys: Set<String> = [
        "name", "seed", "start", "weeks", "users", "threads", "timeZones", "personas", "preferences", "faults",
        "description", "coach", "holdoutShare",
    ]
    static let preferenceKeys: Set<String> = [
        "quietHours", "hydration", "maxPerHour", "maxPerDay", "absenceResponse", "motivationalStyle", "privacyLevel",
        "disabledKinds", "kudosSetting",
    ]
    static let coachKeys: Set<String> = ["meanLatencyMillis", "slowShare", "failureShare", "malformedShare"]
    static let faultKeys: Set<String> = [
        "backgroundNeverRun", "backgroundMeanDelayMinutes", "backgroundEarlyExpiration",
        "permissionRevokedPerUserWeek", "travelPerTravellerDay",
    ]

    public static func parse(_ object: Any, file: String) throws(ScenarioError) -> Scenario {
        let reader = Reader(file: file)
        let top = try reader.dictionary(object, key: "(top level)", allowed: topKeys)
        let preferences = try reader.dictionary(
            top["preferences"] ?? [String: Any](), key: "preferences", allowed: preferenceKeys)
        let faultsObject = try reader.dictionary(top["faults"] ?? [String: Any](), key: "faults", allowed: faultKeys)

        let coachObject = try reader.dictionary(top["coach"] ?? [String: Any](), key: "coach", allowed: coachKeys)
        var coach = CoachBehaviour.reliable
        if let value = coachObject["meanLatencyMillis"] {
            coach.meanLatencyMillis = try reader.number(value, key: "coach.meanLatencyMillis", range: 1...60_000)
        }
        for (key, path) in [
            ("slowShare", \CoachBehaviour.slowShare), ("failureShare", \.failureShare),
            ("malformedShare", \.malformedShare),
        ] {
            if let value = coachObject[key] {
                coach[keyPath: path] = try reader.number(value, key: "coach.\(key)", range: 0...1)
            }
        }
        guard coach.slowShare + coach.failureShare + coach.malformedShare <= 1 else {
            throw reader.fail("coach", "slowShare + failureShare + malformedShare must not exceed 1")
        }
        var faults = FaultRates()
        func rate(_ key: String, _ keyPath: WritableKeyPath<FaultRates, Double>, max: Double = 1) throws(ScenarioError)
        {
            if let value = faultsObject[key] {
                faults[keyPath: keyPath] = try reader.number(value, key: "faults.\(key)", range: 0...max)
            }
        }
        try rate("backgroundNeverRun", \.backgroundNeverRun)
        try rate("backgroundMeanDelayMinutes", \.backgroundMeanDelayMinutes, max: 10_000)
        try rate("backgroundEarlyExpiration", \.backgroundEarlyExpiration)
        try rate("permissionRevokedPerUserWeek", \.permissionRevokedPerUserWeek)
        try rate("travelPerTravellerDay", \.travelPerTravellerDay)

        func weights(
            _ key: String, in source: [String: Any], path: String, default fallback: [(String, Double)],
            validate: (String) -> String?
        ) throws(ScenarioError) -> Weights {
            guard let value = source[key] else { return Weights(fallback) }
            return try reader.weights(value, key: path, validate: validate)
        }
        func oneOf(_ allowed: [String]) -> (String) -> String? {
            {
                allowed.contains($0)
                    ? nil : "unknown choice \"\($0)\"; expected one of \(allowed.joined(separator: ", "))"
            }
        }
        return Scenario(
            name: try reader.string(top["name"], key: "name"),
            seed: UInt64(try reader.integer(top["seed"] ?? 1, key: "seed", range: 0...Int.max)),
            start: try reader.date(top["start"], key: "start"),
            weeks: try reader.integer(top["weeks"] ?? 1, key: "weeks", range: 1...520),
            users: try reader.integer(top["users"] ?? 100, key: "users", range: 1...10_000_000),
            threads: try reader.integer(top["threads"] ?? 2, key: "threads", range: 1...64),
            timeZones: try weights("timeZones", in: top, path: "timeZones", default: [("UTC", 1)]) {
                ZoneRules.isValidIdentifier($0) ? nil : "unknown IANA time zone \"\($0)\""
            },
            personas: try weights(
                "personas", in: top, path: "personas", default: [("irregular", 1)],
                validate: oneOf(Persona.allCases.map(\.rawValue))),
            quietHours: try weights(
                "quietHours", in: preferences, path: "preferences.quietHours",
                default: [("none", 1)]
            ) { QuietHours.parseRange($0).error },
            hydration: try weights(
                "hydration", in: preferences, path: "preferences.hydration", default: [("off", 1)],
                validate: oneOf(["off"] + HydrationFrequency.allCases.map(\.rawValue))),
            maxPerHour: try weights(
                "maxPerHour", in: preferences, path: "preferences.maxPerHour",
                default: [("10", 1)]
            ) {
                Int($0).map { (1...60).contains($0) ? nil : "cap must be in 1...60, got \($0)" }
                    ?? "not a whole number: \"\($0)\""
            },
            maxPerDay: try weights(
                "maxPerDay", in: preferences, path: "preferences.maxPerDay",
                default: [("none", 1)]
            ) {
                $0 == "none"
                    ? nil
                    : Int($0).map { $0 >= 1 ? nil : "cap must be at least 1, got \($0)" }
                        ?? "not a whole number or \"none\": \"\($0)\""
            },
            absenceResponse: try weights(
                "absenceResponse", in: preferences, path: "preferences.absenceResponse",
                default: [("light_nudge", 1)], validate: oneOf(AbsenceResponse.allCases.map(\.rawValue))),
            motivationalStyle: try weights(
                "motivationalStyle", in: preferences, path: "preferences.motivationalStyle",
                default: [("encouraging", 1)], validate: oneOf(MotivationalStyle.allCases.map(\.rawValue))),
            privacyLevel: try weights(
                "privacyLevel", in: preferences, path: "preferences.privacyLevel",
                default: [("friendsOnly", 1)], validate: oneOf(PrivacyLevel.allCases.map(\.rawValue))),
            disabledKinds: try weights(
                "disabledKinds", in: preferences, path: "preferences.disabledKinds",
                default: [("none", 1)], validate: oneOf(["none"] + NotificationKind.allCases.map(\.rawValue))),
            kudosSetting: try weights(
                "kudosSetting", in: preferences, path: "preferences.kudosSetting", default: [("batched", 1)],
                validate: oneOf(NotificationSetting.allCases.map(\.rawValue))),
            faults: faults, coach: coach,
            holdoutShare: try reader.number(top["holdoutShare"] ?? 0.1, key: "holdoutShare", range: 0...1))
    }
}

extension QuietHours {
    /// Parses `none` or `HH:MM-HH:MM`, optionally followed by `@` and weekdays (`@sat,sun`).
    static func parseRange(_ text: String) -> (value: QuietHours?, error: String?) {
        if text == "none" { return (nil, nil) }
        let parts = text.split(separator: "@", maxSplits: 1)
        let times = parts[0].split(separator: "-")
        guard times.count == 2, let start = LocalTimeOfDay(String(times[0])), let end = LocalTimeOfDay(String(times[1]))
        else { return (nil, "expected \"none\" or \"HH:MM-HH:MM[@mon,tue,...]\", got \"\(text)\"") }
        var weekdays: Set<Weekday> = []
        if parts.count == 2 {
            let names = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"]
            for name in parts[1].split(separator: ",") {
                guard let index = names.firstIndex(of: String(name)) else {
                    return (nil, "unknown weekday \"\(name)\" in \"\(text)\"; use sun, mon, ..., sat")
                }
                weekdays.insert(Weekday(rawValue: index + 1)!)
            }
        }
        do {
            return (try QuietHours(start: start, end: end, weekdays: weekdays), nil)
        } catch {
            return (nil, "start equals end in \"\(text)\"; use \"none\" for no quiet hours")
        }
    }
}

/// Typed reads from JSON values, each failing with the key path and the problem.
struct Reader {
    var file: String

    func fail(_ key: String, _ problem: String) -> ScenarioError {
        ScenarioError(file: file, key: key, problem: problem)
    }

    func dictionary(_ value: Any, key: String, allowed: Set<String>) throws(ScenarioError) -> [String: Any] {
        guard let dictionary = value as? [String: Any] else { throw fail(key, "expected an object") }
        if let unknown = dictionary.keys.sorted().first(where: { !allowed.contains($0) }) {
            let prefix = key == "(top level)" ? "" : key + "."
            throw fail(prefix + unknown, "unknown key; expected one of \(allowed.sorted().joined(separator: ", "))")
        }
        return dictionary
    }

    func string(_ value: Any?, key: String) throws(ScenarioError) -> String {
        guard let value else { throw fail(key, "missing required key") }
        guard let text = value as? String, !text.isEmpty else { throw fail(key, "expected a non-empty string") }
        return text
    }

    func integer(_ value: Any, key: String, range: ClosedRange<Int>) throws(ScenarioError) -> Int {
        guard let number = Reader.numeric(value), number.doubleValue == number.doubleValue.rounded()
        else { throw fail(key, "expected a whole number, got \(value)") }
        let integer = number.intValue
        guard range.contains(integer) else {
            let bound =
                range.upperBound == Int.max
                ? "at least \(range.lowerBound)" : "in \(range.lowerBound)...\(range.upperBound)"
            throw fail(key, "must be \(bound), got \(integer)")
        }
        return integer
    }

    func number(_ value: Any, key: String, range: ClosedRange<Double>) throws(ScenarioError) -> Double {
        guard let number = Reader.numeric(value) else { throw fail(key, "expected a number, got \(value)") }
        guard range.contains(number.doubleValue) else {
            throw fail(key, "must be in \(range.lowerBound)...\(range.upperBound), got \(number.doubleValue)")
        }
        return number.doubleValue
    }

    /// A JSON number, but not a boolean (which Foundation also bridges to NSNumber).
    static func numeric(_ value: Any) -> NSNumber? {
        guard type(of: value) != Bool.self, let number = value as? NSNumber else { return nil }
        return String(cString: number.objCType) == "c" ? nil : number
    }

    func date(_ value: Any?, key: String) throws(ScenarioError) -> LocalDate {
        let text = try string(value, key: key)
        guard text.count == 10, let parsed = LocalDateTime.parseWithOffset(text) else {
            throw fail(key, "expected a date YYYY-MM-DD, got \"\(text)\"")
        }
        return parsed.local.date
    }

    func weights(_ value: Any, key: String, validate: (String) -> String?) throws(ScenarioError) -> Weights {
        guard let dictionary = value as? [String: Any], !dictionary.isEmpty else {
            throw fail(key, "expected a non-empty object of choice: weight")
        }
        var pairs: [(String, Double)] = []
        for name in dictionary.keys.sorted() {
            if let problem = validate(name) { throw fail("\(key).\(name)", problem) }
            pairs.append((name, try number(dictionary[name]!, key: "\(key).\(name)", range: 0...1e9)))
        }
        guard pairs.contains(where: { $0.1 > 0 }) else { throw fail(key, "all weights are zero") }
        return Weights(pairs)
    }
}
