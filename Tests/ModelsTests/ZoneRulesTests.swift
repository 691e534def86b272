import Foundation
import Testing

@testable import Models

/// Zones with whole-hour, half-hour and 45-minute offsets, 30-minute DST, southern-hemisphere
/// DST, DST abolished (São Paulo) and DST reintroduced (Cairo).
let sampledZones = [
    "America/New_York", "Europe/London", "Australia/Sydney", "Asia/Kolkata", "Asia/Kathmandu", "Australia/Lord_Howe",
    "Pacific/Chatham", "America/St_Johns", "Pacific/Auckland", "America/Sao_Paulo", "Africa/Cairo", "UTC",
]

func zone(_ identifier: String) throws -> ZoneRules {
    try #require(ZoneRules(identifier: identifier), "no rules for \(identifier)")
}

func instant(_ text: String) throws -> Instant {
    try #require(Instant(iso8601: text), "bad instant \(text)")
}

func wall(_ text: String) throws -> LocalDateTime {
    try #require(LocalDateTime.parseWithOffset(text)?.local, "bad wall time \(text)")
}

private let from2026 = Instant(iso8601: "2026-01-01T00:00:00Z")!
private let until2029 = Instant(iso8601: "2029-01-01T00:00:00Z")!

@Suite("ZoneRules")
struct ZoneRulesTests {
    @Test(arguments: sampledZones)
    func offsetsMatchFoundationEverySixHours(identifier: String) throws {
        let rules = try zone(identifier)
        let foundation = try #require(TimeZone(identifier: identifier))
        var mismatches = 0
        // 6 h 7 min steps, so the samples drift across every minute of the day.
        var t = from2026
        while t < until2029 {
            let expected = foundation.secondsFromGMT(for: t.date)
            if rules.offsetSeconds(at: t) != expected {
                mismatches += 1
                if mismatches < 5 {
                    Issue.record("\(identifier) at \(t): \(rules.offsetSeconds(at: t)) != \(expected)")
                }
            }
            t = t + 6 * .secondsPerHour + 7 * .secondsPerMinute
        }
        #expect(mismatches == 0)
    }

    @Test(arguments: sampledZones)
    func offsetsMatchFoundationAtEachTransition(identifier: String) throws {
        let rules = try zone(identifier)
        let foundation = try #require(TimeZone(identifier: identifier))
        var cursor = from2026.date
        var transitions = 0
        while let next = foundation.nextDaylightSavingTimeTransition(after: cursor), next < until2029.date {
            let at = Instant(next)
            #expect(rules.offsetSeconds(at: at) == foundation.secondsFromGMT(for: next), "\(identifier) at \(at)")
            #expect(rules.offsetSeconds(at: at - 1) == foundation.secondsFromGMT(for: (at - 1).date), "\(identifier)")
            #expect(rules.offsetSeconds(at: at) != rules.offsetSeconds(at: at - 1), "\(identifier) at \(at)")
            transitions += 1
            cursor = next
        }
        let hasDST = [
            "America/New_York", "Europe/London", "Australia/Sydney", "Australia/Lord_Howe", "Pacific/Chatham",
            "America/St_Johns", "Pacific/Auckland",
        ].contains(identifier)
        if hasDST { #expect(transitions == 6, "\(identifier): \(transitions) transitions in 2026-2028") }
        if ["Asia/Kolkata", "Asia/Kathmandu", "UTC", "America/Sao_Paulo"].contains(identifier) {
            #expect(transitions == 0, "\(identifier)")
        }
    }

    @Test func wallClockMatchesFoundationCalendar() throws {
        for identifier in sampledZones {
            let rules = try zone(identifier)
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = try #require(TimeZone(identifier: identifier))
            var t = from2026
            while t < until2029 {
                let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: t.date)
                let local = rules.localDateTime(at: t)
                #expect(
                    [local.date.year, local.date.month, local.date.day, local.hour, local.minute, local.second]
                        == [c.year, c.month, c.day, c.hour, c.minute, c.second].map { $0 ?? -1 },
                    "\(identifier) at \(t)")
                t = t + 17 * .secondsPerHour + 13 * .secondsPerMinute + 11
            }
        }
    }

    @Test func knownOffsets() throws {
        #expect(try zone("Asia/Kathmandu").offsetSeconds(at: instant("2027-06-01T00:00:00Z")) == 5 * 3_600 + 45 * 60)
        #expect(try zone("Asia/Kolkata").offsetSeconds(at: instant("2027-06-01T00:00:00Z")) == 5 * 3_600 + 30 * 60)
        #expect(try zone("America/St_Johns").offsetSeconds(at: instant("2027-01-15T00:00:00Z")) == -(3 * 3_600 + 1_800))
        #expect(try zone("America/St_Johns").offsetSeconds(at: instant("2027-07-15T00:00:00Z")) == -(2 * 3_600 + 1_800))
        #expect(try zone("Pacific/Chatham").offsetSeconds(at: instant("2027-01-15T00:00:00Z")) == 13 * 3_600 + 45 * 60)
        #expect(try zone("Pacific/Chatham").offsetSeconds(at: instant("2027-07-15T00:00:00Z")) == 12 * 3_600 + 45 * 60)
        #expect(try zone("Australia/Lord_Howe").offsetSeconds(at: instant("2027-01-15T00:00:00Z")) == 11 * 3_600)
        #expect(
            try zone("Australia/Lord_Howe").offsetSeconds(at: instant("2027-07-15T00:00:00Z")) == 10 * 3_600 + 1_800)
        #expect(try zone("America/Sao_Paulo").offsetSeconds(at: instant("2027-01-15T00:00:00Z")) == -3 * 3_600)
        let newYork = try zone("America/New_York")
        #expect(newYork.offsetSeconds(at: try instant("2027-03-14T06:59:59Z")) == -5 * 3_600)
        #expect(newYork.offsetSeconds(at: try instant("2027-03-14T07:00:00Z")) == -4 * 3_600)
        #expect(newYork.offsetSeconds(at: try instant("2027-11-07T05:59:59Z")) == -4 * 3_600)
        #expect(newYork.offsetSeconds(at: try instant("2027-11-07T06:00:00Z")) == -5 * 3_600)
    }

    @Test func formatsLocalTimeWithOffset() throws {
        #expect(try zone("America/New_York").formatted(instant("2027-03-14T07:00:00Z")) == "2027-03-14T03:00:00-04:00")
        #expect(try zone("America/New_York").formatted(instant("2027-03-14T06:59:00Z")) == "2027-03-14T01:59:00-05:00")
        #expect(try zone("Asia/Kathmandu").formatted(instant("2027-03-01T00:00:00Z")) == "2027-03-01T05:45:00+05:45")
        #expect(try zone("Pacific/Chatham").formatted(instant("2027-03-01T11:00:00Z")) == "2027-03-02T00:45:00+13:45")
        #expect(try zone("UTC").formatted(instant("2027-03-01T07:00:00Z")) == "2027-03-01T07:00:00Z")
        #expect(try ZoneRules.utc.formatted(instant("2027-03-01T07:00:00Z")) == "2027-03-01T07:00:00Z")
        // A formatted local time parses back to the same instant.
        for identifier in sampledZones {
            let rules = try zone(identifier)
            var t = from2026
            while t < until2029 {
                #expect(Instant(iso8601: rules.formatted(t)) == t, "\(identifier) \(rules.formatted(t))")
                t = t + 29 * .secondsPerHour + 17 * .secondsPerMinute
            }
        }
    }

    @Test func localDateAcrossTheDateLine() throws {
        let t = try instant("2027-03-01T12:00:00Z")
        #expect(try zone("Pacific/Auckland").localDate(at: t) == LocalDate(year: 2027, month: 3, day: 2))
        #expect(try zone("America/New_York").localDate(at: t) == LocalDate(year: 2027, month: 3, day: 1))
        #expect(
            try zone("Pacific/Chatham").localDate(at: try instant("2027-03-01T10:14:59Z"))
                == LocalDate(year: 2027, month: 3, day: 1))
        #expect(
            try zone("Pacific/Chatham").localDate(at: try instant("2027-03-01T10:15:00Z"))
                == LocalDate(year: 2027, month: 3, day: 2))
    }

    @Test func identifiersMustBeIANA() {
        for good in ["UTC", "Etc/UTC", "America/New_York", "Asia/Kathmandu", "America/Argentina/Buenos_Aires"] {
            #expect(ZoneRules.isValidIdentifier(good), "\(good)")
        }
        for bad in [
            "EST", "PST", "GMT", "GMT+5", "Etc/GMT+5", "Etc/GMT-14", "Mars/Olympus", "", "utc/x", "America/",
            "America/Nowhere", "+05:00",
        ] {
            #expect(!ZoneRules.isValidIdentifier(bad), "\(bad)")
            #expect(ZoneRules(identifier: bad) == nil, "\(bad)")
        }
    }

    @Test func fixedZonesNeverChange() {
        let fixed = ZoneRules(fixedIdentifier: "Test/PlusFive", offsetSeconds: 5 * 3_600)
        for seconds in stride(from: Int64(-1_000_000_000), through: 5_000_000_000, by: 99_999_989) {
            #expect(fixed.offsetSeconds(at: Instant(secondsSinceEpoch: seconds)) == 5 * 3_600)
            #expect(ZoneRules.utc.offsetSeconds(at: Instant(secondsSinceEpoch: seconds)) == 0)
        }
        #expect(fixed.identifier == "Test/PlusFive")
        #expect(fixed.description == "Test/PlusFive")
        #expect(ZoneRules.utc.identifier == "UTC")
    }
}

@Suite("ZoneRules.resolve")
struct ZoneRulesResolveTests {
    @Test(arguments: [
        // Spring-forward gaps resolve to the end of the gap.
        ("America/New_York", "2027-03-14T02:30", "2027-03-14T07:00:00Z", ZoneRules.Resolution.skippedGap),
        ("America/New_York", "2027-03-14T02:00", "2027-03-14T07:00:00Z", .skippedGap),
        ("America/New_York", "2027-03-14T02:59:59", "2027-03-14T07:00:00Z", .skippedGap),
        ("America/New_York", "2027-03-14T01:59:59", "2027-03-14T06:59:59Z", .exact),
        ("America/New_York", "2027-03-14T03:00", "2027-03-14T07:00:00Z", .exact),
        ("Europe/London", "2027-03-28T01:30", "2027-03-28T01:00:00Z", .skippedGap),
        ("Europe/London", "2027-03-28T02:00", "2027-03-28T01:00:00Z", .exact),
        ("Australia/Lord_Howe", "2027-10-03T02:15", "2027-10-02T15:30:00Z", .skippedGap),
        ("Australia/Lord_Howe", "2027-10-03T02:30", "2027-10-02T15:30:00Z", .exact),
        ("Australia/Lord_Howe", "2027-10-03T01:59", "2027-10-02T15:29:00Z", .exact),
        ("Pacific/Chatham", "2027-09-26T03:00", "2027-09-25T14:00:00Z", .skippedGap),
        ("America/St_Johns", "2027-03-14T02:30", "2027-03-14T05:30:00Z", .skippedGap),
        ("Australia/Sydney", "2027-10-03T02:30", "2027-10-02T16:00:00Z", .skippedGap),
        // Fall-back repeats resolve to the first occurrence.
        ("America/New_York", "2027-11-07T01:30", "2027-11-07T05:30:00Z", .firstOfRepeated),
        ("America/New_York", "2027-11-07T01:00", "2027-11-07T05:00:00Z", .firstOfRepeated),
        ("America/New_York", "2027-11-07T00:59", "2027-11-07T04:59:00Z", .exact),
        ("America/New_York", "2027-11-07T02:00", "2027-11-07T07:00:00Z", .exact),
        ("Australia/Sydney", "2027-04-04T02:30", "2027-04-03T15:30:00Z", .firstOfRepeated),
        ("Australia/Sydney", "2027-04-04T03:00", "2027-04-03T17:00:00Z", .exact),
        ("Australia/Lord_Howe", "2027-04-04T01:45", "2027-04-03T14:45:00Z", .firstOfRepeated),
        ("Australia/Lord_Howe", "2027-04-04T02:00", "2027-04-03T15:30:00Z", .exact),
        ("Europe/London", "2027-10-31T01:30", "2027-10-31T00:30:00Z", .firstOfRepeated),
        ("Pacific/Chatham", "2027-04-04T02:50", "2027-04-03T13:05:00Z", .firstOfRepeated),
        // Ordinary times.
        ("America/New_York", "2027-07-01T12:00", "2027-07-01T16:00:00Z", .exact),
        ("Asia/Kathmandu", "2027-07-01T07:00", "2027-07-01T01:15:00Z", .exact),
        ("UTC", "2027-03-14T02:30", "2027-03-14T02:30:00Z", .exact),
    ])
    func resolvesGapsAndRepeats(
        identifier: String, local: String, expected: String, resolution: ZoneRules.Resolution
    ) throws {
        let rules = try zone(identifier)
        let result = rules.resolve(try wall(local))
        #expect(result.instant == (try instant(expected)))
        #expect(result.resolution == resolution)
        #expect(rules.instant(for: try wall(local)) == result.instant)
    }

    /// The short way (no transition within a day either side) gives what the general one gives,
    /// for random wall times and for every wall time near each transition, 1970-2040.
    @Test(arguments: sampledZones + ["Europe/Dublin", "America/Havana", "Antarctica/Troll", "Pacific/Apia"])
    func resolvingFarFromATransitionAgreesWithTheGeneralWay(identifier: String) throws {
        let rules = try zone(identifier)
        var generator = SeededGenerator(seed: 12)
        var walls = (0..<4_000).map { _ in Int64.random(in: 0...2_208_988_800, using: &generator) }
        for transition in rules.transitionInstants where transition < 2_208_988_800 {
            for step in stride(from: -2 * Int64.secondsPerDay, through: 2 * .secondsPerDay, by: 900) {
                walls.append(transition + step)
            }
        }
        for wall in walls {
            let general = rules.resolveNearTransition(wall)
            let result = rules.resolve(LocalDateTime(localSeconds: wall))
            #expect(result.instant == general.instant && result.resolution == general.resolution, "\(wall)")
        }
    }

    /// A day's uniform offset, where there is one, converts each of its wall times as
    /// `instant(for:)` does (its first and last seconds and every quarter hour between); a day
    /// has one unless a transition falls between a day before it and a day after it.
    @Test(arguments: sampledZones + ["Europe/Dublin", "Antarctica/Troll", "Pacific/Apia"])
    func aDaysUniformOffsetConvertsAsInstantForDoes(identifier: String) throws {
        let rules = try zone(identifier)
        var generator = SeededGenerator(seed: 7)
        var days = (0..<400).map { _ in Int64.random(in: 0...25_000, using: &generator) }
        for transition in rules.transitionInstants where transition < 2_208_988_800 {
            let day = transition / .secondsPerDay
            days += (day - 3)...(day + 3)
        }
        for day in days {
            let first = day * .secondsPerDay
            let walls = Array(stride(from: first, to: first + .secondsPerDay, by: 900)) + [first + .secondsPerDay - 1]
            let transitionNear = rules.transitionInstants.contains {
                $0 > first - .secondsPerDay && $0 <= first + 2 * .secondsPerDay - 1
            }
            guard let offset = rules.uniformOffset(onLocalDay: day) else {
                #expect(transitionNear, "day \(day): no uniform offset, yet no transition near")
                continue
            }
            #expect(!transitionNear, "day \(day): a uniform offset next to a transition")
            for wall in walls {
                #expect(
                    Instant(secondsSinceEpoch: wall - offset) == rules.instant(for: LocalDateTime(localSeconds: wall)),
                    "day \(day) wall \(wall)")
            }
        }
    }

    /// Every wall time read off the clock resolves back to the instant it was read at, except
    /// the second pass through a repeated hour, which resolves to the first.
    @Test(arguments: sampledZones)
    func wallClockReadingsResolveBack(identifier: String) throws {
        let rules = try zone(identifier)
        var t = from2026
        var repeats = 0
        while t < until2029 {
            let local = rules.localDateTime(at: t)
            let result = rules.resolve(local)
            #expect(result.resolution != .skippedGap, "\(identifier) \(local)")
            #expect(rules.localDateTime(at: result.instant) == local, "\(identifier) \(local)")
            if result.instant != t {
                repeats += 1
                #expect(result.instant < t && result.resolution == .firstOfRepeated, "\(identifier) \(local)")
                #expect(
                    t - result.instant == Int64(rules.offsetSeconds(at: result.instant) - rules.offsetSeconds(at: t)))
            }
            t = t + 15 * .secondsPerMinute
        }
        let dst =
            rules.offsetSeconds(at: try instant("2027-01-15T00:00:00Z"))
            != rules.offsetSeconds(at: try instant("2027-07-15T00:00:00Z"))
        #expect((repeats > 0) == dst, "\(identifier): \(repeats) repeated readings")
    }

    /// Wall times that no instant reads resolve to the first instant after the gap.
    @Test(arguments: sampledZones)
    func gapsResolveToTheirEnd(identifier: String) throws {
        let rules = try zone(identifier)
        var date = LocalDate(year: 2026, month: 1, day: 1)
        var gaps = 0
        while date < LocalDate(year: 2029, month: 1, day: 1) {
            for minute in stride(from: 0, to: 1_440, by: 15) {
                let local = LocalDateTime(date: date, secondOfDay: minute * 60)
                let result = rules.resolve(local)
                guard result.resolution == .skippedGap else { continue }
                gaps += 1
                let offsetBefore = rules.offsetSeconds(at: result.instant - 1)
                let offsetAfter = rules.offsetSeconds(at: result.instant)
                #expect(offsetAfter > offsetBefore, "\(identifier) \(local)")
                #expect(rules.localDateTime(at: result.instant) > local)
                #expect(rules.localDateTime(at: result.instant - 1) < local)
            }
            date = date.adding(days: 1)
        }
        let dst =
            rules.offsetSeconds(at: try instant("2027-01-15T00:00:00Z"))
            != rules.offsetSeconds(at: try instant("2027-07-15T00:00:00Z"))
        #expect((gaps > 0) == dst, "\(identifier): \(gaps) gap readings")
    }
}
