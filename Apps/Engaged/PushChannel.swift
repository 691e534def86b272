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

/// Sends the outbox's APNs rows, each to every device of its user, with the row's key as
/// `apns-id`:
/// - a `push` row: its notification as an alert carrying the badge (the inbox's unread count
///   when it is prepared), its showing deadline as `apns-expiration` and a collapse id
///   (`PushSends.alert`); an ordinary alert is withheld inside the user's quiet hours. When the
///   send took time (the client retried), the count is read again: an alert that carried an
///   older one is reported `acceptedWithOutdatedBadge`, and a badge sync follows;
/// - a `silent` row: a badge and inbox sync, a background push (priority 5) with the counts and
///   the local plan's version of the moment, kept a day at APNs for an offline phone
///   (`SilentPushPlan.lifetimeSeconds`, `PlanSignal`).
///
/// A dead token (400 BadDeviceToken, DeviceTokenNotForTopic, 410) is removed from the user's
/// devices, unless it was registered again after a 410's timestamp. A push rejected or still
/// failing after the client's retries is logged, counted and reported (`SendReport`): the
/// client has already retried it as long as it is worth, and the runtime decides what follows
/// (`OutboxSteps.afterSend`: a badge sync, a sync moved to the next slot). Rows of other
/// channels are logged, as without APNs. Every outcome is counted per channel
/// (`ServerMetrics.delivered`).
struct APNsChannelTransport: ChannelTransport {
    let runtime: EngineRuntime
    let push: any PushTransport
    /// The app's bundle id.
    let topic: String
    let metrics: ServerMetrics
    let logger: Logger

    @discardableResult
    func perform(_ row: OutboxRow) async throws -> SendReport {
        switch row.channel {
        case .push: try await performAlert(row)
        case .silent: try await performSync(row)
        case .liveActivity: try await performLiveActivity(row)
        // The runtime performs inbox and job rows itself (`EngineRuntime.dispatchDue`); a channel
        // this build does not know (a row a newer version wrote) is logged and completed.
        case .inbox, .job, .unknown: try await LoggingTransport(logger: logger).perform(row)
        }
    }

    private func performAlert(_ row: OutboxRow) async throws -> SendReport {
        guard let request = row.payload.notification else {
            // The runtime discards unreadable rows before they come here (`OutboxSteps.step`).
            logger.error("push row without a notification request", metadata: ["key": "\(row.key)"])
            return .refused(reason: "Unreadable")
        }
        let preparedAt = runtime.now()
        guard let counts = try await inboxCounts(of: row.userID) else { return .accepted }
        let rules = try await showingRules(of: row.userID)
        let push: PreparedPush
        switch PushSends.alert(
            request, key: row.key, plannedAt: row.dueAt, badge: counts.badge, topic: topic, rules: rules,
            at: runtime.now())
        {
        case .success(let prepared): push = prepared
        case .failure(let withheld):
            // Not sent, and not tried again: the inbox keeps the item.
            logger.warning("push withheld", metadata: ["key": "\(row.key)", "reason": "\(withheld)"])
            metrics.delivered(.remote, outcome: .rejected, reason: withheld.reason)
            return .withheld(reason: withheld.reason)
        }
        let outcomes = try await send(row, on: .remote) { device in push.request(to: device.pushAddress) }
        // Read again only when the clock moved since the count was read (the client retried):
        // the count may have changed meanwhile. A failed read asks for no sync: the store that
        // failed it would also refuse the sync's commit, and the next change asks again.
        let unreadNow = runtime.now() > preparedAt ? try? await inboxCounts(of: row.userID)?.badge : nil
        return SendReport(outcomes: outcomes).ofAlert(carrying: counts.badge, unreadNow: unreadNow)
    }

    private func performSync(_ row: OutboxRow) async throws -> SendReport {
        guard let counts = try await inboxCounts(of: row.userID),
            let planVersion = try await localPlanRevision(of: row.userID)
        else { return .accepted }
        let push = PushSends.sync(
            key: row.key, slot: row.dueAt, counts: counts, planVersion: planVersion, plan: runtime.silentPushes,
            topic: topic)
        let outcomes = try await send(row, on: .silent) { device in push.request(to: device.pushAddress) }
        return SendReport(outcomes: outcomes)
    }

    /// A Live Activity's update or end goes to the activity's own push token (topic
    /// `<bundle>.push-type.liveactivity`); without a token yet, or for a start (the app starts
    /// its activities itself, in the foreground), nothing is sent and the row is completed.
    private func performLiveActivity(_ row: OutboxRow) async throws -> SendReport {
        guard case .liveActivity(let command) = row.payload else {
            logger.error("Live Activity row without a command", metadata: ["key": "\(row.key)"])
            return .refused(reason: "Unreadable")
        }
        guard command.event != .start, let token = command.pushToken else {
            let reason = command.event == .start ? "AppStarts" : "NoToken"
            metrics.delivered(.liveActivity, outcome: .rejected, reason: reason)
            return .withheld(reason: reason)
        }
        let prepared: PreparedPush?
        do { prepared = try PushSends.liveActivity(command, key: row.key, topic: topic) } catch {
            metrics.delivered(.liveActivity, outcome: .rejected, reason: "PayloadTooLarge")
            return .withheld(reason: "PayloadTooLarge")
        }
        guard let prepared, let devices = try await registeredDevices(of: row.userID) else { return .accepted }
        let environment = devices.max { $0.registeredAt < $1.registeredAt }?.pushAddress.environment ?? .production
        metrics.delivered(.liveActivity, outcome: .sent)
        let outcome = await push.send(prepared.request(to: PushAddress(token: token, environment: environment)))
        switch outcome {
        case .delivered: metrics.delivered(.liveActivity, outcome: .accepted)
        // The activity ended on the device: its token is not a device's, nothing to retire.
        case .tokenRetired(let failure, _):
            metrics.delivered(.liveActivity, outcome: .tokenRetired, reason: failure.reason)
        case .rejected(let failure): metrics.delivered(.liveActivity, outcome: .rejected, reason: failure.reason)
        case .failedAfterRetries(let failure, _):
            metrics.delivered(.liveActivity, outcome: .failed, reason: failure.reason)
        }
        return SendReport(outcomes: [outcome])
    }

    /// The rules bounding how late the user's alerts may be shown, or nil for a zone this
    /// process does not know or a user removed since their counts were read (the send then
    /// finds no device); a store failure throws (the row stays pending).
    private func showingRules(of userID: UserID) async throws -> ShowingRules? {
        do { return try await runtime.showingRules(of: userID) } catch RuntimeError.unknownUser { return nil }
    }

    /// The user's devices, or nil for a user no longer known; a store failure throws (the row
    /// stays pending).
    private func registeredDevices(of userID: UserID) async throws -> [DeviceRegistration]? {
        do { return try await runtime.devices(of: userID) } catch RuntimeError.unknownUser { return nil }
    }

    /// The user's local plan's committed version (`EngineRuntime.localPlanVersion`), or nil for a
    /// user no longer known; a store failure throws (the row stays pending).
    private func localPlanRevision(of userID: UserID) async throws -> Int? {
        do { return try await runtime.localPlanVersion(of: userID) } catch RuntimeError.unknownUser { return nil }
    }

    /// The user's inbox counts, or nil for a user no longer known; a store failure throws (the
    /// row stays pending).
    private func inboxCounts(of userID: UserID) async throws -> InboxCounts? {
        do { return try await runtime.inboxCounts(of: userID) } catch RuntimeError.unknownUser { return nil }
    }

    /// Sends `row` to each of its user's devices, as `request(device)`, at once; returns the
    /// outcomes, one per device.
    private func send(
        _ row: OutboxRow, on channel: DeliveryChannel,
        _ request: @escaping @Sendable (DeviceRegistration) -> PushRequest
    ) async throws -> [PushOutcome] {
        let devices: [DeviceRegistration]
        do { devices = try await runtime.devices(of: row.userID) } catch RuntimeError.unknownUser {
            return []
        }  // a store failure throws: the row stays pending
        return await withTaskGroup(of: PushOutcome.self) { group in
            for device in devices {
                group.addTask {
                    metrics.delivered(channel, outcome: .sent)
                    let outcome = await push.send(request(device))
                    await record(outcome, of: row, on: channel, to: device)
                    return outcome
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
    }

    private func record(
        _ outcome: PushOutcome, of row: OutboxRow, on channel: DeliveryChannel, to device: DeviceRegistration
    ) async {
        let metadata: Logger.Metadata = [
            "user": "\(row.userID)", "apns-id": "\(row.key)", "request": "\(row.requestID)",
            "channel": "\(channel.rawValue)",
        ]
        switch outcome {
        case .delivered:
            metrics.delivered(channel, outcome: .accepted)
        case .tokenRetired(let failure, let since):
            metrics.delivered(channel, outcome: .tokenRetired, reason: failure.reason)
            if let since, device.registeredAt > since {
                logger.info("APNs retired a token registered again since", metadata: metadata)
                return
            }
            do {
                try await runtime.removeDevice(token: device.token)
                logger.info("device token retired", metadata: metadata.merging(["reason": "\(failure)"]) { $1 })
            } catch {
                logger.error("retiring a device token failed", metadata: metadata.merging(["error": "\(error)"]) { $1 })
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

extension DeviceRegistration {
    /// Where a push to this device goes: its token, at the APNs service of the token.
    var pushAddress: PushAddress {
        PushAddress(token: token, environment: environment == .production ? .production : .sandbox)
    }
}

extension APNsClient.Dependencies {
    /// The system's wall clock, `Task.sleep`, and the system's random numbers.
    static let system = APNsClient.Dependencies(
        now: { Instant(Date()) }, sleep: { try await Task.sleep(for: $0) }, unitRandom: { Double.random(in: 0..<1) })
}
