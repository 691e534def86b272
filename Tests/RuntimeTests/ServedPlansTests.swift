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

    /// Whether `answer` is `plan` whole, with its digest.
    func isWhole(_ answer: LocalPlan, _ plan: LocalPlan) -> Bool {
        answer.delta == nil && answer.entries == plan.entries && answer.digest == digest(plan)
    }

    func digest(_ plan: LocalPlan) -> String {
        PlanDigest.of(
            plan.entries.map { PlanDigest.hash($0.request, nextFireAt: $0.nextFireAt, withdrawnBy: $0.withdrawnBy) })
    }

    @Test func aKeptVersionIsAnsweredWithWhatWasAddedReplacedAndRemoved() {
        var served = ServedPlans()
        let first = plan(3, [entry("a", at: 10), entry("b", at: 20), entry("c", at: 30)])
        #expect(isWhole(served.answer(first, since: nil, at: Self.now), first))
        var stillC = entry("c", at: 30)
        stillC.withdrawnBy = [Withdrawal(.mealLogged(.lunch), from: Self.now)]
        let second = plan(5, [entry("b", at: 20), entry("d", at: 25), stillC, entry("e", at: 40, title: "Dinner")])
        let answer = served.answer(second, since: 3, at: Self.now)
        #expect(answer.version == 5)
        // c changed only in what withdraws it; b is the same and is left out.
        #expect(answer.entries.map(\.request.identifier) == ["d", "c", "e"])
        #expect(answer.delta == LocalPlan.Delta(since: 3, removed: ["a"]))
        // The digest is the whole plan's, whatever the answer carries.
        #expect(answer.digest == digest(second))
        #expect(served.versions == [3, 5])
        // Asked again from 5, nothing changed: an empty delta.
        let same = served.answer(second, since: 5, at: Self.now)
        #expect(same.entries.isEmpty && same.delta == LocalPlan.Delta(since: 5, removed: []))
    }

    @Test func aVersionNotKeptIsAnsweredInFull() {
        var served = ServedPlans()
        for version in 1...(ServedPlans.versionLimit + 1) {
            _ = served.answer(plan(version, [entry("a", at: Int64(version))]), since: nil, at: Self.now)
        }
        #expect(served.versions == Array(2...(ServedPlans.versionLimit + 1)))
        let now = plan(9, [entry("a", at: 9)])
        #expect(isWhole(served.answer(now, since: 1, at: Self.now), now))
        #expect(isWhole(served.answer(now, since: 42, at: Self.now), now))
        // An empty plan's delta removes everything of the version named.
        let empty = served.answer(plan(10, []), since: 9, at: Self.now)
        #expect(empty.entries.isEmpty && empty.delta?.removed == ["a"])
    }

    @Test func aVersionAnsweredLessWhatFiredIsStillABase() {
        var served = ServedPlans()
        _ = served.answer(plan(3, [entry("a", at: 10), entry("b", at: 20)]), since: nil, at: Self.now)
        // Answered again after a fired: the same plan, less what fired. The fired one-off is
        // removed from a device that held it.
        let later = Self.now + 15 * 60
        _ = served.answer(plan(3, [entry("b", at: 20)]), since: nil, at: later)
        let delta = served.answer(plan(4, [entry("b", at: 20), entry("c", at: 30)]), since: 3, at: later)
        #expect(delta.entries.map(\.request.identifier) == ["c"] && delta.delta?.removed == ["a"])
    }

    @Test(arguments: [true, false])
    func aVersionThatNamedTwoPlansIsNeverABaseAgain(newerFirst: Bool) {
        // A step committed between reading the version and the rows: one answer of version 3
        // holds y, the other does not, in either order; or a one-off left before its instant.
        var served = ServedPlans()
        let older = plan(3, [entry("a", at: 10)])
        let newer = plan(3, [entry("a", at: 10), entry("y", at: 20)])
        for answered in newerFirst ? [newer, older] : [older, newer] {
            _ = served.answer(answered, since: nil, at: Self.now)
        }
        let next = plan(6, [entry("a", at: 10), entry("y", at: 20)])
        #expect(isWhole(served.answer(next, since: 3, at: Self.now), next))
        // Answered once more with either, it stays so.
        _ = served.answer(older, since: nil, at: Self.now)
        #expect(isWhole(served.answer(next, since: 3, at: Self.now), next))
    }

    @Test func theDigestIsTheSameWhateverTheOrderAndChangesWithAnyRequest() {
        let a = entry("a", at: 10)
        let b = entry("b", at: 20)
        #expect(digest(plan(1, [a, b])) == digest(plan(1, [b, a])))
        var moved = b
        moved.nextFireAt = moved.nextFireAt + 60
        var retitled = b
        retitled.request.content.title = "Later"
        for other in [moved, retitled] { #expect(digest(plan(1, [a, other])) != digest(plan(1, [a, b]))) }
        #expect(digest(plan(1, [])) == "0000000000000000")
    }
}
