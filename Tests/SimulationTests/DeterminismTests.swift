import Foundation
import Models
import TestSupport
import Testing

@testable import Simulation

@Suite(.serialized) struct DeterminismTests {
    func run(seed: UInt64 = 7, threads: Int, users: Int = 60) throws -> Report {
        var scenario = try Scenario.parse(baseScenario(), file: "test.json")
        scenario.seed = seed
        scenario.threads = threads
        scenario.users = users
        return try Simulator.run(RunOptions(scenario: scenario, templates: bundledTemplates, outputDirectory: nil))
    }

    @Test func theSameSeedGivesTheSameDigestOnOneAndTwoThreads() throws {
        let one = try run(threads: 1)
        let two = try run(threads: 2)
        #expect(one.digest == two.digest)
        #expect(one.events == two.events)
        #expect(one.deliveries == two.deliveries)
        #expect(one.deliveries > 0)
        #expect(one.invariantsHeld, "\(one.violationExamples)")
    }

    @Test func repeatedRunsGiveTheSameDigestAndADifferentSeedDoesNot() throws {
        let first = try run(threads: 2)
        let again = try run(threads: 2)
        let other = try run(seed: 8, threads: 2)
        #expect(first.digest == again.digest)
        #expect(first.digest != other.digest)
    }

    @Test func theStoreDoesNotChangeTheDigest() throws {
        var scenario = try Scenario.parse(baseScenario(), file: "test.json")
        scenario.users = 25
        let folder = NSTemporaryDirectory() + "engagement-store-\(getpid())"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let none = try Simulator.run(RunOptions(scenario: scenario, templates: bundledTemplates, outputDirectory: nil))
        let memory = try Simulator.run(
            RunOptions(scenario: scenario, templates: bundledTemplates, outputDirectory: nil, store: .memory))
        let sqlite = try Simulator.run(
            RunOptions(
                scenario: scenario, templates: bundledTemplates, outputDirectory: folder, writeEvents: false,
                store: .sqlite))
        #expect(memory.digest == none.digest)
        #expect(sqlite.digest == none.digest)
        #expect(FileManager.default.fileExists(atPath: folder + "/store.sqlite"))
    }

    @Test func theOutputsAreWrittenAndAuditable() throws {
        var scenario = try Scenario.parse(baseScenario(), file: "test.json")
        scenario.users = 30
        scenario.threads = 2
        let folder = NSTemporaryDirectory() + "engagement-sim-\(getpid())"
        let report = try Simulator.run(
            RunOptions(scenario: scenario, templates: bundledTemplates, outputDirectory: folder))
        let population =
            try JSONSerialization.jsonObject(
                with: Data(contentsOf: URL(fileURLWithPath: folder + "/population.json"))) as! [String: Any]
        let users = population["users"] as! [[String: Any]]
        #expect(users.count == 30)
        for key in [
            "id", "persona", "timeZone", "quietHours", "absenceResponse", "maxPerHour", "maxPerDay", "disabledKinds",
        ] {
            #expect(users[0].keys.contains(key), "population.json misses \(key)")
        }
        let lines = try String(contentsOfFile: folder + "/events.jsonl", encoding: .utf8).split(separator: "\n")
        #expect(lines.count > report.deliveries)
        // Every line is a JSON object with the required fields; the digest re-computes from the file.
        var perUser: [String: UInt64] = [:]
        var order: [String] = []
        for line in lines {
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as! [String: Any]
            let user = object["user"] as! String
            #expect(object["at"] is String && object["event"] is String && object["local"] is String)
            if perUser[user] == nil { order.append(user) }
            perUser[user] = EventDigest.fold(Array((line + "\n").utf8), into: perUser[user] ?? EventDigest.initial)
        }
        var digest = EventDigest.initial
        for user in users.map({ $0["id"] as! String }) {
            digest = EventDigest.mix(digest, perUser[user] ?? EventDigest.initial)
        }
        #expect(order.count == users.count)
        #expect(String(digest, radix: 16).leftPadded(to: 16) == report.digest)
        let reportJSON =
            try JSONSerialization.jsonObject(
                with: Data(contentsOf: URL(fileURLWithPath: folder + "/report.json"))) as! [String: Any]
        for key in [
            "seed", "users", "weeks", "threads", "wallSeconds", "events", "eventsPerSecond", "digest", "budgets",
            "invariantViolations", "deliveriesByKind", "deliveriesPerUserDay",
        ] {
            #expect(reportJSON.keys.contains(key), "report.json misses \(key)")
        }
        try? FileManager.default.removeItem(atPath: folder)
    }
}
