import Testing

@testable import Models

/// A trace entry holds plain values; its text is written when read. The text must be what a
/// person reads in the explain answer and the event log, word for word.
struct TraceDetailTests {
    private let start = Instant(iso8601: "2027-03-14T06:30:00Z")!

    private func time(_ text: String) -> LocalTimeOfDay { LocalTimeOfDay(text)! }

    @Test func eachDetailWritesItsValues() throws {
        let newYork = try #require(ZoneRules(identifier: "America/New_York"))
        let at = OffsetDateTime(start, in: newYork)
        #expect(at.description == newYork.formatted(start))
        let digest = GroupSummary(mode: .dailyDigest, itemCount: 7, sendAt: at)
        let cases: [(TraceDetail, String)] = [
            (.none, ""),
            (.activeAgain(at: at), "active again at \(newYork.formatted(start))"),
            (
                .localNight(nominal: time("05:00"), wake: time("07:00"), sleep: time("22:00"), movedTo: time("07:00")),
                "05:00 is in the local night (waking hours 07:00-22:00) and no app opens show the user awake then: "
                    + "moved to 07:00"
            ),
            (
                .snoozedCopy(
                    of: OccurrenceID(.mealReminder, date: LocalDate(year: 2027, month: 6, day: 1), .meal(.breakfast))),
                "the user snoozed mealReminder.2027-06-01.breakfast"
            ),
            (
                .zoneChanged(zone: "Europe/Berlin", passedAt: time("08:00")),
                "its time passed in Europe/Berlin (08:00): sent at once"
            ),
            (.zoneChanged(zone: "Asia/Kathmandu", passedAt: nil), "re-timed in Asia/Kathmandu"),
            (.slotWindowEnded(at: time("14:00")), "its slot's window ended at 14:00"),
            (.slotWindowEnded(at: nil), "its slot's window had passed"),
            (
                .attentionBudget(interruptionsPerDay: 8),
                "the day's attention budget of 8 interruptions went to notifications this user values more"
            ),
            (.sameInstant(.hydration), "another hydration fires at the same instant: that one is kept"),
            (.reasonName(.learnedShift), "learnedShift"),
            (
                .templateKept(code: "personalData.email"),
                "template copy kept: personalData.email; the time is unchanged"
            ),
            (
                .unknownAction(String(repeating: "X", count: 100)),
                "unknown action identifier \"\(String(repeating: "X", count: 64))\""
            ),
            (.snoozedFor(minutes: 15), "snoozed 15 min"),
            (.folded(into: digest), "dailyDigest of 7 until \(at)"),
            (.countedItemsMoved(count: 3, into: digest), "3 counted items into dailyDigest of 7 until \(at)"),
            (
                .countedItemsStale(count: 2, since: at, blockedBy: .capPerDay),
                "2 counted items waiting since \(at); their digest was blocked again (capPerDay)"
            ),
            (
                .staleInDigest(since: at, blockedBy: .quietHours),
                "waiting since \(at); its digest was blocked again (quietHours)"
            ),
            (.countedItemsDisabled(count: 4, kind: .mention), "4 counted items: mention was disabled"),
        ]
        for (detail, text) in cases { #expect(detail.text == text) }
    }

    @Test func aRuleNamesTheLimitsThatMadeIt() throws {
        var preferences = NotificationPreferences()
        preferences.quietHours = try QuietHours(start: time("22:00"), end: time("07:00"))
        preferences.maxPerHour = 3
        preferences.maxPerDay = 5
        let limits = RuleLimits(preferences)
        #expect(
            TraceDetail.rule(.quietHours, dropped: false, limits: limits).text
                == "held until quiet hours 22:00-07:00 end")
        #expect(TraceDetail.rule(.capPerHour, dropped: true, limits: limits).text.hasPrefix("3 per hour"))
        #expect(
            TraceDetail.rule(.capPerDay, dropped: true, limits: limits).text == "5 per day already used that local day")
        #expect(TraceDetail.rule(.onTime, dropped: false, limits: limits).text.isEmpty)
        preferences.quietHours = nil
        #expect(
            TraceDetail.rule(.quietHours, dropped: true, limits: RuleLimits(preferences)).text
                == "quiet hours last past the deadline")
    }

    /// `isEmpty` is asked before writing (the event log leaves an empty detail out): it must
    /// agree with the text for every rule reason, dropped or not.
    @Test func anEmptyDetailSaysSoBeforeItIsWritten() {
        let limits = RuleLimits(NotificationPreferences())
        for reason in ReasonCode.allCases {
            for dropped in [false, true] {
                let detail = TraceDetail.rule(reason, dropped: dropped, limits: limits)
                #expect(detail.isEmpty == detail.text.isEmpty, "\(reason) dropped: \(dropped)")
            }
            #expect(!TraceDetail.reasonName(reason).isEmpty)
        }
        #expect(TraceDetail.none.isEmpty)
    }

    @Test func learningEvidenceNamesTheSlotTheCountsAndTheMove() {
        var tally = ResponseTally()
        tally.ignored = 3
        tally.negativeRun = 3
        var target = ResponseTally()
        target.acted = 4
        target.ignored = 1
        let shifted = LearningEvidence(
            kind: .mealReminder, packedSlot: 3, hour: 18, tally: tally,
            move: .shift(minutes: 60, from: time("18:30"), to: time("19:30"), target: target))
        #expect(
            shifted.text
                == "mealReminder.dinner at 18:00-18:59: 3 ignored, 0 acted on, the last 3 unanswered; "
                + "moved +60 min from 18:30 to 19:30, where 4 of 5 were acted on")
        let earlier = LearningEvidence(
            kind: .hydration, packedSlot: 13 * 60, hour: 13, tally: tally,
            move: .shift(minutes: -15, from: time("13:00"), to: time("12:45"), target: nil))
        #expect(earlier.text.hasPrefix("hydration.1300 at 13:00-13:59: "))
        #expect(earlier.text.hasSuffix("; moved -15 min from 13:00 to 12:45"))
        let backedOff = LearningEvidence(
            kind: .morningGreeting, packedSlot: 0, hour: 7, tally: ResponseTally(), move: .backOff(factor: 4))
        #expect(backedOff.text == "morningGreeting at 07:00-07:59: 0 acted on; sent every 4th day only")
        #expect(
            OccurrenceID.slotName(kind: .checkInReminder, packedSlot: 3 << 11 | 20 * 60) == "checkInReminder.r3-2000")
        #expect(OccurrenceID.slotName(kind: .hydration, packedSlot: 5_000) == "hydration.5000")
        let kept = LearningEvidence(kind: .morningGreeting, packedSlot: 0, hour: 0, tally: ResponseTally(), move: .kept)
        #expect(kept.text == "morningGreeting at 00:00-00:59: 0 acted on; kept")
    }

    @Test func anEntryJoinsItsReasonAndAnEarlierMove() {
        let id = OccurrenceID(.hydration, date: LocalDate(year: 2027, month: 6, day: 1), .minuteOfDay(9 * 60))
        var entry = TraceEntry(
            at: start, userID: "u1", subject: .occurrence(id), kind: .hydration, decision: .deferred,
            reason: .capPerHour, why: .rule(.capPerHour, dropped: false, limits: RuleLimits(NotificationPreferences())),
            movedBefore: .snoozedCopy(of: id))
        #expect(entry.requestID == "hydration.2027-06-01.0900")
        #expect(entry.detail.hasSuffix("; before that: the user snoozed hydration.2027-06-01.0900"))
        entry.why = .none
        #expect(entry.detail == "the user snoozed hydration.2027-06-01.0900")
        entry.movedBefore = .none
        #expect(entry.detail.isEmpty)
        #expect(entry.groupID == nil)
        entry.group = OccurrenceID(.workoutKudos, date: LocalDate(year: 2027, month: 6, day: 1), .group(9))
        #expect(entry.groupID == "workoutKudos.2027-06-01.9")
        #expect(TraceSubject.external("evt-1").requestID == "evt-1")
    }
}
