import ArgumentParser
import Foundation
import Testing

@testable import engaged

@Suite("engaged settings: flags, then the environment, then a file")
struct SettingSourcesTests {
    static func file(_ json: String) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("engaged-\(UUID().uuidString).json")
            .path
        try Data(json.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test func theCommandLineWinsThenTheEnvironmentThenTheFile() throws {
        let path = try Self.file(
            #"{"rate-limit-user": "1/1", "max-connections": 7, "port": 9, "legacy-user-tokens": true}"#)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let resolved = try SettingSources.resolve(
            ["serve", "--port", "0", "--data-dir", "d", "--config", path],
            environment: ["ENGAGED_RATE_LIMIT_USER": "2/2", "ENGAGED_HOST": "0.0.0.0", "ENGAGED_API_KEY": "secret"])
        let serve = try #require(try Engaged.parseAsRoot(resolved.arguments) as? Serve)
        #expect(serve.port == 0)  // the flag
        #expect(serve.host == "0.0.0.0")  // the environment
        #expect(serve.rateLimitUser == RateLimit("2/2"))  // the environment over the file
        #expect(serve.maxConnections == 7)  // the file
        #expect(serve.legacyUserTokens)
        #expect(resolved.origins.contains("--host from ENGAGED_HOST"))
        #expect(resolved.origins.contains("--max-connections from \(path), key max-connections"))
        #expect(!resolved.arguments.contains("secret"))
    }

    @Test func oneFileServesEverySubcommandEachTakingItsOwn() throws {
        let path = try Self.file(#"{"port": 9, "lease-seconds": 30, "database": "postgres://u@h/d"}"#)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let worker = try SettingSources.resolve(["worker", "--config", path], environment: [:])
        #expect(worker.arguments.contains("--lease-seconds") && !worker.arguments.contains("--port"))
        let migrate = try SettingSources.resolve(["migrate"], environment: ["ENGAGED_CONFIG": path])
        #expect(migrate.arguments == ["migrate", "--database", "postgres://u@h/d"])
    }

    @Test func aValueFromTheEnvironmentIsCheckedAsItsFlagIs() throws {
        let resolved = try SettingSources.resolve(
            ["serve", "--port", "0", "--data-dir", "d"], environment: ["ENGAGED_RATE_LIMIT_USER": "10/5"])
        #expect(throws: (any Error).self) { try Engaged.parseAsRoot(resolved.arguments) }
        #expect(resolved.origins == ["--rate-limit-user from ENGAGED_RATE_LIMIT_USER"])
    }

    @Test(arguments: [
        (#"{"rate-limit-users": "1/1"}"#, "is not a setting of engaged"),
        (#"{"port": 1, "port": 2}"#, "given twice"),
        (#"{"port": {"value": 1}}"#, "not a JSON object of settings"),
        (#"{"port": 1.5}"#, "not a JSON object of settings"),
        (#"["port"]"#, "not a JSON object of settings"),
        (#"{"port": 1,}"#, "comma"),
        (#"{"legacy-user-tokens": "maybe"}"#, "true or false"),
    ])
    func aFileThatCannotBeUsedIsRefusedNamingWhy(json: String, problem: String) throws {
        let path = try Self.file(json)
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect {
            _ = try SettingSources.resolve(["serve", "--config=\(path)"], environment: [:])
        } throws: { error in
            "\(error)".contains(problem) && "\(error)".contains(path)
        }
    }

    @Test func aMissingFileIsRefusedAndOtherCommandsPassThrough() throws {
        #expect(throws: SettingSources.Failure.self) {
            try SettingSources.resolve(["worker"], environment: ["ENGAGED_CONFIG": "/nonexistent/engaged.json"])
        }
        let backup = ["backup", "--data-dir", "d", "--to", "f"]
        #expect(try SettingSources.resolve(backup, environment: ["ENGAGED_PORT": "1"]).arguments == backup)
        // migrate reads the database from the environment, as compose passes it.
        let migrate = try SettingSources.resolve(["migrate"], environment: ["ENGAGED_DATABASE": "postgres://u@h/d"])
        #expect(migrate.arguments == ["migrate", "--database", "postgres://u@h/d"])
    }

    /// Every option `--help` lists has its setting, and no setting lacks its option.
    @Test(arguments: [
        ("serve", Serve.self as any ParsableCommand.Type), ("worker", Worker.self), ("migrate", Migrate.self),
    ])
    func theSettingsAreTheOptionsOfHelp(subcommand: String, command: any ParsableCommand.Type) throws {
        let help = Engaged.helpMessage(for: command, columns: 400)
        let regex = try Regex("--([a-z0-9-]+)")
        let options = Set(help.matches(of: regex).map { String(help[$0.range].dropFirst(2)) })
            .subtracting(["help", "config"])
        let settings = Set(try #require(SettingSources.settings[subcommand]).map(\.name))
        #expect(
            options == settings,
            "only in help: \(options.subtracting(settings)); only settings: \(settings.subtracting(options))")
    }
}
