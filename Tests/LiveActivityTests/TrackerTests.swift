import Foundation
import LiveActivity
import Models
import Testing

@Suite("Live Activity tracker: the engine's rules")
struct TrackerTests {
    typealias State = WorkoutActivityAttributes.ContentState

    func state(_ seconds: Int, exercise: String? = nil) -> State {
        State(elapsedSeconds: seconds, heartRate: 130, activeCalories: seconds / 10, currentExercise: exercise)
    }

    @Test func aWorkoutStartsUpdatesAndEndsWithStaleAndDismissalDates() throws {
        var tracker = LiveActivityTracker()
        let start = try #require(tracker.handle(.workoutStarted(workoutType: "Run"), at: t0).only)
        #expect(start.event == .start)
        #expect(start.activityID == "workout-1")
        #expect(start.priority == .high)
        #expect(start.content.staleDate == t0 + LiveActivityRules.workoutStaleAfterSeconds)
        let update = try #require(tracker.handle(.workoutUpdated(state(60)), at: t0 + 60).only)
        #expect(update.event == .update)
        #expect(update.sequence == 2)
        #expect(update.content.staleDate == t0 + 60 + LiveActivityRules.workoutStaleAfterSeconds)
        let end = try #require(tracker.handle(.workoutEnded(state(1_800)), at: t0 + 1_800).only)
        #expect(end.event == .end)
        #expect(end.content.staleDate == nil)
        #expect(end.dismissal == .after(t0 + 1_800 + LiveActivityRules.workoutDismissAfterSeconds))
        #expect(tracker.running.isEmpty)
        // Nothing runs any more: a late update makes nothing.
        #expect(tracker.handle(.workoutUpdated(state(1_900)), at: t0 + 1_900).isEmpty)
    }

    @Test func aSecondWorkoutEndsTheFirstAtOnce() throws {
        var tracker = LiveActivityTracker()
        _ = tracker.handle(.workoutStarted(workoutType: "Run"), at: t0)
        let commands = tracker.handle(.workoutStarted(workoutType: "Yoga"), at: t0 + 600)
        #expect(commands.map(\.event) == [.end, .start])
        #expect(commands.map(\.activityID) == ["workout-1", "workout-2"])
        #expect(commands[0].dismissal == .immediate)
        #expect(tracker.running.map(\.id) == ["workout-2"])
    }

    @Test func aWorkoutAndAMealRunSideBySide() {
        var tracker = LiveActivityTracker()
        _ = tracker.handle(.workoutStarted(workoutType: "Run"), at: t0)
        let meal = MealActivityAttributes(meal: .lunch, targetCalories: 600, targetProteinGrams: 30)
        #expect(tracker.handle(.mealStarted(meal), at: t0 + 60).map(\.activityID) == ["meal-2"])
        #expect(tracker.running.count == 2)
        let ended = tracker.handle(.mealEnded, at: t0 + 3_600)
        #expect(ended.map(\.event) == [.end])
        #expect(ended.first?.dismissal == .after(t0 + 3_600 + LiveActivityRules.mealDismissAfterSeconds))
        #expect(tracker.running.map(\.id) == ["workout-1"])
    }

    @Test func repeatedAndTooFrequentUpdatesAreDroppedUnlessSignificant() {
        var tracker = LiveActivityTracker()
        _ = tracker.handle(.workoutStarted(workoutType: "Run"), at: t0)
        #expect(tracker.handle(.workoutUpdated(state(30)), at: t0 + 30).count == 1)
        // The same content again: nothing new to show.
        #expect(tracker.handle(.workoutUpdated(state(30)), at: t0 + 60).isEmpty)
        // Five seconds after the last: dropped (the next carries the whole state) ...
        #expect(tracker.handle(.workoutUpdated(state(35)), at: t0 + 35).isEmpty)
        // ... unless the exercise changed.
        #expect(tracker.handle(.workoutUpdated(state(36, exercise: "Intervals")), at: t0 + 36).count == 1)
        // Without a running workout, an update or an end makes nothing.
        var idle = LiveActivityTracker()
        #expect(idle.handle(.workoutUpdated(state(30)), at: t0).isEmpty)
        #expect(idle.handle(.workoutEnded(state(30)), at: t0).isEmpty)
        #expect(idle.handle(.mealEnded, at: t0).isEmpty)
    }

    @Test func priorityTenStaysWithinTheHourlyBudget() {
        var tracker = LiveActivityTracker()
        var priorities = tracker.handle(.workoutStarted(workoutType: "Run"), at: t0).map(\.priority)
        // A new exercise every minute for two hours: each is significant.
        for minuteIndex in 1...120 {
            let at = t0 + Int64(minuteIndex) * minute
            priorities += tracker.handle(
                .workoutUpdated(state(minuteIndex * 60, exercise: "set \(minuteIndex)")), at: at
            )
            .map(\.priority)
        }
        #expect(priorities.count == 121)
        // In every hour-long window, at most `highPriorityPerHour` priority-10 commands.
        for first in priorities.indices {
            let window = priorities[first..<min(priorities.count, first + 60)]
            #expect(window.filter { $0 == .high }.count <= LiveActivityRules.highPriorityPerHour)
        }
        #expect(priorities.prefix(LiveActivityRules.highPriorityPerHour).allSatisfy { $0 == .high })
        #expect(priorities[LiveActivityRules.highPriorityPerHour] == .low)
        // Routine ticks (the same exercise) go at priority 5 whatever the budget.
        var quiet = LiveActivityTracker()
        _ = quiet.handle(.workoutStarted(workoutType: "Run"), at: t0)
        #expect(quiet.handle(.workoutUpdated(state(60)), at: t0 + 60).map(\.priority) == [.low])
    }

    @Test func anActivityPastEightHoursWasEndedByTheSystem() {
        var tracker = LiveActivityTracker()
        _ = tracker.handle(.workoutStarted(workoutType: "Ultra"), at: t0)
        #expect(tracker.handle(.workoutUpdated(state(60)), at: t0 + 8 * hour).isEmpty)
        #expect(tracker.running.isEmpty)
        #expect(tracker.handle(.workoutStarted(workoutType: "Walk"), at: t0 + 8 * hour).map(\.event) == [.start])
    }

    @Test func theNewestPushTokenRidesOnLaterCommands() throws {
        var tracker = LiveActivityTracker()
        _ = tracker.handle(.workoutStarted(workoutType: "Run"), at: t0)
        #expect(tracker.handle(.pushTokenReceived(activityID: "workout-1", token: "aa"), at: t0 + 1).isEmpty)
        _ = tracker.handle(.pushTokenReceived(activityID: "workout-9", token: "bb"), at: t0 + 2)  // unknown: ignored
        _ = tracker.handle(.pushTokenReceived(activityID: "workout-1", token: "cc"), at: t0 + 3)
        let update = try #require(tracker.handle(.workoutUpdated(state(60)), at: t0 + 60).only)
        #expect(update.pushToken == "cc")
    }

    @Test func contentBeyondFourKilobytesIsNeverCommanded() {
        var tracker = LiveActivityTracker()
        _ = tracker.handle(.workoutStarted(workoutType: String(repeating: "R", count: 10_000)), at: t0)
        #expect(tracker.running.first?.attributes == workout(String(repeating: "R", count: 64)))
        let huge = String(repeating: "x", count: 5_000)
        #expect(tracker.handle(.workoutUpdated(state(60, exercise: huge)), at: t0 + 60).isEmpty)
    }

    @Test func theTrackerRoundTripsThroughJSON() throws {
        var tracker = LiveActivityTracker()
        _ = tracker.handle(.workoutStarted(workoutType: "Run"), at: t0)
        _ = tracker.handle(.pushTokenReceived(activityID: "workout-1", token: "aa"), at: t0 + 1)
        let data = try JSONEncoder().encode(tracker)
        #expect(try JSONDecoder().decode(LiveActivityTracker.self, from: data) == tracker)
    }
}

@Suite("Live Activity pushes")
struct LiveActivityPushTests {
    func json(_ command: LiveActivityCommand) throws -> [String: Any] {
        let bytes = try LiveActivityPush.payload(for: command)
        let object = try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any]
        return try #require(object?["aps"] as? [String: Any])
    }

    @Test func aStartCarriesItsAttributesAndAnEndItsDismissalDate() throws {
        var tracker = LiveActivityTracker()
        let start = try #require(tracker.handle(.workoutStarted(workoutType: "Run"), at: t0).only)
        let aps = try json(start)
        #expect(aps["event"] as? String == "start")
        #expect(aps["timestamp"] as? Int64 == t0.secondsSinceEpoch)
        #expect(aps["attributes-type"] as? String == "WorkoutActivityAttributes")
        #expect((aps["attributes"] as? [String: Any])?["workoutType"] as? String == "Run")
        #expect((aps["content-state"] as? [String: Any])?["elapsedSeconds"] as? Int == 0)
        #expect(aps["stale-date"] as? Int64 == t0.secondsSinceEpoch + LiveActivityRules.workoutStaleAfterSeconds)
        #expect(aps["dismissal-date"] == nil)

        let ended = try #require(
            tracker.handle(.workoutEnded(.init(elapsedSeconds: 900, activeCalories: 90)), at: t0 + 900).only)
        let endAPS = try json(ended)
        #expect(endAPS["event"] as? String == "end")
        #expect(endAPS["attributes"] == nil)
        #expect(endAPS["stale-date"] == nil)
        #expect(
            endAPS["dismissal-date"] as? Int64
                == t0.secondsSinceEpoch + 900 + LiveActivityRules.workoutDismissAfterSeconds)
    }
}

extension Array {
    /// The single element, or nil when there are none or several.
    fileprivate var only: Element? { count == 1 ? first : nil }
}
