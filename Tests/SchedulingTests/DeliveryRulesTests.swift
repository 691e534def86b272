import Models
import Testing

@testable import Scheduling

// MARK: - Helpers

private func zone(_ identifier: String) -> ZoneRules {
    guard let rules = ZoneRules(identifier: identifier) else { fatalError("no tz rules for \(identifier)") }
    return rules
}

/// The instant at which the wall clock in `zone` reads `text` (`YYYY-MM-DDTHH:MM`).
private func wall(_ text: String, _ zone: ZoneRules = .utc) -> Instant {
    guard let parsed = LocalDateTime.parseWithOffset(text) else { fatalError("bad local time \(text)") }
    return zone.instant(for: parsed.local)
}

/// An instant written in ISO 8601 with its offset or `Z`.
private func instant(_ text: String) -> Instant {
    guard let value = Instant(iso8601: text) else { fatalError("bad instant \(text)") }
    return value
}

private func quiet(_ start: String, _ end: String, on weekdays: Set<Weekday> = []) -> QuietHours {
    guard let start = LocalTimeOfDay(start), let end = LocalTimeOfDay(end),
        let hours = try? QuietHours(start: start, end: end, weekdays: weekdays)
    else { fatalError("bad quiet hours \(start)-\(end)") }
    return hours
}

private func preferences(quiet: QuietHours? = nil, perHour: Int = 10, perDay: Int? = nil) -> NotificationPreferences {
    var p = NotificationPreferences()
    p.quietHours = quiet
    p.maxPerHour = perHour
    p.maxPerDay = perDay
    return p
}

/// A candidate with the kind's staleness. The rule mechanics are tested with the wait-until-allowed
/// deferral (`deferral: nil`); the kinds' own drop and fold policies have their own tests below.
private func candidate(
    _ kind: NotificationKind, at planned: Instant, in zone: ZoneRules = .utc, level: InterruptionLevel = .active,
    deferral: DeferralPolicy? = .deferUntilAllowed
) -> Candidate {
    var policy = KindPolicy.standard(for: kind)
    if let deferral { policy.deferral = deferral }
    return Candidate(
        id: OccurrenceID(kind, date: zone.localDate(at: planned), .example(for: kind)), kind: kind, plannedAt: planned,
        level: level,
        policy: policy)
}

private func evaluate(
    _ candidate: Candidate, _ preferences: NotificationPreferences, in zone: ZoneRules = .utc, ledger: [Instant] = []
) -> RuleOutcome {
    DeliveryRules.evaluate(
        candidate, at: candidate.plannedAt - 1, preferences: preferences, zone: zone, ledger: CapLedger(ledger))
}

/// The rolling-window statement of the hourly cap for the windows that contain `inserted`.
private func fitsHourlyCap(_ entries: [Int64], inserted: Int64, cap: Int) -> Bool {
    let all = entries + [inserted]
    let ends = [inserted] + entries.filter { $0 >= inserted && $0 < inserted + .secondsPerHour }
    return ends.allSatisfy { end in all.count { $0 > end - .secondsPerHour && $0 <= end } <= cap }
}

private let nightQuiet = quiet("22:00", "07:00")
private let transactionalKinds: [NotificationKind] = [.securityAlert, .mention, .followRequest]

// MARK: - On time

@Suite("DeliveryRules: on time")
struct DeliveryRulesOnTimeTests {
    @Test(arguments: NotificationKind.allCases)
    func withNoRuleInTheWayEveryKindIsSentAtItsPlannedTime(kind: NotificationKind) {
        let planned = wall("2027-03-01T12:00")
        let expected: ReasonCode = kind.isTransactional ? .capExemptTransactional : .onTime
        #expect(evaluate(candidate(kind, at: planned), preferences()) == .send(fireAt: planned, reason: expected))
    }

    @Test(arguments: ["2027-03-01T07:00", "2027-03-01T12:00", "2027-03-01T21:59"])
    func aTimeOutsideQuietHoursIsSentOnTime(local: String) {
        let planned = wall(local)
        let outcome = evaluate(candidate(.achievement, at: planned), preferences(quiet: nightQuiet))
        #expect(outcome == .send(fireAt: planned, reason: .onTime))
    }

    @Test func roomUnderBothCapsIsSentOnTime() {
        let planned = wall("2027-03-01T12:00")
        let ledger = ["08:00", "09:00", "11:30", "11:45"].map { wall("2027-03-01T\($0)") }
        let outcome = evaluate(candidate(.achievement, at: planned), preferences(perHour: 3, perDay: 5), ledger: ledger)
        #expect(outcome == .send(fireAt: planned, reason: .onTime))
    }

    @Test func theSameInputsGiveTheSameOutcome() {
        let planned = wall("2027-03-01T06:30")
        let c = candidate(.mealReminder, at: planned)
        let p = preferences(quiet: nightQuiet, perHour: 2, perDay: 4)
        let ledger = [wall("2027-03-01T07:00"), wall("2027-03-01T07:10")]
        let first = evaluate(c, p, ledger: ledger)
        for _ in 0..<5 { #expect(evaluate(c, p, ledger: ledger) == first) }
    }
}

// MARK: - Quiet hours

/// A planned wall time, and the wall time it is sent at (nil: dropped), under 22:00-07:00.
struct QuietCase: Sendable, CustomTestStringConvertible {
    var kind: NotificationKind
    var planned: String
    var expected: String?

    var testDescription: String { "\(kind) at \(planned) -> \(expected ?? "dropped")" }
}

private let quietCases: [QuietCase] = [
    QuietCase(kind: .mealReminder, planned: "2027-03-02T06:30", expected: "2027-03-02T07:00"),
    QuietCase(kind: .mealReminder, planned: "2027-03-02T06:00", expected: "2027-03-02T07:00"),
    QuietCase(kind: .mealReminder, planned: "2027-03-02T05:59", expected: nil),
    QuietCase(kind: .hydration, planned: "2027-03-02T06:30", expected: "2027-03-02T07:00"),
    QuietCase(kind: .hydration, planned: "2027-03-02T06:29", expected: nil),
    QuietCase(kind: .workoutReminder, planned: "2027-03-02T06:50", expected: "2027-03-02T07:00"),
    QuietCase(kind: .workoutReminder, planned: "2027-03-02T06:49", expected: nil),
    QuietCase(kind: .preWorkout, planned: "2027-03-02T06:59", expected: "2027-03-02T07:00"),
    QuietCase(kind: .preWorkout, planned: "2027-03-01T22:00", expected: nil),
    QuietCase(kind: .morningGreeting, planned: "2027-03-02T04:00", expected: "2027-03-02T07:00"),
    QuietCase(kind: .morningGreeting, planned: "2027-03-02T03:59", expected: nil),
    QuietCase(kind: .postWorkoutCheckIn, planned: "2027-03-01T23:00", expected: nil),
    QuietCase(kind: .energyLog, planned: "2027-03-02T04:30", expected: "2027-03-02T07:00"),
    QuietCase(kind: .achievement, planned: "2027-03-02T01:00", expected: "2027-03-02T07:00"),
    QuietCase(kind: .achievement, planned: "2027-03-02T00:59", expected: nil),
    QuietCase(kind: .reEngagement, planned: "2027-03-01T22:00", expected: "2027-03-02T07:00"),
    QuietCase(kind: .weeklyReview, planned: "2027-03-01T23:30", expected: "2027-03-02T07:00"),
    QuietCase(kind: .reflection, planned: "2027-03-01T22:30", expected: "2027-03-02T07:00"),
    QuietCase(kind: .securityAlert, planned: "2027-03-01T22:00", expected: "2027-03-02T07:00"),
    QuietCase(kind: .mention, planned: "2027-03-02T02:00", expected: "2027-03-02T07:00"),
    QuietCase(kind: .mention, planned: "2027-03-02T00:30", expected: nil),
]

@Suite("DeliveryRules: quiet hours")
struct DeliveryRulesQuietHoursTests {
    /// Each kind waits for the end of a window that wraps midnight only as long as its staleness allows.
    @Test(arguments: quietCases, ["UTC", "Europe/Berlin", "Asia/Kathmandu", "America/New_York"])
    func aQuietTimeIsHeldUntilTheWindowEndsOrDroppedWhenThatIsTooLate(_ c: QuietCase, zoneID: String) {
        let z = zoneID == "UTC" ? ZoneRules.utc : zone(zoneID)
        let outcome = evaluate(candidate(c.kind, at: wall(c.planned, z), in: z), preferences(quiet: nightQuiet), in: z)
        let expected: RuleOutcome =
            c.expected.map { .send(fireAt: wall($0, z), reason: .quietHours) } ?? .drop(reason: .quietHours)
        #expect(outcome == expected)
    }

    @Test func theStartOfQuietHoursIsInsideAndTheEndIsOutside() {
        let p = preferences(quiet: nightQuiet)
        let atStart = wall("2027-03-01T22:00")
        #expect(
            evaluate(candidate(.reEngagement, at: atStart), p)
                == .send(fireAt: wall("2027-03-02T07:00"), reason: .quietHours))
        let atEnd = wall("2027-03-02T07:00")
        #expect(evaluate(candidate(.reEngagement, at: atEnd), p) == .send(fireAt: atEnd, reason: .onTime))
        let lastQuietMinute = wall("2027-03-02T06:59")
        #expect(evaluate(candidate(.reEngagement, at: lastQuietMinute), p) == .send(fireAt: atEnd, reason: .quietHours))
    }

    @Test func aWindowWithinOneDayHoldsUntilItsEnd() {
        let p = preferences(quiet: quiet("13:00", "15:00"))
        #expect(
            evaluate(candidate(.achievement, at: wall("2027-03-01T14:00")), p)
                == .send(fireAt: wall("2027-03-01T15:00"), reason: .quietHours))
        for local in ["2027-03-01T12:59", "2027-03-01T15:00", "2027-03-01T23:30", "2027-03-02T02:00"] {
            #expect(
                evaluate(candidate(.achievement, at: wall(local)), p) == .send(fireAt: wall(local), reason: .onTime))
        }
    }

    /// Quiet hours 23:00-08:00 on Fridays and Saturdays: a window belongs to the day it starts on.
    @Test(
        arguments: [
            // 2027-03-04 is a Thursday.
            ("2027-03-04T23:30", nil),
            ("2027-03-05T02:00", nil),
            ("2027-03-05T23:30", "2027-03-06T08:00"),
            ("2027-03-06T02:00", "2027-03-06T08:00"),
            ("2027-03-06T12:00", nil),
            ("2027-03-06T23:30", "2027-03-07T08:00"),
            ("2027-03-07T02:00", "2027-03-07T08:00"),
            ("2027-03-07T23:30", nil),
            ("2027-03-08T02:00", nil),
        ] as [(String, String?)])
    func weekdayQuietHoursApplyOnTheWeekdayTheyStart(planned: String, heldUntil: String?) {
        let kathmandu = zone("Asia/Kathmandu")
        let p = preferences(quiet: quiet("23:00", "08:00", on: [.friday, .saturday]))
        let plannedAt = wall(planned, kathmandu)
        let outcome = evaluate(candidate(.reEngagement, at: plannedAt, in: kathmandu), p, in: kathmandu)
        let expected: RuleOutcome =
            heldUntil.map { .send(fireAt: wall($0, kathmandu), reason: .quietHours) }
            ?? .send(fireAt: plannedAt, reason: .onTime)
        #expect(outcome == expected)
    }

    @Test func aDaytimeWindowOnOneWeekdayLeavesTheOtherDaysAlone() {
        let p = preferences(quiet: quiet("13:00", "15:00", on: [.sunday]))
        // 2027-03-07 is a Sunday.
        #expect(
            evaluate(candidate(.achievement, at: wall("2027-03-07T14:00")), p)
                == .send(fireAt: wall("2027-03-07T15:00"), reason: .quietHours))
        let monday = wall("2027-03-08T14:00")
        #expect(evaluate(candidate(.achievement, at: monday), p) == .send(fireAt: monday, reason: .onTime))
    }

    /// 02:30 does not exist in New York on 2027-03-14; the window ends when the clock jumps to 03:00.
    @Test func aWindowEndingInTheSpringForwardGapEndsAtTheJump() {
        let newYork = zone("America/New_York")
        let planned = instant("2027-03-14T01:30:00-05:00")
        let outcome = evaluate(
            candidate(.achievement, at: planned, in: newYork), preferences(quiet: quiet("01:00", "02:30")), in: newYork)
        #expect(outcome == .send(fireAt: instant("2027-03-14T03:00:00-04:00"), reason: .quietHours))
    }

    /// 01:00-02:00 happens twice in New York on 2027-11-07; in the first pass the window ends at the first 01:30.
    @Test func inTheFirstPassOfARepeatedHourTheWindowEndsAtTheFirstOccurrence() {
        let newYork = zone("America/New_York")
        let planned = instant("2027-11-07T01:15:00-04:00")
        let outcome = evaluate(
            candidate(.achievement, at: planned, in: newYork), preferences(quiet: quiet("22:00", "01:30")), in: newYork)
        #expect(outcome == .send(fireAt: instant("2027-11-07T01:30:00-04:00"), reason: .quietHours))
    }

    /// In the second pass of the repeated hour the clock reads 01:15 again, inside quiet hours; the
    /// first 01:30 is already past, so the notification must wait for the second 01:30, not fire
    /// before its planned time.
    @Test func inTheSecondPassOfARepeatedHourNothingFiresBeforeItsPlannedTime() {
        let newYork = zone("America/New_York")
        let planned = instant("2027-11-07T01:15:00-05:00")
        let outcome = evaluate(
            candidate(.achievement, at: planned, in: newYork), preferences(quiet: quiet("22:00", "01:30")), in: newYork)
        if case .send(let fireAt, _) = outcome { #expect(fireAt >= planned, "fires at \(fireAt), planned \(planned)") }
        #expect(outcome == .send(fireAt: instant("2027-11-07T01:30:00-05:00"), reason: .quietHours))
    }
}

// MARK: - Staleness

/// Minutes each kind may wait past its planned time.
private let stalenessMinutes: [(NotificationKind, Int64)] = [
    (.workoutReminder, 10), (.preWorkout, 10), (.hydration, 30), (.mealReminder, 60), (.morningGreeting, 180),
    (.postWorkoutCheckIn, 180), (.energyLog, 180), (.checkInReminder, 180), (.reEngagement, 1_080),
    (.weeklyReview, 1_080), (.reflection, 1_080), (.securityAlert, 1_440), (.achievement, 360), (.mention, 360),
    (.leaderboardChange, 360),
]

@Suite("DeliveryRules: standard staleness")
struct KindPolicyTests {
    @Test(arguments: stalenessMinutes)
    func eachKindWaitsNoLongerThanItStaysUseful(kind: NotificationKind, minutes: Int64) {
        #expect(KindPolicy.standard(for: kind).stalenessSeconds == minutes * .secondsPerMinute)
    }

    @Test(arguments: NotificationKind.allCases)
    func everyKindMayWaitAtLeastTenMinutesAndAtMostADay(kind: NotificationKind) {
        let staleness = KindPolicy.standard(for: kind).stalenessSeconds
        #expect(staleness >= 10 * .secondsPerMinute && staleness <= .secondsPerDay)
    }
}

// MARK: - Interruption levels

@Suite("DeliveryRules: interruption levels")
struct DeliveryRulesInterruptionLevelTests {
    @Test(arguments: InterruptionLevel.allCases)
    func onlyTheCriticalLevelBreaksThroughQuietHours(level: InterruptionLevel) {
        let planned = wall("2027-03-02T02:00")
        let outcome = evaluate(candidate(.achievement, at: planned, level: level), preferences(quiet: nightQuiet))
        if level == .critical {
            #expect(outcome == .send(fireAt: planned, reason: .onTime))
        } else {
            #expect(outcome == .send(fireAt: wall("2027-03-02T07:00"), reason: .quietHours))
        }
    }

    @Test func aCriticalWorkoutReminderIsNotDroppedByQuietHours() {
        let planned = wall("2027-03-01T23:00")
        let p = preferences(quiet: nightQuiet)
        #expect(evaluate(candidate(.workoutReminder, at: planned), p) == .drop(reason: .quietHours))
        #expect(
            evaluate(candidate(.workoutReminder, at: planned, level: .critical), p)
                == .send(fireAt: planned, reason: .onTime))
    }

    @Test func aSecurityAlertAtItsDefaultLevelArrivesAtOnceInQuietHoursWithFullCaps() {
        let planned = wall("2027-03-02T03:00")
        let ledger = Array(repeating: wall("2027-03-02T02:59"), count: 5)
        let c = candidate(.securityAlert, at: planned, level: NotificationKind.securityAlert.defaultInterruptionLevel)
        let outcome = evaluate(c, preferences(quiet: nightQuiet, perHour: 1, perDay: 1), ledger: ledger)
        #expect(outcome == .send(fireAt: planned, reason: .capExemptTransactional))
    }
}

// MARK: - Transactional kinds

@Suite("DeliveryRules: transactional kinds")
struct DeliveryRulesTransactionalTests {
    @Test func theTransactionalKindsAreSecurityAlertsMentionsAndFollowRequests() {
        #expect(Set(NotificationKind.allCases.filter(\.isTransactional)) == Set(transactionalKinds))
    }

    /// A ledger that fills both caps: transactional kinds go through, every other kind is stopped.
    @Test(arguments: NotificationKind.allCases)
    func onlyTransactionalKindsAreExemptFromCaps(kind: NotificationKind) {
        let planned = wall("2027-03-01T12:00")
        let ledger = [wall("2027-03-01T11:50"), wall("2027-03-01T11:55")]
        let outcome = evaluate(candidate(kind, at: planned), preferences(perHour: 2, perDay: 2), ledger: ledger)
        if kind.isTransactional {
            #expect(outcome == .send(fireAt: planned, reason: .capExemptTransactional))
        } else {
            #expect(outcome == .drop(reason: .capPerDay))
        }
    }

    @Test(arguments: transactionalKinds)
    func transactionalKindsIgnoreAFullHour(kind: NotificationKind) {
        let planned = wall("2027-03-01T12:00")
        let ledger = Array(repeating: planned, count: 10)
        let outcome = evaluate(candidate(kind, at: planned), preferences(perHour: 1), ledger: ledger)
        #expect(outcome == .send(fireAt: planned, reason: .capExemptTransactional))
    }

    @Test(arguments: [NotificationKind.mention, .followRequest])
    func aTransactionalKindIsStillHeldByQuietHoursAndThenNotCapped(kind: NotificationKind) {
        let opens = wall("2027-03-02T07:00")
        let ledger = Array(repeating: opens, count: 5)
        let p = preferences(quiet: nightQuiet, perHour: 1, perDay: 1)
        #expect(
            evaluate(candidate(kind, at: wall("2027-03-02T02:00")), p, ledger: ledger)
                == .send(fireAt: opens, reason: .quietHours))
    }
}

// MARK: - Hourly cap

@Suite("DeliveryRules: hourly cap")
struct DeliveryRulesHourlyCapTests {
    private let fullHour = ["09:00", "09:10", "09:20"].map { wall("2027-03-01T\($0)") }

    @Test func aFullHourDefersUntilTheOldestEntryIsAnHourOld() {
        let outcome = evaluate(
            candidate(.achievement, at: wall("2027-03-01T09:30")), preferences(perHour: 3), ledger: fullHour)
        #expect(outcome == .send(fireAt: wall("2027-03-01T10:00"), reason: .capPerHour))
    }

    @Test func entriesAlreadyPlannedAfterTheCandidateCountToo() {
        let ledger = ["09:40", "09:50", "10:00"].map { wall("2027-03-01T\($0)") }
        let outcome = evaluate(
            candidate(.achievement, at: wall("2027-03-01T09:30")), preferences(perHour: 3), ledger: ledger)
        #expect(outcome == .send(fireAt: wall("2027-03-01T10:40"), reason: .capPerHour))
    }

    /// The deferral to 10:00 is 30 minutes: within the staleness of some kinds, past that of others.
    @Test(arguments: [
        (NotificationKind.workoutReminder, false), (.preWorkout, false), (.hydration, true), (.mealReminder, true),
        (.achievement, true), (.morningGreeting, true),
    ])
    func aDeferralPastTheStalenessDeadlineDrops(kind: NotificationKind, sent: Bool) {
        let outcome = evaluate(candidate(kind, at: wall("2027-03-01T09:30")), preferences(perHour: 3), ledger: fullHour)
        #expect(
            outcome
                == (sent ? .send(fireAt: wall("2027-03-01T10:00"), reason: .capPerHour) : .drop(reason: .capPerHour)))
    }

    @Test func aDeferralOutOfQuietHoursIntoAFullHourDefersAgain() {
        let ledger = [wall("2027-03-02T07:00"), wall("2027-03-02T07:05")]
        let p = preferences(quiet: nightQuiet, perHour: 2)
        #expect(
            evaluate(candidate(.achievement, at: wall("2027-03-02T06:00")), p, ledger: ledger)
                == .send(fireAt: wall("2027-03-02T08:00"), reason: .quietHours))
        // A meal reminder may wait only until 07:30: the quiet-hours end is fine, the full hour is not.
        #expect(
            evaluate(candidate(.mealReminder, at: wall("2027-03-02T06:30")), p, ledger: ledger)
                == .drop(reason: .capPerHour))
    }

    @Test func aCapDeferralIntoQuietHoursDefersAgain() {
        let ledger = [wall("2027-03-01T21:10")]
        let p = preferences(quiet: nightQuiet, perHour: 1)
        #expect(
            evaluate(candidate(.reEngagement, at: wall("2027-03-01T21:30")), p, ledger: ledger)
                == .send(fireAt: wall("2027-03-02T07:00"), reason: .capPerHour))
        // The meal reminder's 22:10 is within its hour but falls into quiet hours, which last too long.
        #expect(
            evaluate(candidate(.mealReminder, at: wall("2027-03-01T21:30")), p, ledger: ledger)
                == .drop(reason: .quietHours))
    }

    /// One entry on the 1st, two on the 2nd: the hourly cap moves 23:30 on the 1st to 01:30 on the 2nd.
    @Test func aCapDeferralIntoTheNextLocalDayIsCheckedAgainstThatDaysCap() {
        let ledger = [wall("2027-03-01T23:00"), wall("2027-03-02T00:30"), wall("2027-03-02T05:00")]
        let planned = wall("2027-03-01T23:30")
        #expect(
            evaluate(candidate(.achievement, at: planned), preferences(perHour: 1, perDay: 3), ledger: ledger)
                == .send(fireAt: wall("2027-03-02T01:30"), reason: .capPerHour))
        #expect(
            evaluate(candidate(.achievement, at: planned), preferences(perHour: 1, perDay: 2), ledger: ledger)
                == .drop(reason: .capPerDay))
    }
}

// MARK: - Daily cap per local day

/// One local calendar day with its bounds in UTC, worked out independently of `ZoneRules`.
struct LocalDayCase: Sendable, CustomTestStringConvertible {
    var zoneID: String
    var date: String
    /// Local midnight starting the day, and the next local midnight, in UTC.
    var start: String
    var end: String
    var hours: Double

    var testDescription: String { "\(zoneID) \(date) (\(hours) h)" }
}

private let localDays: [LocalDayCase] = [
    LocalDayCase(
        zoneID: "Asia/Kathmandu", date: "2027-03-01", start: "2027-02-28T18:15:00Z", end: "2027-03-01T18:15:00Z",
        hours: 24),
    LocalDayCase(
        zoneID: "Pacific/Chatham", date: "2027-03-01", start: "2027-02-28T10:15:00Z", end: "2027-03-01T10:15:00Z",
        hours: 24),
    LocalDayCase(
        zoneID: "Pacific/Chatham", date: "2027-06-01", start: "2027-05-31T11:15:00Z", end: "2027-06-01T11:15:00Z",
        hours: 24),
    LocalDayCase(
        zoneID: "Pacific/Chatham", date: "2027-04-04", start: "2027-04-03T10:15:00Z", end: "2027-04-04T11:15:00Z",
        hours: 25),
    LocalDayCase(
        zoneID: "Pacific/Chatham", date: "2027-09-26", start: "2027-09-25T11:15:00Z", end: "2027-09-26T10:15:00Z",
        hours: 23),
    LocalDayCase(
        zoneID: "America/New_York", date: "2027-03-14", start: "2027-03-14T05:00:00Z", end: "2027-03-15T04:00:00Z",
        hours: 23),
    LocalDayCase(
        zoneID: "Australia/Lord_Howe", date: "2027-04-04", start: "2027-04-03T13:00:00Z",
        end: "2027-04-04T13:30:00Z", hours: 24.5),
    LocalDayCase(
        zoneID: "Australia/Lord_Howe", date: "2027-10-03", start: "2027-10-02T13:30:00Z",
        end: "2027-10-03T13:00:00Z", hours: 23.5),
]

@Suite("DeliveryRules: daily cap per local day")
struct DeliveryRulesDailyCapTests {
    /// Two per day, and an hourly cap loose enough to stay out of the way.
    private let twoPerDay = preferences(perHour: 60, perDay: 2)

    @Test(arguments: localDays)
    func theTableAgreesWithTheZone(_ day: LocalDayCase) {
        let z = zone(day.zoneID)
        let start = instant(day.start)
        let end = instant(day.end)
        #expect(Double(end - start) == day.hours * 3_600)
        #expect(wall("\(day.date)T00:00", z) == start)
        #expect(z.localDate(at: start).description == day.date)
        #expect(z.localDate(at: end - 1).description == day.date)
        #expect(z.localDate(at: end).description != day.date)
    }

    @Test(arguments: localDays)
    func entriesAtTheFirstAndLastMinuteOfTheLocalDayFillIt(_ day: LocalDayCase) {
        let z = zone(day.zoneID)
        let start = instant(day.start)
        let end = instant(day.end)
        let ledger = [start, end - 60]
        let middle = start + (end - start) / 2 / 60 * 60
        for planned in [start + 60, middle, end - 120] {
            let outcome = evaluate(candidate(.achievement, at: planned, in: z), twoPerDay, in: z, ledger: ledger)
            #expect(outcome == .drop(reason: .capPerDay), "planned \(z.formatted(planned))")
        }
    }

    @Test(arguments: localDays)
    func entriesJustOutsideTheLocalDayDoNotCount(_ day: LocalDayCase) {
        let z = zone(day.zoneID)
        let start = instant(day.start)
        let end = instant(day.end)
        let ledger = [start - 3_600, start - 60, start + 3_600, end, end + 60, end + 3_600]
        let middle = start + (end - start) / 2 / 60 * 60
        let outcome = evaluate(candidate(.achievement, at: middle, in: z), twoPerDay, in: z, ledger: ledger)
        #expect(outcome == .send(fireAt: middle, reason: .onTime))
    }

    @Test(arguments: localDays)
    func theFirstMinuteOfTheNextLocalDayIsNotBlockedByAFullDay(_ day: LocalDayCase) {
        let z = zone(day.zoneID)
        let start = instant(day.start)
        let end = instant(day.end)
        let outcome = evaluate(candidate(.achievement, at: end, in: z), twoPerDay, in: z, ledger: [start, end - 60])
        #expect(outcome == .send(fireAt: end, reason: .onTime))
    }

    /// 14:00 in Kathmandu is 08:15 UTC: a UTC day would miss the evening before and count the evening after.
    @Test func theCapCountsTheLocalDayNotTheUTCDay() {
        let kathmandu = zone("Asia/Kathmandu")
        let planned = wall("2027-03-01T14:00", kathmandu)
        // Both on the local 1st, but on the UTC 28th of February.
        let localMorning = [wall("2027-03-01T00:10", kathmandu), wall("2027-03-01T05:00", kathmandu)]
        #expect(
            evaluate(
                candidate(.achievement, at: planned, in: kathmandu), twoPerDay, in: kathmandu, ledger: localMorning)
                == .drop(reason: .capPerDay))
        // Both on the UTC 1st of March, but on the local 2nd.
        let nextLocalDay = [wall("2027-03-02T00:10", kathmandu), wall("2027-03-02T05:00", kathmandu)]
        #expect(
            evaluate(
                candidate(.achievement, at: planned, in: kathmandu), twoPerDay, in: kathmandu, ledger: nextLocalDay)
                == .send(fireAt: planned, reason: .onTime))
    }

    @Test func aFullDayDropsEvenWithoutAnyHourlyPressure() {
        let ledger = ["06:00", "09:00", "12:00"].map { wall("2027-03-01T\($0)") }
        let outcome = evaluate(
            candidate(.reEngagement, at: wall("2027-03-01T18:00")), preferences(perDay: 3), ledger: ledger)
        #expect(outcome == .drop(reason: .capPerDay))
    }

    @Test func aQuietHoursDeferralIntoAFullDayDrops() {
        let ledger = ["07:00", "09:00"].map { wall("2027-03-02T\($0)") }
        let p = preferences(quiet: nightQuiet, perDay: 2)
        #expect(
            evaluate(candidate(.reEngagement, at: wall("2027-03-01T23:00")), p, ledger: ledger)
                == .drop(reason: .capPerDay))
        // Without quiet hours it goes out on its own day, which has room.
        #expect(
            evaluate(candidate(.reEngagement, at: wall("2027-03-01T23:00")), preferences(perDay: 2), ledger: ledger)
                == .send(fireAt: wall("2027-03-01T23:00"), reason: .onTime))
    }
}

// MARK: - Explanations

@Suite("DeliveryRules: explain")
struct DeliveryRulesExplainTests {
    private let p = preferences(quiet: nightQuiet, perHour: 3, perDay: 5)

    @Test(arguments: [ReasonCode.quietHours, .capPerHour, .capPerDay, .stale, .capExemptTransactional], [false, true])
    func everyRuleReasonHasAnExplanation(reason: ReasonCode, dropped: Bool) {
        let text = RuleLimits(p).explain(reason, dropped: dropped)
        #expect(!text.isEmpty)
        #expect(!text.contains("nil") && !text.contains("Optional("))
    }

    @Test func explanationsNameTheValuesThatDecided() {
        #expect(RuleLimits(p).explain(.quietHours, dropped: false).contains("22:00-07:00"))
        #expect(RuleLimits(p).explain(.quietHours, dropped: true).contains("22:00-07:00"))
        #expect(RuleLimits(p).explain(.capPerHour, dropped: false).contains("3 per hour"))
        #expect(RuleLimits(p).explain(.capPerHour, dropped: true).contains("3 per hour"))
        #expect(RuleLimits(p).explain(.capPerDay, dropped: true).contains("5 per day"))
    }

    @Test func deferredAndDroppedExplanationsDiffer() {
        for reason in [ReasonCode.quietHours, .capPerHour] {
            #expect(
                RuleLimits(p).explain(reason, dropped: false)
                    != RuleLimits(p).explain(reason, dropped: true))
        }
    }

    @Test func quietHoursAreExplainedEvenWithoutQuietHoursSet() {
        #expect(!RuleLimits(preferences()).explain(.quietHours, dropped: true).isEmpty)
    }
}

// MARK: - Properties over random scenarios

@Suite("DeliveryRules: properties")
struct DeliveryRulesPropertyTests {
    private static let zones: [ZoneRules] =
        [.utc]
        + ["Asia/Kathmandu", "Pacific/Chatham", "America/New_York", "Australia/Lord_Howe", "Europe/London"].map(zone)

    /// Random users, ledgers and candidates across a year of DST changes. Every send keeps every
    /// rule, never fires before its plan or after its deadline, and no earlier minute would have
    /// passed quiet hours and the hourly cap; every drop names a rule and leaves no minute free.
    @Test func randomScenariosKeepEveryRule() {
        var g = SeededGenerator(seed: 0xDE11_7E47)
        let firstDay = LocalDate(year: 2027, month: 1, day: 1).daysSinceEpoch
        for trial in 0..<600 {
            let z = Self.zones[g.int(in: 0...(Self.zones.count - 1))]
            let kind = NotificationKind.allCases[g.int(in: 0...(NotificationKind.allCases.count - 1))]
            let level = InterruptionLevel.allCases[g.int(in: 0...(InterruptionLevel.allCases.count - 1))]
            let localPlanned = LocalDateTime(
                localSeconds: (firstDay + Int64(g.int(in: 0...364))) * .secondsPerDay + Int64(g.int(in: 0...1_439)) * 60
            )
            let planned = z.instant(for: localPlanned)
            var p = NotificationPreferences()
            if g.chance(0.7) {
                let start = g.int(in: 0...95) * 15
                var end = g.int(in: 0...95) * 15
                if end == start { end = (start + 60) % 1_440 }
                let weekdays = g.chance(0.3) ? Set(Weekday.allCases.filter { _ in g.chance(0.5) }) : []
                p.quietHours = try? QuietHours(
                    start: LocalTimeOfDay(minutesSinceMidnight: start), end: LocalTimeOfDay(minutesSinceMidnight: end),
                    weekdays: weekdays)
            }
            p.maxPerHour = g.int(in: 1...6)
            p.maxPerDay = g.chance(0.5) ? g.int(in: 1...12) : nil
            let entries = (0..<g.int(in: 0...20)).map { _ in
                planned.secondsSinceEpoch + Int64(g.int(in: -600...900)) * 60
            }
            let ledger = entries.map { Instant(secondsSinceEpoch: $0) }
            let c = candidate(kind, at: planned, in: z, level: level, deferral: nil)
            let deadline = planned + c.policy.stalenessSeconds
            let outcome = evaluate(c, p, in: z, ledger: ledger)
            let quietText = p.quietHours.map { "\($0.start)-\($0.end) on \($0.weekdays.sorted())" } ?? "none"
            let context = """
                trial \(trial): \(kind) \(level) at \(z.formatted(planned)) in \(z), quiet \(quietText), \
                \(p.maxPerHour)/h, \(p.maxPerDay.map(String.init) ?? "-")/day, ledger \(entries.sorted()) -> \(outcome)
                """

            #expect(evaluate(c, p, in: z, ledger: ledger) == outcome, "not deterministic; \(context)")

            /// Whether the rules that defer (quiet hours, the hourly cap) block `seconds`.
            func blocked(_ seconds: Int64) -> Bool {
                let inQuiet =
                    level != .critical
                    && p.quietHours?.contains(z.localDateTime(at: Instant(secondsSinceEpoch: seconds))) == true
                let overCap = !kind.isTransactional && !fitsHourlyCap(entries, inserted: seconds, cap: p.maxPerHour)
                return inQuiet || overCap
            }

            switch outcome {
            case .send(let fireAt, let reason):
                #expect(fireAt >= planned, "fires before its plan; \(context)")
                #expect(fireAt <= deadline, "fires after its deadline; \(context)")
                #expect(!blocked(fireAt.secondsSinceEpoch), "fires while blocked; \(context)")
                if let dayCap = p.maxPerDay, !kind.isTransactional {
                    let day = z.localDateTime(at: fireAt).daysSinceEpoch
                    let sameDay = entries.count {
                        z.localDateTime(at: Instant(secondsSinceEpoch: $0)).daysSinceEpoch == day
                    }
                    #expect(sameDay < dayCap, "local day already full; \(context)")
                }
                switch reason {
                case .onTime:
                    #expect(fireAt == planned && !kind.isTransactional, "\(context)")
                case .capExemptTransactional:
                    #expect(fireAt == planned && kind.isTransactional, "\(context)")
                case .quietHours, .capPerHour:
                    #expect(fireAt > planned, "\(context)")
                    #expect(!RuleLimits(p).explain(reason, dropped: false).isEmpty)
                default:
                    Issue.record("unexpected send reason \(reason); \(context)")
                }
                if fireAt > planned {
                    let earlier = stride(from: planned.secondsSinceEpoch, to: fireAt.secondsSinceEpoch, by: 60)
                        .first { !blocked($0) }
                    #expect(earlier == nil, "an earlier minute was free: \(earlier ?? 0); \(context)")
                }
            case .drop(let reason):
                #expect([.quietHours, .capPerHour, .capPerDay, .stale].contains(reason), "\(context)")
                #expect(!RuleLimits(p).explain(reason, dropped: true).isEmpty)
                if kind.isTransactional { #expect(reason != .capPerHour && reason != .capPerDay, "\(context)") }
                if reason == .capPerDay { #expect(p.maxPerDay != nil && !kind.isTransactional, "\(context)") }
                if (reason == .quietHours || reason == .capPerHour) && c.policy.deferral == .deferUntilAllowed {
                    let free = stride(from: planned.secondsSinceEpoch, through: deadline.secondsSinceEpoch, by: 60)
                        .first { !blocked($0) }
                    #expect(free == nil, "dropped though a minute was free: \(free ?? 0); \(context)")
                }
                if c.policy.deferral == .drop && (reason == .quietHours || reason == .capPerHour) {
                    #expect(blocked(planned.secondsSinceEpoch), "\(context)")
                }
            case .fold(let reason):
                // Folding kinds go to the digest as soon as a rule blocks them.
                #expect(c.policy.deferral == .foldIntoDigest, "\(context)")
                #expect([.quietHours, .capPerHour, .capPerDay].contains(reason), "\(context)")
            }
        }
    }
}

@Suite("DeliveryRules: deferral policies")
struct DeferralPolicyTests {
    let quiet = { () -> NotificationPreferences in
        var p = NotificationPreferences()
        p.quietHours = try! QuietHours(start: LocalTimeOfDay("22:00")!, end: LocalTimeOfDay("07:00")!)
        return p
    }()

    @Test func aDropKindIsDroppedTheMomentARuleBlocksIt() {
        let c = candidate(.hydration, at: Instant(iso8601: "2027-03-02T06:50:00Z")!, deferral: .drop)
        #expect(evaluate(c, quiet) == .drop(reason: .quietHours))
    }

    @Test func aFoldKindGoesToTheDigestTheMomentARuleBlocksIt() {
        let c = candidate(.workoutKudos, at: Instant(iso8601: "2027-03-02T06:50:00Z")!, deferral: nil)
        #expect(KindPolicy.standard(for: .workoutKudos).deferral == .foldIntoDigest)
        #expect(evaluate(c, quiet) == .fold(reason: .quietHours))
        var capped = NotificationPreferences()
        capped.maxPerDay = 1
        let planned = Instant(iso8601: "2027-03-02T12:00:00Z")!
        #expect(
            evaluate(candidate(.workoutKudos, at: planned, deferral: nil), capped, ledger: [planned - 60])
                == .fold(reason: .capPerDay))
    }

    @Test func unblockedKindsGoOutOnTimeWhateverTheirPolicy() {
        for deferral in DeferralPolicy.allCases {
            let planned = Instant(iso8601: "2027-03-02T12:00:00Z")!
            #expect(
                evaluate(candidate(.hydration, at: planned, deferral: deferral), quiet)
                    == .send(fireAt: planned, reason: .onTime))
        }
    }

    @Test func nonUrgentKindsWaitForTheEndOfTheAppSessionAndUrgentOnesDoNot() {
        let planned = Instant(iso8601: "2027-03-02T12:00:00Z")!
        let sessionEnd = planned + 300
        let routine = DeliveryRules.evaluate(
            candidate(.mealReminder, at: planned), at: planned - 60, preferences: NotificationPreferences(), zone: .utc,
            ledger: CapLedger(),
            activeUntil: sessionEnd)
        #expect(routine == .send(fireAt: sessionEnd, reason: .userActiveInApp))
        let urgent = DeliveryRules.evaluate(
            candidate(.reEngagement, at: planned, level: .timeSensitive), at: planned - 60,
            preferences: NotificationPreferences(),
            zone: .utc, ledger: CapLedger(), activeUntil: sessionEnd)
        #expect(urgent == .send(fireAt: planned, reason: .onTime))
    }
}

extension OccurrenceSlot {
    /// A slot with the meaning `kind` takes, for tests that need any occurrence of a kind.
    static func example(for kind: NotificationKind) -> OccurrenceSlot {
        switch kind.slotMeaning {
        case .day: .day
        case .meal: .meal(.lunch)
        case .minuteOfDay: .minuteOfDay(540)
        case .attempt: .attempt(1)
        case .group: .group(1)
        case .streakDays: .streakDays(3)
        case .reminder: .reminder(number: 1, minuteOfDay: 540)
        }
    }
}
