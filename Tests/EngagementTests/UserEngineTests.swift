import Models
import Scheduling
import Testing

@testable import Engagement

/// Helpers: a user in a zone, and the schedule effects of an input.
func makeProfile(
    zone: String = "Europe/London", absence: AbsenceResponse = .lightNudge,
    configure: (inout NotificationPreferences) -> Void = { _ in }
) -> UserProfile {
    var preferences = NotificationPreferences()
    configure(&preferences)
    return UserProfile(
        id: "u1", displayName: "Ana Test", timeZone: zone,
        communication: CommunicationPreferences(absenceResponse: absence), preferences: preferences)
}

func instant(_ text: String) -> Instant { Instant(iso8601: text)! }

/// A server's engine launched at `t0` in `zone` (no attention budget), whose phone then pulled
/// its local plan (`UserEngine.phoneApplied`).
func engineWithPulledPlan(in zone: ZoneRules, at t0: Instant) -> UserEngine {
    var engine = UserEngine(profile: makeProfile(), zone: zone, now: t0, configuration: .withoutAttentionBudget)
    _ = engine.handle(.appLaunched, at: t0)
    let local = engine.planned.filter { ChannelPolicy.channel(for: $0.kind) == .local }
    let applied = engine.phoneApplied(local.map { (requestID: $0.id.requestID, fireAt: $0.fireAt) }, at: t0)
    #expect(applied)
    return engine
}

extension [Effect] {
    var scheduled: [(request: NotificationRequest, fireAt: Instant)] {
        compactMap { if case .schedule(let request, let fireAt, _) = $0 { (request, fireAt) } else { nil } }
    }
    var traces: [TraceEntry] { compactMap { if case .trace(let entry) = $0 { entry } else { nil } } }
    var cancelledIDs: [RequestID] {
        var ids: [RequestID] = []
        for effect in self { if case .cancel(let cancelled) = effect { ids += cancelled } }
        return ids
    }
}

@Suite struct UserEngineTests {
    let london = ZoneRules(identifier: "Europe/London")!

    @Test func morningGreetingIsPlannedAtThePreferredLocalTime() {
        let profile = makeProfile { $0.morningTime = LocalTimeOfDay("06:45")! }
        var engine = UserEngine(profile: profile, zone: london, now: instant("2027-06-01T12:00:00Z"))
        let effects = engine.handle(.appLaunched, at: instant("2027-06-01T12:00:00Z"))
        let mornings = effects.scheduled.filter { $0.request.content.kind == .morningGreeting }
        // BST is UTC+1: 06:45 local is 05:45Z, tomorrow and the day after within the 48 h horizon.
        #expect(mornings.map(\.fireAt) == [instant("2027-06-02T05:45:00Z"), instant("2027-06-03T05:45:00Z")])
        #expect(mornings.first?.request.identifier == "morningGreeting.2027-06-02")
        #expect(effects.traces.contains { $0.requestID == "morningGreeting.2027-06-02" && $0.decision == .scheduled })
    }

    @Test func eachScheduledNotificationCarriesItsKindsChannel() {
        var engine = UserEngine(profile: makeProfile(), zone: london, now: instant("2027-06-01T12:00:00Z"))
        var effects = engine.handle(.appLaunched, at: instant("2027-06-01T12:00:00Z"))
        for (index, name) in ["Ben", "Chen", "Dara"].enumerated() {
            let event = SocialEvent(
                id: "s\(index)", kind: .mention, actorName: name, topic: "run", isMutualFriend: true)
            effects += engine.handle(.socialEvent(event), at: instant("2027-06-01T12:10:00Z"))
        }
        var channels: Set<DeliveryChannel> = []
        for case .schedule(let request, _, let channel) in effects {
            #expect(channel == ChannelPolicy.channel(for: request.content.kind), "\(request.identifier)")
            channels.insert(channel)
        }
        #expect(channels == [.local, .remote])
    }

    @Test func mealRemindersFireAtTheSeedTimesInLocalTime() {
        let kathmandu = ZoneRules(identifier: "Asia/Kathmandu")!
        let profile = makeProfile(zone: "Asia/Kathmandu")
        var engine = UserEngine(profile: profile, zone: kathmandu, now: instant("2027-03-01T00:00:00+05:45"))
        let effects = engine.handle(.appLaunched, at: instant("2027-03-01T00:00:00+05:45"))
        let meals = effects.scheduled.filter {
            $0.request.content.kind == .mealReminder && $0.request.identifier.rawValue.contains("2027-03-01")
        }
        let local = meals.map { kathmandu.localDateTime(at: $0.fireAt).timeOfDay.description }
        #expect(local == ["08:00", "12:30", "15:00", "18:30"])
    }

    @Test(arguments: [(HydrationFrequency.hourly, 15), (.biHourly, 8), (.triDaily, 2)])
    func hydrationFollowsTheFrequencyWithinWakingHours(frequency: HydrationFrequency, perDay: Int) {
        let profile = makeProfile {
            $0.hydration = frequency
            $0.maxPerHour = 20
        }
        var engine = UserEngine(
            profile: profile, zone: london, now: instant("2027-06-01T00:00:00+01:00"),
            configuration: .withoutAttentionBudget)
        let effects = engine.handle(.appLaunched, at: instant("2027-06-01T00:00:00+01:00"))
        // With room under the caps and no attention budget, each time of day is one repeating daily request.
        let hydration = effects.scheduled.filter { $0.request.content.kind == .hydration }
        #expect(hydration.count == perDay)
        #expect(hydration.allSatisfy { $0.request.trigger.repeats })
        for item in hydration {
            let minute = london.localDateTime(at: item.fireAt).secondOfDay / 60
            #expect(minute >= 7 * 60 && minute < 22 * 60)
        }
    }

    @Test func quietHoursWrappingMidnightDeferTheMorningGreetingToTheirEnd() {
        let profile = makeProfile {
            $0.morningTime = LocalTimeOfDay("07:00")!
            $0.quietHours = try! QuietHours(start: LocalTimeOfDay("22:00")!, end: LocalTimeOfDay("08:30")!)
        }
        var engine = UserEngine(profile: profile, zone: london, now: instant("2027-06-01T12:00:00Z"))
        let effects = engine.handle(.appLaunched, at: instant("2027-06-01T12:00:00Z"))
        let morning = effects.scheduled.first { $0.request.identifier == "morningGreeting.2027-06-02" }
        #expect(morning?.fireAt == instant("2027-06-02T08:30:00+01:00"))
        let trace = effects.traces.first { $0.requestID == "morningGreeting.2027-06-02" }
        #expect(trace?.decision == .deferred)
        #expect(trace?.reason == .quietHours)
        // Breakfast at 08:00 is inside quiet hours too; it moves to 08:30 within its 60-minute deadline.
        let breakfast = effects.scheduled.first { $0.request.identifier == "mealReminder.2027-06-02.breakfast" }
        #expect(breakfast?.fireAt == instant("2027-06-02T08:30:00+01:00"))
    }

    @Test func theHourlyCapHoldsOverEveryPlannedWindow() {
        let profile = makeProfile {
            $0.hydration = .hourly
            $0.maxPerHour = 1
        }
        var engine = UserEngine(profile: profile, zone: london, now: instant("2027-06-01T00:00:00+01:00"))
        let effects = engine.handle(.appLaunched, at: instant("2027-06-01T00:00:00+01:00"))
        let times = effects.scheduled.map(\.fireAt.secondsSinceEpoch).sorted()
        #expect(!times.isEmpty)
        for (a, b) in zip(times, times.dropFirst()) { #expect(b - a >= 3_600) }
        #expect(effects.traces.contains { $0.reason == .capPerHour })
    }

    @Test func giveMeSpaceNeverSchedulesReEngagementAndTracesWhy() {
        let profile = makeProfile(absence: .giveMeSpace)
        let t0 = instant("2027-06-01T12:00:00Z")
        var engine = UserEngine(profile: profile, zone: london, now: t0)
        var all = engine.handle(.appLaunched, at: t0)
        // No activity for 5 days: background runs keep planning.
        for day in 1...5 {
            all += engine.handle(.backgroundTaskLaunched(.lapseDetection), at: t0 + Int64(day) * .secondsPerDay)
        }
        #expect(!all.scheduled.contains { $0.request.content.kind == .reEngagement })
        let traces = all.traces.filter { $0.kind == .reEngagement }
        #expect(traces.count == 1)
        #expect(traces.first?.decision == .suppressed)
        #expect(traces.first?.reason == .absenceGiveMeSpace)
        #expect(engine.lapseStage(at: t0 + 5 * .secondsPerDay) == .lapsed)
    }

    @Test func checkInOnMeEscalatesAndTheCampaignEndsWhenTheUserReturns() {
        let profile = makeProfile(absence: .checkInOnMe)
        let t0 = instant("2027-06-01T12:00:00Z")
        var engine = UserEngine(profile: profile, zone: london, now: t0)
        let effects = engine.handle(.appLaunched, at: t0)
        let nudges = effects.scheduled.filter { $0.request.content.kind == .reEngagement }
        // Planned ahead at 3, 7 and 14 days, at 10:00 local, so they fire even if the app never runs.
        #expect(
            nudges.map { london.localDateTime(at: $0.fireAt).description } == [
                "2027-06-05T10:00:00", "2027-06-09T10:00:00", "2027-06-16T10:00:00",
            ])
        #expect(nudges.allSatisfy { $0.request.content.interruptionLevel == .timeSensitive })
        // The light tone first, the stronger one from day 7.
        #expect(nudges[0].request.content.body != nudges[1].request.content.body)
        // The user comes back on day 2: every pending nudge is cancelled, with the reason.
        let back = engine.handle(.activity(.workoutCompleted(durationMinutes: 30)), at: t0 + 2 * .secondsPerDay)
        for nudge in nudges where nudge.request.identifier.rawValue.hasPrefix("reEngagement.2027-06-01") {
            #expect(back.cancelledIDs.contains(nudge.request.identifier))
        }
        #expect(
            back.traces.contains { $0.kind == .reEngagement && $0.decision == .cancelled && $0.reason == .userReturned }
        )
    }

    @Test func loggingAMealSuppressesItsReminder() {
        let profile = makeProfile()
        let t0 = instant("2027-06-01T09:00:00+01:00")
        var engine = UserEngine(profile: profile, zone: london, now: t0)
        _ = engine.handle(.appLaunched, at: t0)
        #expect(engine.plannedRequestIDs.contains("mealReminder.2027-06-01.lunch"))
        let effects = engine.handle(.activity(.mealLogged(.lunch)), at: instant("2027-06-01T12:00:00+01:00"))
        #expect(effects.cancelledIDs == ["mealReminder.2027-06-01.lunch"])
        #expect(
            effects.traces.contains { $0.requestID == "mealReminder.2027-06-01.lunch" && $0.reason == .alreadyDone })
        #expect(!engine.plannedRequestIDs.contains("mealReminder.2027-06-01.lunch"))
    }

    @Test func disablingAKindCancelsWhatIsPendingAtTheNextPass() {
        let t0 = instant("2027-06-01T09:00:00+01:00")
        var engine = UserEngine(profile: makeProfile(), zone: london, now: t0)
        _ = engine.handle(.appLaunched, at: t0)
        var preferences = engine.profile.preferences
        preferences.settings[.mealReminder] = .disabled
        let effects = engine.handle(.preferencesChanged(preferences), at: t0 + 60)
        #expect(!effects.cancelledIDs.isEmpty)
        #expect(effects.cancelledIDs.allSatisfy { $0.rawValue.hasPrefix("mealReminder.") })
        #expect(effects.traces.filter { $0.decision == .cancelled }.allSatisfy { $0.reason == .kindDisabled })
    }

    @Test func replanningWithoutChangeEmitsNothing() {
        let t0 = instant("2027-06-01T09:00:00+01:00")
        var engine = UserEngine(profile: makeProfile(), zone: london, now: t0)
        _ = engine.handle(.appLaunched, at: t0)
        let again = engine.handle(.backgroundTaskLaunched(.lapseDetection), at: t0 + 60)
        #expect(again.scheduled.isEmpty)
        #expect(again.cancelledIDs.isEmpty)
        #expect(again.traces.isEmpty)
    }

    @Test func theMorningGreetingIsPlannedOnceOnAFallBackDay() {
        let newYork = ZoneRules(identifier: "America/New_York")!
        let profile = makeProfile(zone: "America/New_York") { $0.morningTime = LocalTimeOfDay("01:30")! }
        let t0 = instant("2027-11-06T12:00:00-04:00")
        var engine = UserEngine(profile: profile, zone: newYork, now: t0)
        let effects = engine.handle(.appLaunched, at: t0)
        let fallBack = effects.scheduled.filter { $0.request.identifier == "morningGreeting.2027-11-07" }
        #expect(fallBack.count == 1)
        #expect(fallBack.first?.fireAt == instant("2027-11-07T05:30:00Z"))  // the first 01:30, EDT
    }

    @Test func travelReplansEverythingInTheNewZone() {
        let t0 = instant("2027-06-01T09:00:00+01:00")
        var engine = UserEngine(profile: makeProfile(), zone: london, now: t0)
        _ = engine.handle(.appLaunched, at: t0)
        let tokyo = ZoneRules(identifier: "Asia/Tokyo")!
        _ = engine.handle(.timeZoneChanged(tokyo), at: t0 + 60)
        // Calendar triggers follow the device to Tokyo; the plan follows them: 07:00 Tokyo time.
        let plan = Dictionary(uniqueKeysWithValues: zip(engine.plannedRequestIDs, engine.plannedFireTimes))
        let mornings = plan.filter { $0.key.rawValue.hasPrefix("morningGreeting.") }
        #expect(!mornings.isEmpty)
        for (_, fireAt) in mornings { #expect(tokyo.localDateTime(at: fireAt).timeOfDay.description == "07:00") }
        #expect(engine.profile.timeZone == "Asia/Tokyo")
    }

    @Test func snoozeBringsTheReminderBackLaterWithoutDuplicatingTheSeries() {
        let t0 = instant("2027-06-01T09:00:00+01:00")
        var engine = UserEngine(profile: makeProfile(), zone: london, now: t0)
        _ = engine.handle(.appLaunched, at: t0)
        let at = instant("2027-06-01T12:31:00+01:00")
        let effects = engine.handle(
            .notificationResponse(requestID: "mealReminder.2027-06-01.lunch", kind: .mealReminder, action: .snooze30),
            at: at)
        let snoozed = effects.scheduled.filter {
            $0.request.identifier.rawValue.hasPrefix("mealReminder.2027-06-01.lunch.snooze")
        }
        #expect(snoozed.count == 1)
        #expect(snoozed.first?.fireAt == at + 1_800)
        #expect(effects.traces.contains { $0.reason == .snoozed })
    }

    @Test func everyActionMapsToALinkOrAStateChange() {
        for action in NotificationActionID.allCases {
            let link = ResponseRouting.deepLink(for: action, kind: .morningGreeting)
            switch action {
            case .snooze30, .snoozeReminder, .snooze, .skipTodayAction, .skipWorkout, .completeWorkout, .dismiss:
                #expect(link == nil)
            default:
                #expect(link != nil)
            }
        }
        #expect(ResponseRouting.deepLink(for: .defaultTap, kind: .morningGreeting) == .dashboard)
    }
}

@Suite struct TravelTests {
    @Test func notificationsDeliveredBeforeAFlightStillCountTowardTheNewLocalDay() {
        // New York to Lord Howe (+11): the New York afternoon is already the next local day there.
        let newYork = ZoneRules(identifier: "America/New_York")!
        let lordHowe = ZoneRules(identifier: "Australia/Lord_Howe")!
        let profile = makeProfile(zone: "America/New_York") {
            $0.hydration = .hourly
            $0.maxPerDay = 6
        }
        let t0 = instant("2027-03-01T06:00:00-05:00")
        var engine = UserEngine(profile: profile, zone: newYork, now: t0)
        _ = engine.handle(.appLaunched, at: t0)
        // The flight lands after the 13:00 New York reminder fired; no input in between.
        let landed = instant("2027-03-01T13:44:00-05:00")
        let firedBefore = engine.plannedFireTimes.filter { $0 <= landed }
        #expect(!firedBefore.isEmpty)
        _ = engine.handle(.timeZoneChanged(lordHowe), at: landed)
        // Everything planned for the Lord Howe day must fit the daily cap with what already fired that day.
        let date = lordHowe.localDate(at: landed)
        let dayStart = lordHowe.instant(for: LocalDateTime(date: date, secondOfDay: 0))
        let dayEnd = lordHowe.instant(for: LocalDateTime(date: date.adding(days: 1), secondOfDay: 0))
        let firedThatDay = firedBefore.filter { $0 >= dayStart && $0 < dayEnd }.count
        let plannedThatDay = engine.plannedFireTimes.filter { $0 >= dayStart && $0 < dayEnd }.count
        #expect(firedThatDay + plannedThatDay <= 6)
        #expect(engine.plannedFireTimes.allSatisfy { $0 > landed })
    }
}
