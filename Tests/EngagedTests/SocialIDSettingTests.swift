import ArgumentParser
import Foundation
import Storage
import Testing

@testable import engaged

@Suite("engaged serve: how long social ids are remembered")
struct SocialIDSettingTests {
    @Test(
        arguments: [
            ([], [:], SocialEventRecord.defaultRetentionSeconds / 3_600),
            (["--social-id-retention-hours", "24"], [:], 24),
            ([], ["ENGAGED_SOCIAL_ID_RETENTION_HOURS": "720"], 720),
        ] as [([String], [String: String], Int64)])
    func theWindowComesFromTheFlagOrTheEnvironmentAndIsAWeekByDefault(
        flags: [String], environment: [String: String], hours: Int64
    ) throws {
        let resolved = try SettingSources.resolve(
            ["serve", "--data-dir", "d", "--port", "0"] + flags, environment: environment)
        let serve = try #require(try Engaged.parseAsRoot(resolved.arguments) as? Serve)
        #expect(Int64(serve.socialIDRetentionHours) == hours)
    }

    @Test(arguments: ["0", "8761"])
    func aWindowOutOfRangeIsRefusedNamingTheFlag(hours: String) {
        #expect {
            try Engaged.parseAsRoot(["serve", "--data-dir", "d", "--port", "0", "--social-id-retention-hours", hours])
        } throws: { error in
            Engaged.message(for: error).contains("--social-id-retention-hours must be in 1...8760")
        }
    }
}
