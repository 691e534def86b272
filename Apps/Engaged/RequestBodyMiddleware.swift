import Foundation
import Hummingbird
import NIOCore

/// Reads every request's body before a route sees it, so no route waits on a client:
/// - `Content-Encoding` other than `identity` is 415 (the server reads plain JSON only; a
///   "gzip" body used to be read as JSON);
/// - a declared or actual body over `JSONBody.maxBytes` is 413;
/// - a body that has not fully arrived `timeoutSeconds` after the headers is 408: a client that
///   trickles a byte just inside the idle timeout cannot hold a handler for long;
/// - a body the connection cannot deliver (closed early, a malformed chunk) is 400, not a 500;
/// - a body that is not empty must say `Content-Type: application/json` (parameters such as
///   `charset=utf-8` aside, and no other charset), or it is 415: a form-encoded body used to be
///   read as JSON.
///
/// The operation then reads the collected bytes (`JSONBodyMiddleware`, the generated decoder).
struct RequestBodyMiddleware<Context: RequestContext>: RouterMiddleware {
    let timeoutSeconds: Int64

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        if let encoding = request.headers[.contentEncoding], encoding.lowercased() != "identity" {
            throw Problem.unsupportedMediaType(
                "Content-Encoding \(encoding) is not supported: send the JSON body uncompressed")
        }
        if let declared = request.headers[.contentLength].flatMap({ Int($0) }), declared > JSONBody.maxBytes {
            throw Problem.bodyTooLarge(limitBytes: JSONBody.maxBytes)
        }
        let buffer = try await collect(request.body)
        if buffer.readableBytes > 0, !Self.isJSON(request.headers[.contentType]) {
            throw Problem.unsupportedMediaType(
                "the body is \(request.headers[.contentType].map { "\"\($0.prefix(64))\"" } ?? "without a Content-Type"); "
                    + "send Content-Type: application/json (UTF-8)")
        }
        var collected = request
        collected.body = RequestBody(buffer: buffer)
        return try await next(collected, context)
    }

    /// The whole body within the deadline and the size limit.
    private func collect(_ body: RequestBody) async throws -> ByteBuffer {
        let timeout = timeoutSeconds
        return try await withThrowingTaskGroup(of: ByteBuffer?.self) { group in
            group.addTask {
                do {
                    return try await body.collect(upTo: JSONBody.maxBytes)
                } catch let error as any HTTPResponseError where error.status == .contentTooLarge {
                    throw Problem.bodyTooLarge(limitBytes: JSONBody.maxBytes)
                } catch let cancelled as CancellationError {
                    throw cancelled
                } catch {
                    throw Problem.badRequest(
                        "the body could not be read: the connection closed before it ended, or sent a malformed chunk")
                }
            }
            group.addTask {
                try await Task.sleep(for: .seconds(timeout))
                return nil
            }
            defer { group.cancelAll() }
            // The first to finish: the body, or the deadline's nil. A cancelled request (the
            // client went away) throws CancellationError, never a timeout.
            if let first = try await group.next(), let buffer = first { return buffer }
            try Task.checkCancellation()
            throw Problem.requestTimeout("the body did not arrive within \(timeout) seconds of the headers")
        }
    }

    /// `application/json`, with any parameters but a `charset` other than `utf-8` (JSON between
    /// systems is UTF-8, RFC 8259 section 8.1: a body declared Latin-1 would be read wrongly);
    /// the media type and the charset are case-insensitive (RFC 9110), the charset may be quoted.
    static func isJSON(_ contentType: String?) -> Bool {
        guard let contentType else { return false }
        let parts = contentType.split(separator: ";", omittingEmptySubsequences: false).map {
            $0.trimmingCharacters(in: .whitespaces).lowercased()
        }
        guard parts.first == "application/json" else { return false }
        for parameter in parts.dropFirst() {
            guard let equals = parameter.firstIndex(of: "="),
                parameter[..<equals].trimmingCharacters(in: .whitespaces) == "charset"
            else { continue }
            let value = parameter[parameter.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            guard value == "utf-8" || value == "\"utf-8\"" else { return false }
        }
        return true
    }
}

extension Problem {
    /// The body's media type or encoding is not one the server reads.
    static func unsupportedMediaType(_ detail: String) -> Problem {
        Problem(
            slug: "unsupported-media-type", title: "Unsupported media type", status: .unsupportedMediaType,
            detail: detail)
    }

    /// The client did not send its request in time.
    static func requestTimeout(_ detail: String) -> Problem {
        Problem(slug: "request-timeout", title: "Request timeout", status: .requestTimeout, detail: detail)
    }
}
