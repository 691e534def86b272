import Foundation
import Models

/// Every setting of `engaged serve` and `engaged worker` from three places, in this order: the
/// command line (`--rate-limit-user 10/30`), the environment (`ENGAGED_RATE_LIMIT_USER=10/30`),
/// and a JSON file named by `--config FILE` or `ENGAGED_CONFIG` (`{"rate-limit-user": "10/30"}`).
/// One name per setting in all three; a setting found in the environment or the file becomes
/// its flag, so `ArgumentParser` checks every value the same way, whatever its source.
///
/// The file is strict: a flat JSON object whose keys are settings (of any subcommand: one file
/// serves `serve`, `worker` and `migrate`, each taking its own) and whose
/// values are strings, whole numbers or booleans (a flag's `true` sets it, `false` leaves it
/// off). An unknown key, a nested value or a key given twice is an error (exit 78), never
/// ignored: a misspelt setting must not become a silent default. (swift-configuration's readers
/// answer nil for a value of another type and ignore keys nobody asks for, which is exactly the
/// silence this avoids.) Secrets (`ENGAGED_API_KEY`, `ENGAGED_USER_TOKEN_KEYS`, ...) come from
/// the environment only.
enum SettingSources {
    /// A setting: its flag's name without dashes, and whether it is a flag without a value.
    struct Setting: Hashable, Sendable {
        var name: String
        var isFlag = false

        /// `ENGAGED_RATE_LIMIT_USER` for `rate-limit-user`.
        var environmentName: String {
            "ENGAGED_" + name.uppercased().replacingOccurrences(of: "-", with: "_")
        }
    }

    /// What could not be read, with where it came from.
    struct Failure: Error, Equatable, CustomStringConvertible {
        var source: String
        var problem: String
        var description: String { "\(source): \(problem)" }
    }

    /// The options `--help` lists; hidden ones (for tests: `--apns-ca-file`, `--scaled-clock`,
    /// `--stats-file`) come from the command line only.
    static let apns = ["apns-url", "apns-key-file", "apns-key-id", "apns-team-id", "apns-topic"].map {
        Setting(name: $0)
    }

    static let settings: [String: [Setting]] = [
        "serve": [
            "data-dir", "database", "port", "host", "idle-timeout-seconds", "body-timeout-seconds", "log-format",
            "max-connections", "rate-limit-api-key", "rate-limit-user", "rate-limit-address", "failed-auth-cost",
            "user-token-ttl-seconds", "manual-clock", "coach-url", "coach-model", "max-connections-per-address",
            "header-timeout-seconds", "metrics-host", "metrics-port", "social-id-retention-hours",
        ].map { Setting(name: $0) } + [Setting(name: "legacy-user-tokens", isFlag: true)] + apns,
        "worker": [
            "database", "log-format", "worker-id", "lease-seconds", "batch-users", "idle-milliseconds",
            "quiet-guard-seconds", "done-retention-hours",
        ].map { Setting(name: $0) } + apns,
        "migrate": ["data-dir", "database"].map { Setting(name: $0) },
    ]

    /// `arguments` (without the program's name) with every setting of its subcommand that the
    /// command line leaves out taken from the environment, else from the file; `origins` says,
    /// for each setting added, where it came from. Other subcommands pass through unchanged.
    static func resolve(_ arguments: [String], environment: [String: String]) throws(Failure) -> (
        arguments: [String], origins: [String]
    ) {
        guard let subcommand = arguments.first, let known = settings[subcommand] else { return (arguments, []) }
        let given = Set(
            arguments.dropFirst().compactMap { argument -> String? in
                guard argument.hasPrefix("--") else { return nil }
                return String(argument.dropFirst(2).prefix { $0 != "=" })
            })
        let file = try configFile(arguments, environment: environment, known: known)
        var resolved = arguments
        var origins: [String] = []
        for setting in known where !given.contains(setting.name) {
            let value: String
            let origin: String
            if let fromEnvironment = environment[setting.environmentName], !fromEnvironment.isEmpty {
                (value, origin) = (fromEnvironment, setting.environmentName)
            } else if let fromFile = file?.values[setting.name] {
                (value, origin) = (fromFile, "\(file?.path ?? ""), key \(setting.name)")
            } else {
                continue
            }
            if setting.isFlag {
                guard let on = Self.boolean(value) else {
                    throw Failure(source: origin, problem: "\(setting.name) is true or false, got \"\(value)\"")
                }
                if on { resolved.append("--\(setting.name)") }
            } else {
                resolved += ["--\(setting.name)", value]
            }
            origins.append("--\(setting.name) from \(origin)")
        }
        return (resolved, origins)
    }

    private static func boolean(_ text: String) -> Bool? {
        switch text.lowercased() {
        case "true", "1", "yes": true
        case "false", "0", "no": false
        default: nil
        }
    }

    /// The file of `--config` (or `--config=`), else of `ENGAGED_CONFIG`, read strictly.
    private static func configFile(_ arguments: [String], environment: [String: String], known: [Setting])
        throws(Failure) -> (path: String, values: [String: String])?
    {
        var path = environment["ENGAGED_CONFIG"].flatMap { $0.isEmpty ? nil : $0 }
        for (index, argument) in arguments.enumerated() {
            if argument == "--config", index + 1 < arguments.count { path = arguments[index + 1] }
            if argument.hasPrefix("--config=") { path = String(argument.dropFirst("--config=".count)) }
        }
        guard let path else { return nil }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw Failure(source: path, problem: "cannot be read")
        }
        do {
            try JSONScanner.check(Array(data))
        } catch {
            let position = "line \(error.line), column \(error.column)"
            switch error.kind {
            case .duplicateKey(let key, _):
                throw Failure(source: path, problem: "the key \"\(key)\" is given twice (\(position))")
            case .tooDeep: throw Failure(source: path, problem: "not a flat JSON object of settings")
            case .trailingComma, .malformed:
                throw Failure(source: path, problem: "not valid JSON: \(error.problem) (\(position))")
            }
        }
        guard let object = try? JSONDecoder().decode([String: FileValue].self, from: data) else {
            throw Failure(
                source: path, problem: "not a JSON object of settings (strings, whole numbers or booleans)")
        }
        // One file may serve every subcommand: a key of another one is left to it; a key of none
        // is a mistake.
        let names = Set(known.map(\.name))
        let everyName = Set(settings.values.joined().map(\.name))
        var values: [String: String] = [:]
        for (key, value) in object {
            guard everyName.contains(key) else {
                throw Failure(
                    source: path,
                    problem: "\"\(key)\" is not a setting of engaged; settings: "
                        + everyName.sorted().joined(separator: ", "))
            }
            if names.contains(key) { values[key] = value.text }
        }
        return (path, values)
    }
}

/// A value of the settings file: a string, a whole number or a boolean, as its flag's text.
private struct FileValue: Decodable {
    var text: String

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let flag = try? container.decode(Bool.self) {
            text = flag ? "true" : "false"
        } else if let number = try? container.decode(Int64.self) {
            text = String(number)
        } else {
            text = try container.decode(String.self)
        }
    }
}
