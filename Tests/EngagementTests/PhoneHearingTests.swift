import Models
import Scheduling
import TestSupport
import Testing

@testable import Engagement

/// A server's engine and a phone that stops hearing: once the phone has not pulled a change it
/// was to hear of by then (`PlanState.phoneHearsBy`), everything it holds is committed until it
/// pulls again (`UserEngine.effectiveHearing`).
@Suite("Phone hearing")
struct PhoneHearingTests {
    let t0 = instant("2027-03-01T07:00:00Z")

    /// An engine that planned at `t0` and whose phone pulled that plan.
    func servedEngine() -> UserEngine {
        engineWithPulledPlan(in: ZoneRules(identifier: "Europe/London")!, at: t0)
    }

    static func localPlan(_ engine: UserEngine) -> [(requestID: RequestID, fireAt: Instant)] {
        engine.planned.filter { ChannelPolicy.channel(for: $0.kind) == .local }.map {
            (requestID: $0.id.requestID, fireAt: $0.fireAt)
        }
    }

    /// A backend step at `at` that moves the local plan: the first local kind planned is
    /// switched off.
    static func switchOffFirstLocalKind(_ engine: inout UserEngine, at: Instant, hearsBy: Instant) {
        let kind = engine.planned.first { ChannelPolicy.channel(for: $0.kind) == .local }!.kind
        var preferences = engine.profile.preferences
        preferences.settings[kind] = .disabled
        let before = engine.localPlanRevision
        _ = engine.handle(.preferencesChanged(preferences), at: at, phone: .by(hearsBy))
        #expect(engine.localPlanRevision != before, "switching \(kind) off moves the local plan")
    }

    @Test func aChangeNotPulledByItsHearingTimeMakesThePhoneHearOnlyWhenItPulls() {
        var engine = servedEngine()
        let changedAt = t0 + 600
        let hearsBy = changedAt + 1_800
        Self.switchOffFirstLocalKind(&engine, at: changedAt, hearsBy: hearsBy)
        #expect(engine.state.plan.phoneHearsBy == hearsBy)

        // Before then a later change is heard of with the first, whose sync is never postponed;
        // after it, the phone is taken as not hearing.
        let later = hearsBy + 60
        #expect(engine.effectiveHearing(.by(later + 1_800), at: hearsBy - 1) == .by(hearsBy))
        #expect(engine.effectiveHearing(.by(hearsBy - 10), at: hearsBy - 20) == .by(hearsBy - 10))
        #expect(engine.effectiveHearing(.by(later + 1_800), at: later) == .whenItPulls)
        // The phone's own input is answered with the plan's version: it hears at once.
        #expect(engine.effectiveHearing(.atOnce, at: later) == .atOnce)

        // A pass then commits what the phone holds beyond the runtime's bound, and says so.
        _ = engine.handle(.activity(.moodLogged), at: later, phone: .by(later + 1_800))
        #expect(engine.state.plan.lastPassPhone == .whenItPulls)
        let beyondBound = engine.state.plan.phoneHolds.entries.filter { $0.value >= later + 1_800 }
        #expect(!beyondBound.isEmpty, "the phone holds requests past the bound")
        let committed = engine.committed(at: later, phone: .whenItPulls)
        #expect(beyondBound.allSatisfy { committed[$0.id] == $0.value })

        // A later change keeps the first unpulled change's time.
        Self.switchOffFirstLocalKind(&engine, at: later + 120, hearsBy: later + 4_000)
        #expect(engine.state.plan.phoneHearsBy == hearsBy)
    }

    @Test func aPullMakesThePhoneHearAgainEvenWhenItHoldsTheSame() {
        var engine = servedEngine()
        let hearsBy = t0 + 2_400
        Self.switchOffFirstLocalKind(&engine, at: t0 + 600, hearsBy: hearsBy)
        let later = hearsBy + 60
        let held = engine.state.plan.phoneHolds.entries.map { (requestID: $0.id.requestID, fireAt: $0.value) }
        // Same holds: the engine still changed, since the phone is heard from again.
        let heardAgain = engine.phoneApplied(held, at: later)
        #expect(heardAgain)
        #expect(engine.state.plan.phoneHearsBy == nil)
        #expect(engine.effectiveHearing(.by(later + 1_800), at: later) == .by(later + 1_800))
        let changedAgain = engine.phoneApplied(held, at: later + 1)
        #expect(!changedAgain, "nothing changed the second time")
    }

    @Test func thePhonesOwnStepsAndAPhoneThatHoldsNothingSetNoHearingTime() {
        var engine = servedEngine()
        let kind = engine.planned.first { ChannelPolicy.channel(for: $0.kind) == .local }!.kind
        var preferences = engine.profile.preferences
        preferences.settings[kind] = .disabled
        _ = engine.handle(.preferencesChanged(preferences), at: t0 + 600, phone: .atOnce)
        #expect(engine.state.plan.phoneHearsBy == nil, "the phone's own input is answered at once")

        var deviceEngine = UserEngine(
            profile: makeProfile(), zone: ZoneRules(identifier: "Europe/London")!, now: t0,
            configuration: .withoutAttentionBudget)
        _ = deviceEngine.handle(.appLaunched, at: t0)
        Self.switchOffFirstLocalKind(&deviceEngine, at: t0 + 600, hearsBy: t0 + 2_400)
        #expect(deviceEngine.state.plan.phoneHearsBy == nil, "no phone holds anything: nothing to commit")
    }

    @Test func aMissedSyncPlansAgainAtOnceWithEverythingHeldCommitted() {
        var engine = servedEngine()
        // Nothing unpulled: the phone holds the current plan, a missed sync changes nothing.
        let revision = engine.localPlanRevision
        let untouched = engine.handle(.syncMissed, at: t0 + 300, phone: .by(t0 + 2_100))
        #expect(!untouched.contains { if case .schedule = $0 { true } else { false } })
        #expect(engine.localPlanRevision == revision)
        #expect(engine.state.plan.phoneHearsBy == nil)

        let hearsBy = t0 + 2_400
        Self.switchOffFirstLocalKind(&engine, at: t0 + 600, hearsBy: hearsBy)
        let missedAt = t0 + 900
        _ = engine.handle(.syncMissed, at: missedAt, phone: .by(missedAt + 1_800))
        #expect(engine.state.plan.phoneHearsBy == missedAt, "the phone hears only when it pulls, from now")
        #expect(engine.state.plan.lastPassPhone == .whenItPulls)
        #expect(engine.state.plan.lastKey?.committed == engine.committed(at: missedAt, phone: .whenItPulls))
        // Every later step, until the pull, keeps it so.
        #expect(engine.effectiveHearing(.by(missedAt + 1_800), at: missedAt + 1) == .whenItPulls)
    }

    @Test func aCopyThePlanDroppedButThePhoneStillHeldFiredAndCounts() {
        // A backend step drops the first local request, for the phone to hear of by a sync
        // before it is due. The sync comes late: the phone never pulls before its time.
        var engine = servedEngine()
        let first = engine.planned.first {
            ChannelPolicy.channel(for: $0.kind) == .local && !$0.repeatsDaily && $0.fireAt > t0 + 3_600
        }!
        let hearsBy = first.fireAt - 600
        var preferences = engine.profile.preferences
        preferences.settings[first.kind] = .disabled
        _ = engine.handle(.preferencesChanged(preferences), at: first.fireAt - 1_200, phone: .by(hearsBy))
        #expect(!engine.planned.contains { $0.id == first.id })
        #expect(engine.state.plan.phoneHolds[first.id] == first.fireAt)
        // At the next input after its time, the copy the phone held is history for the caps.
        _ = engine.handle(.activity(.moodLogged), at: first.fireAt + 60, phone: .atOnce)
        #expect(engine.state.plan.fired[first.id] == first.fireAt)
        #expect(engine.state.plan.ledger.instants.contains(first.fireAt.secondsSinceEpoch))
        #expect(engine.state.plan.phoneHolds[first.id] == nil)

        // Had the phone pulled before its time, it would not hold it, and nothing is counted.
        var heard = servedEngine()
        _ = heard.handle(.preferencesChanged(preferences), at: first.fireAt - 1_200, phone: .by(hearsBy))
        heard.phoneApplied(Self.localPlan(heard), at: hearsBy)
        _ = heard.handle(.activity(.moodLogged), at: first.fireAt + 60, phone: .atOnce)
        #expect(heard.state.plan.fired[first.id] == nil)
        #expect(!heard.state.plan.ledger.instants.contains(first.fireAt.secondsSinceEpoch))
    }

    @Test func aRequestPlannedWhileThePhoneCouldNotHearAndDueBeforeItPulledNeverShowed() {
        // The phone pulls a plan without meal reminders; the backend turns them back on, for
        // the phone to hear of by a sync it never gets: it does not pull before they are due.
        var engine = servedEngine()
        var off = engine.profile.preferences
        off.settings[.mealReminder] = .disabled
        _ = engine.handle(.preferencesChanged(off), at: t0 + 60, phone: .atOnce)
        engine.phoneApplied(Self.localPlan(engine), at: t0 + 60)
        var on = off
        on.settings[.mealReminder] = nil
        _ = engine.handle(.preferencesChanged(on), at: t0 + 120, phone: .by(t0 + 1_800))
        let meal = engine.planned.first { $0.kind == .mealReminder && $0.fireAt > t0 + 1_800 }!
        #expect(engine.state.plan.phoneHearsBy != nil)
        let effects = engine.handle(.activity(.moodLogged), at: meal.fireAt + 60, phone: .atOnce)
        // Dropped as stale, never planned again, and out of the caps' ledger.
        #expect(effects.traces.contains { $0.requestID == meal.id.description && $0.decision == .dropped })
        #expect(engine.state.plan.fired[meal.id] == meal.fireAt)
        #expect(!engine.state.plan.ledger.instants.contains(meal.fireAt.secondsSinceEpoch))
    }

    @Test func theSnapshotKeepsWhenThePhoneWasToHear() throws {
        var engine = servedEngine()
        let hearsBy = t0 + 2_400
        Self.switchOffFirstLocalKind(&engine, at: t0 + 600, hearsBy: hearsBy)
        let restored = try UserEngine(
            restoring: engine.snapshot(), profile: engine.profile, zone: engine.zone, content: bundledContent)
        #expect(restored.state.plan.phoneHearsBy == hearsBy)
        #expect(restored.effectiveHearing(.by(hearsBy + 4_000), at: hearsBy + 60) == .whenItPulls)
        // A version 7 snapshot cannot hold it: the phone is taken to hear.
        let older = try UserEngine(
            restoring: engine.snapshot(version: 7), profile: engine.profile, zone: engine.zone,
            content: bundledContent)
        #expect(older.state.plan.phoneHearsBy == nil)
    }

    /// A pull that changes what the phone holds keeps the last pass's key: the next input plans
    /// again only when that changes what it takes as committed or held, and the plan is the one a
    /// full pass makes. A snapshot taken before that input keeps what the phone held at the pass
    /// (version 9), so the restored engine rebuilds the same key and decides the same; an older
    /// version cannot, and its reader plans afresh, to the same plan.
    @Test func aPullThatChangesTheHoldsKeepsTheKeyAndASnapshotRebuildsIt() throws {
        var engine = servedEngine()
        Self.switchOffFirstLocalKind(&engine, at: t0 + 600, hearsBy: t0 + 2_400)
        let passAt = try #require(engine.lastPlanPassAt)
        let heldAtPass = engine.state.plan.phoneHolds
        let holdsChanged = engine.phoneApplied(Self.localPlan(engine), at: t0 + 900)
        #expect(holdsChanged)
        #expect(engine.planIsSettled, "the key is kept")
        #expect(engine.lastPlanPassAt == passAt)
        #expect(engine.state.plan.holdsAtLastPass == heldAtPass)

        func restore(version: UInt64) throws -> UserEngine {
            try UserEngine(
                restoring: engine.snapshot(version: version), profile: engine.profile, zone: engine.zone,
                configuration: engine.configuration, content: bundledContent)
        }
        var restored = try restore(version: EngineSnapshot.version)
        #expect(restored.lastPlanPassAt == passAt)
        // Rebuilt from what the phone held at the pass, not from what it holds now.
        #expect(restored.state.plan.lastKey?.committed == engine.state.plan.lastKey?.committed)
        #expect(restored.state.plan.lastKey?.heldLater == engine.state.plan.lastKey?.heldLater)
        var older = try restore(version: 8)
        #expect(older.lastPlanPassAt == nil, "a version 8 snapshot stores no pass")

        var original = engine
        let at = t0 + 1_000
        let expected = original.handle(.activity(.moodLogged), at: at, phone: .whenItPulls)
        #expect(restored.handle(.activity(.moodLogged), at: at, phone: .whenItPulls) == expected)
        let afresh = older.handle(.activity(.moodLogged), at: at, phone: .whenItPulls)
        #expect(afresh.filter(\.changesThePlan) == expected.filter(\.changesThePlan))
        #expect(older.planned == original.planned)
        #expect(original.fullReplanChanges(at: at, phone: .whenItPulls).isEmpty)
        #expect(restored.snapshot() == original.snapshot())
    }
}
