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
        // A key that does two jobs leaks both ways: whoever holds the API key could mint user
        // tokens, and a token key that leaks would be the API key.
        if let reused = userTokenKeys.keys.firstIndex(where: { $0.secret == Array(apiKey.utf8) }) {
            throw ConfigurationError(
                setting: "ENGAGED_USER_TOKEN_KEYS",
                problem: "key \(reused + 1) (\(userTokenKeys.keys[reused].id)) is the API key; give each its own secret"
            )
        }
        if let legacyUserTokenSecret, legacyUserTokenSecret == apiKey {
            throw ConfigurationError(
                setting: "ENGAGED_USER_TOKEN_SECRET", problem: "it is the API key; give each its own secret")
        }
    }

    /// Whether `secret` is only whitespace (spaces, tabs, line ends): a placeholder, not a secret.
    static func isBlank(_ secret: some Sequence<UInt8>) -> Bool {
        secret.allSatisfy { [0x20, 0x09, 0x0A, 0x0D, 0x0B, 0x0C].contains($0) }
    }

    private static func secret(_ name: String, in environment: [String: String], purpose: String)
        throws(ConfigurationError) -> String
    {
        guard let value = environment[name], !value.isEmpty else {
            throw ConfigurationError(setting: name, problem: "not set: it is \(purpose)")
        }
        guard !isBlank(value.utf8) else {
            throw ConfigurationError(setting: name, problem: "only whitespace: it is \(purpose)")
        }
        guard value.utf8.count >= minimumBytes else {
            throw ConfigurationError(
                setting: name, problem: "at least \(minimumBytes) bytes, got \(value.utf8.count) (\(purpose))")
        }
        return value
    }
}
