import LiveActivity
import Models
import SimulatedPlatform

let t0 = Instant(iso8601: "2027-03-01T07:00:00Z")!
let minute = Int64.secondsPerMinute
let hour = Int64.secondsPerHour

func workout(_ type: String = "Run", startedAt: Instant = t0) -> LiveActivityAttributes {
    .workout(WorkoutActivityAttributes(workoutType: type, startedAt: startedAt))
}

func workoutContent(
    elapsedSeconds: Int = 0, exercise: String? = nil, staleDate: Instant? = nil
) -> LiveActivityContent {
    LiveActivityContent(
        state: .workout(
            WorkoutActivityAttributes.ContentState(
                elapsedSeconds: elapsedSeconds, heartRate: 128, activeCalories: elapsedSeconds / 10,
                currentExercise: exercise)),
        staleDate: staleDate)
}

func meal(_ type: MealType = .lunch) -> LiveActivityAttributes {
    .meal(MealActivityAttributes(meal: type, targetCalories: 600, targetProteinGrams: 30))
}

func mealContent(items: Int = 0, last: String? = nil) -> LiveActivityContent {
    LiveActivityContent(
        state: .meal(
            MealActivityAttributes.ContentState(itemsLogged: items, totalCalories: items * 150, lastFoodItem: last)))
}

/// Workout content whose payload, with `workout()`'s attributes, is exactly `bytes` long.
func workoutContent(payloadBytes bytes: Int) -> LiveActivityContent {
    let base = LiveActivityLimits.payloadBytes(attributes: workout(), state: workoutContent(exercise: "").state)
    return workoutContent(exercise: String(repeating: "x", count: bytes - base))
}

extension SimulatedLiveActivityCenter {
    /// Starts a workout activity at `now` that must succeed.
    mutating func startWorkout(at now: Instant = t0, staleDate: Instant? = nil) throws -> String {
        try start(workout(), content: workoutContent(staleDate: staleDate), at: now)
    }

    func state(of id: String) -> LiveActivityState? { activity(id: id)?.state }
}
