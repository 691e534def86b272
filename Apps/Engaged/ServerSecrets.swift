/// The server's secrets, from the environment only (never flags: a process's arguments are
/// visible to every user of the machine). Each is at least `minimumBytes` long: a short API key
/// can be guessed, and an HS256 key shorter than its hash weakens it (RFC 7518 section 3.2).
struct ServerSecrets: Sendable, Equatable {
    static let minimumBytes = 32

    /// `ENGAGED_API_KEY`: what backends send as `Authorization: Bearer <key>`.
    var apiKey: String
    /// `ENGAGED_USER_TOKEN_KEYS`: the keys that sign and verify user tokens.
    var userTokenKeys: UserTokenKeys
    /// `ENGAGED_USER_TOKEN_SECRET`, read only with `--legacy-user-tokens`.
    var legacyUserTokenSecret: String?

    init(_ environment: [String: String], legacyUserTokens: Bool) throws(ConfigurationError) {
        apiKey = try Self.secret(
            "ENGAGED_API_KEY", in: environment, purpose: "the API key backends send as Authorization: Bearer <key>")
        guard let keys = environment["ENGAGED_USER_TOKEN_KEYS"], !keys.isEmpty else {
            throw ConfigurationError(
                setting: "ENGAGED_USER_TOKEN_KEYS",
                problem: "not set: comma-separated kid:secret pairs that sign the user tokens (the first signs)")
        }
        userTokenKeys = try UserTokenKeys.parse(keys)
        legacyUserTokenSecret =
            legacyUserTokens
            ? try Self.secret(
                "ENGAGED_USER_TOKEN_SECRET", in: environment,
                purpose: "the secret of the deprecated HMAC user tokens (--legacy-user-tokens)")
            : nil
    }

    private static func secret(_ name: String, in environment: [String: String], purpose: String)
        throws(ConfigurationError) -> String
    {
        guard let value = environment[name], !value.isEmpty else {
            throw ConfigurationError(setting: name, problem: "not set: it is \(purpose)")
        }
        guard value.utf8.count >= minimumBytes else {
            throw ConfigurationError(
                setting: name, problem: "at least \(minimumBytes) bytes, got \(value.utf8.count) (\(purpose))")
        }
        return value
    }
}
