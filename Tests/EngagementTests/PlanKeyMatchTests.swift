import Models
import Testing

@testable import Engagement

/// The plan's unchanged-inputs check reads the state in place (`planInputsMatchLastPass`); it
/// must answer what comparing a freshly built `PlanKey` answers, whatever the user does.
@Suite struct PlanKeyMatchTests {
    let zone = ZoneRules(identifier: "America/New_York")!
    let start = Instant(iso8601: "2027-03-10T08:00:00-05:00")!

    /// `PlanKey`'s fields: a new one must be compared in `planInputsMatchLastPass` too (then
    /// this count changes with it).
    @Test func theMatcherKnowsEveryField() {
        let engine = UserEngine(
            profile: UserProfile(id: "u1", displayName: "Ana", timeZone: zone.identifier), zone: zone, now: start)
        var copy = engine
        let key = copy.planKey(at: start, horizonEnd: copy.routineHorizonEnd(at: start))
        #expect(Mirror(reflecting: key).children.count == 13)
    }

    @Test(arguments: [1, 2, 3] as [UInt64])
    func theMatcherAgreesWithTheKeyUnderRandomInputs(seed: UInt64) {
        var generator = SeededGenerator(seed: seed)
        var profile = UserProfile(id: "u\(seed)", displayName: "Ana Lima", timeZone: zone.identifier)
        profile.preferences.workoutSchedule = [
            ScheduledWorkout(weekday: .wednesday, time: LocalTimeOfDay(hour: 18, minute: 0)!, type: "Run")
        ]
        var engine = UserEngine(profile: profile, zone: zone, now: start)
        var now = start
        _ = engine.handle(.appLaunched, at: now)
        var agreedUnchanged = 0
        var agreedChanged = 0
        // Keys kept at earlier steps: asked against an older key, most fields have moved on.
        var earlierKeys: [PlanKey?] = []
        for step in 0..<600 {
            now = now + Int64(generator.next() % 5_400)
            let horizonEnd = engine.routineHorizonEnd(at: now)
            earlierKeys.append(engine.state.plan.lastKey)
            var probe = engine
            // Half the time the last pass's own key, else one from up to 20 inputs before.
            if generator.next() % 2 == 0 {
                probe.state.plan.lastKey = earlierKeys[max(0, earlierKeys.count - 1 - Int(generator.next() % 20))]
            }
            var asked = probe
            let built = probe.planKey(at: now, horizonEnd: horizonEnd) == probe.state.plan.lastKey
            let matched = asked.planInputsMatchLastPass(at: now, horizonEnd: horizonEnd)
            #expect(matched == built, "step \(step) at \(now)")
            if matched { agreedUnchanged += 1 } else { agreedChanged += 1 }
            let input: EngineInput =
                switch generator.next() % 8 {
                case 0: .activity(.appOpened(sessionSeconds: 120))
                case 1: .activity(.workoutCompleted(durationMinutes: 30))
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
                default: .activity(.moodLogged)
                }
            _ = engine.handle(input, at: now)
        }
        // Both answers occur, so the agreement is not about one of them only.
        #expect(agreedUnchanged > 20 && agreedChanged > 20, "\(agreedUnchanged) unchanged, \(agreedChanged) changed")
    }
}
