import Foundation
import Hummingbird

/// Request bodies (at most 64 KB, one strict JSON object) and the JSON of problem answers.
enum JSONBody {
    /// Bodies above this are refused with 413 before anything is decoded.
    static let maxBytes = 64 * 1024

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
