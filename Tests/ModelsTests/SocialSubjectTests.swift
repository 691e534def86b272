import Testing

@testable import Models

/// A social event's id is a subject of its own: written as given, and never taken for a request.
struct SocialSubjectTests {
    @Test(arguments: ["evt-1", "mealReminder.2027-04-12.lunch", "évènement \"7\""])
    func aSocialIDIsWrittenAsGivenAndNamesNoRequest(id: String) {
        let subject = TraceSubject.socialEvent(id)
        #expect(subject.requestID == id)
        #expect(subject.isSocialEvent)
        #expect(!TraceSubject.external(id).isSocialEvent)
        #expect(subject != .external(id))
    }

    @Test func aRepeatNamesItsFirstArrival() throws {
        let berlin = try #require(ZoneRules(identifier: "Europe/Berlin"))
        let first = Instant(iso8601: "2027-04-12T10:15:00Z")!
        let detail = TraceDetail.repeatedEvent("k1", firstSeen: OffsetDateTime(first, in: berlin))
        #expect(detail.text == "social event k1 was already received at \(berlin.formatted(first))")
        let long = String(repeating: "x", count: 300)
        let clipped = TraceDetail.repeatedEvent(long, firstSeen: OffsetDateTime(first, in: berlin)).text
        #expect(clipped.hasPrefix("social event " + String(repeating: "x", count: 128) + " was"))
    }
}
