import APNs
import Delivery
import Models
import Testing

@Suite("APNs answers and back-off")
struct APNsDispositionTests {
    @Test(arguments: [
        (200, "", APNsDisposition.delivered),
        (
            400, #"{"reason":"BadDeviceToken"}"#,
            .retireToken(PushFailure(status: 400, reason: "BadDeviceToken"), since: nil)
        ),
        (
            400, #"{"reason":"DeviceTokenNotForTopic"}"#,
            .retireToken(PushFailure(status: 400, reason: "DeviceTokenNotForTopic"), since: nil)
        ),
        (
            410, #"{"reason":"Unregistered","timestamp":1803967200500}"#,
            .retireToken(
                PushFailure(status: 410, reason: "Unregistered"), since: Instant(secondsSinceEpoch: 1_803_967_200))
        ),
        (
            410, #"{"reason":"ExpiredToken"}"#,
            .retireToken(PushFailure(status: 410, reason: "ExpiredToken"), since: nil)
        ),
        (
            403, #"{"reason":"ExpiredProviderToken"}"#,
            .renewProviderToken(PushFailure(status: 403, reason: "ExpiredProviderToken"))
        ),
        (403, #"{"reason":"InvalidProviderToken"}"#, .reject(PushFailure(status: 403, reason: "InvalidProviderToken"))),
        (413, #"{"reason":"PayloadTooLarge"}"#, .reject(PushFailure(status: 413, reason: "PayloadTooLarge"))),
        (400, #"{"reason":"BadTopic"}"#, .reject(PushFailure(status: 400, reason: "BadTopic"))),
        (429, #"{"reason":"TooManyRequests"}"#, .retry(PushFailure(status: 429, reason: "TooManyRequests"))),
        (
            429, #"{"reason":"TooManyProviderTokenUpdates"}"#,
            .retry(PushFailure(status: 429, reason: "TooManyProviderTokenUpdates"))
        ),
        (500, #"{"reason":"InternalServerError"}"#, .retry(PushFailure(status: 500, reason: "InternalServerError"))),
        (503, "<html>busy</html>", .retry(PushFailure(status: 503, reason: "HTTP 503"))),
        (404, #"{"reason":"BadPath"}"#, .reject(PushFailure(status: 404, reason: "BadPath"))),
    ])
    func eachAnswerHasItsDisposition(status: Int, body: String, expected: APNsDisposition) {
        #expect(APNsDisposition.of(status: status, body: Array(body.utf8)) == expected)
    }

    @Test func backOffDoublesUpToItsCapWithJitterInTheUpperHalf() {
        let policy = RetryPolicy(maxAttempts: 6, baseDelay: .milliseconds(100), maxDelay: .seconds(1))
        let ceilings: [Duration] = [
            .milliseconds(100), .milliseconds(200), .milliseconds(400), .milliseconds(800), .seconds(1),
        ]
        for (index, ceiling) in ceilings.enumerated() {
            #expect(policy.delay(afterAttempt: index + 1, unitRandom: 0) == ceiling / 2)
            #expect(policy.delay(afterAttempt: index + 1, unitRandom: 1) == ceiling)
        }
        #expect(policy.delay(afterAttempt: 1_000, unitRandom: 1) == .seconds(1))
        #expect(policy.delay(afterAttempt: 3, unitRandom: 7) == .milliseconds(400))  // clamped to 0...1
        #expect(RetryPolicy(maxAttempts: 0).maxAttempts == 1)
    }
}
