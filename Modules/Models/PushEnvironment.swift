/// The APNs environment a token was issued in: a development build's token works only against
/// the sandbox gateway, a release build's only against production.
public enum PushEnvironment: String, CaseIterable, Codable, Hashable, Sendable {
    case sandbox, production
}
