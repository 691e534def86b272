import Foundation

/// An input value that decoded but breaks a rule; names the field and the problem.
public struct InvalidValue: Error, Equatable, Sendable, CustomStringConvertible {
    /// Dotted path of the field, e.g. `preferences.quietHours.start`.
    public var field: String
    public var problem: String

    public init(field: String, problem: String) {
        self.field = field
        self.problem = problem
    }

    public var description: String { "\(field): \(problem)" }
}

/// A coding key that accepts any string, to list the keys an input actually holds.
struct AnyCodingKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

extension Decoder {
    /// Throws when the keyed input holds a key outside `allowed`: a misspelt preference must
    /// fail loudly, not be ignored.
    func rejectUnknownKeys<Key: CodingKey & CaseIterable>(_ keys: Key.Type) throws {
        let allowed = Set(Key.allCases.map(\.stringValue))
        let container = try container(keyedBy: AnyCodingKey.self)
        if let unknown = container.allKeys.map(\.stringValue).sorted().first(where: { !allowed.contains($0) }) {
            throw DecodingError.dataCorrupted(
                DecodingError.Context(
                    codingPath: codingPath + [AnyCodingKey(stringValue: unknown)],
                    debugDescription:
                        "unknown key \"\(unknown)\"; expected one of \(allowed.sorted().joined(separator: ", "))"))
        }
    }

    /// A `dataCorrupted` error for the field `key` of this decoder.
    func invalid(_ key: some CodingKey, _ problem: String) -> DecodingError {
        DecodingError.dataCorrupted(DecodingError.Context(codingPath: codingPath + [key], debugDescription: problem))
    }
}

extension DecodingError {
    /// One line a person can act on: the dotted field path and what is wrong with it.
    public var fieldMessage: String {
        func path(_ codingPath: [any CodingKey]) -> String {
            let text = codingPath.map { key in key.intValue.map { "[\($0)]" } ?? key.stringValue }
                .joined(separator: ".").replacingOccurrences(of: ".[", with: "[")
            return text.isEmpty ? "(top level)" : text
        }
        switch self {
        case .keyNotFound(let key, let context):
            return "\(path(context.codingPath + [key])): missing required key"
        case .typeMismatch(let type, let context):
            return "\(path(context.codingPath)): expected \(type); \(context.debugDescription)"
        case .valueNotFound(let type, let context):
            return "\(path(context.codingPath)): expected \(type), found null"
        case .dataCorrupted(let context):
            return "\(path(context.codingPath)): \(context.debugDescription)"
        @unknown default:
            return "\(self)"
        }
    }
}
