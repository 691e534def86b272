import Foundation
import Testing

@testable import Models

/// Vectors from Python's zoneinfo (scripts/make_zone_fixtures.py): an independent implementation
/// checks every offset change of 2026-2028 in 53 zones, gaps and repeats included.
struct ZoneVectors: Decodable {
    struct Offset: Decodable {
        var utc: Int64
        var offset: Int
    }

    struct Local: Decodable {
        var local: String
        var utc: Int64
        var resolution: String
    }

    struct Zone: Decodable {
        var zone: String
        var offsets: [Offset]
        var locals: [Local]
    }

    var zones: [Zone]

    static let all: ZoneVectors = {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../Fixtures/zone_vectors.json").standardized.path
        let data = FileManager.default.contents(atPath: path)!
        return try! JSONDecoder().decode(ZoneVectors.self, from: data)
    }()
}

@Suite("ZoneRules against Python zoneinfo")
struct ZoneFixtureTests {
    @Test func theFixtureCoversTheRequiredZones() {
        let names = Set(ZoneVectors.all.zones.map(\.zone))
        #expect(names.count >= 40)
        for zone in ["Asia/Kathmandu", "Australia/Lord_Howe", "Pacific/Chatham", "America/St_Johns"] {
            #expect(names.contains(zone))
        }
        #expect(ZoneVectors.all.zones.flatMap(\.locals).contains { $0.resolution == "skippedGap" })
        #expect(ZoneVectors.all.zones.flatMap(\.locals).contains { $0.resolution == "firstOfRepeated" })
    }

    @Test(arguments: ZoneVectors.all.zones.map(\.zone))
    func offsetsAroundEveryChangeMatch(zone name: String) throws {
        let vectors = ZoneVectors.all.zones.first { $0.zone == name }!
        let zone = try #require(ZoneRules(identifier: name))
        for vector in vectors.offsets {
            #expect(
                zone.offsetSeconds(at: Instant(secondsSinceEpoch: vector.utc)) == vector.offset,
                "\(name) at \(Instant(secondsSinceEpoch: vector.utc))")
        }
    }

    @Test(arguments: ZoneVectors.all.zones.map(\.zone))
    func wallTimesInGapsAndRepeatsResolveAsSpecified(zone name: String) throws {
        let vectors = ZoneVectors.all.zones.first { $0.zone == name }!
        let zone = try #require(ZoneRules(identifier: name))
        for vector in vectors.locals {
            let local = try #require(LocalDateTime.parseWithOffset(vector.local)?.local)
            let (instant, resolution) = zone.resolve(local)
            #expect(instant.secondsSinceEpoch == vector.utc, "\(name) \(vector.local)")
            let expected: ZoneRules.Resolution =
                switch vector.resolution {
                case "skippedGap": .skippedGap
                case "firstOfRepeated": .firstOfRepeated
                default: .exact
                }
            #expect(resolution == expected, "\(name) \(vector.local)")
        }
    }
}
