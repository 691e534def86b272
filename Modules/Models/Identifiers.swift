/// An identifier that is text at the edges (the wire, the stores, the event log) and a type of
/// its own inside, so a user's id cannot be passed where a request's or an outbox row's is
/// expected. Each is a struct around its text, declared in the engine's modules (so with
/// `ENGAGEMENT_OPTIMIZE=1` comparing and hashing one is specialized where it is used, as it is for
/// the text itself); a string literal or interpolation makes one where the type is known, and
/// `rawValue` gives the text back where bytes leave the process. Codable as the bare string.
public protocol StringIdentifier: RawRepresentable, Hashable, Comparable, Sendable, Codable,
    ExpressibleByStringInterpolation, CustomStringConvertible
where RawValue == String, StringLiteralType == String, StringInterpolation == DefaultStringInterpolation {
    init(rawValue: String)
}

extension StringIdentifier {
    public init(_ rawValue: String) { self.init(rawValue: rawValue) }
    public init(stringLiteral value: String) { self.init(rawValue: value) }
    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
    public var description: String { rawValue }
    /// Whether the text is empty (the stores and the routes refuse an empty identifier).
    public var isEmpty: Bool { rawValue.isEmpty }
}

/// A user, as the app's backend names them (the path's `{id}`, a token's subject).
public struct UserID: StringIdentifier {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
}

/// A notification request, by the identifier the platform knows it by
/// (`NotificationRequest.identifier`): the key of an outbox row's slot and of a trace's
/// decisions.
public struct RequestID: StringIdentifier {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
}
