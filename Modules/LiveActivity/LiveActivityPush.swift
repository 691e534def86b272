import Foundation
public import Models

/// The APNs payload of a Live Activity command (`apns-push-type: liveactivity`, topic
/// `<bundle>.push-type.liveactivity`):
///
/// ```json
/// {"aps": {"timestamp": 1803960000, "event": "update",
///          "content-state": {"elapsedSeconds": 600, "activeCalories": 80},
///          "stale-date": 1803960300,
///          "attributes-type": "WorkoutActivityAttributes", "attributes": {...},   // start only
///          "dismissal-date": 1803961200}}                                        // end only
/// ```
///
/// `timestamp`, `stale-date` and `dismissal-date` are seconds since 1970 (the device drops
/// content older than what it shows); `content-state` is the activity kind's own `ContentState`,
/// as the app's widget decodes it.
public enum LiveActivityPush {
    /// A payload over APNs' 4 KB.
    public struct TooLarge: Error, Hashable, Sendable, CustomStringConvertible {
        public var bytes: Int
        public var description: String { "Live Activity payload is \(bytes) bytes; APNs takes at most 4096" }
    }

    /// The payload of `command`, as UTF-8 JSON with sorted keys.
    public static func payload(for command: LiveActivityCommand) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let bytes = Array(try encoder.encode(Envelope(aps: APS(command))))
        guard bytes.count <= LiveActivityLimits.maxPayloadBytes else { throw TooLarge(bytes: bytes.count) }
        return bytes
    }

    /// The name ActivityKit knows the attributes' type by.
    public static func attributesType(_ kind: LiveActivityKind) -> String {
        switch kind {
        case .workout: "WorkoutActivityAttributes"
        case .meal: "MealActivityAttributes"
        }
    }

    private struct Envelope: Encodable {
        var aps: APS
    }

    private struct APS: Encodable {
        let command: LiveActivityCommand

        init(_ command: LiveActivityCommand) { self.command = command }

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
                try container.encode(LiveActivityPush.attributesType(command.attributes.kind), forKey: .attributesType)
                switch command.attributes {
                case .workout(let attributes): try container.encode(attributes, forKey: .attributes)
                case .meal(let attributes): try container.encode(attributes, forKey: .attributes)
                }
            }
            if let dismissal = command.dismissal {
                let removal = dismissal.removalInstant(endedAt: command.at)
                try container.encode(removal.secondsSinceEpoch, forKey: .dismissalDate)
            }
        }
    }
}
