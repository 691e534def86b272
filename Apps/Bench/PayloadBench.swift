import Foundation
import LiveActivity
import Models

/// A workout's Live Activity update written and sized two ways: by the hand-written writer the
/// engine uses, and by `JSONEncoder` with sorted keys over `Codable` types (the same bytes, which
/// the LiveActivity tests check). The margin between the two is why the writer is hand-written.
func liveActivityPayloadTimings(iterations: Int = 200_000) -> [Timing] {
    let start = Instant(iso8601: "2027-03-12T12:00:00Z")!
    func command(_ index: Int) -> LiveActivityCommand {
        LiveActivityCommand(
            activityID: "workout-1", event: .update,
            attributes: .workout(WorkoutActivityAttributes(workoutType: "Run", startedAt: start)),
            content: LiveActivityContent(
                state: .workout(
                    .init(
                        elapsedSeconds: 20 * index, heartRate: 120 + index % 40, activeCalories: index % 1_000,
                        currentExercise: "set \(index / 10)")),
                staleDate: start + 300),
            priority: .high, at: start + Int64(20 * index), sequence: index + 1)
    }
    let commands = (0..<1_000).map(command)
    let payloadEncoder = JSONEncoder()
    payloadEncoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    let sizeEncoder = JSONEncoder()
    sizeEncoder.outputFormatting = [.sortedKeys]
    return [
        measure("Live Activity payload (hand-written)", iterations: iterations) { i in
            blackHole(try? LiveActivityPush.payload(for: commands[i % commands.count]))
        },
        measure("Live Activity payload (JSONEncoder)", iterations: iterations) { i in
            blackHole(try? payloadEncoder.encode(EncodedPayload(command: commands[i % commands.count])))
        },
        measure("Live Activity 4 KB size (hand-written)", iterations: iterations) { i in
            let command = commands[i % commands.count]
            blackHole(LiveActivityLimits.payloadBytes(attributes: command.attributes, state: command.content.state))
        },
        measure("Live Activity 4 KB size (JSONEncoder)", iterations: iterations) { i in
            let command = commands[i % commands.count]
            guard case .workout(let attributes) = command.attributes, case .workout(let state) = command.content.state
            else { return }
            blackHole(
                ((try? sizeEncoder.encode(attributes).count) ?? 0) + ((try? sizeEncoder.encode(state).count) ?? 0))
        },
    ]
}

/// ActivityKit's push format as `Codable` writes it: `{"aps": {...}}` with the command's keys.
private struct EncodedPayload: Encodable {
    var command: LiveActivityCommand

    private enum Key: String, CodingKey {
        case aps, timestamp, event, attributes
        case contentState = "content-state"
        case staleDate = "stale-date"
        case dismissalDate = "dismissal-date"
        case attributesType = "attributes-type"
    }

    func encode(to encoder: any Encoder) throws {
        var outer = encoder.container(keyedBy: Key.self)
        var aps = outer.nestedContainer(keyedBy: Key.self, forKey: .aps)
        try aps.encode(command.at.secondsSinceEpoch, forKey: .timestamp)
        try aps.encode(command.event.rawValue, forKey: .event)
        switch command.content.state {
        case .workout(let state): try aps.encode(state, forKey: .contentState)
        case .meal(let state): try aps.encode(state, forKey: .contentState)
        }
        try aps.encodeIfPresent(command.content.staleDate?.secondsSinceEpoch, forKey: .staleDate)
        if command.event == .start {
            try aps.encode(LiveActivityPush.attributesType(command.attributes.kind), forKey: .attributesType)
            switch command.attributes {
            case .workout(let attributes): try aps.encode(attributes, forKey: .attributes)
            case .meal(let attributes): try aps.encode(attributes, forKey: .attributes)
            }
        }
        if let dismissal = command.dismissal {
            try aps.encode(dismissal.removalInstant(endedAt: command.at).secondsSinceEpoch, forKey: .dismissalDate)
        }
    }
}
