import EngagedAPI
import Engagement
import FakeAPNs
import Foundation
import LiveActivity
import Models
import Runtime
import Storage
import Testing

@testable import engaged

extension APNsChannelTests {
    @Test func aWorkoutsUpdateIsPushedToItsActivityTokenAndItsStartIsLeftToTheApp() async throws {
        try await withChannel { channel, fake, runtime, store in
            let activityToken = String(repeating: "7c", count: 40)
            try await runtime.apply(.liveActivity(.workoutStarted(workoutType: "Run")), to: "ana")
            try await runtime.apply(
                .liveActivity(.pushTokenReceived(activityID: "workout-1", token: activityToken)), to: "ana")
            try await runtime.apply(
                .liveActivity(.workoutUpdated(.init(elapsedSeconds: 600, currentExercise: "Intervals"))), to: "ana")
            // Both due at once (the test's clock stands still): in the order they were decided.
            let rows = try store.pendingOutbox(userID: "ana").filter { $0.channel == .liveActivity }
                .sorted { $0.requestID < $1.requestID }
            #expect(rows.map(\.requestID) == ["liveActivity.workout-1.1", "liveActivity.workout-1.2"])
            for row in rows { try await channel.perform(row) }
            // The start is the app's own (in the foreground); only the update went out.
            let push = try #require(fake.pushes.only)
            #expect(push.status == 200)
            #expect(push.apnsID == rows[1].key.rawValue)
            #expect(push.headers["apns-push-type"] == "liveactivity")
            #expect(push.headers["apns-topic"] == Self.topic + ".push-type.liveactivity")
            #expect(push.headers["apns-priority"] == "10")  // a new exercise is worth the budget
            let payload = String(decoding: push.payload, as: UTF8.self)
            #expect(payload.contains(#""event":"update""#))
            #expect(payload.contains(#""currentExercise":"Intervals""#))
        }
    }

    @Test func anUpdateBeforeTheTokenArrivedIsNotSent() async throws {
        try await withChannel { channel, fake, runtime, store in
            try await runtime.apply(.liveActivity(.workoutStarted(workoutType: "Run")), to: "ana")
            try await runtime.apply(.liveActivity(.workoutUpdated(.init(elapsedSeconds: 600))), to: "ana")
            for row in try store.pendingOutbox(userID: "ana") where row.channel == .liveActivity {
                try await channel.perform(row)
            }
            #expect(fake.pushes.isEmpty)
        }
    }
}

@Suite("engaged Live Activity events")
struct LiveActivityEventBodyTests {
    /// The event as the server reads it: the generated decoder, then the checks of `EventInput`.
    func decode(_ json: String) throws -> EventInput {
        try EventInput(JSONDecoder().decode(Components.Schemas.Event.self, from: Data(json.utf8)))
    }

    @Test func eachEventTypeDecodesToItsInput() throws {
        #expect(
            try decode(#"{"type":"workoutStarted","workoutType":"Run"}"#).input
                == .liveActivity(.workoutStarted(workoutType: "Run")))
        #expect(
            try decode(#"{"type":"workoutUpdated","elapsedSeconds":60,"heartRate":140}"#).input
                == .liveActivity(.workoutUpdated(.init(elapsedSeconds: 60, heartRate: 140))))
        #expect(
            try decode(#"{"type":"mealStarted","meal":"lunch","targetCalories":600,"targetProteinGrams":30}"#).input
                == .liveActivity(
                    .mealStarted(MealActivityAttributes(meal: .lunch, targetCalories: 600, targetProteinGrams: 30))))
        #expect(try decode(#"{"type":"mealEnded"}"#).input == .liveActivity(.mealEnded))
        let token = String(repeating: "ab", count: 32)
        #expect(
            try decode(#"{"type":"liveActivityToken","activityID":"workout-1","token":"\#(token)"}"#).input
                == .liveActivity(.pushTokenReceived(activityID: "workout-1", token: token)))
    }

    @Test(arguments: [
        (#"{"type":"workoutUpdated"}"#, "elapsedSeconds"),
        (#"{"type":"workoutUpdated","elapsedSeconds":-1}"#, "elapsedSeconds"),
        (#"{"type":"workoutUpdated","elapsedSeconds":5,"heartRate":900}"#, "heartRate"),
        (#"{"type":"workoutStarted","workoutType":""}"#, "workoutType"),
        (#"{"type":"workoutStarted"}"#, "workoutType"),
        (#"{"type":"mealEnded","extra":1}"#, "extra"),
        (#"{"type":"liveActivityToken","activityID":"workout-1","token":"XYZ"}"#, "token"),
        (#"{"type":"workoutStarted","workoutType":"Run","at":"2027-03-01T07:00:00Z"}"#, "at"),
        // One character of 601 bytes, and 60 characters of 300: too long for the push's 4 KB.
        (
            #"{"type":"workoutStarted","workoutType":""# + "a" + String(repeating: "\u{301}", count: 300) + #""}"#,
            "workoutType"
        ),
        (
            #"{"type":"workoutUpdated","elapsedSeconds":5,"currentExercise":""#
                + String(repeating: "e\u{301}\u{301}", count: 60) + #""}"#,
            "currentExercise"
        ),
    ])
    func badEventsNameTheirField(json: String, field: String) {
        #expect {
            try decode(json)
        } throws: { error in
            "\(error)".contains(field)
        }
    }
}

extension Array {
    fileprivate var only: Element? { count == 1 ? first : nil }
}
