import Models
import Scheduling
import Testing

@testable import Engagement

/// The plan's unchanged-inputs check reads the state in place (`lastKeyMatches`); it
/// must answer what comparing a freshly built `PlanKey` answers, whatever the user does.
@Suite struct PlanKeyMatchTests {
    let zone = ZoneRules(identifier: "America/New_York")!
    let start = Instant(iso8601: "2027-03-10T08:00:00-05:00")!

    /// `PlanKey`'s fields: a new one must be compared in `lastKeyMatches` too (then
    /// this count changes with it), and be a `PlanPassCause` of its own name.
    @Test func theMatcherKnowsEveryField() {
        let engine = UserEngine(
            profile: UserProfile(id: "u1", displayName: "Ana", timeZone: zone.identifier), zone: zone, now: start)
        var copy = engine
        let key = copy.planKey(at: start, horizonEnd: copy.routineHorizonEnd(at: start))
        let fields = Mirror(reflecting: key).children.compactMap(\.label)
        #expect(fields.count == 17)
        #expect(fields.allSatisfy { PlanPassCause(rawValue: $0) != nil }, "\(fields)")
    }

    /// Each field of the kept key is compared: the key of the last pass matches, and the same key
    /// with any one field changed does not.
    @Test func eachFieldOfTheKeptKeyIsCompared() throws {
        var engine = UserEngine(
            profile: UserProfile(id: "u1", displayName: "Ana", timeZone: zone.identifier), zone: zone, now: start)
        _ = engine.handle(.appLaunched, at: start)
        let now = start + 600
        _ = engine.handle(
            .socialEvent(
                SocialEvent(id: "s1", kind: .workoutKudos, actorName: "Ben", topic: "run", isMutualFriend: true)),
            at: now)
        let horizonEnd = engine.routineHorizonEnd(at: now)
        var unchanged = engine
        let matchesItsOwnKey = unchanged.lastKeyMatches(at: now, horizonEnd: horizonEnd)
        #expect(matchesItsOwnKey)
        let key = try #require(engine.state.plan.lastKey)
        #expect(!key.groups.isEmpty, "a group to take away")
        let other = Candidate(
            id: OccurrenceID(.hydration, date: LocalDate(year: 2027, month: 3, day: 11), .minuteOfDay(600)),
            kind: .hydration, plannedAt: start, level: .active, policy: .standard(for: .hydration))
        let edits: [(field: String, edit: (inout PlanKey) -> Void)] = [
            ("profileRevision", { $0.profileRevision += 1 }),
            ("lapseStage", { $0.lapseStage = $0.lapseStage == .active ? .lapsed : .active }),
            ("horizonEnd", { $0.horizonEnd = $0.horizonEnd + 1 }),
            ("streakAtRiskDay", { $0.streakAtRiskDay = ($0.streakAtRiskDay ?? 0) + 1 }),
            ("zone", { $0.zone = "America/Toronto" }),
            ("sessionHold", { $0.sessionHold = $0.sessionHold == nil ? now : nil }),
            ("reEngagementTimes", { $0.reEngagementTimes.append(1) }),
            ("lastWorkout", { $0.lastWorkout = $0.lastWorkout == nil ? LocalDateTime(localSeconds: 0) : nil }),
            ("timing", { $0.timing.append(TimingRule(slot: LearningSlot(.hydration), hour: 9, adjustment: .keep)) }),
            ("snoozed", { $0.snoozed.append(other) }),
            ("followUps", { $0.followUps.append(other) }),
            ("groups", { $0.groups.removeLast() }),
            ("done", { $0.done[other.id] = now }),
            ("deviceRefuses", { $0.deviceRefuses.toggle() }),
            ("budgetResponses", { $0.budgetResponses = $0.budgetResponses == nil ? ResponseStats() : nil }),
            ("committed", { $0.committed[other.id] = now + 60 }),
            ("heldLater", { $0.heldLater[other.id] = now + 60 }),
        ]
        #expect(edits.map(\.field) == Mirror(reflecting: key).children.map(\.label))
        for (field, edit) in edits {
            var probe = engine
            edit(&probe.state.plan.lastKey!)
            let matches = probe.lastKeyMatches(at: now, horizonEnd: horizonEnd, exactly: true)
            #expect(!matches, "\(field)")
        }
    }

    @Test(arguments: [1, 2, 3] as [UInt64])
    func theMatcherAgreesWithTheKeyUnderRandomInputs(seed: UInt64) {
        var generator = SeededGenerator(seed: seed)
        // Apart from the inputs' draws, so the stream of inputs is the one tuned to move every field.
        var phoneDraws = SeededGenerator(seed: seed &+ 1_000)
        var profile = UserProfile(id: "u\(seed)", displayName: "Ana Lima", timeZone: zone.identifier)
        // A budget, so the response counts it orders by are part of the key.
        profile.preferences.interruptionBudgetPerDay = 6
        profile.preferences.workoutSchedule = [
            ScheduledWorkout(weekday: .wednesday, time: LocalTimeOfDay(hour: 18, minute: 0)!, type: "Run")
        ]
        var engine = UserEngine(profile: profile, zone: zone, now: start)
        var now = start
        _ = engine.handle(.appLaunched, at: now)
        var agreedUnchanged = 0
        var agreedChanged = 0
        // How often each field differed from the key asked against: every one must, or a
        // matcher that skipped it would pass.
        var differed: [String: Int] = [:]
        // Keys kept at earlier steps: asked against an older key, most fields have moved on.
        var earlierKeys: [PlanKey?] = []
        var soundOn = true
        for step in 0..<800 {
            // Now and then days without a word (the lapse stages), else up to an hour and a half.
            now =
                now + Int64(generator.next() % 12 == 0 ? 86_400 * (3 + generator.next() % 6) : generator.next() % 5_400)
            let horizonEnd = engine.routineHorizonEnd(at: now)
            // As a server's engine: the phone is given the plan now and then, and a third of the
            // inputs reach it only when it pulls again, which commits what it holds; a third by
            // the next sync, which commits what fires before it and leaves the rest held later.
            if step % 5 == 0 {
                engine.phoneApplied(
                    engine.planned.filter { ChannelPolicy.channel(for: $0.kind) == .local }.map {
                        ($0.id.requestID, $0.fireAt)
                    }, at: now)
            }
            let phone: PhoneHearing =
                switch phoneDraws.next() % 3 {
                case 0: .whenItPulls
                case 1: .atOnce
                default: .by(now + 1_800)
                }
            earlierKeys.append(engine.state.plan.lastKey)
            var probe = engine
            // Half the time the last pass's own key, else one from up to 20 inputs before.
            if generator.next() % 2 == 0 {
                probe.state.plan.lastKey = earlierKeys[max(0, earlierKeys.count - 1 - Int(generator.next() % 20))]
            }
            var asked = probe
            let key = probe.planKey(at: now, horizonEnd: horizonEnd, phone: phone)
            let built = key == probe.state.plan.lastKey
            let matched = asked.lastKeyMatches(at: now, horizonEnd: horizonEnd, phone: phone, exactly: true)
            if let old = probe.state.plan.lastKey {
                let fields = Mirror(reflecting: key).children.map { "\($0.value)" }
                let oldFields = Mirror(reflecting: old).children.map { "\($0.value)" }
                for (index, child) in Mirror(reflecting: key).children.enumerated()
                where fields[index] != oldFields[index] {
                    differed[child.label ?? "?", default: 0] += 1
                }
            }
            #expect(matched == built, "step \(step) at \(now)")
            if matched { agreedUnchanged += 1 } else { agreedChanged += 1 }
            let input: EngineInput =
                switch generator.next() % 12 {
                case 0: .activity(.appOpened(sessionSeconds: 120))
                // Workouts twice as often as the other inputs, so streaks form and come to be at risk.
                case 1, 11: .activity(.workoutCompleted(durationMinutes: 30))
                case 2: .activity(.mealLogged(.lunch))
                case 3:
                    .socialEvent(
                        SocialEvent(
                            id: "s\(step)", kind: .workoutKudos, actorName: "Ben", topic: "run", isMutualFriend: true))
                case 4: .activity(.checkInCompleted)
                case 5:
                    .notificationResponse(
                        requestID: engine.plannedRequestIDs.first ?? "none", kind: .hydration, action: .snooze)
                case 6: .timeZoneChanged(generator.next() % 2 == 0 ? zone : ZoneRules(identifier: "Asia/Kolkata")!)
                // New York's offsets under another name: the zone changes, the horizon does not.
                case 7: .timeZoneChanged(ZoneRules(identifier: "America/Toronto")!)
                case 8:
                    .preferencesChanged(
                        {
                            soundOn.toggle()
                            var preferences = engine.profile.preferences
                            preferences.soundEnabled = soundOn
                            return preferences
                        }())
                case 9: .notificationPermission(allowed: generator.next() % 2 == 0)
                default: .activity(.moodLogged)
                }
            _ = engine.handle(input, at: now, phone: phone)
        }
        // Both answers occur, so the agreement is not about one of them only.
        #expect(agreedUnchanged > 20 && agreedChanged > 20, "\(agreedUnchanged) unchanged, \(agreedChanged) changed")
        let labels = Mirror(reflecting: engine.planKey(at: now, horizonEnd: engine.routineHorizonEnd(at: now))).children
            .compactMap(\.label)
        for label in labels { #expect(differed[label, default: 0] > 0, "\(label) never differed: \(differed)") }
    }
}
