import Delivery
import Foundation
import Models
import Testing

@testable import EngagementKit

/// Delta answers (`ServerPlan.since`): the kit merges one into the plan it holds and applies the
/// result as that whole plan, so a device ends where the whole plan would have taken it, and a
/// delta of a plan it does not hold in full changes nothing.
@Suite("EngagementKit: delta plans")
struct PlanDeltaTests {
    typealias Fixture = PlanSyncTests
    static let now = Fixture.now

    static func delta(
        _ version: Int, since: Int, _ entries: [ServerPlan.Entry], removed: [RequestID] = [],
        unreadable: [UnreadableRequest] = [], digest: String? = nil
    ) -> PlanAnswer {
        .plan(
            ServerPlan(
                version: version, timeZone: "Europe/Berlin", horizonEnd: nil, requests: entries, since: since,
                removed: removed, digest: digest, unreadable: unreadable))
    }

    static func digest(_ entries: [ServerPlan.Entry]) -> String {
        ServerPlan(version: 0, timeZone: "UTC", horizonEnd: nil, requests: entries).requestsDigest
    }

    /// A device holding version 3 of `held`, with nothing else pending.
    static func holding(_ held: [ServerPlan.Entry]) -> (SimulatedNotificationCenter, PlanSync) {
        var center = SimulatedNotificationCenter(timeZone: Fixture.berlin)
        var sync = PlanSync()
        _ = sync.apply(Fixture.plan(3, held), to: &center, at: now)
        return (center, sync)
    }

    static let held = [
        Fixture.entry("a", in: 60), Fixture.entry("b", in: 120), Fixture.entry("c", in: 180),
        Fixture.entry("s", in: 240, title: "Water", repeats: true),
    ]

    @Test func aDeltaTakesTheDeviceWhereTheWholePlanWould() {
        let whole = [
            Fixture.entry("b", in: 90, title: "Moved"), Fixture.entry("c", in: 180), Fixture.entry("d", in: 200),
            Fixture.entry("s", in: 240, title: "Water", repeats: true),
        ]
        var (wholeCenter, wholeSync) = Self.holding(Self.held)
        var (deltaCenter, deltaSync) = Self.holding(Self.held)
        let pull = deltaSync.startPull()
        #expect(pull.since == 3 && pull.heldVersion == 3)
        let later = Self.now + 600
        let byWhole = wholeSync.apply(Fixture.plan(5, whole), to: &wholeCenter, at: later)
        let byDelta = deltaSync.apply(
            Self.delta(5, since: 3, [whole[0], whole[2]], removed: ["a"], digest: Self.digest(whole)),
            to: &deltaCenter, at: later, answering: pull)
        #expect(byDelta == byWhole)
        #expect(deltaCenter.pendingNotificationRequests == wholeCenter.pendingNotificationRequests)
        #expect(deltaSync.state == wholeSync.state)
        #expect(deltaSync.state.plan == whole && deltaSync.state.version == 5)
        #expect(deltaSync.startPull().since == 5)
    }

    @Test func aDeltaOfAPlanNotHeldInFullChangesNothing() {
        var (center, sync) = Self.holding(Self.held)
        let before = (center.pendingNotificationRequests, sync.state)
        // Of another version than the one held.
        let other = sync.apply(Self.delta(5, since: 2, [Fixture.entry("d", in: 30)]), to: &center, at: Self.now)
        #expect(other == .refusedDelta(held: 3, since: 2))
        // Of the version held, but not the one the pull named: another answer came between.
        let stale = PlanPull(heldVersion: 1, lastApplied: 1, since: 1)
        let overtaken = sync.apply(
            Self.delta(5, since: 3, [Fixture.entry("d", in: 30)]), to: &center, at: Self.now, answering: stale)
        #expect(overtaken == .refusedDelta(held: 3, since: 3))
        #expect(center.pendingNotificationRequests == before.0 && sync.state == before.1)
        // A state an earlier build kept holds the version but not its plan: no delta is asked
        // for, and one that comes anyway is refused.
        var earlier = PlanSync(state: PlanSyncState(version: 3, owned: ["a"]))
        #expect(earlier.startPull().since == nil && earlier.startPull().heldVersion == 3)
        #expect(
            earlier.apply(Self.delta(5, since: 3, []), to: &center, at: Self.now) == .refusedDelta(held: 3, since: 3))
    }

    @Test func aDeltaWhoseMergeIsNotThePlanItsDigestNamesIsRefusedAndTheNextPullIsWhole() {
        var (center, sync) = Self.holding(Self.held)
        let before = (center.pendingNotificationRequests, sync.state.version)
        // The server's copy of version 3 did not hold c: its delta does not remove it.
        let servers = [Fixture.entry("a", in: 60), Fixture.entry("b", in: 120), Fixture.entry("d", in: 200)]
        let outcome = sync.apply(
            Self.delta(5, since: 3, [servers[2]], removed: ["s"], digest: Self.digest(servers)), to: &center,
            at: Self.now)
        #expect(outcome == .refusedDelta(held: 3, since: 3))
        #expect(center.pendingNotificationRequests == before.0 && sync.state.version == before.1)
        #expect(sync.state.plan == nil && sync.startPull().since == nil && sync.startPull().heldVersion == 3)
    }

    @Test func aSecondAnswerToTheSameVersionIsHeldAlready() {
        var (center, sync) = Self.holding(Self.held)
        let pull = sync.startPull()
        let added = [Fixture.entry("d", in: 200)]
        let answer = Self.delta(5, since: 3, added, digest: Self.digest(Self.held + added))
        guard case .applied = sync.apply(answer, to: &center, at: Self.now, answering: pull) else {
            Issue.record("expected applied")
            return
        }
        #expect(sync.apply(answer, to: &center, at: Self.now, answering: pull) == .unchanged)
        // The same version with another plan (another server process's copy): not held after
        // all; the next pull asks for the whole plan.
        let other = Self.delta(5, since: 3, added, digest: Self.digest(added))
        #expect(sync.apply(other, to: &center, at: Self.now, answering: pull) == .refusedDelta(held: 5, since: 3))
        #expect(sync.state.version == nil && sync.state.plan == nil && sync.startPull().since == nil)
    }

    @Test func aWholePlanThatMissesItsDigestIsAppliedButNotKeptForDeltas() {
        var center = SimulatedNotificationCenter(timeZone: Fixture.berlin)
        var sync = PlanSync()
        let plan = ServerPlan(
            version: 3, timeZone: "Europe/Berlin", horizonEnd: nil, requests: Self.held, digest: "0000000000000001")
        _ = sync.apply(.plan(plan), to: &center, at: Self.now)
        #expect(Fixture.pendingIDs(center) == Set(Self.held.map(\.request.identifier)))
        #expect(sync.state.version == 3 && sync.state.plan == nil && sync.startPull().since == nil)
    }

    @Test func aDeltaWithAnUnreadableRequestLeavesTheVersionUntakenSoTheNextPullIsWhole() {
        var (center, sync) = Self.holding(Self.held)
        let unreadable = UnreadableRequest(identifier: "b", reason: "kind: \"newKind\"")
        let outcome = sync.apply(Self.delta(5, since: 3, [], unreadable: [unreadable]), to: &center, at: Self.now)
        guard case .applied(let made, _, _) = outcome else {
            Issue.record("expected applied, got \(outcome)")
            return
        }
        // The request it replaced is not kept: the server no longer plans it as it was.
        #expect(made.remove == ["b"])
        #expect(sync.state.version == nil && sync.state.plan == nil && sync.state.lastApplied == 5)
        #expect(sync.startPull().since == nil)
    }

    @Test func aSeriesWhoseInstantPassedIsOrderedAtItsNextMatch() throws {
        // 07:00 UTC, 08:00 in Berlin, every day.
        let series = Fixture.entry("s", in: 60, title: "Water", repeats: true)
        var (center, sync) = Self.holding([series, Fixture.entry("x", in: 600)])
        let later = Self.now + 90 * 60
        _ = sync.apply(Self.delta(5, since: 3, [Fixture.entry("y", in: 100)]), to: &center, at: later)
        let plan = try #require(sync.state.plan)
        #expect(plan.map(\.request.identifier) == ["y", "x", "s"])
        #expect(plan.last?.nextFireAt == Self.now + 60 * 60 + 86_400)
    }

    @Test func theKeptPlanSurvivesTheAppBeingKilledAndOneItCannotReadIsDropped() throws {
        let (_, sync) = Self.holding(Self.held)
        let bytes = try JSONEncoder().encode(sync.state)
        let read = try JSONDecoder().decode(PlanSyncState.self, from: bytes)
        #expect(read == sync.state && read.plan == Self.held)
        // A kind a later build wrote that this one does not know: no plan kept, the rest reads.
        let text = String(decoding: bytes, as: UTF8.self).replacingOccurrences(
            of: #""kind":"mealReminder""#, with: #""kind":"futureKind""#)
        let unknown = try JSONDecoder().decode(PlanSyncState.self, from: Data(text.utf8))
        #expect(unknown.plan == nil && unknown.version == 3 && unknown.owned == sync.state.owned)
    }

    @Test func aDeltaIsReadWithWhatItRemovesAndABadOneIsRefusedByField() throws {
        func body(_ tail: String) -> Data {
            Data(#"{"version":5,"timeZone":"Europe/Berlin","horizonEnd":null,"requests":[]\#(tail)}"#.utf8)
        }
        let delta = try ServerPlan.decode(body(#","since":3,"removed":["a","b"]"#))
        #expect(delta.since == 3 && delta.removed == ["a", "b"])
        let whole = try ServerPlan.decode(body(""))
        #expect(whole.since == nil && whole.removed.isEmpty)
        let digested = try ServerPlan.decode(body(#","since":3,"removed":[],"digest":"00ff00ff00ff00ff""#))
        #expect(digested.digest == "00ff00ff00ff00ff")
        for (tail, field) in [
            (#","digest":"00FF00FF00FF00FF""#, "digest"), (#","digest":"abc""#, "digest"),
            (#","since":-1,"removed":[]"#, "since"), (#","since":3"#, "removed"),
            (#","since":3,"removed":["a",""]"#, "removed.1"), (#","since":"3","removed":[]"#, "since"),
        ] {
            do {
                _ = try ServerPlan.decode(body(tail))
                Issue.record("read \(tail)")
            } catch {
                #expect(error.field == field, "\(tail)")
            }
        }
    }
}
