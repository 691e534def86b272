import Models
import Testing

@testable import Simulation

/// Each invariant is planted once and must be caught; the clean history next to it must pass.
@Suite struct InvariantCheckerTests {
    let london = ZoneRules(identifier: "Europe/London")!

    func profile(
        absence: AbsenceResponse = .lightNudge, configure: (inout NotificationPreferences) -> Void = { _ in }
    ) -> UserProfile {
        var preferences = NotificationPreferences()
        configure(&preferences)
        return UserProfile(
            id: "u1", displayName: "Ana", timeZone: "Europe/London",
            communication: CommunicationPreferences(absenceResponse: absence), preferences: preferences)
    }

    func delivery(_ id: String, _ kind: NotificationKind, _ at: String, level: InterruptionLevel = .active)
        -> ObservedDelivery
    {
        ObservedDelivery(id: id, kind: kind, level: level, at: Instant(iso8601: at)!)
    }

    func violations(_ deliveries: [ObservedDelivery], profile: UserProfile) -> [Invariant] {
        var checker = InvariantChecker()
        return deliveries.flatMap { checker.observe($0, profile: profile, zone: london) }
    }

    @Test func aDeliveryInQuietHoursThatWrapMidnightIsCaughtUnlessCritical() {
        let user = profile {
            $0.quietHours = try! QuietHours(start: LocalTimeOfDay("22:00")!, end: LocalTimeOfDay("07:00")!)
        }
        #expect(
            violations([delivery("a", .hydration, "2027-06-01T23:30:00+01:00")], profile: user) == [
                .noDeliveryInQuietHours
            ])
        #expect(
            violations([delivery("b", .hydration, "2027-06-02T06:59:00+01:00")], profile: user) == [
                .noDeliveryInQuietHours
            ])
        #expect(violations([delivery("c", .hydration, "2027-06-02T07:00:00+01:00")], profile: user).isEmpty)
        #expect(
            violations([delivery("d", .securityAlert, "2027-06-01T23:30:00+01:00", level: .critical)], profile: user)
                .isEmpty)
    }

    @Test func aPushReleasedBeforeQuietHoursButShownInThemIsCaughtWhenShown() {
        let user = profile {
            $0.quietHours = try! QuietHours(start: LocalTimeOfDay("23:00")!, end: LocalTimeOfDay("06:30")!)
            $0.maxPerDay = 1
        }
        var checker = InvariantChecker()
        // Released at 19:00 (the plan's time), held by APNs for an offline phone, shown at 00:38.
        let released = delivery("workoutComment.2027-06-01.1", .workoutComment, "2027-06-01T19:00:00+01:00")
        #expect(checker.observeRelease(released, profile: user, zone: london).isEmpty)
        var shown = released
        shown.at = Instant(iso8601: "2027-06-02T00:38:00+01:00")!
        #expect(checker.observeShown(shown, profile: user, zone: london) == [.noDeliveryInQuietHours])
        // Shown on the next day after a delivery there, it is counted against that day's cap.
        var nextDay = InvariantChecker()
        _ = nextDay.observe(
            delivery("hydration.a", .hydration, "2027-06-02T08:00:00+01:00"), profile: user, zone: london)
        var late = released
        late.at = Instant(iso8601: "2027-06-02T08:30:00+01:00")!
        #expect(nextDay.observeShown(late, profile: user, zone: london) == [.perDayCapHeld])
    }

    @Test func theHourlyCapCountsAPushByTheMinuteItIsShown() {
        let user = profile { $0.maxPerHour = 1 }
        var checker = InvariantChecker()
        // Planned at 09:00:00 and shown after three seconds in transit: still the 09:00 minute,
        // an hour before the next one.
        var first = delivery("a", .workoutKudos, "2027-06-01T09:00:00Z")
        first.at = first.at + 3
        #expect(checker.observeShown(first, profile: user, zone: london).isEmpty)
        #expect(
            checker.observe(delivery("b", .hydration, "2027-06-01T10:00:00Z"), profile: user, zone: london).isEmpty)
        // A minute later is another minute: two in one hour.
        var held = delivery("c", .workoutKudos, "2027-06-01T10:01:00Z")
        held.at = Instant(iso8601: "2027-06-01T10:59:30Z")!
        #expect(checker.observeShown(held, profile: user, zone: london) == [.perHourCapHeld])
    }

    @Test func reEngagementForGiveMeSpaceIsCaught() {
        let delivered = [delivery("reEngagement.2027-06-01.1", .reEngagement, "2027-06-04T10:00:00+01:00")]
        #expect(violations(delivered, profile: profile(absence: .giveMeSpace)) == [.noReEngagementForGiveMeSpace])
        #expect(violations(delivered, profile: profile(absence: .checkInOnMe)).isEmpty)
    }

    @Test func theHourlyCapIsCheckedOverRollingWindows() {
        let user = profile { $0.maxPerHour = 2 }
        let crowded = [
            delivery("a", .hydration, "2027-06-01T09:00:00Z"), delivery("b", .mealReminder, "2027-06-01T09:30:00Z"),
            delivery("c", .hydration, "2027-06-01T09:59:00Z"),
        ]
        #expect(violations(crowded, profile: user) == [.perHourCapHeld])
        let spaced = [
            delivery("a", .hydration, "2027-06-01T09:00:00Z"), delivery("b", .mealReminder, "2027-06-01T09:30:00Z"),
            delivery("c", .hydration, "2027-06-01T10:00:00Z"),
        ]
        #expect(violations(spaced, profile: user).isEmpty)
        // Transactional kinds are exempt.
        let exempt = crowded.dropLast() + [delivery("c", .securityAlert, "2027-06-01T09:59:00Z", level: .critical)]
        #expect(violations(Array(exempt), profile: user).isEmpty)
    }

    @Test func theDailyCapIsCheckedPerLocalDay() {
        let user = profile { $0.maxPerDay = 2 }
        // 23:30 BST on June 1 and 00:30 BST on June 2 are different local days although both are June 1 UTC... or not.
        let twoDays = [
            delivery("a", .hydration, "2027-06-01T08:00:00+01:00"),
            delivery("b", .hydration, "2027-06-01T23:30:00+01:00"),
            delivery("c", .hydration, "2027-06-02T00:30:00+01:00"),
        ]
        #expect(violations(twoDays, profile: user).isEmpty)
        let oneDay = twoDays.dropLast() + [delivery("c", .hydration, "2027-06-01T23:45:00+01:00")]
        #expect(violations(Array(oneDay), profile: user) == [.perDayCapHeld])
    }

    /// The checker trims its memories every three simulated days: a duplicate within the week is
    /// still caught across a trim, and an identifier is forgotten only once it is a week old.
    @Test func aDuplicateIsCaughtAcrossATrimAndForgottenAfterAWeek() {
        let id = "mealReminder.2027-06-01.lunch"
        let acrossTrim = [
            delivery(id, .mealReminder, "2027-06-01T12:30:00+01:00"),
            delivery("hydration.2027-06-05.0900", .hydration, "2027-06-05T09:00:00+01:00"),
            delivery(id, .mealReminder, "2027-06-06T12:30:00+01:00"),
        ]
        // The planted second copy comes days late, outside its slot's window too; this test is
        // about the duplicate's memory.
        func duplicates(_ deliveries: [ObservedDelivery]) -> [Invariant] {
            violations(deliveries, profile: profile()).filter { $0 != .deliveryInsideSlotWindow }
        }
        #expect(duplicates(acrossTrim) == [.noDuplicateDelivery])
        let afterAWeek = [
            delivery(id, .mealReminder, "2027-06-01T12:30:00+01:00"),
            delivery("hydration.2027-06-09.0900", .hydration, "2027-06-09T09:00:00+01:00"),
            delivery(id, .mealReminder, "2027-06-09T12:30:00+01:00"),
        ]
        #expect(duplicates(afterAWeek).isEmpty)
    }

    @Test func aDuplicateDeliveryIsCaught() {
        let twice = [
            delivery("mealReminder.2027-06-01.lunch", .mealReminder, "2027-06-01T12:30:00+01:00"),
            delivery("mealReminder.2027-06-01.lunch", .mealReminder, "2027-06-01T13:30:00+01:00"),
        ]
        #expect(violations(twice, profile: profile()) == [.noDuplicateDelivery])
    }

    @Test func aDisabledKindDeliveredIsCaught() {
        let user = profile { $0.settings[.hydration] = .disabled }
        #expect(
            violations([delivery("h", .hydration, "2027-06-01T12:00:00Z")], profile: user) == [
                .disabledKindNeverDelivered
            ])
    }

    @Test func twoMorningGreetingsOnOneLocalDayAreCaughtAcrossTheFallBack() {
        // London falls back on 2027-10-31: 01:30 happens twice; two greetings that day are one too many.
        let fallBack = [
            delivery("morningGreeting.2027-10-31", .morningGreeting, "2027-10-31T00:30:00Z"),
            delivery("morningGreeting.2027-10-31.snooze1", .morningGreeting, "2027-10-31T01:30:00Z"),
        ]
        let early = profile { $0.morningTime = LocalTimeOfDay("01:30")! }
        #expect(violations(fallBack, profile: early) == [.morningGreetingOncePerLocalDay])
    }

    @Test func morePendingThanTheLimitIsCaught() {
        let checker = InvariantChecker()
        #expect(checker.observePending(count: 64).isEmpty)
        #expect(checker.observePending(count: 65) == [.atMost64Pending])
    }

    // MARK: - Slots, instants, nudges

    @Test(arguments: [
        // A dinner reminder at breakfast, a 19:00 hydration reminder at 09:01: outside their slots.
        ("mealReminder.2027-06-01.dinner", NotificationKind.mealReminder, "2027-06-01T08:30:00+01:00", false),
        ("mealReminder.2027-06-01.dinner", .mealReminder, "2027-06-01T17:30:00+01:00", true),
        ("mealReminder.2027-06-01.dinner", .mealReminder, "2027-06-01T19:59:59+01:00", true),
        ("mealReminder.2027-06-01.dinner", .mealReminder, "2027-06-01T20:00:00+01:00", false),
        ("hydration.2027-06-01.1900", .hydration, "2027-06-01T09:01:00+01:00", false),
        ("hydration.2027-06-01.1900", .hydration, "2027-06-01T19:29:00+01:00", true),
        ("hydration.daily.1900", .hydration, "2027-06-03T19:00:00+01:00", true),
        ("hydration.daily.1900", .hydration, "2027-06-03T20:00:00+01:00", false),
        // The workout at 00:10 is reminded 15 minutes before, on the evening before (midnight wrap).
        ("workoutReminder.2027-06-02.0010", .workoutReminder, "2027-06-01T23:55:00+01:00", true),
        ("workoutReminder.2027-06-02.0010", .workoutReminder, "2027-06-02T23:55:00+01:00", false),
        // A snoozed copy fires when the user asked.
        ("mealReminder.2027-06-01.breakfast.snooze1", .mealReminder, "2027-06-01T15:00:00+01:00", true),
        // Kinds without a wall-clock slot are bounded by their staleness only.
        ("reflection.2027-06-01.0930", .reflection, "2027-06-01T20:00:00+01:00", true),
    ])
    func aDeliveryOutsideItsSlotsWindowIsCaught(id: String, kind: NotificationKind, at: String, inside: Bool) {
        let found = violations([delivery(id, kind, at)], profile: profile()).filter { $0 == .deliveryInsideSlotWindow }
        #expect(found == (inside ? [] : [.deliveryInsideSlotWindow]))
    }

    @Test func theWindowIsReadInTheUsersZoneAcrossTheSpringForward() {
        // New York springs forward on 2027-03-14: breakfast's 08:00 is 12:00Z that day, 13:00Z the day before.
        let newYork = ZoneRules(identifier: "America/New_York")!
        var checker = InvariantChecker()
        let before = delivery("mealReminder.2027-03-13.breakfast", .mealReminder, "2027-03-13T13:00:00Z")
        let after = delivery("mealReminder.2027-03-14.breakfast", .mealReminder, "2027-03-14T12:00:00Z")
        let late = delivery("mealReminder.2027-03-15.breakfast", .mealReminder, "2027-03-15T13:30:00Z")
        #expect(checker.observe(before, profile: profile(), zone: newYork).isEmpty)
        #expect(checker.observe(after, profile: profile(), zone: newYork).isEmpty)
        #expect(checker.observe(late, profile: profile(), zone: newYork) == [.deliveryInsideSlotWindow])
    }

    @Test func twoOfOneKindAtOneInstantAreCaught() {
        let same = [
            delivery("hydration.2027-06-01.0900", .hydration, "2027-06-01T09:00:00+01:00"),
            delivery("mealReminder.2027-06-01.breakfast", .mealReminder, "2027-06-01T09:00:00+01:00"),
            delivery("hydration.2027-06-01.0930", .hydration, "2027-06-01T09:00:00+01:00"),
        ]
        #expect(violations(same, profile: profile()) == [.noSameInstantDuplicateOfKind])
        let apart = [
            delivery("hydration.2027-06-01.0900", .hydration, "2027-06-01T09:00:00+01:00"),
            delivery("hydration.2027-06-01.0930", .hydration, "2027-06-01T09:00:01+01:00"),
        ]
        #expect(violations(apart, profile: profile()).isEmpty)
    }

    @Test func nudgesBeyondTheCapOrAnAttemptTwiceInOneAbsenceAreCaught() {
        var checker = InvariantChecker()
        let user = profile(absence: .checkInOnMe)
        func nudge(_ id: String, _ at: String) -> [Invariant] {
            checker.observe(delivery(id, .reEngagement, at, level: .timeSensitive), profile: user, zone: london)
        }
        #expect(nudge("reEngagement.2027-06-01.1", "2027-06-04T10:00:00+01:00").isEmpty)
        #expect(nudge("reEngagement.2027-06-01.2", "2027-06-08T10:00:00+01:00").isEmpty)
        // The same attempt under another campaign's name (a zone change renamed it): caught.
        #expect(nudge("reEngagement.2027-05-31.2", "2027-06-09T10:00:00+01:00") == [.noNudgeAttemptTwice])
        #expect(nudge("reEngagement.2027-06-01.3", "2027-06-15T10:00:00+01:00") == [.nudgesWithinCampaignCap])
        // The user comes back: a new absence, a new count. A dismissal or a snooze is no return.
        checker.observeResponse(.dismiss)
        #expect(
            nudge("reEngagement.2027-06-01.1", "2027-06-16T10:00:00+01:00") == [
                .noNudgeAttemptTwice, .nudgesWithinCampaignCap,
            ])
        checker.observeResponse(.defaultTap)
        #expect(nudge("reEngagement.2027-06-16.1", "2027-06-19T10:00:00+01:00").isEmpty)
        // A light nudge is one nudge per absence.
        var light = InvariantChecker()
        let lightUser = profile(absence: .lightNudge)
        _ = light.observe(
            delivery("reEngagement.2027-06-01.1", .reEngagement, "2027-06-04T10:00:00+01:00"), profile: lightUser,
            zone: london)
        light.observe(.appOpened(sessionSeconds: 60), at: Instant(iso8601: "2027-06-05T10:00:00+01:00")!, zone: london)
        #expect(
            light.observe(
                delivery("reEngagement.2027-06-05.1", .reEngagement, "2027-06-08T10:00:00+01:00"), profile: lightUser,
                zone: london
            ).isEmpty)
    }

    @Test func aNudgeInTheLocalNightIsCaughtUnlessOpensShowTheUserAwakeThen() {
        let user = profile(absence: .checkInOnMe)
        let night = delivery("reEngagement.2027-06-01.1", .reEngagement, "2027-06-04T02:45:00+01:00")
        var checker = InvariantChecker()
        #expect(checker.observe(night, profile: user, zone: london) == [.noNudgeInLocalNight])
        // A user who opens the app around 02:00: awake then.
        var owl = InvariantChecker()
        for day in ["2027-05-29", "2027-05-30"] {
            owl.observe(.appOpened(sessionSeconds: 60), at: Instant(iso8601: "\(day)T02:00:00+01:00")!, zone: london)
        }
        #expect(owl.observe(night, profile: user, zone: london).isEmpty)
        // Opens in another zone say nothing about this one.
        var traveller = InvariantChecker()
        for day in ["2027-05-29", "2027-05-30"] {
            traveller.observe(
                .appOpened(sessionSeconds: 60), at: Instant(iso8601: "\(day)T02:00:00+01:00")!, zone: london)
        }
        traveller.observeZoneChange(
            from: london, to: ZoneRules(identifier: "Asia/Tokyo")!, at: Instant(iso8601: "2027-05-31T12:00:00+01:00")!)
        #expect(traveller.observe(night, profile: user, zone: london) == [.noNudgeInLocalNight])
        // Waking hours come from the preferences: 22:00 is the night by default.
        let evening = delivery("reEngagement.2027-06-01.1", .reEngagement, "2027-06-04T21:59:00+01:00")
        var fresh = InvariantChecker()
        #expect(fresh.observe(evening, profile: user, zone: london).isEmpty)
    }

    @Test func aCalendarRequestsDeadlineMovesWithTheDevice() {
        // Dinner planned for 18:30 in London on a calendar trigger: its deadline is a wall time.
        // The phone flies to New York before the engine hears (it was offline) and fires 18:30
        // there, five hours later: on time in the user's day, as the engine would have re-timed it.
        let newYork = ZoneRules(identifier: "America/New_York")!
        let planned = Instant(iso8601: "2027-06-01T18:30:00+01:00")!
        let dinner = "mealReminder.2027-06-01.dinner"
        let trace = TraceEntry(
            at: planned - 3 * 3_600, userID: "u1", subject: .external(dinner), kind: .mealReminder,
            decision: .scheduled, reason: .onTime, plannedAt: planned, fireAt: planned)
        var moved = InvariantChecker()
        #expect(moved.observe(trace, zone: london).isEmpty)
        moved.observeZoneChange(from: london, to: newYork, at: planned - 2 * 3_600)
        let firedThere = delivery(dinner, .mealReminder, "2027-06-01T18:30:00-04:00")
        #expect(moved.observe(firedThere, profile: profile(), zone: newYork).isEmpty)
        // Without the move, the same instant is five hours past its deadline.
        var stayed = InvariantChecker()
        #expect(stayed.observe(trace, zone: london).isEmpty)
        #expect(stayed.observe(firedThere, profile: profile(), zone: london).contains(.noDeliveryAfterDeadline))
        // A date trigger (not on a whole minute) keeps its instant, and so does its deadline.
        let odd = planned + 17
        var dated = InvariantChecker()
        #expect(
            dated.observe(
                TraceEntry(
                    at: planned - 3 * 3_600, userID: "u1", subject: .external(dinner), kind: .mealReminder,
                    decision: .scheduled, reason: .onTime, plannedAt: odd, fireAt: odd), zone: london
            ).isEmpty)
        dated.observeZoneChange(from: london, to: newYork, at: planned - 2 * 3_600)
        #expect(dated.observe(firedThere, profile: profile(), zone: newYork).contains(.noDeliveryAfterDeadline))
    }

    @Test func aDeliveryAtTheInstantOfAFlightIsReadInTheZoneItFiredIn() {
        // 09:00 at Lord Howe (+11:00) is 22:00 in London the evening before: the device fired the
        // 09:00 hydration reminder as it moved, so it belongs to the zone it left.
        let lordHowe = ZoneRules(identifier: "Australia/Lord_Howe")!
        let flight = Instant(iso8601: "2027-03-15T22:00:00Z")!
        let reminder = delivery("hydration.2027-03-16.0900", .hydration, "2027-03-15T22:00:00Z")
        var checker = InvariantChecker()
        checker.observeZoneChange(from: lordHowe, to: london, at: flight)
        #expect(checker.observe(reminder, profile: profile(), zone: london).isEmpty)
        // A second later the device is in London, and the same identifier there is out of place.
        let later = delivery("hydration.2027-03-16.0900", .hydration, "2027-03-15T22:00:01Z")
        #expect(checker.observe(later, profile: profile(), zone: london).contains(.deliveryInsideSlotWindow))
    }

    /// The checker keys what it remembers by occurrence for the engine's identifiers and by text
    /// for anything else; either way two deliveries are one request exactly when their texts are
    /// equal.
    @Test func requestsAreTheSameExactlyWhenTheirTextsAreEqual() {
        let user = profile()
        // A repeating request fires under one identifier at every match: each firing is its own.
        let series = "hydration.daily.0900"
        var checker = InvariantChecker()
        func observe(_ id: String, _ kind: NotificationKind, _ at: String, repeats: Bool = false) -> [Invariant] {
            let observed = ObservedDelivery(
                id: id, kind: kind, level: .active, at: Instant(iso8601: at)!, repeats: repeats)
            return checker.observe(observed, profile: user, zone: london)
        }
        #expect(observe(series, .hydration, "2027-06-01T09:00:00+01:00", repeats: true).isEmpty)
        #expect(observe(series, .hydration, "2027-06-02T09:00:00+01:00", repeats: true).isEmpty)
        #expect(observe(series, .hydration, "2027-06-02T09:00:00+01:00", repeats: true).contains(.noDuplicateDelivery))
        // An identifier the engine never writes is kept as text, and still caught when repeated.
        #expect(observe("promo-summer", .featureAnnouncement, "2027-06-03T10:00:00+01:00").isEmpty)
        #expect(observe("promo-summer", .featureAnnouncement, "2027-06-03T11:00:00+01:00") == [.noDuplicateDelivery])
        // The old text of a day occurrence names the same occurrence with another text: two requests.
        #expect(observe("weeklyReview.2027-06-04", .weeklyReview, "2027-06-04T18:00:00+01:00").isEmpty)
        #expect(observe("weeklyReview.2027-06-04.0", .weeklyReview, "2027-06-04T19:00:00+01:00").isEmpty)
    }

    @Test func aReminderForAMealOrWorkoutAlreadyDoneIsCaught() {
        let user = profile()
        var checker = InvariantChecker()
        checker.observe(.mealLogged(.lunch), at: Instant(iso8601: "2027-06-01T12:10:00+01:00")!, zone: london)
        checker.observe(
            .workoutCompleted(durationMinutes: 30), at: Instant(iso8601: "2027-06-01T07:00:00+01:00")!, zone: london)
        // The workouts' slot windows are not this test's (the profile has no workout schedule).
        func observe(_ id: String, _ kind: NotificationKind, _ at: String) -> [Invariant] {
            checker.observe(delivery(id, kind, at), profile: user, zone: london).filter {
                $0 != .deliveryInsideSlotWindow
            }
        }
        #expect(
            observe("mealReminder.2027-06-01.lunch", .mealReminder, "2027-06-01T12:30:00+01:00") == [
                .noReminderForDoneThing
            ])
        #expect(observe("mealReminder.2027-06-01.dinner", .mealReminder, "2027-06-01T18:30:00+01:00").isEmpty)
        #expect(
            observe("workoutReminder.2027-06-01.1800", .workoutReminder, "2027-06-01T18:00:00+01:00") == [
                .noReminderForDoneThing
            ])
        #expect(observe("workoutReminder.2027-06-02.1800", .workoutReminder, "2027-06-02T18:00:00+01:00").isEmpty)
    }

    @Test func aFoldedItemDeliveredInTwoGroupsOrAGroupMixingKeysIsCaught() {
        let user = profile()
        let at = Instant(iso8601: "2027-06-01T12:00:00+01:00")!
        func fold(_ item: String, into group: String, key: String) -> TraceEntry {
            TraceEntry(
                at: at, userID: "u1", subject: .external(item), kind: .workoutKudos, decision: .folded,
                reason: .batched, plannedAt: at + 600, group: OccurrenceID(requestID: group), groupKey: key)
        }
        var checker = InvariantChecker()
        #expect(
            checker.observe(
                fold("workoutKudos.2027-06-01.1", into: "workoutKudos.2027-06-01.9", key: "kudos"), zone: london
            ).isEmpty)
        #expect(checker.items(ofGroup: "workoutKudos.2027-06-01.9") == ["workoutKudos.2027-06-01.1"])
        #expect(
            checker.observe(
                fold("mention.2027-06-01.2", into: "workoutKudos.2027-06-01.9", key: "mention"), zone: london)
                == [.groupNeverMixesKeys])
        #expect(checker.owedItems(dueBy: at + 600).count == 2)
        #expect(checker.finish(at: at + 2 * 86_400) == [.foldedItemInExactlyOneGroup])
        let first = delivery("workoutKudos.2027-06-01.9", .workoutKudos, "2027-06-01T12:10:00+01:00")
        #expect(checker.observe(first, profile: user, zone: london).isEmpty)
        #expect(checker.owedItems(dueBy: at + 600).isEmpty)
        #expect(checker.finish(at: at + 2 * 86_400).isEmpty)
        // The same item folded again into another group and delivered a second time.
        #expect(
            checker.observe(
                fold("workoutKudos.2027-06-01.1", into: "workoutKudos.2027-06-01.10", key: "kudos"), zone: london
            ).isEmpty
        )
        let second = delivery("workoutKudos.2027-06-01.10", .workoutKudos, "2027-06-01T14:10:00+01:00")
        #expect(checker.observe(second, profile: user, zone: london) == [.foldedItemInExactlyOneGroup])
    }

    /// Counted items (kept by number, not id) move and drop with one entry whose request is
    /// their old group: the checker moves or drops whatever items of that group remain.
    @Test func aGroupsCountedItemsMoveOrDropWithTheirGroup() {
        let user = profile()
        let at = Instant(iso8601: "2027-06-01T12:00:00+01:00")!
        let first = "workoutKudos.2027-06-01.1"
        let second = "workoutKudos.2027-06-02.2"
        func trace(_ request: String, _ decision: TraceDecision, group: String, counted: Int? = nil) -> TraceEntry {
            TraceEntry(
                at: at, userID: "u1", subject: .external(request), kind: .workoutKudos, decision: decision,
                reason: decision == .dropped ? .stale : .waitingItemsFull, plannedAt: at + 3_600,
                group: OccurrenceID(requestID: group), groupKey: "workoutKudos/dailyDigest", countedItems: counted)
        }
        var checker = InvariantChecker()
        for item in ["k1", "k2", "k3"] {
            #expect(checker.observe(trace(item, .folded, group: first), zone: london).isEmpty)
        }
        // k1 was kept and moves by itself; k2 and k3 were counted and move with the group.
        #expect(checker.observe(trace("k1", .folded, group: second), zone: london).isEmpty)
        #expect(checker.observe(trace(first, .folded, group: second, counted: 2), zone: london).isEmpty)
        #expect(checker.items(ofGroup: second) == ["k1", "k2", "k3"])
        #expect(checker.items(ofGroup: first).isEmpty)
        // An item whose id happens to be a group's is one item: without the marker nothing moves.
        var confused = checker
        #expect(confused.observe(trace(second, .folded, group: "workoutKudos.2027-06-03.3"), zone: london).isEmpty)
        #expect(confused.items(ofGroup: second) == ["k1", "k2", "k3"])
        var dropping = checker
        #expect(dropping.observe(trace(second, .dropped, group: second, counted: 2), zone: london).isEmpty)
        #expect(dropping.items(ofGroup: second).isEmpty)
        #expect(dropping.finish(at: at + 3 * 86_400).isEmpty)
        let delivered = delivery(second, .workoutKudos, "2027-06-01T13:00:00+01:00")
        #expect(checker.observe(delivered, profile: user, zone: london).isEmpty)
        #expect(checker.finish(at: at + 3 * 86_400).isEmpty)
    }
}
