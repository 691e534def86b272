import Foundation
import Hummingbird
import Models

/// Request bodies (at most 64 KB, one strict JSON object) and the JSON of problem answers.
enum JSONBody {
    /// Bodies above this are refused with 413 before anything is decoded.
    static let maxBytes = 64 * 1024

    /// Refuses a body that is not one JSON object in the strict form (`JSONScanner`): empty,
    /// another value, malformed (with its line and column), a key given twice, a trailing comma,
    /// or nesting deeper than `JSONScanner.defaultMaximumDepth`; 400 naming where.
    ///
    /// A body is read at most twice: this scan, which builds nothing, and then the generated
    /// `Codable` decoder over the same bytes. The scan is there because `JSONDecoder` takes the
    /// last of two equal keys, forgives a trailing comma, and names no line or column; anything
    /// more (a tree for the decoder, a second check) would read every body a third time and buy
    /// nothing these two do not.
    static func check(_ bytes: [UInt8]) throws(Problem) {
        guard !bytes.isEmpty else { throw Problem.badRequest("the body is empty; a JSON object is expected") }
        guard bytes.first(where: { !Self.whitespace.contains($0) }) == UInt8(ascii: "{") else {
            throw Problem.badRequest("the body is not a JSON object; a JSON object is expected")
        }
        do {
            try JSONScanner.check(bytes)
        } catch {
            let field = error.path.isEmpty ? nil : error.path
            let position = "line \(error.line), column \(error.column)"
            switch error.kind {
            case .duplicateKey(let key, let firstLine):
                throw Problem.badRequest(
                    "the key \(Problem.quoted(key)) is given twice in one object (\(position); first at line "
                        + "\(firstLine))", field: field)
            case .tooDeep(let limit):
                throw Problem.badRequest("the body nests deeper than \(limit) levels (\(position))", field: field)
            case .trailingComma, .malformed:
                throw Problem.badRequest("the body is not valid JSON: \(error.problem) (\(position))", field: field)
            }
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
