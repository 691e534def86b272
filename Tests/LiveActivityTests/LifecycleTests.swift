import Foundation
import LiveActivity
import Models
import SimulatedPlatform
import Testing

@Suite("SimulatedLiveActivityCenter: lifecycle")
struct LifecycleTests {
    @Test("Identifiers come from a counter, so the same calls give the same identifiers")
    func deterministicIdentifiers() throws {
        var first = SimulatedLiveActivityCenter()
        var second = SimulatedLiveActivityCenter()
        let a = try (0..<3).map { _ in try first.startWorkout() }
        let b = try (0..<3).map { _ in try second.startWorkout() }
        #expect(a == ["activity-1", "activity-2", "activity-3"])
        #expect(a == b)
        #expect(first == second)
        var prefixed = SimulatedLiveActivityCenter(idPrefix: "user-7")
        #expect(try prefixed.start(meal(), content: mealContent(), at: t0) == "user-7-1")
    }

    @Test("A started activity is listed as active with its attributes, content and size")
    func startListsTheActivity() throws {
        var center = SimulatedLiveActivityCenter()
        let id = try center.start(meal(.dinner), content: mealContent(items: 1, last: "Salad"), at: t0)
        let snapshot = try #require(center.activity(id: id))
        #expect(snapshot.state == .active)
        #expect(snapshot.attributes == meal(.dinner))
        #expect(snapshot.content == mealContent(items: 1, last: "Salad"))
        #expect(snapshot.startedAt == t0)
        #expect(snapshot.endedAt == nil)
        #expect(snapshot.removalAt == nil)
        #expect(
            snapshot.payloadBytes
                == LiveActivityLimits.payloadBytes(
                    attributes: meal(.dinner), state: mealContent(items: 1, last: "Salad").state))
        #expect(center.activities.map(\.id) == [id])
        #expect(center.runningCount == 1)
    }

    @Test("An update replaces the content")
    func updateReplacesContent() throws {
        var center = SimulatedLiveActivityCenter()
        let id = try center.startWorkout()
        try center.update(
            id: id, content: workoutContent(elapsedSeconds: 600, exercise: "Intervals"), at: t0 + 10 * minute)
        #expect(center.activity(id: id)?.content == workoutContent(elapsedSeconds: 600, exercise: "Intervals"))
        #expect(center.state(of: id) == .active)
    }

    @Test("The system ends an activity after 8 h and removes it 4 h later")
    func systemEndsAfterEightHours() throws {
        var center = SimulatedLiveActivityCenter()
        let id = try center.startWorkout()
        #expect(center.advance(to: t0 + 8 * hour - 1).isEmpty)
        #expect(center.state(of: id) == .active)

        #expect(
            center.advance(to: t0 + 8 * hour) == [
                LiveActivityTransition(id: id, change: .endedBySystem, at: t0 + 8 * hour)
            ])
        let ended = try #require(center.activity(id: id))
        #expect(ended.state == .ended)
        #expect(ended.endedAt == t0 + 8 * hour)
        #expect(ended.removalAt == t0 + 12 * hour)
        #expect(center.runningCount == 0)
        #expect(center.systemEndedCount == 1)

        #expect(center.advance(to: t0 + 12 * hour - 1).isEmpty)
        #expect(center.activities.count == 1)
        #expect(
            center.advance(to: t0 + 12 * hour) == [LiveActivityTransition(id: id, change: .removed, at: t0 + 12 * hour)]
        )
        #expect(center.activities.isEmpty)
    }

    @Test("Advancing past several limits at once reports each transition at its own instant")
    func transitionsCarryTheirOwnInstants() throws {
        var center = SimulatedLiveActivityCenter()
        let a = try center.startWorkout(staleDate: t0 + hour)
        let b = try center.start(meal(), content: mealContent(), at: t0 + 2 * hour)
        try center.end(id: b, content: nil, dismissal: .after(t0 + 3 * hour), at: t0 + 2 * hour + 30 * minute)
        #expect(
            center.advance(to: t0 + 13 * hour) == [
                LiveActivityTransition(id: a, change: .becameStale, at: t0 + hour),
                LiveActivityTransition(id: b, change: .removed, at: t0 + 3 * hour),
                LiveActivityTransition(id: a, change: .endedBySystem, at: t0 + 8 * hour),
                LiveActivityTransition(id: a, change: .removed, at: t0 + 12 * hour),
            ])
        #expect(center.activities.isEmpty)
    }

    @Test("Transitions noticed by other calls are still reported by the next advance")
    func transitionsAreNotLostBetweenAdvances() throws {
        var center = SimulatedLiveActivityCenter()
        let a = try center.startWorkout()
        // Starting another activity 9 h later catches up on the first one's 8 h end.
        let b = try center.startWorkout(at: t0 + 9 * hour)
        #expect(center.state(of: a) == .ended)
        #expect(center.state(of: b) == .active)
        #expect(
            center.advance(to: t0 + 9 * hour) == [
                LiveActivityTransition(id: a, change: .endedBySystem, at: t0 + 8 * hour)
            ])
        #expect(center.advance(to: t0 + 9 * hour).isEmpty)
    }

    @Test("Past its stale date an activity is stale but still listed, and fresh content makes it active again")
    func staleDateMarksStale() throws {
        var center = SimulatedLiveActivityCenter()
        let id = try center.startWorkout(staleDate: t0 + 30 * minute)
        center.advance(to: t0 + 30 * minute - 1)
        #expect(center.state(of: id) == .active)
        #expect(
            center.advance(to: t0 + 30 * minute) == [
                LiveActivityTransition(id: id, change: .becameStale, at: t0 + 30 * minute)
            ])
        #expect(center.state(of: id) == .stale)
        #expect(center.activities.count == 1)
        #expect(center.runningCount == 1)

        try center.update(
            id: id, content: workoutContent(elapsedSeconds: 3_600, staleDate: t0 + 2 * hour), at: t0 + hour)
        #expect(center.state(of: id) == .active)
        try center.update(id: id, content: workoutContent(elapsedSeconds: 3_700, staleDate: t0), at: t0 + hour + minute)
        #expect(center.state(of: id) == .stale)
        try center.update(id: id, content: workoutContent(elapsedSeconds: 3_800), at: t0 + hour + 2 * minute)
        #expect(center.state(of: id) == .active)
        #expect(center.advance(to: t0 + 7 * hour).isEmpty)
    }

    @Test(
        "An ended activity leaves the Lock Screen as its dismissal policy says, at most 4 h after the end",
        arguments: [
            (DismissalPolicy.default, 4 * hour),
            (.immediate, 0),
            (.after(t0 + 2 * hour), hour),
            (.after(t0 + 11 * hour), 4 * hour),
            (.after(t0), 0),
        ])
    func dismissalPolicies(policy: DismissalPolicy, visibleSeconds: Int64) throws {
        let endedAt = t0 + hour
        #expect(policy.removalInstant(endedAt: endedAt) == endedAt + visibleSeconds)
        var center = SimulatedLiveActivityCenter()
        let id = try center.startWorkout()
        try center.end(
            id: id, content: workoutContent(elapsedSeconds: 3_600, exercise: "Done"), dismissal: policy, at: endedAt)
        #expect(center.runningCount == 0)
        if visibleSeconds == 0 {
            #expect(center.activities.isEmpty)
            return
        }
        let ended = try #require(center.activity(id: id))
        #expect(ended.state == .ended)
        #expect(ended.endedAt == endedAt)
        #expect(ended.removalAt == endedAt + visibleSeconds)
        #expect(ended.content == workoutContent(elapsedSeconds: 3_600, exercise: "Done"))
        center.advance(to: endedAt + visibleSeconds - 1)
        #expect(center.activities.count == 1)
        center.advance(to: endedAt + visibleSeconds)
        #expect(center.activities.isEmpty)
    }

    @Test("Ending without final content keeps the last content")
    func endWithoutContentKeepsContent() throws {
        var center = SimulatedLiveActivityCenter()
        let id = try center.start(meal(), content: mealContent(items: 2, last: "Rice"), at: t0)
        try center.end(id: id, content: nil, dismissal: .default, at: t0 + 20 * minute)
        #expect(center.activity(id: id)?.content == mealContent(items: 2, last: "Rice"))
    }

    @Test("An ended activity takes no more content, and a removed one is not found")
    func endedAndRemovedActivitiesRefuseCalls() throws {
        var center = SimulatedLiveActivityCenter()
        let id = try center.startWorkout()
        try center.end(id: id, content: nil, dismissal: .default, at: t0 + hour)
        #expect(throws: LiveActivityError.ended) { try center.update(id: id, content: workoutContent(), at: t0 + hour) }
        #expect(throws: LiveActivityError.ended) {
            try center.end(id: id, content: nil, dismissal: .immediate, at: t0 + hour)
        }
        #expect(throws: LiveActivityError.ended) {
            try center.receivePushUpdate(id: id, content: workoutContent(), priority: .high, at: t0 + hour)
        }
        center.advance(to: t0 + 5 * hour)
        #expect(throws: LiveActivityError.notFound) {
            try center.update(id: id, content: workoutContent(), at: t0 + 5 * hour)
        }
        #expect(throws: LiveActivityError.notFound) {
            try center.update(id: "activity-99", content: workoutContent(), at: t0 + 5 * hour)
        }
    }

    @Test("Updating after the 8 h limit throws ended even without an explicit advance")
    func updateAfterEightHoursThrowsEnded() throws {
        var center = SimulatedLiveActivityCenter()
        let id = try center.startWorkout()
        #expect(throws: LiveActivityError.ended) {
            try center.update(id: id, content: workoutContent(elapsedSeconds: 8 * 3_600), at: t0 + 8 * hour)
        }
        #expect(center.activity(id: id)?.endedAt == t0 + 8 * hour)
    }

    @Test("Time never runs backwards: a call stamped earlier acts at the latest time seen")
    func timeNeverRunsBackwards() throws {
        var center = SimulatedLiveActivityCenter()
        center.advance(to: t0 + 2 * hour)
        let id = try center.startWorkout(at: t0)
        #expect(center.activity(id: id)?.startedAt == t0 + 2 * hour)
        #expect(center.currentTime == t0 + 2 * hour)
    }

    @Test("The center works through the protocol")
    func protocolUse() throws {
        func runWorkout(on center: inout some LiveActivityCenter) throws -> String {
            guard center.areActivitiesEnabled else { return "" }
            let id = try center.start(workout("Row"), content: workoutContent(), at: t0)
            try center.update(
                id: id, content: workoutContent(elapsedSeconds: 1_200, exercise: "2k test"), at: t0 + 20 * minute)
            try center.end(id: id, content: nil, dismissal: .immediate, at: t0 + 30 * minute)
            return id
        }
        var center = SimulatedLiveActivityCenter()
        let id = try runWorkout(on: &center)
        #expect(id == "activity-1")
        #expect(center.activities.isEmpty)
        #expect(center.startedCount == 1)
    }

    @Test("Attributes and content encode as one key naming their kind and decode unchanged")
    func codableShape() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let attributes = meal(.breakfast)
        let text = String(decoding: try encoder.encode(attributes), as: UTF8.self)
        #expect(text == #"{"meal":{"meal":"breakfast","targetCalories":600,"targetProteinGrams":30}}"#)
        #expect(try JSONDecoder().decode(LiveActivityAttributes.self, from: Data(text.utf8)) == attributes)
        let content = workoutContent(elapsedSeconds: 60, exercise: "Warm-up 🏃", staleDate: t0 + hour)
        #expect(try JSONDecoder().decode(LiveActivityContent.self, from: encoder.encode(content)) == content)
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(LiveActivityAttributes.self, from: Data(#"{"meal":{},"workout":{}}"#.utf8))
        }
    }
}
