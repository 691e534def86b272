import Models
import Testing

@testable import Engagement

/// `nextInstant(of:notBefore:)`, the lapse campaign's local times, by day number: the first
/// instant at or after the given one whose local clock reads the time, as the date-by-date way
/// found it, across DST gaps and repeats, half- and quarter-hour offsets and the date line.
@Suite struct NextLocalTimeTests {
    /// The way it was found before it worked by day number.
    private func byDate(_ time: LocalTimeOfDay, notBefore instant: Instant, in zone: ZoneRules) -> Instant {
        var date = zone.localDate(at: instant)
        if zone.instant(for: LocalDateTime(date: date, time: time)) < instant { date = date.adding(days: 1) }
        return zone.instant(for: LocalDateTime(date: date, time: time))
    }

    @Test(arguments: ["America/New_York", "Australia/Lord_Howe", "Asia/Kathmandu", "Pacific/Apia", "Europe/London"])
    func answersAsTheDateByDateWayDoes(identifier: String) throws {
        let zone = try #require(ZoneRules(identifier: identifier))
        let start = try #require(Instant(iso8601: "2027-01-01T00:00:00Z"))
        let engine = UserEngine(profile: makeProfile(zone: identifier), zone: zone, now: start)
        let times = ["00:00", "01:30", "02:00", "02:30", "07:00", "23:59"].compactMap(LocalTimeOfDay.init)
        #expect(times.count == 6)
        // Every 47 minutes through the year: every transition is passed within the hour.
        for step in 0..<(366 * 24 * 60 / 47) {
            let instant = start + Int64(step) * 47 * 60
            for time in times {
                #expect(
                    engine.nextInstant(of: time, notBefore: instant) == byDate(time, notBefore: instant, in: zone),
                    "\(time) not before \(instant) in \(identifier)")
            }
        }
    }
}
