import Foundation
import Hummingbird

/// Reading request bodies (at most 64 KB) and writing JSON answers.
enum JSONBody {
    /// Bodies above this are refused with 413 before anything is decoded.
    static let maxBytes = 64 * 1024

    /// The whole body, collected (and its size, type, encoding and time judged) by
    /// `RequestBodyMiddleware` before the route runs.
    static func read(_ request: Request) async throws -> [UInt8] {
        Array(try await request.body.collect(upTo: maxBytes).readableBytesView)
    }

    /// `bytes` decoded as `T`, or the problem that names what is wrong with it.
    static func decode<T: Decodable>(_ type: T.Type, from bytes: [UInt8]) throws(Problem) -> T {
        try check(bytes)
        do {
            return try JSONDecoder().decode(T.self, from: Data(bytes))
        } catch {
            throw Problem.from(decoding: error)
        }
    }

    /// Refuses a body that is not one JSON object in the strict form: empty, another value,
    /// a key given twice, a trailing comma, or nesting too deep (`StrictJSON`); 400 naming where.
    static func check(_ bytes: [UInt8]) throws(Problem) {
        guard !bytes.isEmpty else { throw Problem.badRequest("the body is empty; a JSON object is expected") }
        guard bytes.first(where: { !Self.whitespace.contains($0) }) == UInt8(ascii: "{") else {
            throw Problem.badRequest("the body is not a JSON object; a JSON object is expected")
        }
        switch StrictJSON.firstFinding(in: bytes) {
        case .duplicateKey(let path, let key)?:
            throw Problem.badRequest("the key \"\(key)\" is given twice in one object", field: path)
        case .trailingComma(let path)?:
            throw Problem.badRequest(
                "the body is not valid JSON: a comma before a closing bracket", field: path.isEmpty ? nil : path)
        case .tooDeep(let path)?:
            throw Problem.badRequest(
                "the body nests deeper than \(StrictJSON.maximumDepth) levels", field: path.isEmpty ? nil : path)
        case nil: break
        }
    }

    /// JSON's insignificant whitespace (RFC 8259): space, tab, line feed, carriage return.
    static let whitespace: Set<UInt8> = [0x20, 0x09, 0x0A, 0x0D]

    static func encode(_ value: some Encodable) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Every value the server encodes is made of strings, numbers and arrays: encoding cannot fail.
        return (try? Array(encoder.encode(value))) ?? Array("{}".utf8)
    }

    static func response(
        _ status: HTTPResponse.Status, _ value: some Encodable, contentType: String = "application/json"
    ) -> Response {
        response(status, bytes: encode(value), contentType: contentType)
    }

    static func response(
        _ status: HTTPResponse.Status, bytes: [UInt8], contentType: String = "application/json"
    ) -> Response {
        Response(
            status: status, headers: [.contentType: contentType],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
    }
}

/// Decoding helpers for the request bodies: unknown keys are refused (a misspelt field must fail
/// loudly, as the engine's own decoders do).
struct AnyKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(_ string: String) { stringValue = string }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

extension KeyedDecodingContainer where Key == AnyKey {
    /// Throws a 422-class error naming the first key outside `allowed`.
    func rejectKeys(outside allowed: Set<String>, at codingPath: [any CodingKey]) throws {
        if let unknown = allKeys.map(\.stringValue).sorted().first(where: { !allowed.contains($0) }) {
            throw DecodingError.dataCorrupted(
                DecodingError.Context(
                    codingPath: codingPath + [AnyKey(unknown)],
                    debugDescription: "unknown key; expected one of \(allowed.sorted().joined(separator: ", "))"))
        }
    }

    func decode<T: Decodable>(_ name: String, as type: T.Type = T.self) throws -> T {
        try decode(T.self, forKey: AnyKey(name))
    }

    func decodeIfPresent<T: Decodable>(_ name: String, as type: T.Type = T.self) throws -> T? {
        try decodeIfPresent(T.self, forKey: AnyKey(name))
    }

    /// A whole number in `range`, or a 422-class error naming the field.
    func integer(_ name: String, in range: ClosedRange<Int>, at codingPath: [any CodingKey]) throws -> Int? {
        guard let value = try decodeIfPresent(name, as: Int.self) else { return nil }
        guard range.contains(value) else {
            throw DecodingError.dataCorrupted(
                DecodingError.Context(
                    codingPath: codingPath + [AnyKey(name)],
                    debugDescription: "must be in \(range.lowerBound)...\(range.upperBound), got \(value)"))
        }
        return value
    }
}

/// A refused value at `field` of a body being decoded (a 422).
func invalidValue(_ codingPath: [any CodingKey], _ field: String, _ problem: String) -> DecodingError {
    DecodingError.dataCorrupted(
        DecodingError.Context(codingPath: codingPath + [AnyKey(field)], debugDescription: problem))
}
