import Foundation
import LiveActivity
import Models
import Testing

/// The payloads and the 4 KB measure are written by hand for speed; `JSONEncoder` with sorted
/// keys is the oracle they must match byte for byte.
@Suite("Live Activity JSON: byte for byte what JSONEncoder writes")
struct PayloadJSONTests {
    /// Text with every escape JSON has, a slash, multi-byte UTF-8 and a character that must not
    /// be escaped (U+2028), mixed at random.
    static func text(_ generator: inout SeededGenerator) -> String? {
        let pieces = [
            "Run", "/", "\"", "\\", "\u{0}", "\u{1f}", "\u{b}", "\u{7f}", "\u{8}", "\t", "\n", "\u{c}", "\r", "é", "😀",
            "\u{2028}", " ",
        ]
        let count = Int.random(in: 0...6, using: &generator)
        if count == 6 { return nil }
        return (0..<count).map { _ in pieces.randomElement(using: &generator)! }.joined()
    }

    static func number(_ generator: inout SeededGenerator) -> Int {
        [0, 7, -42, 1_000_000, Int.max, Int.min].randomElement(using: &generator)!
    }

    static func command(_ generator: inout SeededGenerator) -> LiveActivityCommand {
        let isWorkout = Bool.random(using: &generator)
        let attributes: LiveActivityAttributes =
            isWorkout
            ? .workout(
                WorkoutActivityAttributes(
                    workoutType: text(&generator) ?? "", startedAt: t0 + Int64.random(in: 0...99_999, using: &generator)
                ))
            : .meal(
                MealActivityAttributes(
                    meal: MealType.allCases.randomElement(using: &generator)!, targetCalories: number(&generator),
                    targetProteinGrams: number(&generator)))
        let state: LiveActivityContentState =
            isWorkout
            ? .workout(
                .init(
                    elapsedSeconds: number(&generator), heartRate: Bool.random(using: &generator) ? nil : 120,
                    activeCalories: number(&generator), currentExercise: text(&generator)))
            : .meal(
                .init(
                    itemsLogged: number(&generator), totalCalories: number(&generator),
                    totalProteinGrams: number(&generator), lastFoodItem: text(&generator)))
        let dismissals: [DismissalPolicy?] = [nil, .default, .immediate, .after(t0 + hour)]
        return LiveActivityCommand(
            activityID: "a-1", event: LiveActivityCommand.Event.allCases.randomElement(using: &generator)!,
            attributes: attributes,
            content: LiveActivityContent(
                state: state, staleDate: Bool.random(using: &generator) ? nil : t0 + 5 * minute),
            priority: .high, dismissal: dismissals.randomElement(using: &generator)!, at: t0 + minute, sequence: 1)
    }

    @Test func pushPayloadsMatchJSONEncoder() throws {
        var generator = SeededGenerator(seed: 11)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        for _ in 0..<500 {
            let command = Self.command(&generator)
            let expected = String(decoding: try encoder.encode(Reference(aps: .init(command: command))), as: UTF8.self)
            let written = String(decoding: try LiveActivityPush.payload(for: command), as: UTF8.self)
            #expect(written == expected)
        }
    }

    @Test func theFourKilobyteMeasureMatchesJSONEncoder() throws {
        var generator = SeededGenerator(seed: 12)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        for _ in 0..<500 {
            let command = Self.command(&generator)
            let attributeBytes: Int
            switch command.attributes {
            case .workout(let value): attributeBytes = try encoder.encode(value).count
            case .meal(let value): attributeBytes = try encoder.encode(value).count
            }
            let stateBytes: Int
            switch command.content.state {
            case .workout(let value): stateBytes = try encoder.encode(value).count
            case .meal(let value): stateBytes = try encoder.encode(value).count
            }
            #expect(
                LiveActivityLimits.payloadBytes(attributes: command.attributes, state: command.content.state)
                    == attributeBytes + stateBytes)
        }
    }

    @Test func aPayloadOverFourKilobytesIsRefusedWithItsSize() {
        var generator = SeededGenerator(seed: 13)
        var command = Self.command(&generator)
        command.content = workoutContent(exercise: String(repeating: "x", count: 4_100))
        let error = #expect(throws: LiveActivityPush.TooLarge.self) { try LiveActivityPush.payload(for: command) }
        #expect((error?.bytes ?? 0) > 4_100)
    }

    /// The payload as the `Codable` encoding of ActivityKit's push format.
    struct Reference: Encodable {
        var aps: APS

        struct APS: Encodable {
            let command: LiveActivityCommand

            enum Key: String, CodingKey {
                case timestamp, event, attributes
                case contentState = "content-state"
                case staleDate = "stale-date"
                case dismissalDate = "dismissal-date"
                case attributesType = "attributes-type"
            }

            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: Key.self)
                try container.encode(command.at.secondsSinceEpoch, forKey: .timestamp)
                try container.encode(command.event.rawValue, forKey: .event)
                switch command.content.state {
                case .workout(let state): try container.encode(state, forKey: .contentState)
                case .meal(let state): try container.encode(state, forKey: .contentState)
                }
                try container.encodeIfPresent(command.content.staleDate?.secondsSinceEpoch, forKey: .staleDate)
                if command.event == .start {
                    try container.encode(
                        LiveActivityPush.attributesType(command.attributes.kind), forKey: .attributesType)
                    switch command.attributes {
                    case .workout(let attributes): try container.encode(attributes, forKey: .attributes)
                    case .meal(let attributes): try container.encode(attributes, forKey: .attributes)
                    }
                }
                if let dismissal = command.dismissal {
                    try container.encode(
                        dismissal.removalInstant(endedAt: command.at).secondsSinceEpoch, forKey: .dismissalDate)
                }
            }
        }
    }
}
