import Foundation
import Testing

@testable import Models

/// The successive matches of `match` after `start`.
private func matches(_ match: CalendarMatch, after start: Instant, in rules: ZoneRules, count: Int) -> [Instant] {
    var result: [Instant] = []
    var cursor = start
    while result.count < count, let next = match.nextMatch(after: cursor, in: rules) {
        result.append(next)
        cursor = next
    }
    return result
}

@Suite("CalendarMatch.nextMatch")
struct CalendarMatchTests {
    @Test func dailyIsStrictlyAfter() throws {
        let daily = CalendarMatch.daily(at: try #require(LocalTimeOfDay("07:00")))
        #expect(daily == CalendarMatch(hour: 7, minute: 0))
        let newYork = try zone("America/New_York")
        #expect(
            daily.nextMatch(after: try instant("2027-03-01T11:59:59Z"), in: newYork)
                == (try instant("2027-03-01T12:00:00Z")))
        #expect(
            daily.nextMatch(after: try instant("2027-03-01T12:00:00Z"), in: newYork)
                == (try instant("2027-03-02T12:00:00Z")))
        #expect(
            daily.nextMatch(after: try instant("2027-03-01T04:00:00Z"), in: newYork)
                == (try instant("2027-03-01T12:00:00Z")))
    }

    @Test func dailyKeepsWallTimeAcrossDST() throws {
        let newYork = try zone("America/New_York")
        let daily = CalendarMatch(hour: 7, minute: 0)
        let fires = matches(daily, after: try instant("2027-03-12T00:00:00Z"), in: newYork, count: 4)
        #expect(
            fires.map(\.iso8601) == [
                "2027-03-12T12:00:00Z", "2027-03-13T12:00:00Z", "2027-03-14T11:00:00Z", "2027-03-15T11:00:00Z",
            ])
        #expect(fires.allSatisfy { newYork.localDateTime(at: $0).timeOfDay == LocalTimeOfDay(hour: 7) })
        let autumn = matches(daily, after: try instant("2027-11-06T00:00:00Z"), in: newYork, count: 3)
        #expect(autumn.map(\.iso8601) == ["2027-11-06T11:00:00Z", "2027-11-07T12:00:00Z", "2027-11-08T12:00:00Z"])
    }

    @Test func dailyInTheGapFiresAtTheEndOfTheGap() throws {
        let newYork = try zone("America/New_York")
        let fires = matches(
            CalendarMatch(hour: 2, minute: 30), after: try instant("2027-03-13T08:00:00Z"), in: newYork, count: 2)
        #expect(fires.map(\.iso8601) == ["2027-03-14T07:00:00Z", "2027-03-15T06:30:00Z"])
    }

    @Test func dailyInTheRepeatFiresOnce() throws {
        let newYork = try zone("America/New_York")
        let fires = matches(
            CalendarMatch(hour: 1, minute: 30), after: try instant("2027-11-06T06:00:00Z"), in: newYork, count: 2)
        #expect(fires.map(\.iso8601) == ["2027-11-07T05:30:00Z", "2027-11-08T06:30:00Z"])
    }

    @Test func weekday() throws {
        let london = try zone("Europe/London")
        let monday9 = CalendarMatch(weekday: .monday, hour: 9, minute: 0)
        // Sunday 2027-03-28 is the day London moves to BST.
        let fires = matches(monday9, after: try instant("2027-03-21T12:00:00Z"), in: london, count: 3)
        #expect(fires.map(\.iso8601) == ["2027-03-22T09:00:00Z", "2027-03-29T08:00:00Z", "2027-04-05T08:00:00Z"])
        #expect(fires.allSatisfy { london.localDate(at: $0).weekday == .monday })
        let sunday = CalendarMatch(weekday: .sunday, hour: 19, minute: 0)
        #expect(
            sunday.nextMatch(after: try instant("2027-03-01T00:00:00Z"), in: .utc)
                == (try instant("2027-03-07T19:00:00Z")))
    }

    @Test func hourOnlyMeansMinuteZero() throws {
        let nine = CalendarMatch(hour: 9)
        #expect(
            nine.nextMatch(after: try instant("2027-03-01T08:59:59Z"), in: .utc)
                == (try instant("2027-03-01T09:00:00Z")))
        #expect(
            nine.nextMatch(after: try instant("2027-03-01T09:00:00Z"), in: .utc)
                == (try instant("2027-03-02T09:00:00Z")))
        #expect(
            nine.nextMatch(after: try instant("2027-03-01T09:30:00Z"), in: .utc)
                == (try instant("2027-03-02T09:00:00Z")))
    }

    @Test func minuteOnlyMatchesEveryHour() throws {
        let quarterPast = CalendarMatch(minute: 15)
        let fires = matches(quarterPast, after: try instant("2027-03-01T22:20:00Z"), in: .utc, count: 4)
        #expect(
            fires.map(\.iso8601) == [
                "2027-03-01T23:15:00Z", "2027-03-02T00:15:00Z", "2027-03-02T01:15:00Z", "2027-03-02T02:15:00Z",
            ])
        #expect(
            quarterPast.nextMatch(after: try instant("2027-03-01T10:14:59Z"), in: .utc)
                == (try instant("2027-03-01T10:15:00Z")))
        let kathmandu = try zone("Asia/Kathmandu")
        let local = matches(quarterPast, after: try instant("2027-03-01T00:00:00Z"), in: kathmandu, count: 3)
        #expect(local.allSatisfy { kathmandu.localDateTime(at: $0).minute == 15 })
        #expect(zip(local, local.dropFirst()).allSatisfy { $1 - $0 == .secondsPerHour })
    }

    @Test
    func minuteOnlySkipsTheMissingHour() throws {
        let newYork = try zone("America/New_York")
        let fires = matches(
            CalendarMatch(minute: 15), after: try instant("2027-03-14T06:00:00Z"), in: newYork, count: 2)
        // 01:15 EST, then 03:15 EDT: 02:15 does not exist that day.
        #expect(fires.map(\.iso8601) == ["2027-03-14T06:15:00Z", "2027-03-14T07:15:00Z"])
    }

    @Test func feb29IsYearly() throws {
        let leapDay = CalendarMatch(month: 2, day: 29, hour: 8, minute: 0)
        let fires = matches(leapDay, after: try instant("2027-01-01T00:00:00Z"), in: .utc, count: 2)
        #expect(fires.map(\.iso8601) == ["2028-02-29T08:00:00Z", "2032-02-29T08:00:00Z"])
    }

    @Test func monthlyOnTheThirtyFirstSkipsShortMonths() throws {
        let fires = matches(
            CalendarMatch(day: 31, hour: 9), after: try instant("2027-01-31T10:00:00Z"), in: .utc, count: 3)
        #expect(fires.map(\.iso8601) == ["2027-03-31T09:00:00Z", "2027-05-31T09:00:00Z", "2027-07-31T09:00:00Z"])
    }

    @Test func exactWallTimeFiresOnce() throws {
        let sydney = try zone("Australia/Sydney")
        let local = try wall("2027-06-01T18:30")
        let match = CalendarMatch(local)
        #expect(match == CalendarMatch(year: 2027, month: 6, day: 1, hour: 18, minute: 30))
        let fire = try #require(match.nextMatch(after: try instant("2027-01-01T00:00:00Z"), in: sydney))
        #expect(fire == (try instant("2027-06-01T08:30:00Z")))
        #expect(match.nextMatch(after: fire, in: sydney) == nil)
    }

    @Test func impossibleMatchesGiveNil() throws {
        let start = try instant("2027-01-01T00:00:00Z")
        #expect(CalendarMatch(month: 2, day: 30).nextMatch(after: start, in: .utc) == nil)
        #expect(CalendarMatch(month: 4, day: 31, hour: 9).nextMatch(after: start, in: .utc) == nil)
        #expect(CalendarMatch(year: 2026, hour: 9).nextMatch(after: start, in: .utc) == nil)
        #expect(CalendarMatch(hour: 24).nextMatch(after: start, in: .utc) == nil)
        #expect(CalendarMatch(hour: -1).nextMatch(after: start, in: .utc) == nil)
        #expect(CalendarMatch(minute: 60).nextMatch(after: start, in: .utc) == nil)
        // The next Friday 29 February is in 2036: beyond the eight-year horizon from 2027, within it from 2030.
        #expect(CalendarMatch(month: 2, day: 29, weekday: .friday, hour: 9).nextMatch(after: start, in: .utc) == nil)
        #expect(
            CalendarMatch(month: 2, day: 29, weekday: .friday, hour: 9).nextMatch(
                after: try instant("2030-01-01T00:00:00Z"), in: .utc) == (try instant("2036-02-29T09:00:00Z")))
    }

    @Test func dayAcrossTheDateLine() throws {
        // 07:00 on 2 March in Auckland is still 1 March in UTC.
        let auckland = try zone("Pacific/Auckland")
        let match = CalendarMatch(month: 3, day: 2, hour: 7, minute: 0)
        #expect(
            match.nextMatch(after: try instant("2027-03-01T12:00:00Z"), in: auckland)
                == (try instant("2027-03-01T18:00:00Z")))
    }

    /// The walk `nextMatch` did before it looked only at a named date and kept a day number:
    /// every day from the day before `after`, eight years on.
    private func walkedMatch(_ match: CalendarMatch, after: Instant, in zone: ZoneRules) -> Instant? {
        let hours: ClosedRange<Int> = match.hour.map { $0...$0 } ?? (match.minute == nil ? 0...0 : 0...23)
        let minutes: ClosedRange<Int> = match.minute.map { $0...$0 } ?? 0...0
        guard hours.lowerBound >= 0, hours.upperBound < 24, minutes.lowerBound >= 0, minutes.upperBound < 60 else {
            return nil
        }
        var date = zone.localDate(at: after).adding(days: -1)
        for _ in 0..<(366 * 8) {
            defer { date = date.adding(days: 1) }
            if let year = match.year, date.year != year {
                if date.year > year { return nil }
                continue
            }
            if let month = match.month, date.month != month { continue }
            if let day = match.day, date.day != day { continue }
            if let weekday = match.weekday, date.weekday != weekday { continue }
            for h in hours {
                for m in minutes {
                    let resolved = zone.resolve(LocalDateTime(date: date, secondOfDay: h * 3_600 + m * 60))
                    if match.hour == nil && resolved.resolution == .skippedGap { continue }
                    if resolved.instant > after { return resolved.instant }
                }
            }
        }
        return nil
    }

    /// A match naming its date at the edges of where it is looked for: `after`'s own local day
    /// (earlier and later that day), the day before and after it, the window's first and last
    /// days and the day past them, and dates with a DST gap or repeat at the time asked.
    @Test func aNamedDateAtTheEdgesAnswersAsTheWalkDoes() throws {
        let cases: [(zone: String, after: String)] = [
            ("America/New_York", "2027-03-14T06:30:00Z"), ("America/New_York", "2027-11-07T05:30:00Z"),
            ("Australia/Lord_Howe", "2027-04-03T15:10:00Z"), ("Pacific/Kiritimati", "2027-01-01T09:59:59Z"),
            ("Asia/Kathmandu", "2027-06-30T18:14:00Z"), ("UTC", "2027-12-31T23:59:59Z"),
        ]
        for (identifier, text) in cases {
            let rules = try zone(identifier)
            let after = try instant(text)
            let today = rules.localDate(at: after)
            var dates = (-2...2).map { today.adding(days: $0) }
            let windowEnd = today.adding(days: 366 * 8 - 1)
            dates += [windowEnd.adding(days: -1), windowEnd, windowEnd.adding(days: 1)]
            for date in dates {
                for (hour, minute) in [(0, 0), (1, 30), (2, 30), (rules.localDateTime(at: after).hour, 0), (23, 59)] {
                    let match = CalendarMatch(
                        year: date.year, month: date.month, day: date.day, hour: hour, minute: minute)
                    #expect(
                        match.nextMatch(after: after, in: rules) == walkedMatch(match, after: after, in: rules),
                        "\(match) after \(text) in \(identifier)")
                    let withWeekday = CalendarMatch(
                        year: date.year, month: date.month, day: date.day, weekday: date.weekday, hour: hour,
                        minute: minute)
                    #expect(withWeekday.nextMatch(after: after, in: rules) == match.nextMatch(after: after, in: rules))
                }
            }
        }
    }

    @Test func answersAsTheDayByDayWalkDoes() throws {
        // Zones with DST gaps and repeats, 30- and 45-minute offsets, the date line; matches with
        // any mix of components, impossible dates and years far outside the window included.
        let zones = try [
            "America/New_York", "Asia/Kathmandu", "Australia/Lord_Howe", "Pacific/Kiritimati",
            "Pacific/Apia", "Europe/London", "UTC",
        ].map(zone)
        var random = SeededGenerator(seed: 2_026)
        let base = try instant("2026-01-01T00:00:00Z")
        for round in 0..<3_000 {
            let rules = zones[round % zones.count]
            let after = base + Int64.random(in: 0...(6 * 366 * 86_400), using: &random)
            let local = rules.localDateTime(at: after).date
            func maybe<T>(_ value: @autoclosure () -> T) -> T? { Bool.random(using: &random) ? value() : nil }
            let nearYear = local.year + Int.random(in: -1...9, using: &random)
            let match = CalendarMatch(
                year: maybe(
                    Int.random(in: 0..<8, using: &random) == 0
                        ? [Int.min, -5, 0, 99_999, Int.max].randomElement(using: &random)! : nearYear),
                month: maybe(Int.random(in: 0...13, using: &random)),
                day: maybe(
                    Bool.random(using: &random)
                        ? local.day + Int.random(in: -1...2, using: &random) : Int.random(in: 0...32, using: &random)),
                weekday: maybe(Weekday.allCases.randomElement(using: &random)!),
                hour: maybe(Int.random(in: -1...24, using: &random)),
                minute: maybe(Int.random(in: 0...60, using: &random)))
            #expect(
                match.nextMatch(after: after, in: rules) == walkedMatch(match, after: after, in: rules),
                "\(match) after \(after) in \(rules)")
        }
    }
}

@Suite("NotificationTrigger")
struct NotificationTriggerTests {
    private let scheduled = Instant(iso8601: "2027-03-01T07:00:00Z")!

    @Test func oneShotInterval() {
        let trigger = NotificationTrigger.timeInterval(seconds: 3_600, repeats: false)
        #expect(trigger.nextFire(after: scheduled, scheduledAt: scheduled, in: .utc) == scheduled + 3_600)
        #expect(trigger.nextFire(after: scheduled + 3_599, scheduledAt: scheduled, in: .utc) == scheduled + 3_600)
        #expect(trigger.nextFire(after: scheduled + 3_600, scheduledAt: scheduled, in: .utc) == nil)
        #expect(trigger.nextFire(after: scheduled + 90_000, scheduledAt: scheduled, in: .utc) == nil)
        #expect(!trigger.repeats)
    }

    @Test func repeatingInterval() {
        let trigger = NotificationTrigger.timeInterval(seconds: 60, repeats: true)
        #expect(trigger.nextFire(after: scheduled - 5, scheduledAt: scheduled, in: .utc) == scheduled + 60)
        #expect(trigger.nextFire(after: scheduled + 60, scheduledAt: scheduled, in: .utc) == scheduled + 120)
        #expect(trigger.nextFire(after: scheduled + 150, scheduledAt: scheduled, in: .utc) == scheduled + 180)
        #expect(trigger.nextFire(after: scheduled + 179, scheduledAt: scheduled, in: .utc) == scheduled + 180)
        #expect(trigger.repeats)
        // Wall-clock changes do not move an interval trigger.
        let newYork = ZoneRules(identifier: "America/New_York")!
        let hourly = NotificationTrigger.timeInterval(seconds: 3_600, repeats: true)
        let start = Instant(iso8601: "2027-03-14T05:30:00Z")!
        #expect(hourly.nextFire(after: start + 3_600, scheduledAt: start, in: newYork) == start + 7_200)
    }

    @Test func dateTrigger() {
        let at = scheduled + 86_400
        let trigger = NotificationTrigger.date(at)
        #expect(trigger.nextFire(after: at - 1, scheduledAt: scheduled, in: .utc) == at)
        #expect(trigger.nextFire(after: at, scheduledAt: scheduled, in: .utc) == nil)
        #expect(trigger.nextFire(after: at + 1, scheduledAt: scheduled, in: .utc) == nil)
        // An absolute instant whatever the zone.
        #expect(
            trigger.nextFire(after: scheduled, scheduledAt: scheduled, in: ZoneRules(identifier: "Asia/Kathmandu")!)
                == at)
        #expect(!trigger.repeats)
    }

    @Test func calendarTriggerFollowsTheZone() throws {
        let trigger = NotificationTrigger.calendar(CalendarMatch(hour: 7, minute: 0), repeats: true)
        #expect(trigger.repeats)
        #expect(
            trigger.nextFire(after: scheduled, scheduledAt: scheduled, in: try zone("Asia/Kathmandu"))
                == (try instant("2027-03-02T01:15:00Z")))
        #expect(
            trigger.nextFire(after: scheduled, scheduledAt: scheduled, in: try zone("America/New_York"))
                == (try instant("2027-03-01T12:00:00Z")))
        #expect(!NotificationTrigger.calendar(CalendarMatch(hour: 7), repeats: false).repeats)
    }

    @Test func validation() {
        #expect(NotificationTrigger.timeInterval(seconds: 0, repeats: false).invalidReason != nil)
        #expect(NotificationTrigger.timeInterval(seconds: -5, repeats: false).invalidReason != nil)
        #expect(NotificationTrigger.timeInterval(seconds: 59, repeats: true).invalidReason?.contains("60") == true)
        #expect(NotificationTrigger.timeInterval(seconds: 59, repeats: false).invalidReason == nil)
        #expect(NotificationTrigger.timeInterval(seconds: 60, repeats: true).invalidReason == nil)
        #expect(
            NotificationTrigger.calendar(CalendarMatch(hour: 24), repeats: true).invalidReason?.contains("hour") == true
        )
        #expect(
            NotificationTrigger.calendar(CalendarMatch(minute: 60), repeats: true).invalidReason?.contains("minute")
                == true)
        #expect(
            NotificationTrigger.calendar(CalendarMatch(month: 13), repeats: true).invalidReason?.contains("month")
                == true)
        #expect(
            NotificationTrigger.calendar(CalendarMatch(day: 0), repeats: true).invalidReason?.contains("day") == true)
        #expect(
            NotificationTrigger.calendar(CalendarMatch(day: 31, hour: 23, minute: 59), repeats: true).invalidReason
                == nil)
        #expect(NotificationTrigger.date(scheduled).invalidReason == nil)
    }

    @Test func codableRoundTrip() throws {
        let triggers: [NotificationTrigger] = [
            .timeInterval(seconds: 90, repeats: false),
            .calendar(CalendarMatch(weekday: .friday, hour: 18, minute: 30), repeats: true),
            .date(scheduled),
        ]
        let data = try JSONEncoder().encode(triggers)
        #expect(try JSONDecoder().decode([NotificationTrigger].self, from: data) == triggers)
    }
}
