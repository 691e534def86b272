import Engagement
import Models
import Storage
import TestSupport
import Testing

@testable import Runtime

/// The early sync: a backend step that withdraws by the user's intent what the phone holds and
/// fires before the next slot's sync reaches it sends that slot's sync now
/// (`SilentPushPlan.earlyRows`), inside the budget, and books the slot after it.
@Suite("Early sync")
struct EarlySyncTests {
    static let created = Instant(iso8601: "2027-03-01T18:00:00Z")!
    static let plan = SilentPushPlan()

    // MARK: - The plan's rule

    /// The history of a user whose syncs of the slots in `sent` (relative to the next slot after
    /// `now`) were completed.
    static func history(_ sent: Set<Int64>, after now: Instant, plan: SilentPushPlan = plan)
        -> SilentPushPlan.SyncHistory
    {
        let next = plan.slot(after: now)
        return SilentPushPlan.SyncHistory(
            pending: [], completed: Set(sent.map { plan.row(for: "u1", dueAt: next + $0 * plan.slotSeconds).key }))
    }

    @Test func theEarlySyncTakesTheNextSlotsKeyDueNowAndBooksTheSlotAfter() throws {
        let now = Instant(secondsSinceEpoch: 100 * Self.plan.slotSeconds + 700)
        let next = Self.plan.slot(after: now)
        let rows = try #require(Self.plan.earlyRows(for: "u1", changedAt: now, history: Self.history([], after: now)))
        #expect(rows.map(\.dueAt) == [now, next + Self.plan.slotSeconds])
        #expect(rows[0].key == Self.plan.row(for: "u1", dueAt: next).key)
        #expect(rows[0].requestID == SilentPushPlan.requestID(forSlot: next))
        #expect(rows[1] == Self.plan.row(for: "u1", dueAt: next + Self.plan.slotSeconds))
        #expect(Self.plan.isEarly(rows[0]) && !Self.plan.isEarly(rows[1]))
        #expect(
            Self.plan.historyKeys(for: "u1", changedAt: now)
                == [0, 1, 2].map { Self.plan.row(for: "u1", dueAt: next - $0 * Self.plan.slotSeconds).key })
    }

    @Test func aChangeOnASlotsInstantIsEarlyForTheSlotAfter() throws {
        let now = Instant(secondsSinceEpoch: 100 * Self.plan.slotSeconds)
        let rows = try #require(Self.plan.earlyRows(for: "u1", changedAt: now, history: Self.history([], after: now)))
        #expect(rows[0].dueAt == now && Self.plan.isEarly(rows[0]))
        #expect(SilentPushPlan.slot(of: rows[0].requestID) == now + Self.plan.slotSeconds)
    }

    @Test(
        "The budget: room while fewer than perHour of the slots before were sent, none once the next was",
        arguments: [
            ([], true), ([-1], true), ([-2], true), ([-3, -4], true), ([-1, -2], false), ([0], false),
            ([-3, -2, -1], false),
        ] as [(Set<Int64>, Bool)])
    func theBudget(sent: Set<Int64>, early: Bool) throws {
        let now = Instant(secondsSinceEpoch: 100 * Self.plan.slotSeconds + 1)
        let rows = Self.plan.earlyRows(for: "u1", changedAt: now, history: Self.history(sent, after: now))
        #expect((rows != nil) == early)
    }

    @Test func aRowPendingPastItsSlotTakesItAndOneStillAheadOrAnotherUsersDoesNot() {
        let now = Instant(secondsSinceEpoch: 100 * Self.plan.slotSeconds + 10)
        let next = Self.plan.slot(after: now)
        let last = Self.plan.row(for: "u1", dueAt: next - Self.plan.slotSeconds)
        let before = Self.plan.row(for: "u1", dueAt: next - 2 * Self.plan.slotSeconds)
        func early(pending: [OutboxRow], completed: Set<OutboxKey> = []) -> Bool {
            Self.plan.earlyRows(
                for: "u1", changedAt: now, history: SilentPushPlan.SyncHistory(pending: pending, completed: completed))
                != nil
        }
        #expect(!early(pending: [last], completed: [before.key]))
        #expect(early(pending: [], completed: [before.key]))
        var theirs = last
        theirs.userID = "u2"
        #expect(early(pending: [theirs], completed: [before.key]))
        #expect(early(pending: [Self.plan.row(for: "u1", dueAt: next)], completed: [before.key]))
    }

    /// Whatever the sends before it, an early sync the rule allows, the booked slot and the grid
    /// after it keep at most `perHour` sends in any hour, at any instant in the slot, each grid
    /// send as late as its grace allows.
    @Test func noHourEverHoldsMoreThanPerHourSends() {
        for plan in [SilentPushPlan(), SilentPushPlan(perHour: 3, graceSeconds: 600), SilentPushPlan(perHour: 1)] {
            let base = Instant(secondsSinceEpoch: 1_000 * plan.slotSeconds)
            for history in 0..<(1 << (plan.perHour + 1)) {
                let sent = Set((0...plan.perHour).filter { history & (1 << $0) != 0 }.map { -Int64($0) - 1 })
                for offset in stride(from: Int64(0), to: plan.slotSeconds, by: 97) {
                    let now = base + offset
                    guard
                        let rows = plan.earlyRows(
                            for: "u1", changedAt: now, history: Self.history(sent, after: now, plan: plan))
                    else { continue }
                    let next = plan.slot(after: now)
                    var sends = sent.map { next + $0 * plan.slotSeconds + plan.graceSeconds }
                    sends += rows.map { $0.dueAt == now ? now : $0.dueAt + plan.graceSeconds }
                    sends += (Int64(2)...4).map { next + $0 * plan.slotSeconds + plan.graceSeconds }
                    for send in sends {
                        #expect(
                            sends.count { $0 <= send && send - $0 < 3_600 } <= plan.perHour,
                            "perHour \(plan.perHour), \(offset) s into the slot, sent \(sent)")
                    }
                }
            }
        }
    }

    @Test func anEarlySyncsGraceRunsFromItsSlotAndWhatFollowsItIsTheSlotAfter() throws {
        let now = Instant(secondsSinceEpoch: 100 * Self.plan.slotSeconds + 100)
        let next = Self.plan.slot(after: now)
        let early = try #require(
            Self.plan.earlyRows(for: "u1", changedAt: now, history: Self.history([], after: now))?.first)
        // Dispatched late, still before its slot's grace ends: sent.
        #expect(Self.plan.isSendable(early, at: next + Self.plan.graceSeconds))
        #expect(!Self.plan.isSendable(early, at: next + Self.plan.graceSeconds + 1))
        let later = next + Self.plan.slotSeconds
        #expect(
            OutboxSteps.step(for: early, zone: nil, silentPushes: Self.plan, at: now + 900) == .send)
        #expect(
            OutboxSteps.step(for: early, zone: nil, silentPushes: Self.plan, at: next + 61)
                == .moveSync(next: Self.plan.row(for: "u1", dueAt: later)))
        // Failed, it is followed by the slot after its own, never by its own key.
        let followUp = OutboxSteps.afterSend(
            early, report: .failed(reason: "Timeout"), zone: nil, silentPushes: Self.plan, at: now + 5)
        #expect(followUp.badgeSync == Self.plan.row(for: "u1", dueAt: later))
    }

    // MARK: - The runtime

    /// A user whose phone was served its plan (or not), with the clock `before` seconds ahead of
    /// the first meal reminder it holds.
    func launched(served: Bool = true, before: Int64 = 300) async throws -> (
        EngineRuntime, InMemoryEngagementStore, ManualClock, held: LocalPlan.Entry
    ) {
        let store = InMemoryEngagementStore()
        let clock = ManualClock(Self.created)
        let runtime = EngineRuntime(store: store, clock: clock, content: bundledContent)
        try await runtime.putUser(profile(zone: "Europe/Berlin"))
        let plan = try await runtime.localPlan(of: "u1")
        let held = try #require(plan.entries.first { $0.request.identifier.rawValue.hasPrefix("mealReminder.") })
        if served { try await runtime.phoneWasServed(plan, userID: "u1") }
        clock.advance(by: held.nextFireAt - before - Self.created)
        return (runtime, store, clock, held)
    }

    /// The backend turns meal reminders off.
    func disableMealReminders(_ runtime: EngineRuntime) async throws {
        var user = profile(zone: "Europe/Berlin")
        user.preferences.settings[.mealReminder] = .disabled
        try await runtime.putUser(user)
    }

    static func syncRows(_ store: InMemoryEngagementStore) throws -> [OutboxRow] {
        try store.pendingOutbox(userID: "u1").filter { $0.channel == .silent }
    }

    @Test func aKindTurnedOffWhileThePhoneHoldsItsReminderIsSyncedNow() async throws {
        let (runtime, store, clock, _) = try await launched()
        try await disableMealReminders(runtime)
        let next = Self.plan.slot(after: clock.now())
        let early = Self.plan.row(for: "u1", dueAt: next)
        #expect(try Self.syncRows(store).map(\.dueAt) == [clock.now(), next + Self.plan.slotSeconds])
        #expect(try Self.syncRows(store).first?.key == early.key)
    }

    @Test(
        "Nothing the phone fires before it hears, or no room in the budget: the next slot",
        arguments: ["not served", "far ahead", "budget spent"])
    func theGridOtherwise(_ situation: String) async throws {
        let (runtime, store, clock, _) = try await launched(
            served: situation != "not served", before: situation == "far ahead" ? 4 * 3_600 : 300)
        let next = Self.plan.slot(after: clock.now())
        if situation == "budget spent" {
            let sent = [next - Self.plan.slotSeconds, next - 2 * Self.plan.slotSeconds].map {
                Self.plan.row(for: "u1", dueAt: $0).key
            }
            try store.completeOutbox(keys: sent, at: clock.now() - 600)
        }
        try await disableMealReminders(runtime)
        #expect(try Self.syncRows(store).map(\.dueAt) == [next])
    }

    @Test func aStepFromOneOfTheUsersPhonesTellsTheOtherAtTheSlot() async throws {
        let (runtime, store, clock, _) = try await launched()
        for token in ["a", "b"] {
            _ = try await runtime.registerDevice(
                token: String(repeating: token, count: 64), environment: .production, platform: "ios", for: "u1")
        }
        var preferences = profile(zone: "Europe/Berlin").preferences
        preferences.settings[.mealReminder] = .disabled
        try await runtime.apply(.preferencesChanged(preferences), to: "u1", from: .device)
        #expect(try Self.syncRows(store).map(\.dueAt) == [Self.plan.slot(after: clock.now())])
    }

    @Test func aChangeAfterTheEarlySyncIsHeardByTheBookedSlot() async throws {
        let (runtime, store, clock, _) = try await launched()
        try await disableMealReminders(runtime)
        let early = try #require(try Self.syncRows(store).first)
        try store.completeOutbox(keys: [early.key], at: clock.now())
        // Still before the slot the early sync took.
        clock.advance(by: min(60, Self.plan.slot(after: clock.now()) - clock.now() - 1))
        // A later change before the slot asks for the slot's key, which is done: the booked row
        // stays, and the phone hears of the change by it.
        let before = try await runtime.localPlanVersion(of: "u1")
        var silent = profile(zone: "Europe/Berlin")
        for kind in NotificationKind.allCases { silent.preferences.settings[kind] = .disabled }
        try await runtime.putUser(silent)
        #expect(try await runtime.localPlanVersion(of: "u1") > before)
        let next = Self.plan.slot(after: clock.now())
        #expect(try Self.syncRows(store).map(\.dueAt) == [next + Self.plan.slotSeconds])
    }
}
