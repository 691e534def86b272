import ArgumentParser
import Foundation
import Models
import Testing

@testable import engaged

/// `engaged worker` and `engaged serve --database`: what they accept and what they refuse (64).
@Suite("engaged worker and serve --database: usage")
struct WorkerCommandTests {
    static let database = ["--database", "postgres://engaged@127.0.0.1:5432/engaged"]

    func exitCode(_ arguments: [String]) -> Int32 {
        do {
            _ = try Engaged.parseAsRoot(arguments)
            return 0
        } catch {
            return Engaged.exitCode(for: error).rawValue
        }
    }

    @Test("A worker with a database and defaults parses")
    func defaultsParse() throws {
        let worker = try #require(try Engaged.parseAsRoot(["worker"] + Self.database) as? Worker)
        #expect(worker.leaseSeconds == 30)
        #expect(worker.batchUsers == 256)
        #expect(try worker.apns.apnsSettings([:]) == nil)
    }

    @Test(
        "Bad worker flags are usage errors",
        arguments: [
            [] as [String], ["--database", "mysql://a@h/d"], ["--database", "postgres://h/d"],
            database + ["--lease-seconds", "0"], database + ["--batch-users", "0"],
            database + ["--idle-milliseconds", "5"], database + ["--done-retention-hours", "0"],
            database + ["--done-retention-hours", "1"],
            database + ["--quiet-guard-seconds", "-1"], database + ["--worker-id", ""],
            database + ["--scaled-clock", "2027-03-01T06:00:00Z,600"],
            database + ["--scaled-clock", "yesterday,600,1790000000000"],
            database + ["--scaled-clock", "2027-03-01T06:00:00Z,0,1790000000000"],
            database + ["--apns-key-file", "/a.p8"], database + ["--frobnicate"],
        ])
    func badWorkerFlags(_ flags: [String]) {
        #expect(exitCode(["worker"] + flags) == 64)
    }

    @Test("serve takes --data-dir or --database, exactly one")
    func serveStores() {
        #expect(exitCode(["serve", "--port", "0"]) == 64)
        #expect(exitCode(["serve", "--port", "0", "--data-dir", "d"] + Self.database) == 64)
        #expect(exitCode(["serve", "--port", "0", "--database", "postgres://h/d"]) == 64)
        #expect(exitCode(["serve", "--port", "0"] + Self.database) == 0)
        #expect(exitCode(["serve", "--port", "0", "--data-dir", "d"]) == 0)
    }

    @Test("migrate takes --data-dir or --database, exactly one")
    func migrateStores() {
        #expect(exitCode(["migrate"]) == 64)
        #expect(exitCode(["migrate", "--data-dir", ""]) == 64)
        #expect(exitCode(["migrate", "--data-dir", "d"] + Self.database) == 64)
        #expect(exitCode(["migrate", "--database", "mysql://h/d"]) == 64)
        #expect(exitCode(["migrate"] + Self.database) == 0)
        #expect(exitCode(["migrate", "--data-dir", "d"]) == 0)
    }

    @Test("serve refuses a user-token lifetime outside 60...2592000 seconds")
    func serveTokenLifetime() {
        #expect(exitCode(["serve", "--port", "0", "--data-dir", "d", "--user-token-ttl-seconds", "59"]) == 64)
        #expect(exitCode(["serve", "--port", "0", "--data-dir", "d", "--user-token-ttl-seconds", "2592001"]) == 64)
        #expect(exitCode(["serve", "--port", "0", "--data-dir", "d", "--user-token-ttl-seconds", "86400"]) == 0)
    }

    @Test("The scaled clock runs SPEED times the wall from START, and never goes back")
    func scaledClock() throws {
        let origin = Int64(Date().timeIntervalSince1970 * 1_000) - 2_000
        let clock = try ScaledClock(parsing: "2027-03-01T06:00:00Z,600,\(origin)")
        let now = clock.now()
        let start = Instant(iso8601: "2027-03-01T06:00:00Z")!
        #expect(now >= start + 1_200 && now < start + 1_200 + 600 * 5)
        #expect(clock.now() >= now)
    }
}
