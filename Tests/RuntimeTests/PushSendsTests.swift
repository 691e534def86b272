import Content
import Delivery
import Models
import Scheduling
import Storage
import Testing

@testable import Runtime

/// The APNs requests of the server's outbox work, and how late an alert may still be shown.
@Suite("PushSends")
struct PushSendsTests {
    static func instant(_ text: String) -> Instant { Instant(iso8601: text)! }

    static func quiet(_ start: Int, _ end: Int, weekdays: Set<Weekday> = []) -> QuietHours {
        try! QuietHours(
            start: LocalTimeOfDay(minutesSinceMidnight: start), end: LocalTimeOfDay(minutesSinceMidnight: end),
            weekdays: weekdays)
    }

    static func rules(_ zone: String, quiet: QuietHours? = nil) -> ShowingRules {
        ShowingRules(quietHours: quiet, zone: ZoneRules(identifier: zone)!)
    }

    static func request(
        _ id: RequestID = "comment-1", kind: NotificationKind = .workoutComment, level: InterruptionLevel = .active,
        body: String = "Nice run"
    ) -> NotificationRequest {
        NotificationRequest(
            identifier: id,
            content: NotificationContent(kind: kind, title: "Ana commented", body: body, interruptionLevel: level),
            trigger: .date(instant("2027-03-01T18:00:00Z")))
    }

    // MARK: - showBy

    @Test("a kind the caps do not count may be shown until its staleness deadline")
    func stalenessOnly() {
        let planned = Self.instant("2027-03-01T18:00:00Z")
        let staleness = KindPolicy.standard(for: .mention).stalenessSeconds
        #expect(
            PushSends.showBy(kind: .mention, level: .active, plannedAt: planned, rules: nil, at: planned)
                == planned + staleness)
        // Past the deadline nothing may be shown any more.
        #expect(
            PushSends.showBy(
                kind: .mention, level: .active, plannedAt: planned, rules: nil, at: planned + staleness + 1)
                == nil)
    }

    /// `PushSends.showBy` of an active alert, instants as ISO 8601 text (`at` defaults to `planned`).
    static func showBy(
        _ kind: NotificationKind, planned: String, at now: String? = nil, rules: ShowingRules
    ) -> Instant? {
        PushSends.showBy(
            kind: kind, level: .active, plannedAt: instant(planned), rules: rules, at: instant(now ?? planned))
    }

    @Test("a kind the caps count is shown in the minute the plan counted it in, or now or never")
    func plannedMinute() {
        // Chatham (UTC+13:45): the minute is the instant's own, whatever the zone's offset.
        let chatham = Self.rules("Pacific/Chatham")
        let planned = "2027-03-01T18:00:20Z"
        #expect(Self.showBy(.workoutComment, planned: planned, rules: chatham) == Self.instant("2027-03-01T18:00:59Z"))
        // A retry 40 seconds on still falls in the minute; one a second after it does not.
        #expect(
            Self.showBy(.workoutComment, planned: planned, at: "2027-03-01T18:00:59Z", rules: chatham)
                == Self.instant("2027-03-01T18:00:59Z"))
        #expect(Self.showBy(.workoutComment, planned: planned, at: "2027-03-01T18:01:00Z", rules: chatham) == nil)
        // The last minute of a local day stays on that day (Kathmandu, UTC+5:45: 23:59 local).
        #expect(
            Self.showBy(.workoutKudos, planned: "2027-03-01T18:14:30Z", rules: Self.rules("Asia/Kathmandu"))
                == Self.instant("2027-03-01T18:14:59Z"))
    }

    @Test("a mention planned for 22:30 may not be shown once quiet hours begin at 23:00")
    func quietHoursBound() {
        // Berlin, winter time (UTC+1): 22:30 local is 21:30Z; quiet hours 23:00-06:30.
        let berlin = Self.rules("Europe/Berlin", quiet: Self.quiet(23 * 60, 6 * 60 + 30))
        let planned = "2027-03-01T21:30:00Z"
        #expect(Self.showBy(.mention, planned: planned, rules: berlin) == Self.instant("2027-03-01T21:59:59Z"))
        // Sent inside the quiet hours (a retry after an outage): no later showing is allowed.
        #expect(Self.showBy(.mention, planned: planned, at: "2027-03-01T22:00:00Z", rules: berlin) == nil)
        // An ordinary alert planned in the last minute before them ends with that minute.
        #expect(
            Self.showBy(.workoutComment, planned: "2027-03-01T21:59:10Z", rules: berlin)
                == Self.instant("2027-03-01T21:59:59Z"))
    }

    @Test("an ordinary alert is withheld inside quiet hours; a critical one goes, a late one now or never")
    func withheldInQuietHours() throws {
        // Berlin, winter time: 23:30 local is 22:30Z, inside quiet hours 23:00-06:30.
        let berlin = Self.rules("Europe/Berlin", quiet: Self.quiet(23 * 60, 6 * 60 + 30))
        let planned = Self.instant("2027-03-01T21:50:00Z")
        let inQuiet = Self.instant("2027-03-01T22:30:00Z")
        #expect(
            PushSends.alert(
                Self.request(kind: .mention), key: "k", plannedAt: planned, badge: 0, topic: "t", rules: berlin,
                at: inQuiet) == .failure(.inQuietHours))
        let critical = try PushSends.alert(
            Self.request(kind: .securityAlert, level: .critical), key: "k", plannedAt: planned, badge: 0, topic: "t",
            rules: berlin, at: inQuiet
        ).get()
        #expect(critical.expiration == .at(planned + KindPolicy.standard(for: .securityAlert).stalenessSeconds))
        // Outside quiet hours but past its minute: sent, never stored for an offline phone.
        let late = try PushSends.alert(
            Self.request(), key: "k", plannedAt: planned, badge: 0, topic: "t", rules: berlin,
            at: Self.instant("2027-03-01T21:55:00Z")
        ).get()
        #expect(late.expiration == .nowOrNever)
    }

    @Test("a critical alert breaks through quiet hours: only its staleness bounds it")
    func criticalIgnoresQuietHours() {
        let planned = Self.instant("2027-03-01T21:30:00Z")
        let rules = Self.rules("Europe/Berlin", quiet: Self.quiet(23 * 60, 6 * 60 + 30))
        let staleness = KindPolicy.standard(for: .securityAlert).stalenessSeconds
        #expect(
            PushSends.showBy(
                kind: .securityAlert, level: .critical, plannedAt: planned, rules: rules,
                at: Self.instant("2027-03-01T22:30:00Z")) == planned + staleness)
    }

    @Test("a kind dropped rather than deferred is now or never")
    func dropKindIsNowOrNever() throws {
        let dropped = try #require(
            NotificationKind.allCases.first { KindPolicy.standard(for: $0).deferral == .drop })
        let planned = Self.instant("2027-03-01T10:00:00Z")
        // No later showing is allowed: "now or never".
        #expect(PushSends.showBy(kind: dropped, level: .active, plannedAt: planned, rules: nil, at: planned) == nil)
        let prepared = PushSends.alert(
            Self.request(kind: dropped), key: "k", plannedAt: planned, badge: 0, topic: "t", rules: nil, at: planned)
        #expect(try prepared.get().expiration == .nowOrNever)
    }

    /// Zones with DST both ways, 30- and 45-minute offsets, the date line and Lord Howe's
    /// half-hour change; quiet hours that wrap midnight, that do not, and that hold on some days.
    static let zones = [
        "Europe/Berlin", "America/New_York", "Asia/Kolkata", "Asia/Kathmandu", "Pacific/Chatham", "Pacific/Apia",
        "Pacific/Kiritimati", "Australia/Lord_Howe", "America/St_Johns", "UTC",
    ]

    @Test("shown at any instant up to showBy, an alert is outside quiet hours and, if counted, in its minute")
    func showByHoldsTheRules() {
        var draws = SeededGenerator(seed: 0x5E4D)
        let kinds: [NotificationKind] = [.workoutComment, .mention, .reEngagement, .followRequest]
        var checked = 0
        for round in 0..<800 {
            let zoneID = Self.zones[round % Self.zones.count]
            let zone = ZoneRules(identifier: zoneID)!
            let start = draws.int(in: 0...(24 * 60 - 1))
            var end = draws.int(in: 0...(24 * 60 - 1))
            if end == start { end = (start + 60) % (24 * 60) }
            let weekdays: Set<Weekday> = draws.chance(0.3) ? [.monday, .friday, .saturday] : []
            let quiet = Self.quiet(start, end, weekdays: weekdays)
            let rules = ShowingRules(quietHours: quiet, zone: zone)
            // Around the 2027 transitions and the turn of the year.
            let base = [
                Self.instant("2027-03-27T12:00:00Z"), Self.instant("2027-10-30T12:00:00Z"),
                Self.instant("2027-04-03T12:00:00Z"), Self.instant("2027-12-31T06:00:00Z"),
            ][round % 4]
            let planned = base + Int64(draws.int(in: 0...(3 * 86_400)))
            guard !quiet.contains(zone.localDateTime(at: planned)) else { continue }
            let now = planned + Int64(draws.chance(0.5) ? draws.int(in: 0...90) : draws.int(in: 0...7_200))
            let kind = kinds[round % kinds.count]
            let stale = planned + KindPolicy.standard(for: kind).stalenessSeconds
            let plannedMinute = planned.secondsSinceEpoch.floorDivided(by: 60)
            guard let last = PushSends.showBy(kind: kind, level: .active, plannedAt: planned, rules: rules, at: now)
            else {
                // Nothing may be shown: now is in quiet hours, past its minute, or past staleness.
                #expect(
                    quiet.contains(zone.localDateTime(at: now)) || now > stale
                        || (!kind.isTransactional && now.secondsSinceEpoch.floorDivided(by: 60) != plannedMinute),
                    "\(zoneID) \(quiet) planned \(planned) now \(now)")
                continue
            }
            checked += 1
            #expect(last >= now && last <= stale)
            var shown = now
            while shown <= last {
                #expect(!quiet.contains(zone.localDateTime(at: shown)), "\(zoneID) \(quiet) shown \(shown)")
                if !kind.isTransactional { #expect(shown.secondsSinceEpoch.floorDivided(by: 60) == plannedMinute) }
                shown = shown + (shown + 300 <= last || shown == last ? 300 : last - shown)
            }
        }
        #expect(checked > 200)
    }

    // MARK: - The requests

    @Test("an alert's request: its key as apns-id, the badge, the expiration, priority and collapse id")
    func alertRequest() throws {
        let planned = Self.instant("2027-03-01T18:00:00Z")
        let rules = Self.rules("Europe/Berlin", quiet: Self.quiet(23 * 60, 6 * 60 + 30))
        let key = OutboxKey.make("u1", "comment-1", planned, .push)
        let push = try PushSends.alert(
            Self.request(), key: key, plannedAt: planned, badge: 3, topic: "com.example.fitness", rules: rules,
            at: planned
        ).get()
        let request = push.request(to: PushAddress(token: String(repeating: "ab", count: 32), environment: .sandbox))
        #expect(request.id == key.rawValue)
        #expect(request.invalidReason == nil)
        #expect(request.environment == .sandbox)
        #expect(request.pushType == .alert)
        #expect(request.priority == .immediate)
        #expect(request.expiration == .at(Self.instant("2027-03-01T18:00:59Z")))
        // workoutComment folds into groups: it collapses by its request identifier (its group).
        #expect(request.collapseID == "comment-1")
        let text = String(decoding: request.payload, as: UTF8.self)
        #expect(text.contains("\"badge\":3"))
        // A kind sent one by one collapses by its own key: a re-send replaces, never doubles.
        let mention = try PushSends.alert(
            Self.request("mention-1", kind: .mention, level: .passive), key: key, plannedAt: planned, badge: 0,
            topic: "t", rules: nil, at: planned
        ).get()
        #expect(mention.collapseID == key.rawValue)
        // Even a passive alert goes at priority 10: a priority-5 push waits for a power window.
        #expect(mention.priority == .immediate)
        #expect(mention.expiration == .at(planned + KindPolicy.standard(for: .mention).stalenessSeconds))
    }

    @Test("an alert past its showing deadline goes now or never; too large a payload is withheld")
    func pastItsDeadlineOrTooLarge() throws {
        let planned = Self.instant("2027-03-01T18:00:00Z")
        let rules = Self.rules("Europe/Berlin", quiet: Self.quiet(23 * 60, 6 * 60 + 30))
        let late = try PushSends.alert(
            Self.request(), key: "k", plannedAt: planned, badge: 0, topic: "t", rules: rules,
            at: Self.instant("2027-03-01T18:01:00Z")
        ).get()
        #expect(late.expiration == .nowOrNever)
        let huge = Self.request(body: String(repeating: "x", count: 5_000))
        guard
            case .failure(.payloadTooLarge(let bytes)) = PushSends.alert(
                huge, key: "k", plannedAt: planned, badge: 0, topic: "t", rules: nil, at: planned)
        else {
            Issue.record("a 5,000-byte body was not withheld")
            return
        }
        #expect(bytes > PayloadBuilder.maxBytes)
    }

    @Test("a badge sync: a background push with the counts and plan version, kept a day at APNs")
    func syncRequest() {
        let plan = SilentPushPlan()
        let slot = plan.slot(after: Self.instant("2027-03-01T18:00:00Z"))
        let push = PushSends.sync(
            key: "k", slot: slot, counts: InboxCounts(total: 9, unread: 2, unseen: 1), planVersion: 4, plan: plan,
            topic: "t")
        #expect(push.pushType == .background)
        #expect(push.priority == .powerConsiderate)
        #expect(push.expiration == .at(slot + SilentPushPlan.lifetimeSeconds))
        #expect(push.collapseID == "inbox-sync")
        #expect(
            String(decoding: push.payload, as: UTF8.self)
                == "{\"aps\":{\"content-available\":1},\"inbox\":{\"unread\":2,\"unseen\":1,\"total\":9},\"planVersion\":4}"
        )
    }
}
