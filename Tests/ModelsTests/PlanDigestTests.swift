import Testing

@testable import Models

@Suite("PlanDigest: the byte layout")
struct PlanDigestTests {
    static let links: [DeepLink] =
        [
            .dashboard, .moodLog, .coachChat, .workoutStart, .workoutLog, .mealLog(nil), .quickAdd, .energyLog,
            .checkIn, .weeklyReview, .achievements, .inbox,
        ] + MealType.allCases.map { .mealLog($0) }

    /// A deep link hashes as its URL does, whichever pieces it is hashed in.
    @Test(arguments: links)
    func aDeepLinkHashesAsItsURL(link: DeepLink) {
        var pieces = PlanDigest.Hashing()
        pieces.add(link)
        var whole = PlanDigest.Hashing()
        whole.add(link.description)
        #expect(pieces.value == whole.value)
        #expect(DeepLink(url: link.description) == link)
    }

    /// Every link of the list above is a different URL, so the list covers each case once.
    @Test func theLinksAreDistinct() {
        #expect(Set(Self.links.map(\.description)).count == Self.links.count)
    }
}
