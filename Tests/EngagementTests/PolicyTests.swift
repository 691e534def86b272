import Content
import Models
import Scheduling
import Testing

@testable import Engagement

func kudos(_ n: Int, topic: String = "morning run", mutual: Bool = true) -> SocialEvent {
    SocialEvent(id: "k\(n)", kind: .workoutKudos, actorName: "Friend \(n)", topic: topic, isMutualFriend: mutual)
}

@Suite struct BatchingAndDigestTests {
    let london = ZoneRules(identifier: "Europe/London")!
    let t0 = Instant(iso8601: "2027-06-01T10:00:00+01:00")!

    func engine(_ configure: (inout NotificationPreferences) -> Void = { _ in }) -> UserEngine {
        var engine = UserEngine(
            profile: makeProfile { preferences in
                preferences.settings[.mealReminder] = .disabled
                preferences.settings[.morningGreeting] = .disabled
                configure(&preferences)
            }, zone: london, now: t0)
        _ = engine.handle(.appLaunched, at: t0)
        return engine
    }

    @Test func kudosWithinTheWindowBecomeOneGroupedNotification() {
        var engine = engine { $0.batchingWindowMinutes = 15 }
        var effects: [Effect] = []
        for n in 1...3 { effects += engine.handle(.socialEvent(kudos(n)), at: t0 + Int64(n) * 60) }
        let folded = effects.traces.filter { $0.decision == .folded }
        #expect(folded.count == 3)
        #expect(Set(folded.compactMap(\.groupID)).count == 1)
        #expect(Set(folded.compactMap(\.groupKey)) == ["workoutKudos/morning run"])
        let grouped = effects.scheduled.filter { $0.request.content.kind == .workoutKudos }.last
        // The window opened with the first item and closes 15 minutes later.
        #expect(grouped?.fireAt == t0 + 60 + 15 * 60)
        #expect(grouped?.request.content.body == "3 people cheered your morning run.")
    }

    @Test func aBatchNeverMixesTopicsAndClosesEarlyAtTheMaximumCount() {
        var engine = engine { $0.maxBatchItems = 2 }
        var effects = engine.handle(.socialEvent(kudos(1)), at: t0)
        effects += engine.handle(.socialEvent(kudos(2, topic: "evening lift")), at: t0 + 10)
        effects += engine.handle(.socialEvent(kudos(3)), at: t0 + 20)
        let groups = Dictionary(grouping: effects.traces.filter { $0.decision == .folded }, by: { $0.groupID! })
        #expect(groups.count == 2)
        for (_, items) in groups { #expect(Set(items.map(\.groupKey)).count == 1) }
        // Two morning-run kudos reach the maximum: that batch goes out at once.
        let morning = groups.values.first { $0.count == 2 }!
        let request = effects.scheduled.last { $0.request.identifier.rawValue == morning[0].groupID }
        #expect(request?.fireAt == t0 + 21)
    }

    @Test func aDailyDigestArrivesAtTheChosenLocalTime() {
        var engine = engine {
            $0.settings[.workoutKudos] = .daily
            $0.digestTime = LocalTimeOfDay("20:15")!
        }
        var effects = engine.handle(.socialEvent(kudos(1)), at: t0)
        effects += engine.handle(.socialEvent(kudos(2, topic: "yoga flow")), at: t0 + 3_600)
        let digest = effects.scheduled.filter { $0.request.content.kind == .workoutKudos }.last
        #expect(digest.map { london.formatted($0.fireAt) } == "2027-06-01T20:15:00+01:00")
        #expect(digest?.request.content.body == "2 people cheered your morning run today.")
    }

    @Test func anEnabledItemBlockedByQuietHoursFoldsIntoTheDigestInsteadOfWaking() {
        var engine = engine {
            $0.settings[.workoutKudos] = .enabled
            $0.quietHours = try! QuietHours(start: LocalTimeOfDay("22:00")!, end: LocalTimeOfDay("07:00")!)
        }
        let night = Instant(iso8601: "2027-06-01T23:30:00+01:00")!
        let effects = engine.handle(.socialEvent(kudos(1)), at: night)
        let folded = effects.traces.first { $0.decision == .folded }
        #expect(folded?.reason == .quietHours)
        let digest = effects.scheduled.first { $0.request.content.kind == .workoutKudos }
        #expect(digest.map { london.formatted($0.fireAt) } == "2027-06-02T19:00:00+01:00")
    }

    @Test func aDisabledSocialKindIsSuppressedAndSaysSo() {
        var engine = engine { $0.settings[.workoutKudos] = .disabled }
        let effects = engine.handle(.socialEvent(kudos(1)), at: t0)
        #expect(effects.scheduled.isEmpty)
        #expect(effects.traces.first?.reason == .kindDisabled)
    }

    @Test func privateUsersNeverSeeNamesAndFriendsOnlyUsersSeeOnlyMutualFriends() {
        for (privacy, mutual, expected) in [
            (PrivacyLevel.public, false, "Friend 1 cheered your morning run."),
            (.friendsOnly, true, "Friend 1 cheered your morning run."),
            (.friendsOnly, false, "Someone cheered your morning run."),
            (.private, true, "You have new notifications."),
        ] {
            var profile = makeProfile { $0.settings[.workoutKudos] = .immediate }
            profile.privacyLevel = privacy
            var engine = UserEngine(profile: profile, zone: london, now: t0)
            let effects = engine.handle(.socialEvent(kudos(1, mutual: mutual)), at: t0)
            #expect(
                effects.scheduled.first { $0.request.content.kind == .workoutKudos }?.request.content.body == expected)
        }
    }

    @Test func nonUrgentRemindersWaitWhileTheUserIsInTheApp() {
        var engine = UserEngine(profile: makeProfile(), zone: london, now: t0)
        _ = engine.handle(.appLaunched, at: Instant(iso8601: "2027-06-01T08:00:00+01:00")!)
        // In the app from 12:25 for 15 minutes: the 12:30 lunch reminder waits until 12:40.
        let effects = engine.handle(
            .activity(.appOpened(sessionSeconds: 900)), at: Instant(iso8601: "2027-06-01T12:25:00+01:00")!)
        let lunch = effects.scheduled.first { $0.request.identifier == "mealReminder.2027-06-01.lunch" }
        #expect(lunch.map { london.formatted($0.fireAt) } == "2027-06-01T12:40:00+01:00")
        #expect(effects.traces.contains { $0.reason == .userActiveInApp })
    }
}

@Suite struct RemindersAndSeriesTests {
    let london = ZoneRules(identifier: "Europe/London")!

    @Test func aCustomReminderFollowsItsRuleAndASnoozeMovesOneOccurrence() throws {
        let rule = try Recurrence(parsing: "FREQ=WEEKLY;BYDAY=MO,TH;BYHOUR=20;BYMINUTE=0")
        let start = LocalDateTime(date: LocalDate(year: 2027, month: 5, day: 31), secondOfDay: 20 * 3_600)
        let profile = makeProfile {
            $0.reminders = [Reminder(number: 3, title: "Check in with your partner", start: start, recurrence: rule)]
        }
        let t0 = Instant(iso8601: "2027-06-02T09:00:00+01:00")!
        var engine = UserEngine(profile: profile, zone: london, now: t0)
        let effects = engine.handle(.appLaunched, at: t0)
        let reminders = effects.scheduled.filter { $0.request.content.kind == .checkInReminder }
        #expect(reminders.map(\.request.identifier) == ["checkInReminder.2027-06-03.r3-2000"])
        #expect(reminders.first.map { london.formatted($0.fireAt) } == "2027-06-03T20:00:00+01:00")
        let snoozeAt = Instant(iso8601: "2027-06-03T20:02:00+01:00")!
        let snoozed = engine.handle(
            .notificationResponse(
                requestID: "checkInReminder.2027-06-03.r3-2000", kind: .checkInReminder, action: .snooze),
            at: snoozeAt)
        let again = snoozed.scheduled.filter { $0.request.content.kind == .checkInReminder }
        #expect(again.map(\.request.identifier) == ["checkInReminder.2027-06-03.r3-2000.snooze1"])
        #expect(again.first?.fireAt == snoozeAt + 3_600)
        // The series goes on: the next Monday is still planned once the horizon reaches it.
        let monday = engine.handle(
            .activity(.appOpened(sessionSeconds: 60)), at: Instant(iso8601: "2027-06-06T09:00:00+01:00")!)
        #expect(monday.scheduled.contains { $0.request.identifier == "checkInReminder.2027-06-07.r3-2000" })
    }

    @Test func aCompletedCheckInSilencesTodaysRemindersAndBringsAReflectionADayLater() throws {
        let start = LocalDateTime(date: LocalDate(year: 2027, month: 6, day: 1), secondOfDay: 20 * 3_600)
        let profile = makeProfile {
            $0.reminders = [Reminder(number: 1, title: "Daily check-in", start: start, recurrence: .daily)]
        }
        let t0 = Instant(iso8601: "2027-06-01T09:00:00+01:00")!
        var engine = UserEngine(profile: profile, zone: london, now: t0)
        _ = engine.handle(.appLaunched, at: t0)
        let done = Instant(iso8601: "2027-06-01T18:00:00+01:00")!
        let effects = engine.handle(.activity(.checkInCompleted), at: done)
        #expect(effects.cancelledIDs.contains("checkInReminder.2027-06-01.r1-2000"))
        #expect(
            effects.scheduled.contains { $0.request.content.kind == .reflection && $0.fireAt == done + .secondsPerDay })
    }

    @Test func hourlyHydrationHoldsOneRepeatingSlotPerTimeWhenNoRuleCanBlockIt() {
        let profile = makeProfile {
            $0.hydration = .hourly
            $0.maxPerHour = 10
        }
        let t0 = Instant(iso8601: "2027-06-01T09:00:00+01:00")!
        // A series fires whatever happens, so it is used only without an attention budget.
        var engine = UserEngine(profile: profile, zone: london, now: t0, configuration: .withoutAttentionBudget)
        let effects = engine.handle(.appLaunched, at: t0)
        let hydration = effects.scheduled.filter { $0.request.content.kind == .hydration }
        #expect(hydration.count == 15)
        #expect(
            hydration.allSatisfy {
                $0.request.trigger.repeats && $0.request.identifier.rawValue.hasPrefix("hydration.daily.")
            })
        // A day later nothing needs re-sending: the series stays pending.
        let later = engine.handle(.backgroundTaskLaunched(.lapseDetection), at: t0 + .secondsPerDay)
        #expect(!later.scheduled.contains { $0.request.content.kind == .hydration })
        #expect(engine.plannedRequestIDs.filter { $0.rawValue.hasPrefix("hydration.daily.") }.count == 15)
    }

    @Test func aCapThatCouldBlockAnOccurrenceKeepsHydrationAsSingleOccurrences() {
        let profile = makeProfile {
            $0.hydration = .hourly
            $0.maxPerHour = 1
        }
        let t0 = Instant(iso8601: "2027-06-01T09:00:00+01:00")!
        var engine = UserEngine(profile: profile, zone: london, now: t0)
        let effects = engine.handle(.appLaunched, at: t0)
        #expect(!effects.scheduled.contains { $0.request.trigger.repeats })
    }
}

@Suite struct LapseCampaignTimingTests {
    let london = ZoneRules(identifier: "Europe/London")!

    @Test func nudgesGoOutAtTheUsersHabitualActiveTime() {
        let t0 = Instant(iso8601: "2027-06-01T08:00:00+01:00")!
        var engine = UserEngine(profile: makeProfile(absence: .lightNudge), zone: london, now: t0)
        var effects: [Effect] = []
        // Five evenings around 21:00 (20:50 ... 21:10): the habit, not the 10:00 default.
        for (day, minute) in [(0, 50), (1, 55), (2, 0), (3, 5), (4, 10)] {
            let hour: Int64 = minute >= 50 ? 20 : 21
            let at =
                Instant(iso8601: "2027-06-01T00:00:00+01:00")! + Int64(day) * .secondsPerDay + hour * 3_600
                + Int64(minute) * 60
            effects = engine.handle(.activity(.appOpened(sessionSeconds: 60)), at: at)
        }
        let nudge = effects.scheduled.first { $0.request.content.kind == .reEngagement }
        #expect(nudge.map { london.localDateTime(at: $0.fireAt).timeOfDay.description } == "21:00")
    }

    @Test func aNudgeHeldByQuietHoursIsNotMovedADayOnByEachDailyPass() {
        // Quiet from 20:00 to 16:00: the 10:00 nudge waits until 16:00. A server's daily job
        // passes at 11:59, between the two, every day; each pass keeps the nudge's 10:00 of the
        // day it was placed for, so it goes out at 16:00 that day, not a day later each time.
        let profile = makeProfile(absence: .lightNudge) {
            $0.quietHours = try! QuietHours(start: LocalTimeOfDay("20:00")!, end: LocalTimeOfDay("16:00")!)
        }
        let t0 = Instant(iso8601: "2027-06-01T17:00:00+01:00")!
        var engine = UserEngine(profile: profile, zone: london, now: t0)
        _ = engine.handle(.activity(.appOpened(sessionSeconds: 60)), at: t0)
        for day in 1...12 {
            let pass = Instant(iso8601: "2027-06-01T11:59:00+01:00")! + Int64(day) * .secondsPerDay
            _ = engine.handle(.backgroundTaskLaunched(.lapseDetection), at: pass)
        }
        #expect(engine.reEngagementAttemptsSent >= 1)
    }

    @Test func anUnknownActionIdentifierIsTracedNotCrashedOn() {
        let t0 = Instant(iso8601: "2027-06-01T08:00:00+01:00")!
        var engine = UserEngine(profile: makeProfile(), zone: london, now: t0)
        let effects = engine.handle(
            .unrecognizedResponse(
                requestID: "mealReminder.2027-06-01.lunch", kind: .mealReminder, actionIdentifier: "DANCE_NOW"), at: t0)
        let trace = effects.traces.first { $0.reason == .unknownAction }
        #expect(trace?.kind == .mealReminder)
        #expect(trace?.detail.contains("DANCE_NOW") == true)
    }
}

@Suite struct CoachCopyTests {
    let london = ZoneRules(identifier: "Europe/London")!
    let t0 = Instant(iso8601: "2027-06-01T12:00:00+01:00")!

    func plannedMorning(_ engine: inout UserEngine) -> (id: RequestID, request: CoachRequest) {
        let effects = engine.handle(.appLaunched, at: t0)
        let asks = effects.compactMap { effect -> (RequestID, CoachRequest)? in
            if case .generateContent(let id, let request) = effect { (id, request) } else { nil }
        }
        let morning = asks.first { $0.0.rawValue.hasPrefix("morningGreeting.") }!
        return morning
    }

    @Test func validCoachCopyInTimeReplacesTheTemplateCopy() {
        var engine = UserEngine(profile: makeProfile(), zone: london, now: t0)
        let (id, request) = plannedMorning(&engine)
        #expect(request.kind == .morningGreeting)
        let effects = engine.handle(
            .contentGenerated(
                requestID: id, outcome: .text("Morning, Ana ☀️|A short walk sets up the day.", latencyMillis: 400)),
            at: t0 + 1)
        let replaced = effects.scheduled.first { $0.request.identifier == id }
        #expect(replaced?.request.content.body == "A short walk sets up the day.")
        #expect(effects.traces.contains { $0.requestID == id.rawValue && $0.reason == .coachCopy })
    }

    @Test(arguments: [
        (CoachOutcome.timedOut, "coachTimeout"),
        (.text("Morning, Ana|A walk?", latencyMillis: 2_500), "coachTimeout"),
        (.failed(reason: "unavailable", latencyMillis: 100), "coachError"),
        (.text("no separator here", latencyMillis: 100), "malformedOutput"),
        (.text("Hi|Call me at ana@example.com", latencyMillis: 100), "malformedOutput.personalData"),
    ])
    func anythingElseKeepsTheTemplateAndSaysWhy(outcome: CoachOutcome, reason: String) {
        var engine = UserEngine(profile: makeProfile(), zone: london, now: t0)
        let (id, _) = plannedMorning(&engine)
        let effects = engine.handle(.contentGenerated(requestID: id, outcome: outcome), at: t0 + 1)
        #expect(effects.scheduled.isEmpty)
        let trace = effects.traces.first { $0.requestID == id.rawValue }
        #expect(trace?.reason == .templateFallback)
        #expect(trace?.detail.contains(reason) == true, "\(trace?.detail ?? "")")
    }

    @Test func privateUsersTemplateCopyCarriesNoName() {
        var profile = makeProfile()
        profile.privacyLevel = .private
        var engine = UserEngine(profile: profile, zone: london, now: t0)
        let effects = engine.handle(.appLaunched, at: t0)
        for item in effects.scheduled {
            #expect(!item.request.content.title.contains("Ana") && !item.request.content.body.contains("Ana"))
        }
    }
}
