public import Content
import Foundation
import Models

/// "Why didn't I get my reminder?": one user's timeline in their local time, every decision
/// with the rule that made it. Users are independent, so the user is simulated alone and the
/// timeline is exactly the one of the full run with the same seed.
public enum Explainer {
    public enum Failure: Error, CustomStringConvertible {
        case unknownUser(String, users: Int)
        public var description: String {
            switch self {
            case .unknownUser(let id, let users):
                "no user \"\(id)\" in this scenario (ids run from \(Population.userID(0)) to \(Population.userID(users - 1)))"
            }
        }
    }

    /// The timeline of `userID` as lines of text.
    public static func timeline(of userID: String, scenario: Scenario, templates: TemplateCatalog) throws -> [String] {
        guard userID.hasPrefix("u"), let index = Int(userID.dropFirst()), index >= 0, index < scenario.users else {
            throw Failure.unknownUser(userID, users: scenario.users)
        }
        var zones: [String: ZoneRules] = [:]
        for name in scenario.timeZones.names + ["UTC"] {
            zones[name] = name == "UTC" ? .utc : ZoneRules(identifier: name)
        }
        let path = NSTemporaryDirectory() + "explain-\(userID)-\(getpid()).jsonl"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let shard = try Shard(
            scenario: scenario, zones: zones, userRange: index..<(index + 1), eventsPath: path, showProgress: false,
            templates: templates)
        try shard.run()
        let traits = Population.traits(index: index, scenario: scenario)
        let preferences = traits.profile.preferences
        var lines = [
            "user \(userID): persona \(traits.persona.rawValue), zone \(traits.profile.timeZone), "
                + "absence response \(traits.profile.communication.absenceResponse.rawValue)",
            "quiet hours \(preferences.quietHours.map { "\($0.start)-\($0.end)" } ?? "none"), "
                + "max \(preferences.maxPerHour)/hour, \(preferences.maxPerDay.map { "\($0)/day" } ?? "no daily cap"), "
                + "disabled: \(preferences.disabledKinds.map(\.rawValue).joined(separator: ", ").nonEmpty ?? "none")",
        ]
        let text = try String(contentsOfFile: path, encoding: .utf8)
        var day = ""
        for line in text.split(separator: "\n") {
            guard let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                let local = object["local"] as? String, let event = object["event"] as? String
            else { continue }
            let date = String(local.prefix(10))
            if date != day {
                day = date
                lines.append("")
                lines.append("== \(date)")
            }
            lines.append(describe(event: event, object: object, local: local))
        }
        return lines
    }

    static func describe(event: String, object: [String: Any], local: String) -> String {
        let time = String(local.dropFirst(11))
        let kind = object["kind"] as? String ?? ""
        let id = object["id"] as? String ?? ""
        let reason = object["reason"] as? String
        let detail = (object["detail"] as? String).map { " (\($0))" } ?? ""
        let fireAt = (object["fireAt"] as? String).map { " for \($0.replacingOccurrences(of: "T", with: " "))" } ?? ""
        // The slot's nominal time, when the occurrence fires at another.
        let nominal =
            (object["nominal"] as? String).map { " instead of \($0.replacingOccurrences(of: "T", with: " "))" } ?? ""
        let what: String
        switch event {
        case "scheduled":
            let why = reason.map { $0 == "onTime" ? "" : " because \($0)\(detail)" } ?? ""
            what = "scheduled \(id)\(fireAt)\(nominal)\(why)"
        case "deferred": what = "deferred \(id)\(fireAt)\(nominal) because \(reason ?? "?")\(detail)"
        case "copyChosen":
            let copy = reason == "coachCopy" ? "the coach's copy" : "the template's copy"
            what = "copy of \(id): \(copy)\(detail)"
        case "dropped": what = "dropped \(id) because \(reason ?? "?")\(detail)"
        case "suppressed": what = "suppressed \(id) because \(reason ?? "?")\(detail)"
        case "cancelled": what = "cancelled \(id) because \(reason ?? "?")\(detail)"
        case "folded":
            what = "folded \(kind) \(id) into \(object["group"] as? String ?? "?") because \(reason ?? "?")\(detail)"
        case "delivered": what = "DELIVERED \(id)" + ((object["presentation"] as? String).map { " (\($0))" } ?? "")
        case "response": what = "responded \(object["action"] as? String ?? "?") to \(id)"
        case "activity": what = "did \(object["activity"] as? String ?? "?")"
        case "travel": what = "travelled to \(object["timeZone"] as? String ?? "?")"
        case "violation": what = "VIOLATION \(object["invariant"] as? String ?? "?")"
        case "unavoidable":
            what =
                "UNAVOIDABLE \(object["invariant"] as? String ?? "?") of \(id) (\(object["cause"] as? String ?? "?"))"
        case "staleFire": what = "stale fire of \(id) (\(object["cause"] as? String ?? "?"))"
        default: what = "\(event) \(kind) \(id)".trimmingCharacters(in: .whitespaces)
        }
        return "  \(time)  \(what)"
    }
}

extension String {
    var nonEmpty: String? { isEmpty ? nil : self }
}
