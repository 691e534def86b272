public import Content
public import Delivery
import Foundation
public import Models
public import SimulatedPlatform

/// A bad scenario file: which file, which key, what is wrong, and where when the file's text
/// shows it (1-based line and column). Exit status 65.
public struct ScenarioError: Error, CustomStringConvertible, Equatable {
    public var file: String
    public var key: String
    public var problem: String
    public var line: Int?
    public var column: Int?

    public init(file: String, key: String, problem: String, line: Int? = nil, column: Int? = nil) {
        self.file = file
        self.key = key
        self.problem = problem
        self.line = line
        self.column = column
    }

    public var description: String {
        let position = line.map { ":\($0):\(column ?? 1)" } ?? ""
        return "\(file)\(position): \(key): \(problem)"
    }
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
    /// Apple's push service: outages, 429 bursts, latency, how late a 410 comes (all off by default).
    public var apns = APNsConditions()
    /// Probability per user and day that the device is offline for a while (mean length in hours):
    /// APNs keeps only the latest push for it meanwhile.
    public var deviceOfflinePerUserDay: Double = 0
    public var deviceOfflineMeanHours: Double = 4
    /// Share of churning users who delete the app (their token then gets 410s).
    public var uninstallOnChurn: Double = 0
    /// Probability per user and day that the system kills the app: its engine is restored from
    /// its stored snapshot, the device's pending list survives (as iOS keeps it).
    public var appKilledPerUserDay: Double = 0
    /// Share of those relaunches that follow an app update: the snapshot read back was written
    /// by the previous version of the app (`EngineSnapshot.version - 1`).
    public var upgradeShareOfRelaunches: Double = 0
    /// Probability that a store transaction fails. Per engine step, the runtime's commit of its
    /// result: the step is rolled back (the engine restored from its snapshot before the step)
    /// and retried, and the retry must decide the same. Per batch of the history written through
    /// `--store`: refused before or after it was written (the answer lost), and retried. At most
    /// 0.5: a store that fails more often than it works is an outage, not a fault to retry through.
    public var storeWriteFailure: Double = 0
    /// Probability per user and day that the device's clock drifts 1 to 300 seconds off either
    /// way and the network time corrects it some hours later (exponential, mean 6 h, at least
    /// 10 minutes): two jumps (`DeviceClock`).
    public var clockCorrectionPerUserDay: Double = 0
    /// Probability per user and week that the user sets the device's clock 1 to 12 hours off by
    /// hand; the network time puts it right after about 12 hours (exponential, at least 1).
    public var clockSetByUserPerUserWeek: Double = 0
    /// Stalls of the server's dispatch per week, each `serverStallMinutes` long: the server takes
    /// inputs and answers pulls, but performs no due row until the stall ends (a deploy, a
    /// database failover, a loop that fell behind), and then claims its backlog late, by the
    /// claim-time rules (`OutboxClaim`). The same windows for every user.
    public var serverStallsPerWeek: Double = 0
    public var serverStallMinutes: Double = 10
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
    /// The engine's attention budget and its holdout (`attentionBudget`; see `AttentionSettings`).
    public var attention = AttentionSettings()
    /// How users tire of notifications (`fatigue`; see `FatigueModel`).
    public var fatigue = FatigueModel()
    /// The users' languages (`locales`; see `Scenario.parseLocales`).
    public var locales = Weights([(UserProfile.defaultLocale, 1)])
    /// The longest drain after the last week, in days (`Shard.drain`; 8 by default, so a weekly
    /// digest due at most a week after its first item is drained); 0: no drain phase.
    public var drainDays = 8
    /// Where the engine runs (`deployment`; see `Deployment`).
    public var deployment = Deployment.server

    public var startInstant: Instant { Instant(secondsSinceEpoch: start.daysSinceEpoch * .secondsPerDay) }
    public var endInstant: Instant { startInstant + Int64(weeks) * 7 * .secondsPerDay }
}

extension Scenario {
    /// Reads and validates a scenario file (JSON). Every key is checked: malformed JSON (with its
    /// line and column), a duplicate key, an unknown key, a wrong type, a number out of its range, a
    /// bad time zone or a malformed date is a `ScenarioError`.
    public static func load(path: String) throws(ScenarioError) -> Scenario {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ScenarioError(
                file: path, key: "(file)", problem: "cannot be read (missing, a folder, or no permission)")
        }
        return try parse(json: Array(data), file: path)
    }

    /// Parses a scenario from the UTF-8 text of a file named `file` (for messages).
    public static func parse(json bytes: [UInt8], file: String) throws(ScenarioError) -> Scenario {
        let document: JSONNode
        do {
            document = try JSONScanner.parse(bytes)
        } catch {
            if case .duplicateKey = error.kind {
                throw ScenarioError(
                    file: file, key: error.path, problem: error.problem, line: error.line, column: error.column)
            }
            throw ScenarioError(
                file: file, key: "(file)", problem: "not valid JSON: \(error.problem)", line: error.line,
                column: error.column)
        }
        return try parse(document, file: file)
    }

    /// Parses a scenario from JSON values as JSONSerialization makes them (tests build these).
    public static func parse(_ object: Any, file: String) throws(ScenarioError) -> Scenario {
        guard JSONSerialization.isValidJSONObject(object),
            let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        else { throw ScenarioError(file: file, key: "(top level)", problem: "not representable as JSON") }
        return try parse(json: Array(data), file: file)
    }

    static let knownPersonas = Set(Persona.allCases.map(\.rawValue))
    static let topKeys: Set<String> = [
        "name", "seed", "start", "weeks", "users", "threads", "timeZones", "personas", "preferences", "faults",
        "description", "coach", "holdoutShare", "attentionBudget", "fatigue", "locales", "drainDays",
        "deployment",
    ]
    static let preferenceKeys: Set<String> = [
        "quietHours", "hydration", "maxPerHour", "maxPerDay", "absenceResponse", "motivationalStyle", "privacyLevel",
        "disabledKinds", "kudosSetting",
    ]
    static let coachKeys: Set<String> = ["meanLatencyMillis", "slowShare", "failureShare", "malformedShare"]
    static let faultKeys: Set<String> = [
        "backgroundNeverRun", "backgroundMeanDelayMinutes", "backgroundEarlyExpiration",
        "permissionRevokedPerUserWeek", "travelPerTravellerDay", "apnsOutagesPerWeek", "apnsOutageMinutes",
        "apnsTooManyRequestsBurstsPerWeek", "apnsTooManyRequestsShare", "apnsLatencySeconds",
        "apnsUnregisteredAfterHours", "deviceOfflinePerUserDay", "deviceOfflineMeanHours", "uninstallOnChurn",
        "appKilledPerUserDay", "upgradeShareOfRelaunches", "storeWriteFailure", "clockCorrectionPerUserDay",
        "clockSetByUserPerUserWeek", "serverStallsPerWeek", "serverStallMinutes",
    ]

    static func parse(_ document: JSONNode, file: String) throws(ScenarioError) -> Scenario {
        let reader = Reader(file: file)
        let top = try reader.dictionary(document, key: "(top level)", allowed: topKeys)
        let preferences = try reader.dictionary(top["preferences"], key: "preferences", allowed: preferenceKeys)
        let faultsObject = try reader.dictionary(top["faults"], key: "faults", allowed: faultKeys)
        _ = try reader.text(top["description"], key: "description")

        let coachObject = try reader.dictionary(top["coach"], key: "coach", allowed: coachKeys)
        var coach = CoachBehaviour.reliable
        if let node = coachObject["meanLatencyMillis"] {
            coach.meanLatencyMillis = try reader.number(node, key: "coach.meanLatencyMillis", range: 1...60_000)
        }
        for (key, path) in [
            ("slowShare", \CoachBehaviour.slowShare), ("failureShare", \.failureShare),
            ("malformedShare", \.malformedShare),
        ] {
            if let node = coachObject[key] {
                coach[keyPath: path] = try reader.number(node, key: "coach.\(key)", range: 0...1)
            }
        }
        guard coach.slowShare + coach.failureShare + coach.malformedShare <= 1 else {
            throw reader.fail("coach", top["coach"], "slowShare + failureShare + malformedShare must not exceed 1")
        }
        var faults = FaultRates()
        func rate(_ key: String, _ keyPath: WritableKeyPath<FaultRates, Double>, max: Double = 1) throws(ScenarioError)
        {
            if let node = faultsObject[key] {
                faults[keyPath: keyPath] = try reader.number(node, key: "faults.\(key)", range: 0...max)
            }
        }
        try rate("backgroundNeverRun", \.backgroundNeverRun)
        try rate("backgroundMeanDelayMinutes", \.backgroundMeanDelayMinutes, max: 10_000)
        try rate("backgroundEarlyExpiration", \.backgroundEarlyExpiration)
        try rate("permissionRevokedPerUserWeek", \.permissionRevokedPerUserWeek)
        try rate("travelPerTravellerDay", \.travelPerTravellerDay)
        try rate("apnsOutagesPerWeek", \.apns.outagesPerWeek, max: 168)
        try rate("apnsOutageMinutes", \.apns.outageMinutes, max: 1_440)
        try rate("apnsTooManyRequestsBurstsPerWeek", \.apns.tooManyRequestsBurstsPerWeek, max: 168)
        try rate("apnsTooManyRequestsShare", \.apns.tooManyRequestsShare)
        try rate("apnsLatencySeconds", \.apns.meanLatencySeconds, max: 3_600)
        try rate("apnsUnregisteredAfterHours", \.apns.unregisteredAfterHours, max: 720)
        try rate("deviceOfflinePerUserDay", \.deviceOfflinePerUserDay)
        try rate("deviceOfflineMeanHours", \.deviceOfflineMeanHours, max: 240)
        try rate("uninstallOnChurn", \.uninstallOnChurn)
        try rate("appKilledPerUserDay", \.appKilledPerUserDay)
        try rate("upgradeShareOfRelaunches", \.upgradeShareOfRelaunches)
        try rate("storeWriteFailure", \.storeWriteFailure, max: 0.5)
        try rate("clockCorrectionPerUserDay", \.clockCorrectionPerUserDay)
        try rate("clockSetByUserPerUserWeek", \.clockSetByUserPerUserWeek)
        try rate("serverStallsPerWeek", \.serverStallsPerWeek, max: 168)
        try rate("serverStallMinutes", \.serverStallMinutes, max: 1_440)

        func weights(
            _ key: String, in source: [String: JSONNode], path: String, default fallback: [(String, Double)],
            validate: (String) -> String?
        ) throws(ScenarioError) -> Weights {
            guard let node = source[key] else { return Weights(fallback) }
            return try reader.weights(node, key: path, validate: validate)
        }
        func oneOf(_ allowed: [String]) -> (String) -> String? {
            {
                allowed.contains($0)
                    ? nil : "unknown choice \"\($0)\"; expected one of \(allowed.joined(separator: ", "))"
            }
        }
        var scenario = Scenario(
            name: try reader.string(top["name"], key: "name"),
            seed: try top["seed"].map { node throws(ScenarioError) in try reader.unsigned(node, key: "seed") } ?? 1,
            start: try reader.date(top["start"], key: "start"),
            weeks: try reader.integer(top["weeks"], key: "weeks", range: ScenarioLimits.weeks, default: 1),
            users: try reader.integer(top["users"], key: "users", range: ScenarioLimits.users, default: 100),
            threads: try reader.integer(top["threads"], key: "threads", range: ScenarioLimits.threads, default: 2),
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
                capProblem($0, range: ScenarioLimits.maxPerHour)
            },
            maxPerDay: try weights(
                "maxPerDay", in: preferences, path: "preferences.maxPerDay",
                default: [("none", 1)]
            ) {
                $0 == "none" ? nil : capProblem($0, range: ScenarioLimits.maxPerDay, orNone: true)
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
            holdoutShare: try top["holdoutShare"].map { node throws(ScenarioError) in
                try reader.number(node, key: "holdoutShare", range: 0...1)
            } ?? 0.1)
        scenario.attention = try AttentionSettings.parse(top["attentionBudget"], reader: reader)
        scenario.fatigue = try FatigueModel.parse(top["fatigue"], reader: reader)
        scenario.locales = try parseLocales(top["locales"], reader: reader)
        if let node = top["drainDays"] {
            scenario.drainDays = Int(try reader.number(node, key: "drainDays", range: 0...14).rounded(.down))
        }
        if let node = top["deployment"] {
            let name = try reader.string(node, key: "deployment")
            guard let deployment = Deployment(rawValue: name) else {
                throw reader.fail("deployment", node, Deployment.problem(name))
            }
            scenario.deployment = deployment
        }
        return scenario
    }

    /// Why a cap written as a choice name (`"10"`) is not a whole number in `range`; nil when it is.
    static func capProblem(_ text: String, range: ClosedRange<Int>, orNone: Bool = false) -> String? {
        let bounds = "\(range.lowerBound)...\(range.upperBound)"
        guard !text.isEmpty, text.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else {
            return "expected \(orNone ? "\"none\" or " : "")a whole number in \(bounds), got \"\(text)\""
        }
        guard let cap = Int(text), range.contains(cap) else { return "cap must be in \(bounds), got \"\(text)\"" }
        return nil
    }
}

extension QuietHours {
    /// Parses `none` or `HH:MM-HH:MM`, optionally followed by `@` and weekdays (`@sat,sun`).
    static func parseRange(_ text: String) -> (value: QuietHours?, error: String?) {
        if text == "none" { return (nil, nil) }
        let parts = text.split(separator: "@", maxSplits: 1, omittingEmptySubsequences: false)
        let times = parts[0].split(separator: "-", omittingEmptySubsequences: false)
        guard times.count == 2, let start = LocalTimeOfDay(String(times[0])), let end = LocalTimeOfDay(String(times[1]))
        else { return (nil, "expected \"none\" or \"HH:MM-HH:MM[@mon,tue,...]\", got \"\(text)\"") }
        var weekdays: Set<Weekday> = []
        if parts.count == 2 {
            let names = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"]
            guard !parts[1].isEmpty else {
                return (nil, "no weekdays after \"@\" in \"\(text)\"; list them (\"@sat,sun\") or drop the \"@\"")
            }
            for name in parts[1].split(separator: ",", omittingEmptySubsequences: false) {
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
