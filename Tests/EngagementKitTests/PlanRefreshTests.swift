import Models
import Testing

@testable import EngagementKit

@Suite("EngagementKit: when to ask for a background refresh")
struct PlanRefreshTests {
    static let now = Instant(iso8601: "2027-03-01T06:00:00Z")!
    let policy = PlanRefresh(intervalSeconds: 4 * 3_600, marginSeconds: 12 * 3_600, minimumSeconds: 900)

    @Test func aFarHorizonWaitsTheInterval() {
        #expect(policy.nextRefresh(at: Self.now, horizonEnd: Self.now + 60 * 3_600) == Self.now + 4 * 3_600)
    }

    @Test func aNearHorizonIsRefreshedAMarginBeforeItEnds() {
        #expect(policy.nextRefresh(at: Self.now, horizonEnd: Self.now + 14 * 3_600) == Self.now + 2 * 3_600)
    }

    @Test func noPlanOrAnEndedOneIsRefreshedAsSoonAsTheSystemAllows() {
        #expect(policy.nextRefresh(at: Self.now, horizonEnd: nil) == Self.now + 900)
        #expect(policy.nextRefresh(at: Self.now, horizonEnd: Self.now + 3_600) == Self.now + 900)
        #expect(policy.nextRefresh(at: Self.now, horizonEnd: Self.now - 86_400) == Self.now + 900)
    }
}
