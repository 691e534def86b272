import APNs
import ArgumentParser
import Delivery
import Foundation
import Logging

/// The APNs flags `engaged serve` and `engaged worker` share, and the client they make.
struct APNsOptions: ParsableArguments {
    @Option(
        name: .customLong("apns-url"),
        help: "APNs server for both environments, https://host[:port] (default: Apple's). Or ENGAGED_APNS_URL.")
    var apnsURL: String?

    @Option(
        name: .customLong("apns-key-file"), help: "The APNs auth key (.p8, P-256 PEM). Or ENGAGED_APNS_KEY_FILE.")
    var apnsKeyFile: String?

    @Option(name: .customLong("apns-key-id"), help: "The key's id: 10 of A-Z and 0-9. Or ENGAGED_APNS_KEY_ID.")
    var apnsKeyID: String?

    @Option(name: .customLong("apns-team-id"), help: "The team id: 10 of A-Z and 0-9. Or ENGAGED_APNS_TEAM_ID.")
    var apnsTeamID: String?

    @Option(name: .customLong("apns-topic"), help: "The app's bundle id. Or ENGAGED_APNS_TOPIC.")
    var apnsTopic: String?

    @Option(
        name: .customLong("apns-ca-file"),
        help: ArgumentHelp(
            "For tests: trust this PEM certificate for --apns-url instead of the system's roots.", visibility: .hidden))
    var apnsCAFile: String?

    /// The APNs settings from the flags, or else the environment.
    func apnsSettings(_ environment: [String: String]) throws(APNsSettingsError) -> APNsSettings? {
        try APNsSettings.resolve(
            url: apnsURL, keyFile: apnsKeyFile, keyID: apnsKeyID, teamID: apnsTeamID, topic: apnsTopic,
            caFile: apnsCAFile,
            environment: environment)
    }

    /// Refuses settings given in part or malformed (exit 64).
    func validate() throws {
        do { _ = try apnsSettings(ProcessInfo.processInfo.environment) } catch {
            throw ValidationError(error.description)
        }
    }

    /// The APNs client of the settings, or nil without them; exit 78 when the key cannot be used.
    func makeClient(
        _ environment: [String: String], logger: Logger, sharedTokens: (any ProviderTokenSharing)? = nil
    ) throws -> (client: APNsClient, topic: String)? {
        guard let settings = try apnsSettings(environment) else { return nil }
        do {
            let credentials = try APNsCredentials.load(
                keyFile: settings.keyFile, keyID: settings.keyID, teamID: settings.teamID)
            let trust = try settings.caFile.map { [try String(contentsOfFile: $0, encoding: .utf8)] }
            var configuration = APNsClient.Configuration(credentials: credentials, testingTrustRootsPEM: trust)
            configuration.sharedTokens = sharedTokens
            if let url = settings.url { configuration.endpoints = [.production: url, .sandbox: url] }
            return (try APNsClient(configuration: configuration, dependencies: .system, logger: logger), settings.topic)
        } catch {
            throw Serve.fail("APNs cannot be set up: \(error)")
        }
    }
}
