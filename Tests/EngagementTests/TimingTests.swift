import Content
import Models
import Scheduling
import TestSupport
import Testing

@testable import Engagement

/// Runs `engine` from `start` to `end` with an input every `step` seconds (a background run, or
/// `flights` at their instants), and returns what fired on the way: each request the plan held
/// whose time came, with the zone the user was in then. Daily series are left out.
private func run(
    _ engine: inout UserEngine, from start: Instant, to end: Instant, step: Int64 = 900,
    flights: [(at: Instant, zone: ZoneRules)] = []
) -> [(id: OccurrenceID, at: Instant, zone: ZoneRules)] {
    var fired: [(id: OccurrenceID, at: Instant, zone: ZoneRules)] = []
    var pendingFlights = flights.sorted { $0.at < $1.at }
    var t = start
    while t < end {
        var next = t + step
        if let flight = pendingFlights.first, flight.at <= next { next = flight.at }
        for item in engine.state.plan.planned where !item.repeatsDaily && item.fireAt <= next {
            fired.append((item.id, item.fireAt, engine.zone))
        }
        if let flight = pendingFlights.first, flight.at == next {
            pendingFlights.removeFirst()
            _ = engine.handle(.timeZoneChanged(flight.zone), at: next)
        } else {
            _ = engine.handle(.backgroundTaskLaunched(.lapseDetection), at: next)
        }
        t = next
    }
    return fired
}

private func local(_ zone: ZoneRules, _ instant: Instant) -> String { zone.localDateTime(at: instant).description }

/// Response learning per slot, inside the slot's window.
@Suite struct SlotLearningTests {
    let london = ZoneRules(identifier: "Europe/London")!

    @Test func dinnerLearnsFromDinnerAndMovesOnlyInsideItsWindow() {
        let midnight = instant("2027-06-01T00:00:00+01:00")
        var engine = UserEngine(profile: makeProfile(), zone: london, now: midnight + 6 * 3_600)
        var effects = engine.handle(.appLaunched, at: midnight + 6 * 3_600)
        for day: Int64 in 0..<4 {
            let base = midnight + day * .secondsPerDay
            let date = london.localDate(at: base)
            // Breakfast is acted on at once, every day; dinner (18:30) is never answered.
            effects += engine.handle(
                .notificationResponse(
                    requestID: "mealReminder.\(date).breakfast", kind: .mealReminder, action: .logMeal),
                at: base + 8 * 3_600 + 300)
            effects += engine.handle(.backgroundTaskLaunched(.lapseDetection), at: base + 22 * 3_600)
        }
        // Per kind, dinner would have moved to breakfast's hour (08:30). Per slot it moves an hour
        // later, inside 17:30 ..< 20:00, and breakfast keeps its time.
        let dinner = engine.state.plan.planned.first { $0.id.meal == .dinner }
        #expect(dinner.map { london.localDateTime(at: $0.fireAt).timeOfDay.description } == "19:30")
        let breakfast = engine.state.plan.planned.first { $0.id.meal == .breakfast }
        #expect(breakfast.map { london.localDateTime(at: $0.fireAt).timeOfDay.description } == "08:00")
        // The trace says why, with the evidence and the nominal time.
        let moved = effects.traces.first { $0.requestID.hasSuffix(".dinner") && $0.reason == .learnedShift }
        #expect(moved?.decision == .scheduled)
        #expect(moved.flatMap(\.nominalAt).map { london.localDateTime(at: $0).timeOfDay.description } == "18:30")
        #expect(moved?.detail.contains("mealReminder.dinner at 18:00-18:59: 3 ignored, 0 acted on") == true)
        #expect(moved?.detail.contains("moved +60 min from 18:30 to 19:30") == true)
        // Every meal reminder planned on the way stayed inside its meal's window.
        for case .schedule(let request, let fireAt, _) in effects where request.content.kind == .mealReminder {
            let id = OccurrenceID(requestID: request.identifier)!
            let nominal = london.instant(for: LocalDateTime(date: id.date, time: id.meal!.defaultTime))
            #expect(SlotWindow.of(.mealReminder)!.contains(fireAt, nominal: nominal), "\(request.identifier)")
        }
    }

    @Test func eachHydrationTimeLearnsFromItsOwnAndNeverJoinsAnother() {
        let profile = makeProfile {
            $0.hydration = .biHourly
            $0.settings[.mealReminder] = .disabled
        }
        let t0 = instant("2027-06-01T06:00:00+01:00")
        // Every hydration time of the day is planned: no attention budget cuts any.
        var engine = UserEngine(profile: profile, zone: london, now: t0, configuration: .withoutAttentionBudget)
        _ = engine.handle(.appLaunched, at: t0)
        // 13:00 is ignored, 09:00 acted on: per kind, 13:00 (and 07:00, 11:00...) would move to 09:00.
        let one = LearningSlot(.hydration, packedSlot: 13 * 60)
        let nine = LearningSlot(.hydration, packedSlot: 9 * 60)
        for _ in 0..<5 { engine.state.coaching.responses.record(.acted, slot: nine, hour: 9) }
        for _ in 0..<3 { engine.state.coaching.responses.record(.ignored, slot: one, hour: 13) }
        engine.state.coaching.timing = engine.state.coaching.responses.timingRules(for: UserEngine.adjustableKinds)
        let effects = engine.handle(.activity(.moodLogged), at: t0 + 60)
        let hydration = engine.state.plan.planned.filter {
            $0.kind == .hydration && $0.id.day != OccurrenceID.seriesDay
        }
        let times = hydration.filter { london.localDate(at: $0.fireAt) == LocalDate(year: 2027, month: 6, day: 2) }
            .map { london.localDateTime(at: $0.fireAt).timeOfDay.description }
        #expect(times == ["07:00", "09:00", "11:00", "13:15", "15:00", "17:00", "19:00", "21:00"])
        #expect(Set(hydration.map(\.fireAt)).count == hydration.count)
        #expect(
            effects.traces.contains {
                $0.requestID == "hydration.2027-06-02.1300" && $0.reason == .learnedShift
                    && $0.detail.contains("+15 min")
            })
    }

    @Test func aBackedOffOccurrenceSaysWhyItIsNotSent() {
        let t0 = instant("2027-06-01T06:00:00+01:00")
        var engine = UserEngine(profile: makeProfile(), zone: london, now: t0)
        _ = engine.handle(.appLaunched, at: t0)
        let lunch = LearningSlot(OccurrenceID(.mealReminder, daysSinceEpoch: 0, .meal(.lunch)))
        for _ in 0..<6 { engine.state.coaching.responses.record(.dismissed, slot: lunch, hour: 12) }
        engine.state.coaching.timing = engine.state.coaching.responses.timingRules(for: UserEngine.adjustableKinds)
        let effects = engine.handle(.activity(.moodLogged), at: t0 + 60)
        // Every other day only: the days skipped are traced with the evidence.
        let skipped = effects.traces.filter { $0.reason == .learnedBackOff }
        #expect(!skipped.isEmpty)
        #expect(skipped.allSatisfy { $0.requestID.hasSuffix(".lunch") && $0.decision != .scheduled })
        #expect(skipped.first?.detail.contains("6 dismissed") == true)
        #expect(skipped.first?.detail.contains("every 2th day") == true)
    }
}

/// Deferral and travel keep an occurrence inside its window; past it, it is dropped.
@Suite struct SlotWindowEngineTests {
    let london = ZoneRules(identifier: "Europe/London")!

    @Test func quietHoursHoldBreakfastOnlyUntilItsWindowEnds() throws {
        let t0 = instant("2027-06-01T06:00:00+01:00")
        func breakfastTrace(quietEnd: String) throws -> TraceEntry? {
            let profile = makeProfile {
                $0.quietHours = try? QuietHours(start: LocalTimeOfDay("22:00")!, end: LocalTimeOfDay(quietEnd)!)
            }
            var engine = UserEngine(profile: profile, zone: london, now: t0)
            return engine.handle(.appLaunched, at: t0).traces.first {
                $0.requestID == "mealReminder.2027-06-01.breakfast"
            }
        }
        let held = try breakfastTrace(quietEnd: "08:45")
        #expect(held?.decision == .deferred)
        #expect(held?.reason == .quietHours)
        #expect(held?.fireAt.map { local(london, $0) } == "2027-06-01T08:45:00")
        #expect(held?.nominalAt.map { local(london, $0) } == "2027-06-01T08:00:00")
        // Until 09:30 the quiet hours last past the window (07:00 ..< 09:30) and the staleness: dropped.
        let dropped = try breakfastTrace(quietEnd: "09:30")
        #expect(dropped?.decision == .dropped)
        #expect(dropped?.reason == .quietHours)
    }

    @Test func aFlightThatPutsLunchPastItsWindowDropsItInsteadOfSendingItAtDinner() {
        let tokyo = ZoneRules(identifier: "Asia/Tokyo")!
        let t0 = instant("2027-06-01T09:00:00+01:00")
        var engine = UserEngine(profile: makeProfile(), zone: london, now: t0)
        _ = engine.handle(.appLaunched, at: t0)
        #expect(engine.plannedRequestIDs.contains("mealReminder.2027-06-01.lunch"))
        // 10:00 in London is 18:00 in Tokyo: lunch's 12:30 has passed there, and its window too.
        let landed = engine.handle(.timeZoneChanged(tokyo), at: t0 + 3_600)
        #expect(landed.cancelledIDs.contains("mealReminder.2027-06-01.lunch"))
        let trace = landed.traces.first { $0.requestID == "mealReminder.2027-06-01.lunch" }
        #expect(trace?.decision == .cancelled)
        #expect(trace?.reason == .slotWindowPassed)
        #expect(trace?.detail == "its slot's window ended at 14:00")
        #expect(!landed.scheduled.contains { $0.request.identifier == "mealReminder.2027-06-01.lunch" })
        // Dinner's 18:30 is still ahead in Tokyo: re-timed there.
        let dinner = engine.state.plan.planned.first { $0.id.description == "mealReminder.2027-06-01.dinner" }
        #expect(dinner.map { local(tokyo, $0.fireAt) } == "2027-06-01T18:30:00")
    }

    @Test func aFlightThatPutsBreakfastInThePastInsideItsWindowSendsItAtOnceAndSaysWhy() {
        let berlin = ZoneRules(identifier: "Europe/Berlin")!
        let t0 = instant("2027-06-01T06:00:00+01:00")
        var engine = UserEngine(profile: makeProfile(), zone: london, now: t0)
        _ = engine.handle(.appLaunched, at: t0)
        // 07:30 in London is 08:30 in Berlin: breakfast's 08:00 has passed there, its window has not.
        let flight = instant("2027-06-01T07:30:00+01:00")
        let landed = engine.handle(.timeZoneChanged(berlin), at: flight)
        let breakfast = landed.traces.last { $0.requestID == "mealReminder.2027-06-01.breakfast" }
        #expect(breakfast?.decision == .scheduled)
        #expect(breakfast?.reason == .timeZoneChanged)
        #expect(breakfast?.fireAt == flight + 1)
        #expect(breakfast?.nominalAt.map { local(berlin, $0) } == "2027-06-01T08:00:00")
        #expect(breakfast?.detail == "its time passed in Europe/Berlin (08:00): sent at once")
    }

    @Test func aWorkoutJustAfterMidnightIsRemindedTheEveningBeforeInsideItsWindow() {
        let profile = makeProfile {
            $0.workoutSchedule = [ScheduledWorkout(weekday: .wednesday, time: LocalTimeOfDay("00:10")!, type: "Run")]
        }
        let t0 = instant("2027-06-01T12:00:00+01:00")  // a Tuesday
        var engine = UserEngine(profile: profile, zone: london, now: t0)
        let effects = engine.handle(.appLaunched, at: t0)
        let reminder = effects.scheduled.first { $0.request.identifier == "workoutReminder.2027-06-02.0010" }
        #expect(reminder.map { local(london, $0.fireAt) } == "2027-06-01T23:55:00")
    }
}

/// The lapse campaign: identities travel does not change, the cap, the local night.
@Suite struct CampaignTimingTests {
    static let pairs: [(home: String, away: String, start: String)] = [
        ("America/Los_Angeles", "Asia/Tokyo", "2027-06-01T21:30:00-07:00"),
        // The date line both ways: Auckland is a day ahead of Pago Pago.
        ("Pacific/Auckland", "Pacific/Pago_Pago", "2027-06-01T21:30:00+12:00"),
        ("Pacific/Pago_Pago", "Pacific/Kiritimati", "2027-06-01T20:00:00-11:00"),
        // 45- and 30-minute offsets.
        ("Asia/Kathmandu", "Pacific/Chatham", "2027-06-01T23:50:00+05:45"),
        ("America/St_Johns", "Australia/Adelaide", "2027-06-01T22:00:00-02:30"),
        // Across the US (2027-03-14) and EU (2027-03-28) spring-forward.
        ("America/New_York", "Europe/Berlin", "2027-03-12T21:00:00-05:00"),
    ]

    @Test(arguments: 0..<pairs.count)
    func aChangeOfZoneRetimesACampaignAndNeverDuplicatesIt(pair: Int) {
        let (homeName, awayName, startText) = Self.pairs[pair]
        let home = ZoneRules(identifier: homeName)!
        let away = ZoneRules(identifier: awayName)!
        let t0 = instant(startText)
        var engine = UserEngine(
            profile: makeProfile(zone: homeName, absence: .checkInOnMe), zone: home, now: t0)
        _ = engine.handle(.appLaunched, at: t0)
        _ = engine.handle(.activity(.appOpened(sessionSeconds: 60)), at: t0)
        let campaign = engine.plannedRequestIDs.filter { $0.rawValue.hasPrefix("reEngagement.") }.sorted()
        // Named by the UTC date of the last activity, whatever the zone.
        let utcDate = ZoneRules.utc.localDate(at: t0)
        #expect(campaign == (1...3).map { "reEngagement.\(utcDate).\($0)" })
        _ = engine.handle(.timeZoneChanged(away), at: t0 + .secondsPerDay)
        #expect(engine.plannedRequestIDs.filter { $0.rawValue.hasPrefix("reEngagement.") }.sorted() == campaign)
        // Back and forth through the absence: three nudges, each attempt once, in waking hours.
        let flights = [
            (at: t0 + 5 * .secondsPerDay + 3_333, zone: home), (at: t0 + 8 * .secondsPerDay + 7_777, zone: away),
            (at: t0 + 11 * .secondsPerDay, zone: home),
        ]
        let fired = run(
            &engine, from: t0 + .secondsPerDay, to: t0 + 17 * .secondsPerDay, flights: flights
        ).filter { $0.id.kind == .reEngagement }
        #expect(fired.map(\.id.requestID).sorted() == campaign)
        for nudge in fired {
            let time = nudge.zone.localDateTime(at: nudge.at).timeOfDay
            #expect(time >= LocalTimeOfDay("07:00")! && time < LocalTimeOfDay("22:00")!, "\(nudge.id) at \(time)")
        }
        #expect(engine.reEngagementAttemptsSent == 3)
    }

    @Test func aHabitLearnedInOneZoneIsNotCarriedIntoAnotherAsLocalMinutes() {
        let london = ZoneRules(identifier: "Europe/London")!
        let tokyo = ZoneRules(identifier: "Asia/Tokyo")!
        let midnight = instant("2027-06-01T00:00:00+01:00")
        var engine = UserEngine(profile: makeProfile(absence: .lightNudge), zone: london, now: midnight)
        for day: Int64 in 0..<5 {
            _ = engine.handle(
                .activity(.appOpened(sessionSeconds: 60)), at: midnight + day * .secondsPerDay + 19 * 3_600)
        }
        #expect(engine.habitualActiveTime?.description == "19:00")
        _ = engine.handle(.timeZoneChanged(tokyo), at: midnight + 4 * .secondsPerDay + 20 * 3_600)
        // Held until opens in Tokyo show the habit there: the nudge goes out at the 10:00 default.
        #expect(engine.habitualActiveTime == nil)
        let nudge = engine.state.plan.planned.first { $0.kind == .reEngagement }
        #expect(nudge.map { tokyo.localDateTime(at: $0.fireAt).timeOfDay.description } == "10:00")
    }

    @Test func aNudgeIsMovedOutOfTheLocalNightUnlessOpensShowTheUserAwakeThen() {
        let london = ZoneRules(identifier: "Europe/London")!
        let midnight = instant("2027-06-01T00:00:00+01:00")
        // Evenings at 21:30 and early mornings at 05:00: the circular mean is about midnight, when
        // nothing the user did shows them awake.
        var engine = UserEngine(profile: makeProfile(absence: .lightNudge), zone: london, now: midnight)
        var effects: [Effect] = []
        for (day, minute) in [(0, 21 * 60 + 30), (1, 5 * 60), (1, 21 * 60 + 30), (2, 5 * 60), (2, 21 * 60 + 30)] {
            effects = engine.handle(
                .activity(.appOpened(sessionSeconds: 60)),
                at: midnight + Int64(day) * .secondsPerDay + Int64(minute) * 60)
        }
        #expect(engine.habitualActiveTime?.description == "00:00")
        let nudge = effects.scheduled.first { $0.request.content.kind == .reEngagement }
        #expect(nudge.map { london.localDateTime(at: $0.fireAt).timeOfDay.description } == "07:00")
        let trace = effects.traces.first { $0.kind == .reEngagement && $0.decision == .scheduled }
        #expect(trace?.reason == .localNight)
        #expect(trace?.nominalAt.map { london.localDateTime(at: $0).timeOfDay.description } == "00:00")
        #expect(trace?.detail.contains("waking hours 07:00-22:00") == true)

        // A night owl who opens the app around 23:30: awake then, so the nudge goes out then.
        var owl = UserEngine(profile: makeProfile(absence: .lightNudge), zone: london, now: midnight)
        var owlEffects: [Effect] = []
        for day: Int64 in 0..<5 {
            owlEffects = owl.handle(
                .activity(.appOpened(sessionSeconds: 60)), at: midnight + day * .secondsPerDay + 23 * 3_600 + 1_800)
        }
        let late = owlEffects.scheduled.first { $0.request.content.kind == .reEngagement }
        #expect(late.map { london.localDateTime(at: $0.fireAt).timeOfDay.description } == "23:30")
    }
}

/// Never two of one kind at one instant, and every moved time says why.
@Suite struct SameInstantAndTraceTests {
    let london = ZoneRules(identifier: "Europe/London")!

    @Test func twoRemindersAtOneMinuteBecomeOneNotification() throws {
        let start = LocalDateTime(date: LocalDate(year: 2027, month: 6, day: 1), secondOfDay: 20 * 3_600)
        let profile = makeProfile {
            $0.reminders = [
                Reminder(number: 1, title: "Stretch", start: start, recurrence: .daily),
                Reminder(number: 2, title: "Journal", start: start, recurrence: .daily),
            ]
        }
        let t0 = instant("2027-06-01T09:00:00+01:00")
        var engine = UserEngine(profile: profile, zone: london, now: t0)
        let effects = engine.handle(.appLaunched, at: t0)
        let planned = engine.state.plan.planned.filter { $0.kind == .checkInReminder }
        #expect(
            planned.map(\.id.description) == [
                "checkInReminder.2027-06-01.r1-2000", "checkInReminder.2027-06-02.r1-2000",
            ])
        let merged = effects.traces.first { $0.requestID == "checkInReminder.2027-06-01.r2-2000" }
        #expect(merged?.decision == .dropped)
        #expect(merged?.reason == .sameInstant)
    }

    @Test func twoMentionsHeldByQuietHoursDoNotFireTogether() throws {
        let profile = makeProfile {
            $0.quietHours = try? QuietHours(start: LocalTimeOfDay("22:00")!, end: LocalTimeOfDay("07:00")!)
            $0.settings[.mealReminder] = .disabled
            $0.settings[.morningGreeting] = .disabled
        }
        // At 01:30 the quiet hours end within a mention's 6 hours: both wait until 07:00.
        let t0 = instant("2027-06-02T01:30:00+01:00")
        var engine = UserEngine(profile: profile, zone: london, now: t0)
        var effects = engine.handle(.appLaunched, at: t0)
        for n in 1...2 {
            effects += engine.handle(
                .socialEvent(
                    SocialEvent(id: "m\(n)", kind: .mention, actorName: "Lea", topic: "run", isMutualFriend: true)),
                at: t0 + Int64(n) * 60)
        }
        let mentions = engine.state.plan.planned.filter { $0.kind == .mention }
        #expect(Set(mentions.map(\.fireAt)).count == mentions.count)
        #expect(mentions.contains { local(london, $0.fireAt) == "2027-06-02T07:00:00" })
        #expect(effects.traces.contains { $0.requestID == "m2" && $0.decision == .folded && $0.reason == .sameInstant })
    }

    @Test func aSnoozedCopySaysItWasSnoozedAndCoachCopyIsOneLineOfItsOwn() {
        let t0 = instant("2027-06-01T06:00:00+01:00")
        var engine = UserEngine(profile: makeProfile(), zone: london, now: t0)
        var effects = engine.handle(.appLaunched, at: t0)
        effects += engine.handle(
            .notificationResponse(
                requestID: "mealReminder.2027-06-01.breakfast", kind: .mealReminder, action: .snooze30),
            at: instant("2027-06-01T08:02:00+01:00"))
        let snoozed = effects.traces.last { $0.requestID == "mealReminder.2027-06-01.breakfast.snooze1" }
        #expect(snoozed?.decision == .scheduled)
        #expect(snoozed?.reason == .snoozed)
        #expect(snoozed?.detail == "the user snoozed mealReminder.2027-06-01.breakfast")
        // The coach's answer changes the copy of the morning greeting, not its time: one line that says so.
        let asked = effects.compactMap { effect -> RequestID? in
            if case .generateContent(let id, _) = effect { id } else { nil }
        }
        let answer = engine.handle(
            .contentGenerated(
                requestID: asked[0], outcome: .text("Good morning|Time to move, Ana.", latencyMillis: 300)),
            at: t0 + 1)
        #expect(answer.traces.map(\.decision) == [.copyChosen])
        #expect(answer.traces.first?.reason == .coachCopy)
        #expect(answer.traces.first?.detail == "AI copy accepted; the time is unchanged")
    }
}

/// Snapshots written before learning was per slot are read, their counts moved into slots.
@Suite struct SnapshotMigrationTests {
    @Test func aVersion1SnapshotIsReadWithItsCountsMovedIntoSlots() throws {
        let london = ZoneRules(identifier: "Europe/London")!
        let profile = makeProfile { $0.hydration = .biHourly }
        let t0 = instant("2027-06-01T06:00:00+01:00")
        var engine = UserEngine(profile: profile, zone: london, now: t0)
        _ = engine.handle(.appLaunched, at: t0)
        let breakfast = LearningSlot(OccurrenceID(.mealReminder, daysSinceEpoch: 0, .meal(.breakfast)))
        let dinner = LearningSlot(OccurrenceID(.mealReminder, daysSinceEpoch: 0, .meal(.dinner)))
        let thirteen = LearningSlot(.hydration, packedSlot: 13 * 60)
        for _ in 0..<3 { engine.state.coaching.responses.record(.acted, slot: breakfast, hour: 8) }
        for _ in 0..<3 { engine.state.coaching.responses.record(.ignored, slot: dinner, hour: 18) }
        for _ in 0..<2 { engine.state.coaching.responses.record(.dismissed, slot: thirteen, hour: 13) }
        // A cell version 1 learned across slots (a meal at 10:00): no slot claims it.
        engine.state.coaching.responses.record(.acted, slot: breakfast, hour: 10)
        let old = engine.snapshot(version: 1)
        #expect(old[2] == 1)
        let restored = try UserEngine(restoring: old, profile: profile, zone: london, content: bundledContent)
        let responses = restored.state.coaching.responses
        #expect(responses.counts(slot: breakfast, hour: 8).acted == 3)
        #expect(responses.counts(slot: dinner, hour: 18).ignored == 3)
        #expect(responses.counts(slot: thirteen, hour: 13).dismissed == 2)
        #expect(responses.counts(slot: breakfast, hour: 10).total == 0)
        #expect(
            restored.state.coaching.timing.contains {
                $0.slot == dinner && $0.adjustment == TimingAdjustment.shift(minutes: 60)
            })
        // Written again, it is the newest version, and reads back the same.
        let new = restored.snapshot()
        #expect(new[2] == UInt8(EngineSnapshot.version))
        let again = try UserEngine(restoring: new, profile: profile, zone: london, content: bundledContent)
        #expect(again.state.coaching.responses == responses)
    }
}
