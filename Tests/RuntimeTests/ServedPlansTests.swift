import Models
import Testing

@testable import Runtime

/// `ServedPlans`: a pull naming a version the server answered lately is answered with only what
/// changed; any other, in full, and a version that named two plans never again as a delta.
@Suite("Served plans")
struct ServedPlansTests {
    static let now = Instant(iso8601: "2027-03-01T09:00:00Z")!
    let steps = OutboxStepsTests()

    func entry(_ id: RequestID, at minutes: Int64, title: String = "Lunch") -> LocalPlan.Entry {
        var request = steps.request(.mealReminder, id, trigger: .date(Self.now + minutes * 60))
        request.content.title = title
        return LocalPlan.Entry(request: request, nextFireAt: Self.now + minutes * 60)
    }

    func plan(_ version: Int, _ entries: [LocalPlan.Entry]) -> LocalPlan {
        LocalPlan(version: version, zone: OutboxStepsTests.berlin, horizonEnd: nil, entries: entries)
    }

    @Test func aKeptVersionIsAnsweredWithWhatWasAddedReplacedAndRemoved() {
        var served = ServedPlans()
        let first = plan(3, [entry("a", at: 10), entry("b", at: 20), entry("c", at: 30)])
        #expect(served.answer(first, since: nil) == first)
        let withdrawal = Withdrawal(.mealLogged(.lunch), from: Self.now)
        var stillC = entry("c", at: 30)
        stillC.withdrawnBy = [withdrawal]
        let second = plan(
            5, [entry("b", at: 20), entry("d", at: 25), stillC, entry("e", at: 40, title: "Dinner")])
        let answer = served.answer(second, since: 3)
        #expect(answer.version == 5)
        // c changed only in what withdraws it; b is the same and is left out.
        #expect(answer.entries.map(\.request.identifier) == ["d", "c", "e"])
        #expect(answer.delta == LocalPlan.Delta(since: 3, removed: ["a"]))
        #expect(served.versions == [3, 5])
        // Asked again from 5, nothing changed: an empty delta.
        let same = served.answer(second, since: 5)
        #expect(same.entries.isEmpty && same.delta == LocalPlan.Delta(since: 5, removed: []))
    }

    @Test func aVersionNotKeptIsAnsweredInFull() {
        var served = ServedPlans()
        for version in 1...(ServedPlans.versionLimit + 1) {
            _ = served.answer(plan(version, [entry("a", at: Int64(version))]), since: nil)
        }
        #expect(served.versions == Array(2...(ServedPlans.versionLimit + 1)))
        let now = plan(9, [entry("a", at: 9)])
        #expect(served.answer(now, since: 1) == now)
        #expect(served.answer(now, since: 42) == now)
        // An empty plan's delta removes everything of the version named.
        let empty = served.answer(plan(10, []), since: 9)
        #expect(empty.entries.isEmpty && empty.delta?.removed == ["a"])
    }

    @Test func aVersionThatNamedTwoPlansIsNeverADeltaBaseButOneLessWhatFiredIs() {
        var served = ServedPlans()
        _ = served.answer(plan(3, [entry("a", at: 10), entry("b", at: 20)]), since: nil)
        // Answered again after a fired: the same plan, less what fired. Still a base, and the
        // fired one-off is removed from a device that held it.
        _ = served.answer(plan(3, [entry("b", at: 20)]), since: nil)
        let next = plan(4, [entry("b", at: 20), entry("c", at: 30)])
        let delta = served.answer(next, since: 3)
        #expect(delta.entries.map(\.request.identifier) == ["c"] && delta.delta?.removed == ["a"])
        // Answered with another request under the same number (a step committed between reading
        // the version and the rows): never a base again, whatever comes after.
        _ = served.answer(plan(4, [entry("b", at: 20), entry("c", at: 35)]), since: nil)
        let later = plan(6, [entry("b", at: 20)])
        #expect(served.answer(later, since: 4) == later)
        _ = served.answer(next, since: nil)
        #expect(served.answer(later, since: 4) == later)
    }
}
