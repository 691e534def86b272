// `engaged`: the server's commands and `serve`'s options. Its composition root (`ServeRun.swift`)
// picks the store, the clock (the system's, or a manual one for end-to-end runs), the templates
// and the transport, and hands them to the runtime and the routes. Exit status: 0 after a graceful shutdown (SIGTERM,
// SIGINT), 64 bad usage (APNs settings given only in part or malformed among it), 66 the bundled
// templates do not load, 69 --port or --metrics-port names an address another process holds, 74
// the store cannot be opened (a PostgreSQL database that does not answer
// is tried again until it does: 74 is for what no retry mends, such as a newer schema), 78 the API
// key or the user-token keys are not set or shorter than 32 bytes, or the APNs key file cannot be
// used.
import APNs
import ArgumentParser
import AsyncHTTPClient
import Content
import Delivery
import Foundation
import Hummingbird
import Logging
import Metrics
import Models
import PostgresStore
import Runtime
import Storage

@main
struct Engaged: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "engaged", abstract: "The EngagementEngine server: an HTTP API over the engine's runtime.",
        subcommands: [Serve.self, Worker.self, Migrate.self, Backup.self])

    /// Parses the command line with the settings of the environment and the file
    /// (`SettingSources`), then runs the command; a settings file that cannot be used is exit 78,
    /// and a refused value names where it came from.
    static func main() async {
        let resolved: (arguments: [String], origins: [String])
        do {
            resolved = try SettingSources.resolve(
                Array(CommandLine.arguments.dropFirst()), environment: ProcessInfo.processInfo.environment)
        } catch {
            FileHandle.standardError.write(Data("engaged: \(error)\n".utf8))
            Foundation.exit(78)
        }
        do {
            var command = try parseAsRoot(resolved.arguments)
            if var asynchronous = command as? any AsyncParsableCommand {
                try await asynchronous.run()
            } else {
                try command.run()
            }
        } catch {
            if exitCode(for: error) == .validationFailure, !resolved.origins.isEmpty {
                FileHandle.standardError.write(
                    Data(
                        "engaged: settings not on the command line: \(resolved.origins.joined(separator: "; "))\n".utf8)
                )
            }
            exit(withError: error)
        }
    }
}

/// `--config FILE`: settings as JSON, after the command line and the environment.
struct ConfigFileOption: ParsableArguments {
    @Option(
        name: .customLong("config"),
        help: ArgumentHelp(
            "A JSON file of settings, {\"rate-limit-user\": \"10/30\"}; or ENGAGED_CONFIG.",
            discussion:
                "Every setting also comes from ENGAGED_<NAME> (ENGAGED_RATE_LIMIT_USER); flags win, then the environment, then the file."
        ))
    var path: String?
}

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Serve the API on an embedded SQLite store.",
        discussion: """
            The API key comes from ENGAGED_API_KEY, the user-token keys from ENGAGED_USER_TOKEN_KEYS \
            (comma-separated kid:secret pairs; the first signs new tokens, all verify); every key and secret \
            is at least 32 bytes. Without them, or with a shorter one, the server refuses to start (exit 78). \
            With --legacy-user-tokens, ENGAGED_USER_TOKEN_SECRET (at least 32 bytes) also signs the deprecated \
            HMAC user tokens.
            APNs: --apns-key-file, --apns-key-id, --apns-team-id and --apns-topic (or ENGAGED_APNS_KEY_FILE, \
            ENGAGED_APNS_KEY_ID, ENGAGED_APNS_TEAM_ID, ENGAGED_APNS_TOPIC) send the outbox's push rows through \
            APNs; all of them or none (push rows are then only logged). --apns-url (ENGAGED_APNS_URL) replaces \
            Apple's servers, for a test server.
            """)

    @Option(
        name: .customLong("data-dir"),
        help: "Folder of the embedded SQLite store (engaged.sqlite); created when missing. Or --database.")
    var dataDirectory: String?

    @Option(
        name: .customLong("database"),
        help: ArgumentHelp(
            "A PostgreSQL database, postgres://user[:password]@host[:port]/name, instead of --data-dir.",
            discussion: "Due work is then performed by `engaged worker` processes on the same database, not here."))
    var database: String?

    @Option(help: "Port to listen on (0: any free port).")
    var port: Int

    @Option(help: "Address to listen on.")
    var host = "127.0.0.1"

    @Option(
        name: .customLong("idle-timeout-seconds"),
        help: "Close a connection that sends nothing for this long (1...3600): a half-sent header or a stalled body.")
    var idleTimeoutSeconds: Int64 = 30

    @Option(
        name: .customLong("body-timeout-seconds"),
        help: "Answer 408 to a request whose body has not fully arrived this long after its headers (1...300).")
    var bodyTimeoutSeconds: Int64 = 10

    @OptionGroup var log: LogFormatOption

    @Option(
        name: .customLong("max-connections"),
        help: "Connections open at once (1...1000000); past it new ones wait in the listen backlog.")
    var maxConnections = 4_096

    @Option(
        name: .customLong("max-connections-per-address"),
        help: ArgumentHelp(
            "Connections open at once from one client address, an IPv6 /64 counting as one (0...1000000).",
            discussion:
                "Past it a new connection is closed at once. Behind a proxy every client shares its address: set 0."
        ))
    var maxConnectionsPerAddress = 64

    @Option(
        name: .customLong("header-timeout-seconds"),
        help: "Answer 408 and close when a request's head has not arrived this long after its first byte (1...300).")
    var headerTimeoutSeconds: Int64 = 5

    @Option(
        name: .customLong("metrics-host"),
        help: "Address of the /metrics listener; it needs no key, so keep it private (loopback by default).")
    var metricsHost = "127.0.0.1"

    @Option(
        name: .customLong("metrics-port"),
        help: "Port of the /metrics listener, apart from the API's (0: any free port).")
    var metricsPort = 9_464

    @Option(
        name: .customLong("rate-limit-api-key"),
        help: "Requests a second and burst of the API key, RATE/BURST, or 0 for no limit.")
    var rateLimitAPIKey = RateLimitSettings().apiKey

    @Option(
        name: .customLong("rate-limit-user"), help: "Requests a second and burst of each user's token, RATE/BURST or 0."
    )
    var rateLimitUser = RateLimitSettings().user

    @Option(
        name: .customLong("rate-limit-address"),
        help: ArgumentHelp(
            "Requests a second and burst of each client address, RATE/BURST or 0.",
            discussion: "Behind a proxy every client shares its address: limit there and set 0 here."))
    var rateLimitAddress = RateLimitSettings().address

    @Option(
        name: .customLong("failed-auth-cost"),
        help: "What a request refused with 401 or 403 costs its address's bucket, in requests (0...1000).")
    var failedAuthCost = Int(RateLimitSettings().failedAuthenticationCost)

    @Option(
        name: .customLong("user-token-ttl-seconds"),
        help: "Lifetime of a minted user token when the request names none (60...2592000).")
    var userTokenTTLSeconds: Int64 = 3_600

    @Option(
        name: .customLong("social-id-retention-hours"),
        help: "How long a social event's id is remembered: a repeat within it notifies no one again (1...8760).")
    var socialIDRetentionHours = Int(SocialEventRecord.defaultRetentionSeconds / 3_600)

    @Flag(
        name: .customLong("legacy-user-tokens"),
        help: "Deprecated: also take the HMAC user tokens of ENGAGED_USER_TOKEN_SECRET (they never expire).")
    var legacyUserTokens = false

    @Option(
        name: .customLong("manual-clock"),
        help: "Start a clock at this ISO 8601 instant that moves only through POST /v1/admin/clock (for tests).")
    var manualClock: String?

    @OptionGroup var apns: APNsOptions

    @OptionGroup var configFile: ConfigFileOption

    @Option(
        name: .customLong("coach-url"),
        help:
            "Base URL of an OpenAI-compatible chat-completions API. Or ENGAGED_COACH_URL; the key in ENGAGED_COACH_API_KEY."
    )
    var coachURL: String?

    @Option(name: .customLong("coach-model"), help: "The coach's model name. Or ENGAGED_COACH_MODEL.")
    var coachModel: String?

    /// The coach's settings from the flags, or else the environment; nil without any.
    func coachSettings(_ environment: [String: String]) throws(CoachSettingsError) -> CoachSettings? {
        try CoachSettings.resolve(url: coachURL, model: coachModel, environment: environment)
    }

    func validate() throws {
        guard (0...65_535).contains(port) else { throw ValidationError("--port must be in 0...65535, got \(port)") }
        guard !host.isEmpty else { throw ValidationError("--host must not be empty") }
        guard Routes.userTokenTTLRange.contains(Int(clamping: userTokenTTLSeconds)) else {
            throw ValidationError("--user-token-ttl-seconds must be in 60...2592000, got \(userTokenTTLSeconds)")
        }
        guard (1...1_000_000).contains(maxConnections) else {
            throw ValidationError("--max-connections must be in 1...1000000, got \(maxConnections)")
        }
        guard (0...1_000_000).contains(maxConnectionsPerAddress) else {
            throw ValidationError(
                "--max-connections-per-address must be in 0...1000000, got \(maxConnectionsPerAddress)")
        }
        guard (1...300).contains(headerTimeoutSeconds) else {
            throw ValidationError("--header-timeout-seconds must be in 1...300, got \(headerTimeoutSeconds)")
        }
        guard (0...65_535).contains(metricsPort) else {
            throw ValidationError("--metrics-port must be in 0...65535, got \(metricsPort)")
        }
        guard !metricsHost.isEmpty else { throw ValidationError("--metrics-host must not be empty") }
        guard metricsPort == 0 || metricsPort != port else {
            throw ValidationError(
                "--metrics-port must differ from --port (\(port)): /metrics has a listener of its own")
        }
        guard (0...1_000).contains(failedAuthCost) else {
            throw ValidationError("--failed-auth-cost must be in 0...1000, got \(failedAuthCost)")
        }
        guard (1...8_760).contains(socialIDRetentionHours) else {
            throw ValidationError("--social-id-retention-hours must be in 1...8760, got \(socialIDRetentionHours)")
        }
        guard (1...300).contains(bodyTimeoutSeconds) else {
            throw ValidationError("--body-timeout-seconds must be in 1...300, got \(bodyTimeoutSeconds)")
        }
        guard (1...3_600).contains(idleTimeoutSeconds) else {
            throw ValidationError("--idle-timeout-seconds must be in 1...3600, got \(idleTimeoutSeconds)")
        }
        try Self.validateStoreChoice(dataDirectory: dataDirectory, database: database)
        if database != nil, manualClock != nil {
            // The clock route performs due work itself, beside the workers' claims.
            throw ValidationError(
                "--manual-clock works with --data-dir only: with --database, workers perform due work")
        }
        if let manualClock, Instant(iso8601: manualClock) == nil {
            throw ValidationError("--manual-clock must be an ISO 8601 instant such as 2027-03-01T06:00:00Z")
        }
        try apns.validate()
        do { _ = try coachSettings(ProcessInfo.processInfo.environment) } catch {
            throw ValidationError(error.description)
        }
    }

    func run() async throws {
        guard database != nil else { return try await serve() }
        // The PostgreSQL store's calls block their thread while the database answers: the
        // server's tasks run on threads of their own, never on the cooperative pool.
        let threads = DatabaseThreads(count: Self.databasePoolSize + 2, onStrayWait: Self.logStrayWait)
        try await threads.run { try await serve() }
    }

    /// Logs a wait on PostgreSQL that ran off `DatabaseThreads` (a defect: it blocked a thread
    /// of Swift's cooperative pool, of which there is one per core).
    static func logStrayWait(_ what: String) {
        Logger(label: "engaged").error(
            "a wait on PostgreSQL ran on Swift's cooperative pool, not on the database threads",
            metadata: ["wait": "\(what)", "thread": "\(Thread.current.name ?? "?")"])
    }

    /// Connections of the server's pool to PostgreSQL.
    static let databasePoolSize = 8

    static func fail(_ message: String, status: Int32 = 78) -> ExitCode {
        FileHandle.standardError.write(Data("engaged: \(message)\n".utf8))
        return ExitCode(status)
    }
}
