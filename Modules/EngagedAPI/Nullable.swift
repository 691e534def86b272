/// A value of a required, nullable field of an answer: the value, or JSON `null`.
///
/// The generator holds a nullable field as an optional and writes it with `encodeIfPresent`, so a
/// nil would leave out a key the document requires. The document names these fields' schemas
/// (`NullableText`, `NullableInstant`, `Version`) and the generator's configuration maps each to
/// this type, whose `encode(to:)` writes `null` when it holds none. The server always sets the
/// field; a client reads `null` and an absent key as nil (the generated decoder's
/// `decodeIfPresent`), and a value as `Nullable(value)`.
public struct Nullable<Wrapped: Codable & Hashable & Sendable>: Codable, Hashable, Sendable {
    public var value: Wrapped?

    public init(_ value: Wrapped?) { self.value = value }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        value = container.decodeNil() ? nil : try container.decode(Wrapped.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        if let value { try container.encode(value) } else { try container.encodeNil() }
    }
}
