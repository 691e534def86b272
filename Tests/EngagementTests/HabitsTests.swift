import Models
import Scheduling
import Testing

@testable import Engagement

private func time(_ text: String) -> LocalTimeOfDay { LocalTimeOfDay(text)! }
private func at(_ text: String) -> Instant { Instant(iso8601: text)! }
private func local(_ text: String) -> LocalDateTime { LocalDateTime.parseWithOffset(text)!.local }
private func date(_ text: String) -> LocalDate { local(text).date }

@Suite struct CircularTimeTests {
    @Test(arguments: [
        (["23:30", "00:30"], "00:00"),
        (["22:00", "02:00"], "00:00"),
        (["07:00", "08:00"], "07:30"),
        // Arithmetic averaging would give 15:40.
        (["23:00", "23:00", "01:00"], "23:40"),
        (["12:00"], "12:00"),
        (["18:10", "18:20", "18:30"], "18:20"),
    ])
    func theMeanIsTakenOnTheClockFace(times: [String], expected: String) throws {
        let result = try #require(CircularTime.mean(of: times.map(time)))
        #expect(result.mean == time(expected))
    }

    @Test func halfAnHourEitherSideOfMidnightAveragesToMidnightWithAHalfHourSpread() throws {
        let result = try #require(CircularTime.mean(of: [time("23:30"), time("00:30")]))
        #expect(result.mean == time("00:00"))
        // Two points 30 minutes either side: R = cos(7.5 degrees), sqrt(-2 ln R) is 30.043 minutes.
        #expect(abs(result.spreadMinutes - 30.043) < 0.001)
    }

    @Test func identicalTimesHaveNoSpread() throws {
        let result = try #require(CircularTime.mean(of: Array(repeating: time("06:45"), count: 5)))
        #expect(result.mean == time("06:45"))
        #expect(result.spreadMinutes == 0)
    }

    @Test func oppositeTimesHaveNoMeanAndScatteredTimesAWideSpread() throws {
        #expect(CircularTime.mean(of: [time("06:00"), time("18:00")]) == nil)
        #expect(CircularTime.mean(of: [LocalTimeOfDay]()) == nil)
        let scattered = try #require(CircularTime.mean(of: [time("06:00"), time("18:00"), time("06:00")]))
        #expect(scattered.mean == time("06:00"))
        // R = 1/3: sqrt(-2 ln(1/3)) rad = 339.7 minutes.
        #expect(abs(scattered.spreadMinutes - 339.7) < 0.1)
    }
}

@Suite struct WorkoutHabitsTests {
    let newYork = ZoneRules(identifier: "America/New_York")!

    @Test func aWeekdayNeedsTheMinimumDataPointsForAHabit() {
        var habits = WorkoutHabits()
        habits.record(workoutStart: local("2027-05-03T18:00"))  // Mondays
        habits.record(workoutStart: local("2027-05-10T18:30"))
        #expect(habits.dataPoints(for: .monday) == 2)
        #expect(habits.habit(for: .monday) == nil)
        #expect(habits.workoutTime(for: .monday, stated: time("07:00")) == time("07:00"))
        #expect(habits.preWorkoutTime(for: .monday) == nil)
        habits.record(workoutStart: local("2027-05-17T18:15"))
        let habit = habits.habit(for: .monday)
        #expect(habit?.time == time("18:15"))
        #expect(habit?.dataPoints == 3)
        #expect(habits.workoutTime(for: .monday, stated: time("07:00")) == time("18:15"))
        #expect(habits.habit(for: .tuesday) == nil)
        #expect(habits.habits.map(\.weekday) == [.monday])
    }

    @Test func theMinimumIsConfigurable() {
        var habits = WorkoutHabits(minimumDataPoints: 1)
        habits.record(workoutStart: local("2027-05-04T06:10"))
        #expect(habits.habit(for: .tuesday)?.time == time("06:10"))
    }

    @Test func lateNightWorkoutsAverageAcrossMidnight() {
        var habits = WorkoutHabits()
        for text in ["2027-05-03T23:30", "2027-05-10T00:30", "2027-05-17T00:00"] {
            habits.record(workoutStart: local(text))
        }
        #expect(habits.habit(for: .monday)?.time == time("00:00"))
        // 45 minutes before midnight is 23:15 the evening before.
        #expect(habits.preWorkoutTime(for: .monday) == time("23:15"))
    }

    @Test func sevenOClockStaysSevenOClockAcrossTheSpringDSTChange() {
        var habits = WorkoutHabits()
        // 07:00 EST is 12:00Z; after 2027-03-14 07:00 EDT is 11:00Z.
        let instants = [at("2027-03-08T12:00:00Z"), at("2027-03-15T11:00:00Z"), at("2027-03-22T11:00:00Z")]
        for instant in instants { habits.record(workoutStartedAt: instant, in: newYork) }
        let habit = habits.habit(for: .monday)
        #expect(habit?.time == time("07:00"))
        #expect(habit?.spreadMinutes == 0)
    }

    @Test func sevenOClockStaysSevenOClockAcrossTheAutumnDSTChange() {
        var habits = WorkoutHabits()
        // 2027-11-07: New York falls back; 07:00 EDT is 11:00Z, 07:00 EST is 12:00Z.
        for instant in [at("2027-10-31T11:00:00Z"), at("2027-11-07T12:00:00Z"), at("2027-11-14T12:00:00Z")] {
            habits.record(workoutStartedAt: instant, in: newYork)
        }
        #expect(habits.habit(for: .sunday)?.time == time("07:00"))
    }

    @Test func thePreWorkoutReminderIsFortyFiveRealMinutesBeforeTheWorkoutOnADSTDay() {
        var habits = WorkoutHabits()
        for text in ["2027-02-21T07:00", "2027-02-28T07:00", "2027-03-07T07:00"] {
            habits.record(workoutStart: local(text))
        }
        // Sunday 2027-03-14 starts on EST and is on EDT by 07:00: the workout is 11:00Z.
        let reminder = habits.preWorkoutReminder(on: date("2027-03-14"), in: newYork)
        #expect(reminder == at("2027-03-14T10:15:00Z"))
        #expect(habits.preWorkoutTime(for: .sunday) == time("06:15"))
        // Without a habit the stated time is used; with neither there is no reminder.
        #expect(
            habits.preWorkoutReminder(on: date("2027-03-15"), in: newYork, stated: time("18:30"))
                == at("2027-03-15T21:45:00Z"))
        #expect(habits.preWorkoutReminder(on: date("2027-03-15"), in: newYork) == nil)
    }

    @Test func thePostWorkoutCheckInIsTwoRealHoursAfterTheEnd() {
        // The workout ends at 01:30 EST on the spring-forward night; two hours later it is 04:30 EDT.
        let end = at("2027-03-14T06:30:00Z")
        let checkIn = WorkoutHabits.postWorkoutCheckInTime(workoutEndedAt: end)
        #expect(checkIn == at("2027-03-14T08:30:00Z"))
        #expect(newYork.localDateTime(at: checkIn) == local("2027-03-14T04:30"))
    }

    @Test func aWorkoutReportedOnCompletionCountsFromItsStart() {
        var habits = WorkoutHabits(minimumDataPoints: 1)
        habits.record(workoutCompletedAt: at("2027-05-05T08:00:00Z"), durationMinutes: 50, in: .utc)
        #expect(habits.habit(for: .wednesday)?.time == time("07:10"))
    }

    @Test func theEarliestWorkoutOfADayIsItsDataPoint() {
        var habits = WorkoutHabits(minimumDataPoints: 1)
        habits.record(workoutStart: local("2027-05-03T18:00"))
        habits.record(workoutStart: local("2027-05-03T07:00"))
        habits.record(workoutStart: local("2027-05-03T12:00"))
        #expect(habits.dataPoints(for: .monday) == 1)
        #expect(habits.habit(for: .monday)?.time == time("07:00"))
    }

    @Test func memoryIsBoundedToTheNewestSamples() {
        var habits = WorkoutHabits()
        let firstMonday = date("2027-01-04").daysSinceEpoch
        // Twelve Mondays at 06:00, then eight at 18:00: only the newest eight are kept.
        for week in 0..<20 {
            let minute = week < 12 ? 6 * 60 : 18 * 60
            habits.record(
                workoutStart: LocalDateTime(
                    daysSinceEpoch: firstMonday + Int64(week) * 7, time: LocalTimeOfDay(minutesSinceMidnight: minute)))
        }
        #expect(habits.dataPoints(for: .monday) == 8)
        #expect(habits.habit(for: .monday)?.time == time("18:00"))
        #expect(habits.habit(for: .monday)?.spreadMinutes == 0)
        // A sample from before the 56-day window is not taken.
        habits.record(workoutStart: LocalDateTime(daysSinceEpoch: firstMonday + 7, time: time("06:00")))
        #expect(habits.habit(for: .monday)?.spreadMinutes == 0)
    }

    @Test func samplesOutsideTheWindowAreForgotten() {
        var habits = WorkoutHabits()
        for text in ["2027-05-04T06:00", "2027-05-11T06:00", "2027-05-18T06:00"] {
            habits.record(workoutStart: local(text))
        }
        // A workout 57 days after the first pushes it out of the window.
        habits.record(workoutStart: local("2027-06-30T12:00"))
        #expect(habits.dataPoints(for: .tuesday) == 2)
        habits.forget(before: date("2027-05-12"))
        #expect(habits.dataPoints(for: .tuesday) == 1)
    }

    @Test func recordingOrderDoesNotMatter() {
        var random = SeededGenerator(seed: 7)
        let firstDay = date("2027-04-01").daysSinceEpoch
        var starts: [LocalDateTime] = []
        for _ in 0..<40 {
            starts.append(
                LocalDateTime(
                    localSeconds: (firstDay + Int64(random.int(in: 0...49))) * .secondsPerDay
                        + Int64(random.int(in: 0...1_439)) * 60))
        }
        var inOrder = WorkoutHabits()
        for start in starts { inOrder.record(workoutStart: start) }
        for _ in 0..<5 {
            var shuffled = WorkoutHabits()
            for start in starts.shuffled(using: &random) { shuffled.record(workoutStart: start) }
            #expect(shuffled == inOrder)
        }
    }
}

@Suite struct WeeklyReviewTests {
    @Test(arguments: [
        (5, 5, WeeklyReview.Tier.greatConsistency),
        (4, 5, .greatConsistency),
        (3, 5, .goodEffort),
        (2, 5, .letsImproveNextWeek),
        (0, 3, .letsImproveNextWeek),
        (7, 5, .greatConsistency),
    ])
    func theTierFollowsTheCompletionRate(completed: Int, planned: Int, tier: WeeklyReview.Tier) {
        let review = WeeklyReview(weekStart: date("2027-05-03"), completed: completed, planned: planned)
        #expect(review.tier == tier)
        #expect(review.completionRate == Double(min(completed, planned)) / Double(planned))
    }

    @Test func nothingPlannedHasNoRateAndNoTier() {
        for completed in [0, 2] {
            let review = WeeklyReview(weekStart: date("2027-05-03"), completed: completed, planned: 0)
            #expect(review.completionRate == nil)
            #expect(review.tier == nil)
            #expect(review.completed == completed)
        }
    }

    @Test func theTiersReadAsTheSeedWrites() {
        #expect(WeeklyReview.Tier.greatConsistency.headline == "Great consistency!")
        #expect(WeeklyReview.Tier.goodEffort.headline == "Good effort this week")
        #expect(WeeklyReview.Tier.letsImproveNextWeek.headline == "Let's improve next week")
    }

    @Test func theSundayReviewCountsWhatWasDueBeforeIt() {
        let schedule = [
            ScheduledWorkout(weekday: .monday, time: time("07:00"), type: "Row"),
            ScheduledWorkout(weekday: .wednesday, time: time("07:00"), type: "Row"),
            ScheduledWorkout(weekday: .friday, time: time("18:00"), type: "Strength"),
            // Still ahead at Sunday 19:00: not yet missed.
            ScheduledWorkout(weekday: .sunday, time: time("20:00"), type: "Stretch"),
        ]
        let workouts = [
            local("2027-05-09T07:00"),  // the Sunday before: last week
            local("2027-05-10T07:05"),
            local("2027-05-12T07:10"),
            local("2027-05-16T21:00"),  // after the review
        ]
        let review = WeeklyReview(asOf: local("2027-05-16T19:00"), workoutStarts: workouts, schedule: schedule)
        #expect(review.weekStart == date("2027-05-10"))
        #expect(review.completed == 2)
        #expect(review.planned == 3)
        #expect(review.tier == .goodEffort)
    }

    @Test func aReviewOnMondayMorningStartsTheWeek() {
        let schedule = [ScheduledWorkout(weekday: .monday, time: time("07:00"), type: "Row")]
        let review = WeeklyReview(asOf: local("2027-05-10T06:00"), workoutStarts: [], schedule: schedule)
        #expect(review.weekStart == date("2027-05-10"))
        #expect(review.planned == 0)
        #expect(review.tier == nil)
    }
}

@Suite struct WorkoutStreakTests {
    let newYork = ZoneRules(identifier: "America/New_York")!
    let london = ZoneRules(identifier: "Europe/London")!
    let tokyo = ZoneRules(identifier: "Asia/Tokyo")!

    @Test func aStreakRunsThroughTheTwentyThreeHourDSTDay() {
        var streak = WorkoutStreak()
        // 2027-03-14 has 23 hours in New York.
        for text in ["2027-03-13T20:00:00-05:00", "2027-03-14T20:00:00-04:00", "2027-03-15T07:00:00-04:00"] {
            streak.record(workoutAt: at(text), in: newYork)
        }
        #expect(streak.currentDays(today: date("2027-03-15")) == 3)
        #expect(streak.currentDays(today: date("2027-03-16")) == 3)  // still alive today
        #expect(streak.currentDays(today: date("2027-03-17")) == 0)
        #expect(streak.longestDays == 3)
    }

    @Test func aStreakSurvivesAFlightAcrossTimeZones() {
        // New York on the 1st, London on the 2nd, Tokyo on the 3rd: each day read where the user was.
        let workouts = [
            (at("2027-06-01T18:00:00-04:00"), newYork), (at("2027-06-02T19:00:00+01:00"), london),
            (at("2027-06-03T07:00:00+09:00"), tokyo),
        ]
        var streak = WorkoutStreak()
        for (instant, zone) in workouts { streak.record(workoutAt: instant, in: zone) }
        #expect(streak.currentDays(today: tokyo.localDate(at: at("2027-06-03T22:00:00+09:00"))) == 3)
        let days = workouts.map { $0.1.localDate(at: $0.0) }
        #expect(WorkoutStreak.currentDays(workoutDays: days, today: date("2027-06-03")) == 3)
        // Read in New York throughout, Tokyo's morning would fall on the 2nd: two days, not three.
        let homeDays = workouts.map { newYork.localDate(at: $0.0) }
        #expect(WorkoutStreak.currentDays(workoutDays: homeDays, today: date("2027-06-02")) == 2)
    }

    @Test func theCurrentStreakEndsTodayOrYesterdayAndTheLongestIsKept() {
        let days = ["2027-05-01", "2027-05-02", "2027-05-03", "2027-05-04", "2027-05-08", "2027-05-09"].map(date)
        #expect(WorkoutStreak.currentDays(workoutDays: days, today: date("2027-05-09")) == 2)
        #expect(WorkoutStreak.currentDays(workoutDays: days, today: date("2027-05-10")) == 2)
        #expect(WorkoutStreak.currentDays(workoutDays: days, today: date("2027-05-11")) == 0)
        #expect(WorkoutStreak.currentDays(workoutDays: [], today: date("2027-05-11")) == 0)
        #expect(WorkoutStreak.longestDays(workoutDays: days) == 4)
        var streak = WorkoutStreak()
        for day in days { streak.record(workoutOn: day) }
        #expect(streak.longestDays == 4)
        #expect(streak.runDays == 2)
    }

    @Test func theIncrementalStreakMatchesTheHistoryOnRandomDays() {
        var random = SeededGenerator(seed: 11)
        for _ in 0..<200 {
            var days = Set<Int64>()
            for _ in 0..<random.int(in: 0...30) { days.insert(Int64(random.int(in: 20_000...20_040))) }
            let sorted = days.sorted().map { LocalDate(daysSinceEpoch: $0) }
            var streak = WorkoutStreak()
            for day in sorted {
                streak.record(workoutOn: day)
                streak.record(workoutOn: day)  // a second workout the same day changes nothing
            }
            let today = LocalDate(daysSinceEpoch: Int64(random.int(in: 20_030...20_045)))
            let expected = WorkoutStreak.currentDays(workoutDays: sorted.filter { $0 <= today }, today: today)
            if sorted.last.map({ $0 <= today }) ?? true { #expect(streak.currentDays(today: today) == expected) }
            #expect(streak.longestDays == WorkoutStreak.longestDays(workoutDays: sorted))
        }
    }
}

@Suite struct ResponseStatsTests {
    // Slots whose kind has no window, so the rule itself is seen unclamped, and slots with one.
    let preWorkout = LearningSlot(.preWorkout, packedSlot: 7 * 60)
    let checkIn = LearningSlot(.checkInReminder)
    let workout = LearningSlot(.workoutReminder, packedSlot: 18 * 60)
    let morning = LearningSlot(.morningGreeting)
    let breakfast = LearningSlot(OccurrenceID(.mealReminder, daysSinceEpoch: 0, .meal(.breakfast)))
    let dinner = LearningSlot(OccurrenceID(.mealReminder, daysSinceEpoch: 0, .meal(.dinner)))
    let unbounded = SlotWindow(earliestMinutes: -1_440, latestMinutes: 1_440)

    @Test func fewResponsesKeepTheTime() {
        var stats = ResponseStats()
        stats.record(.dismissed, slot: preWorkout, hour: 7)
        stats.record(.dismissed, slot: preWorkout, hour: 7)
        #expect(stats.adjustment(slot: preWorkout, hour: 7) == .keep)
        #expect(stats.adjustment(slot: preWorkout, hour: 8) == .keep)
    }

    @Test func repeatedDismissalsShiftLaterWhenNoOtherHourWorks() {
        var stats = ResponseStats()
        for _ in 0..<3 { stats.record(.dismissed, slot: breakfast, hour: 7) }
        #expect(stats.adjustment(slot: breakfast, hour: 7) == .shift(minutes: 60))
        // Late in the evening the shift goes earlier instead.
        for _ in 0..<3 { stats.record(.ignored, slot: morning, hour: 22) }
        #expect(stats.adjustment(slot: morning, hour: 22, window: unbounded) == .shift(minutes: -60))
        // Other slots are unaffected, of the same kind too: dinner does not learn from breakfast.
        #expect(stats.adjustment(slot: dinner, hour: 7) == .keep)
        #expect(stats.adjustment(slot: dinner, hour: 18) == .keep)
    }

    @Test func repeatedIgnoresShiftTowardTheHourTheUserActsAt() {
        var stats = ResponseStats()
        for _ in 0..<3 { stats.record(.acted, slot: preWorkout, hour: 9) }
        for _ in 0..<4 { stats.record(.acted, slot: preWorkout, hour: 5) }
        stats.record(.ignored, slot: preWorkout, hour: 5)  // 0.8 at 05:00, 1.0 at 09:00
        for _ in 0..<3 { stats.record(.ignored, slot: preWorkout, hour: 7) }
        #expect(stats.adjustment(slot: preWorkout, hour: 7, window: unbounded) == .shift(minutes: 120))
        #expect(stats.adjustment(slot: preWorkout, hour: 9, window: unbounded) == .keep)
    }

    @Test func aShiftNeverLeavesTheSlotsWindowNorGoesToAnotherSlotsHour() {
        var stats = ResponseStats()
        // Breakfast is acted on at 08:00; dinner is ignored at 18:00. Per kind, dinner would move
        // to 08:00; per slot it learns only from dinner and stays within 17:30 ..< 20:00.
        for _ in 0..<5 { stats.record(.acted, slot: breakfast, hour: 8) }
        for _ in 0..<3 { stats.record(.ignored, slot: dinner, hour: 18) }
        #expect(stats.adjustment(slot: dinner, hour: 18) == .shift(minutes: 60))
        // Dinner acted on at 21:00 (a deferral once took it there): outside the window, no target.
        for _ in 0..<4 { stats.record(.acted, slot: dinner, hour: 21) }
        #expect(stats.adjustment(slot: dinner, hour: 18) == .shift(minutes: 60))
        // A hydration time has room for a quarter of an hour later at most (-30 ..< +30).
        let hydration = LearningSlot(.hydration, packedSlot: 13 * 60)
        for _ in 0..<3 { stats.record(.ignored, slot: hydration, hour: 13) }
        #expect(stats.adjustment(slot: hydration, hour: 13) == .shift(minutes: 15))
        for _ in 0..<3 { stats.record(.ignored, slot: LearningSlot(.hydration, packedSlot: 21 * 60), hour: 21) }
        #expect(stats.adjustment(slot: LearningSlot(.hydration, packedSlot: 21 * 60), hour: 21) == .shift(minutes: -30))
    }

    @Test(arguments: [
        (5, TimingAdjustment.shift(minutes: 60)), (6, .backOff(factor: 2)), (8, .backOff(factor: 2)),
        (9, .backOff(factor: 4)), (12, .backOff(factor: 8)), (30, .backOff(factor: 8)),
    ])
    func longerRunsBackOff(ignores: Int, expected: TimingAdjustment) {
        var stats = ResponseStats()
        for _ in 0..<ignores { stats.record(.ignored, slot: morning, hour: 6) }
        #expect(stats.adjustment(slot: morning, hour: 6) == expected)
    }

    @Test func actingReinforcesTheHour() {
        var stats = ResponseStats()
        for _ in 0..<7 { stats.record(.dismissed, slot: workout, hour: 18) }
        #expect(stats.adjustment(slot: workout, hour: 18) == .backOff(factor: 2))
        stats.record(.acted, slot: workout, hour: 18)
        #expect(stats.adjustment(slot: workout, hour: 18) == .keep)
        #expect(stats.counts(slot: workout, hour: 18).dismissed == 7)
        #expect(stats.counts(slot: workout, hour: 18).negativeRun == 0)
    }

    @Test func repeatedSnoozesShiftByTheSnoozeDelay() {
        var stats = ResponseStats()
        stats.record(.acted, slot: checkIn, hour: 20)
        stats.record(.snoozed, slot: checkIn, hour: 20)
        #expect(stats.adjustment(slot: checkIn, hour: 20) == .keep)
        stats.record(.snoozed, slot: checkIn, hour: 20)
        #expect(stats.adjustment(slot: checkIn, hour: 20) == .shift(minutes: 30))
        stats.record(.acted, slot: checkIn, hour: 20)
        #expect(stats.adjustment(slot: checkIn, hour: 20) == .keep)
    }

    @Test func oldResponsesFadeAsCountsHalve() {
        var stats = ResponseStats()
        let hydration = LearningSlot(.hydration, packedSlot: 10 * 60)
        for _ in 0..<64 { stats.record(.acted, slot: hydration, hour: 10) }
        #expect(stats.counts(slot: hydration, hour: 10).acted == 32)
        #expect(stats.counts(kind: .hydration).total == 32)
    }

    @Test func theHourIsTheLocalHourOfDelivery() {
        var stats = ResponseStats()
        let tokyo = ZoneRules(identifier: "Asia/Tokyo")!
        stats.record(.acted, slot: breakfast, deliveredAt: at("2027-05-03T23:30:00Z"), in: tokyo)
        #expect(stats.counts(slot: breakfast, hour: 8).acted == 1)
        #expect(stats.counts(slot: dinner, hour: 8).acted == 0)
    }

    @Test func aSlotIsNamedByItsKindAndItsOccurrence() {
        #expect(breakfast.description == "mealReminder.breakfast")
        #expect(LearningSlot(.hydration, packedSlot: 13 * 60).description == "hydration.1300")
        #expect(LearningSlot(.morningGreeting).description == "morningGreeting")
        #expect(
            LearningSlot(OccurrenceID(.mealReminder, daysSinceEpoch: 20_000, .meal(.dinner))).description
                == "mealReminder.dinner")
        #expect(
            LearningSlot(
                OccurrenceID(.checkInReminder, daysSinceEpoch: 20_000, .reminder(number: 3, minuteOfDay: 1_200))
            )
            .description == "checkInReminder.r3-2000")
        #expect(morning.description == "morningGreeting")
        #expect(
            LearningSlot(OccurrenceID.dailySeries(.hydration, minute: 9 * 60))
                == LearningSlot(.hydration, packedSlot: 540))
    }

    @Test(arguments: NotificationActionID.allCases)
    func everyActionHasAnOutcome(action: NotificationActionID) {
        let expected: ResponseOutcome =
            switch action {
            case .snooze, .snooze30, .snoozeReminder: .snoozed
            case .dismiss: .dismissed
            default: .acted
            }
        #expect(ResponseOutcome(action: action) == expected)
    }
}
