import Foundation
import HTTPTypes
import Hummingbird
import Logging

/// The access log: one `info` line per answered request, `request`, with its method, route
/// (the router's pattern, `/v1/users/{id}/events`, or `NotFound`: never the path itself, which
/// names users), status, duration in milliseconds and request id. The request id is the
/// client's `X-Request-ID` when it is sane (`RequestIDs.isSane`), else one made here; the answer
/// carries it back, and every line logged for the request carries it as `request_id`. Headers
/// are never logged: keys and tokens stay out of logs.
struct AccessLogMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let start = ContinuousClock.now
        let requestID = RequestIDs.resolve(request.headers[RequestIDs.header])
        var context = context
        context.logger[metadataKey: "request_id"] = .string(requestID)
        do {
            var response = try await next(request, context)
            response.headers[RequestIDs.header] = requestID
            log(request, context: context, status: response.status.code, since: start)
            return response
        } catch {
            // Only when no problem middleware is below this one.
            log(request, context: context, status: (error as? any HTTPResponseError)?.status.code ?? 500, since: start)
            throw error
        }
    }

    private func log(_ request: Request, context: Context, status: Int, since start: ContinuousClock.Instant) {
        let elapsed = ContinuousClock.now - start
        context.logger.info(
            "request",
            metadata: [
                "method": .string(request.method.rawValue), "route": .string(context.endpointPath ?? "NotFound"),
                "status": .stringConvertible(status),
                "duration_ms": .string(Self.milliseconds(elapsed)),
            ])
    }
}

extension AccessLogMiddleware {
    /// `duration` in milliseconds with three decimals (`%.3f`'s form), without a format string parsed
    /// per request: rounded to the nearest microsecond, a half up (`%.3f` would round an exact
    /// half to even), never below zero, and at most a billion seconds, so no duration can
    /// overflow.
    static func milliseconds(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        guard seconds >= 0, attoseconds >= 0 else { return "0.000" }
        let micros = min(seconds, 1_000_000_000) * 1_000_000 + (attoseconds + 500_000_000_000) / 1_000_000_000_000
        let fraction = String(micros % 1_000)
        return "\(micros / 1_000)." + String(repeating: "0", count: 3 - fraction.count) + fraction
    }
}

/// The request ids of `X-Request-ID`.
enum RequestIDs {
    static let header = HTTPField.Name("X-Request-ID")!

    /// The client's id when sane, else a new one (a UUID).
    static func resolve(_ given: String?) -> String {
        if let given, isSane(given) { return given }
        return UUID().uuidString.lowercased()
    }

    /// 1 to 128 of `A-Z a-z 0-9 - _ . :`: what request ids are made of (UUIDs, hex, ULIDs,
    /// a proxy's `host:counter`), and nothing that could forge a log line or a header.
    static func isSane(_ id: String) -> Bool {
        (1...128).contains(id.utf8.count)
            && id.utf8.allSatisfy { byte in
                (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                    || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                    || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                    || [UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: ":")].contains(byte)
            }
    }
}
