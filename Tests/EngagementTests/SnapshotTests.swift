import Content
import LiveActivity
import Models
import Scheduling
import TestSupport
import Testing

@testable import Engagement

/// Saving and restoring an engine anywhere in a run changes nothing it does afterwards.
@Suite("Engine snapshot")
struct SnapshotTests {
    static let zones = [
        "Europe/London", "Asia/Kathmandu", "America/St_Johns", "Pacific/Chatham", "Australia/Lord_Howe",
    ]
    .map { ZoneRules(identifier: $0)! }

    /// A user with hourly hydration, social batching and quiet hours, so every part of the state fills.
    static func profile(seed: UInt64) -> UserProfile {
        var random = SeededGenerator(seed: seed)
        return makeProfile(zone: zones[Int(random.next() % 5)].identifier, absence: .checkInOnMe) { preferences in
            preferences.hydration = seed % 2 == 0 ? .hourly : .biHourly
            preferences.maxPerHour = 1 + Int(random.next() % 3)
            preferences.settings[.workoutKudos] = .batched
            preferences.settings[.newFollower] = .daily
            preferences.quietHours = try? QuietHours(
                start: LocalTimeOfDay(minutesSinceMidnight: 22 * 60), end: LocalTimeOfDay(minutesSinceMidnight: 7 * 60))
        }
    }

    /// A random but reproducible stream of inputs over about two weeks.
    static func inputs(seed: UInt64, count: Int, start: Instant) -> [(EngineInput, Instant)] {
        var random = SeededGenerator(seed: seed &* 0x9E37_79B9)
        var now = start
        var result: [(EngineInput, Instant)] = [(.appLaunched, now)]
        var social = 0
        for _ in 0..<count {
            now = now + Int64(60 + random.next() % (8 * 3_600))
            let input: EngineInput
            switch random.next() % 16 {
            case 0, 1: input = .activity(.appOpened(sessionSeconds: Int(random.next() % 900)))
            case 2: input = .activity(.mealLogged(MealType.allCases[Int(random.next() % 4)]))
            case 3: input = .activity(.workoutCompleted(durationMinutes: 45))
            case 4: input = .activity(.checkInCompleted)
            case 5:
                social += 1
                let kind: NotificationKind = random.next() % 2 == 0 ? .workoutKudos : .newFollower
                input = .socialEvent(
                    SocialEvent(
                        id: "s\(social)", kind: kind, actorName: "Friend \(social)", topic: "run",
                        isMutualFriend: random.next() % 2 == 0))
            case 6: input = .backgroundTaskLaunched(.lapseDetection)
            case 7: input = .timeZoneChanged(zones[Int(random.next() % 5)])
            case 8:
                input = .notificationResponse(
                    requestID: "hydration.\(LocalDate(daysSinceEpoch: now.secondsSinceEpoch / 86_400)).1000",
                    kind: .hydration, action: random.next() % 2 == 0 ? .dismiss : .snooze)
            case 9:
                input = .contentGenerated(
                    requestID: "morningGreeting.\(LocalDate(daysSinceEpoch: now.secondsSinceEpoch / 86_400 + 1))",
                    outcome: .text("Rise and shine|A new day to move, Ana.", latencyMillis: 300))
            case 10:
                now = now + 4 * 86_400  // a lapse
                input = .activity(.coachChat)
            case 11:
                input = .liveActivity(
                    random.next() % 2 == 0
                        ? .workoutStarted(workoutType: "Run")
                        : .mealStarted(
                            MealActivityAttributes(meal: .lunch, targetCalories: 600, targetProteinGrams: 30)))
            case 12:
                input = .liveActivity(
                    .workoutUpdated(
                        .init(elapsedSeconds: Int(random.next() % 3_600), currentExercise: "set \(random.next() % 4)")))
            case 13:
                input = .liveActivity(.pushTokenReceived(activityID: "workout-\(random.next() % 3)", token: "ab"))
            case 14:
                input = .liveActivity(
                    random.next() % 2 == 0 ? .workoutEnded(.init(elapsedSeconds: 1_800)) : .mealEnded)
            default:
                input =
                    random.next() % 3 == 0
                    ? .notificationPermission(allowed: random.next() % 2 == 0) : .activity(.moodLogged)
            }
            result.append((input, now))
        }
        return result
    }

    @Test(arguments: 0..<24)
    func restoringAnywhereGivesTheEffectsOfARunThatNeverStopped(seed: UInt64) throws {
        let profile = Self.profile(seed: seed)
        let zone = ZoneRules(identifier: profile.timeZone)!
        let start = Instant(iso8601: "2027-03-20T06:00:00Z")!
        let inputs = Self.inputs(seed: seed, count: 120, start: start)
        var random = SeededGenerator(seed: seed &+ 77)
        let splits = Set((0..<3).map { _ in 1 + Int(random.next() % UInt64(inputs.count - 1)) })

        var whole = UserEngine(profile: profile, zone: zone, now: start, contentSeed: seed)
        var stopped = UserEngine(profile: profile, zone: zone, now: start, contentSeed: seed)
        for (index, (input, at)) in inputs.enumerated() {
            if splits.contains(index) {
                let bytes = stopped.snapshot()
                stopped = try UserEngine(
                    restoring: bytes, profile: stopped.profile, zone: stopped.zone, content: bundledContent)
            }
            // Odd seeds run as a server's engine: the phone is given the plan every few inputs,
            // and what it holds is committed until it pulls again, which the snapshot keeps; or,
            // one seed in four, it hears by a sync half an hour on, and holds the rest later.
            let phone: PhoneHearing =
                seed % 2 == 0 ? .atOnce : seed % 4 == 1 ? .whenItPulls : .by(at + 1_800)
            if seed % 2 == 1, index % 4 == 0 {
                let held = whole.planned.filter { ChannelPolicy.channel(for: $0.kind) == .local }.map {
                    (requestID: $0.id.requestID, fireAt: $0.fireAt)
                }
                whole.phoneApplied(held, at: at)
                stopped.phoneApplied(held, at: at)
            }
            let expected = whole.handle(input, at: at, phone: phone)
            let actual = stopped.handle(input, at: at, phone: phone)
            #expect(actual == expected, "input \(index) (\(input)) at \(at)")
            if actual != expected { return }
        }
        #expect(stopped.snapshot() == whole.snapshot())
    }

    @Test func aSnapshotIsCompact() {
        let profile = Self.profile(seed: 3)
        let start = Instant(iso8601: "2027-03-20T06:00:00Z")!
        var engine = UserEngine(profile: profile, zone: ZoneRules(identifier: profile.timeZone)!, now: start)
        for (input, at) in Self.inputs(seed: 3, count: 200, start: start) { _ = engine.handle(input, at: at) }
        #expect(engine.snapshot().count < 4_096)
    }

    @Test(arguments: [
        ([UInt8](), "truncated"), ([0x45, 0x53, 10], "version 10 is not one this engine reads (it reads 1...9)"),
        ([0x00, 0x53, 1], "not an engine snapshot (bad magic bytes)"),
    ])
    func badBytesAreAnErrorNeverAFreshState(bytes: [UInt8], problem: String) {
        let profile = Self.profile(seed: 1)
        do {
            _ = try UserEngine(
                restoring: bytes, profile: profile, zone: ZoneRules(identifier: profile.timeZone)!,
                content: bundledContent)
            Issue.record("restored from bad bytes")
        } catch {
            #expect(error.description.contains(problem))
        }
    }

    @Test func everyTruncationOfAGoodSnapshotIsRefused() {
        let profile = Self.profile(seed: 5)
        let start = Instant(iso8601: "2027-03-20T06:00:00Z")!
        let zone = ZoneRules(identifier: profile.timeZone)!
        var engine = UserEngine(profile: profile, zone: zone, now: start)
        for (input, at) in Self.inputs(seed: 5, count: 60, start: start) { _ = engine.handle(input, at: at) }
        let bytes = engine.snapshot()
        for length in 0..<bytes.count {
            #expect(throws: SnapshotError.self) {
                try UserEngine(
                    restoring: Array(bytes[..<length]), profile: profile, zone: zone, content: bundledContent)
            }
        }
    }

    @Test(arguments: 0..<8)
    func corruptedBytesAreRefusedOrRestoredNeverATrap(seed: UInt64) {
        let profile = Self.profile(seed: seed)
        let start = Instant(iso8601: "2027-03-20T06:00:00Z")!
        let zone = ZoneRules(identifier: profile.timeZone)!
        var engine = UserEngine(profile: profile, zone: zone, now: start)
        for (input, at) in Self.inputs(seed: seed, count: 60, start: start) { _ = engine.handle(input, at: at) }
        let good = engine.snapshot()
        var random = SeededGenerator(seed: seed &+ 99)
        for _ in 0..<300 {
            var bytes = good
            for _ in 0..<(1 + Int(random.next() % 3)) {
                let index = Int(random.next() % UInt64(bytes.count))
                bytes[index] = random.next() % 4 == 0 ? 0xFF : UInt8(truncatingIfNeeded: random.next())
            }
            // Either an error or an engine; reaching the next line is the test.
            _ = try? UserEngine(restoring: bytes, profile: profile, zone: zone, content: bundledContent)
        }
        let extreme: [UInt8] = [0x45, 0x53, 1, 0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01, 0x01, 0x02]
        #expect(throws: SnapshotError.self) {
            try UserEngine(restoring: extreme, profile: profile, zone: zone, content: bundledContent)
        }
    }
}
