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
        var json = LiveActivityJSON(escapesSlashes: false)
        json.object { json in
            json.key("aps")
            json.object { aps in
                // Sorted keys, as JSONEncoder's `.sortedKeys` orders them.
                if command.event == .start {
                    aps.key("attributes")
                    aps.write(command.attributes)
                    aps.member("attributes-type", attributesType(command.attributes.kind))
                }
                aps.key("content-state")
                aps.write(command.content.state)
                if let dismissal = command.dismissal {
                    aps.member("dismissal-date", dismissal.removalInstant(endedAt: command.at).secondsSinceEpoch)
                }
                aps.member("event", command.event.rawValue)
                if let stale = command.content.staleDate { aps.member("stale-date", stale.secondsSinceEpoch) }
                aps.member("timestamp", command.at.secondsSinceEpoch)
            }
        }
        guard json.bytes.count <= LiveActivityLimits.maxPayloadBytes else { throw TooLarge(bytes: json.bytes.count) }
        return json.bytes
    }

    /// The name ActivityKit knows the attributes' type by.
    public static func attributesType(_ kind: LiveActivityKind) -> String {
        switch kind {
        case .workout: "WorkoutActivityAttributes"
        case .meal: "MealActivityAttributes"
        }
    }
}
