public import Delivery
import Foundation
public import Models

/// What the client does with one attempt's answer (the statuses and reasons Apple documents).
public enum APNsDisposition: Hashable, Sendable {
    /// 200.
    case delivered
    /// 400 BadDeviceToken or DeviceTokenNotForTopic, 410 (Unregistered, ExpiredToken): the token
    /// is dead; a 410 says since when.
    case retireToken(PushFailure, since: Instant?)
    /// 403 ExpiredProviderToken: a new provider token, then one more attempt.
    case renewProviderToken(PushFailure)
    /// 429 and 5xx, and no answer at all: back off and try again, a bounded number of times.
    case retry(PushFailure)
    /// Everything else (413, the other 400s and 403s, 404, 405): the same request would get
    /// the same answer.
    case reject(PushFailure)

    /// The disposition of an HTTP answer: its status and body (`{"reason": …, "timestamp": …}`).
    public static func of(status: Int, body: [UInt8]) -> APNsDisposition {
        if status == 200 { return .delivered }
        let error = try? JSONDecoder().decode(ErrorBody.self, from: Data(body))
        let failure = PushFailure(status: status, reason: error?.reason ?? "HTTP \(status)")
        switch (status, failure.reason) {
        case (400, "BadDeviceToken"), (400, "DeviceTokenNotForTopic"): return .retireToken(failure, since: nil)
        case (410, _):
            // APNs gives milliseconds since the epoch; a token registered in the same second
            // as the 410 counts as registered before it.
            let since = error?.timestamp.map { Instant(secondsSinceEpoch: Int64(($0 / 1000).rounded(.down))) }
            return .retireToken(failure, since: since)
        case (403, "ExpiredProviderToken"): return .renewProviderToken(failure)
        case (429, _), (500...599, _): return .retry(failure)
        default: return .reject(failure)
        }
    }

    /// No answer: a connection that failed or closed (a GOAWAY that refused the stream), a timeout.
    public static func noAnswer(_ error: any Error) -> APNsDisposition {
        .retry(PushFailure(status: nil, reason: "no answer: \(error)"))
    }

    private struct ErrorBody: Decodable {
        var reason: String?
        /// A number in APNs' answers; read as a Double so that a fraction does not fail the body.
        var timestamp: Double?
    }
}
