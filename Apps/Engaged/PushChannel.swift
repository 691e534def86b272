import APNs
import Content
import CoreMetrics
import Delivery
import Foundation
import LiveActivity
import Logging
import Models
import Runtime
import Scheduling
import Storage

/// The APNs settings of `engaged serve`, from flags or else `ENGAGED_APNS_*`. All or nothing:
/// with none of them the server runs without APNs (push rows are logged); with any of them,
/// the key file, key id, team id and topic are all required. The URL defaults to Apple's.
struct APNsSettings: Hashable, Sendable {
    var url: String?
    var keyFile: String
    var keyID: String
    var teamID: String
    var topic: String
    /// For end-to-end tests against a fake APNs: a PEM certificate to trust instead of the
    /// system's roots (`--apns-ca-file`). Not part of the all-or-nothing set.
    var caFile: String?

    /// A setting: its flag, its environment variable, and the value found (flag first).
    struct Source: Sendable {
        var flag: String
        var value: String? = nil
        var variable: String { "ENGAGED_" + flag.dropFirst(2).uppercased().replacingOccurrences(of: "-", with: "_") }
    }

    /// The settings, nil when none is given, or a usage error naming what is missing or malformed.
    static func resolve(
        url: String?, keyFile: String?, keyID: String?, teamID: String?, topic: String?, caFile: String?,
        environment: [String: String]
    ) throws(APNsSettingsError) -> APNsSettings? {
        func value(_ flag: String, _ given: String?) -> String? {
            let source = Source(flag: flag, value: given)
            let found = given ?? environment[source.variable]
            return found?.isEmpty == true ? nil : found
        }
        let url = value("--apns-url", url)
        let required = [
            ("--apns-key-file", value("--apns-key-file", keyFile)), ("--apns-key-id", value("--apns-key-id", keyID)),
            ("--apns-team-id", value("--apns-team-id", teamID)), ("--apns-topic", value("--apns-topic", topic)),
        ]
        let caFile = value("--apns-ca-file", caFile)
        guard url != nil || caFile != nil || required.contains(where: { $0.1 != nil }) else { return nil }
        let missing = required.filter { $0.1 == nil }.map(\.0)
        guard missing.isEmpty else { throw .incomplete(missing: missing) }
        let settings = APNsSettings(
            url: url, keyFile: required[0].1!, keyID: required[1].1!, teamID: required[2].1!, topic: required[3].1!,
            caFile: caFile)
        if let url, !APNsClient.isValidEndpoint(url) {
            throw .malformed(flag: "--apns-url", problem: "must be https://host or https://host:port, got \"\(url)\"")
        }
        if !APNsCredentials.isAppleIdentifier(settings.keyID) {
            throw .malformed(flag: "--apns-key-id", problem: "must be 10 characters of A-Z and 0-9")
        }
        if !APNsCredentials.isAppleIdentifier(settings.teamID) {
            throw .malformed(flag: "--apns-team-id", problem: "must be 10 characters of A-Z and 0-9")
        }
        if settings.topic.contains(where: { $0.isWhitespace }) || settings.topic.hasSuffix(".push-type.liveactivity") {
            throw .malformed(flag: "--apns-topic", problem: "must be the app's bundle id, such as com.example.fitness")
        }
        return settings
    }
}

/// Why the APNs settings are refused (exit 64).
enum APNsSettingsError: Error, Hashable, CustomStringConvertible {
    case incomplete(missing: [String])
    case malformed(flag: String, problem: String)

    var description: String {
        switch self {
        case .incomplete(let missing):
            let named = missing.map { "\($0) (or \(APNsSettings.Source(flag: $0).variable))" }
            return "APNs is configured only in part: missing \(named.joined(separator: ", "))"
        case .malformed(let flag, let problem):
            return "\(flag) (or \(APNsSettings.Source(flag: flag).variable)) \(problem)"
        }
    }
}

/// The server's metrics and logs of the push channel (`PushChannelTransport`): every outcome is
/// counted per channel (`ServerMetrics.delivered`), a withheld row as rejected with its reason;
/// a rejected or failed push, a withheld alert, a row refused as unreadable and a retired token
/// are logged. The client has already retried a failed push as long as it
/// is worth, and the runtime decides what follows (`OutboxSteps.afterSend`).
struct ServerSendObserver: SendObserver {
    let metrics: ServerMetrics
    let logger: Logger
    /// The runtime's silent plan: a sync sent before its slot is counted as `early` too.
    let silentPushes: SilentPushPlan

    func sending(_ row: OutboxRow, on channel: DeliveryChannel) {
        metrics.delivered(channel, outcome: .sent)
        if silentPushes.isEarly(row) { metrics.delivered(channel, outcome: .early) }
    }

    func notSent(_ row: OutboxRow, on channel: DeliveryChannel, report: SendReport) {
        switch report {
        case .withheld(let reason):
            // A Live Activity's start or a missing token is the app's to perform, not a warning.
            if channel != .liveActivity {
                logger.warning("push withheld", metadata: ["key": "\(row.key)", "reason": "\(reason)"])
            }
            metrics.delivered(channel, outcome: .rejected, reason: reason)
        case .refused(let reason):
            logger.error("push row refused unsent", metadata: ["key": "\(row.key)", "reason": "\(reason)"])
        default:
            break
        }
    }

    func answered(
        _ row: OutboxRow, on channel: DeliveryChannel, outcome: PushOutcome, retirement: DeviceRetirement?
    ) {
        let metadata: Logger.Metadata = [
            "user": "\(row.userID)", "apns-id": "\(row.key)", "request": "\(row.requestID)",
            "channel": "\(channel.rawValue)",
        ]
        switch outcome {
        case .delivered:
            metrics.delivered(channel, outcome: .accepted)
        case .tokenRetired(let failure, _):
            metrics.delivered(channel, outcome: .tokenRetired, reason: failure.reason)
            switch retirement {
            case .removed:
                logger.info("device token retired", metadata: metadata.merging(["reason": "\(failure)"]) { $1 })
            case .registeredAgainSince:
                logger.info("APNs retired a token registered again since", metadata: metadata)
            case .failed(let error):
                logger.error("retiring a device token failed", metadata: metadata.merging(["error": "\(error)"]) { $1 })
            case nil:
                break  // a Live Activity's own token: the activity ended on the device
            }
        case .rejected(let failure):
            metrics.delivered(channel, outcome: .rejected, reason: failure.reason)
            logger.warning("APNs rejected a push", metadata: metadata.merging(["reason": "\(failure)"]) { $1 })
        case .failedAfterRetries(let failure, let attempts):
            metrics.delivered(channel, outcome: .failed, reason: failure.reason)
            logger.warning(
                "APNs push failed after retries",
                metadata: metadata.merging(["reason": "\(failure)", "attempts": "\(attempts)"]) { $1 })
        }
    }
}

extension APNsClient.Dependencies {
    /// The system's wall clock, `Task.sleep`, and the system's random numbers.
    static let system = APNsClient.Dependencies(
        now: { Instant(Date()) }, sleep: { try await Task.sleep(for: $0) }, unitRandom: { Double.random(in: 0..<1) })
}

extension PushChannelTransport {
    /// The push channel of `engaged`: counted in `metrics`, logged to `logger`.
    init(runtime: EngineRuntime, push: any PushTransport, topic: String, metrics: ServerMetrics, logger: Logger) {
        self.init(
            runtime: runtime, push: push, topic: topic,
            observer: ServerSendObserver(metrics: metrics, logger: logger, silentPushes: runtime.silentPushes))
    }
}
