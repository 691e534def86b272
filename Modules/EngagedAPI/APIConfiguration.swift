public import Foundation
public import OpenAPIRuntime

/// The API's instants as text, for the generated code (`Configuration.engaged`).
///
/// The server writes every instant of type `date-time` in whole seconds, in UTC
/// (`2027-03-01T06:00:00Z`), and reads one with an offset too. This transcoder writes the same
/// and reads both, and a fraction besides. Values that keep their offset (a local time) or their
/// milliseconds (a field group's version) are plain text in the document, so no instant of this
/// API loses what it says on the way through a `Date`.
public struct APIDateTranscoder: DateTranscoder {
    private static let style = Date.ISO8601FormatStyle()
    /// Foundation before macOS and iOS 26 reads a fraction only with a style that expects one.
    private static let fractionalStyle = Date.ISO8601FormatStyle(includingFractionalSeconds: true)

    public init() {}

    /// Whole seconds (a fraction is dropped), UTC.
    public func encode(_ date: Date) throws -> String { Self.style.format(date) }

    /// `YYYY-MM-DDTHH:MM:SS`, with an optional fraction, then `Z` or a `±HH:MM` offset.
    public func decode(_ text: String) throws -> Date {
        guard let date = (try? Self.style.parse(text)) ?? (try? Self.fractionalStyle.parse(text)) else {
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: [],
                    debugDescription: "expected an ISO 8601 instant such as 2027-03-01T06:00:00Z, got \"\(text)\""))
        }
        return date
    }
}

extension Configuration {
    /// What the generated code of this API uses: its instants (`APIDateTranscoder`), and compact
    /// JSON with sorted keys (the runtime's default pretty-prints).
    public static var engaged: Configuration {
        Configuration(dateTranscoder: APIDateTranscoder(), jsonEncodingOptions: [.sortedKeys, .withoutEscapingSlashes])
    }
}
