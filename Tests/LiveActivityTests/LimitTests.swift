import LiveActivity
import Models
import SimulatedPlatform
import Testing

@Suite("SimulatedLiveActivityCenter: limits")
struct LimitTests {
    enum Refusal: String, CaseIterable, CustomTestStringConvertible {
        case disabled, unsupported, background
        var testDescription: String { rawValue }
    }

    @Test(
        "Starting is refused when the device, the user's switch or the app's visibility forbids it",
        arguments: Refusal.allCases)
    func startRefusals(_ refusal: Refusal) throws {
        var center = SimulatedLiveActivityCenter()
        let running = try center.startWorkout()
        let expected: LiveActivityError
        switch refusal {
        case .disabled:
            center.areActivitiesEnabled = false
            expected = .denied
        case .unsupported:
            center.isSupported = false
            expected = .unsupported
        case .background:
            center.isAppInForeground = false
            expected = .visibility
        }
        #expect(throws: expected) { try center.startWorkout(at: t0 + minute) }
        #expect(center.activities.map(\.id) == [running])
        // Running activities are left alone and still take updates.
        try center.update(id: running, content: workoutContent(elapsedSeconds: 120), at: t0 + 2 * minute)
        #expect(center.startedCount == 1)
    }

    @Test(
        "Attributes plus content state may be exactly 4 KB, not a byte more",
        arguments: [4_000, 4_095, 4_096, 4_097, 5_000])
    func payloadLimitAtStart(bytes: Int) throws {
        let content = workoutContent(payloadBytes: bytes)
        #expect(LiveActivityLimits.payloadBytes(attributes: workout(), state: content.state) == bytes)
        var center = SimulatedLiveActivityCenter()
        if bytes <= 4_096 {
            let id = try center.start(workout(), content: content, at: t0)
            #expect(center.activity(id: id)?.payloadBytes == bytes)
        } else {
            #expect(throws: LiveActivityError.attributesTooLarge(bytes: bytes)) {
                try center.start(workout(), content: content, at: t0)
            }
            #expect(center.activities.isEmpty)
            #expect(center.startedCount == 0)
        }
    }

    @Test("The size counts UTF-8 bytes of the sorted-key JSON, so an emoji weighs 4 bytes")
    func payloadCountsUTF8Bytes() {
        let plain = LiveActivityLimits.payloadBytes(attributes: workout(), state: workoutContent(exercise: "").state)
        let emoji = LiveActivityLimits.payloadBytes(attributes: workout(), state: workoutContent(exercise: "🏃").state)
        #expect(emoji - plain == 4)
        let bigAttributes = workout(String(repeating: "R", count: 4_096))
        #expect(LiveActivityLimits.payloadBytes(attributes: bigAttributes, state: workoutContent().state) > 4_096)
    }

    @Test("Oversized attributes are refused at start")
    func oversizedAttributesAreRefused() {
        var center = SimulatedLiveActivityCenter()
        let attributes = workout(String(repeating: "R", count: 4_096))
        let bytes = LiveActivityLimits.payloadBytes(attributes: attributes, state: workoutContent().state)
        #expect(throws: LiveActivityError.attributesTooLarge(bytes: bytes)) {
            try center.start(attributes, content: workoutContent(), at: t0)
        }
    }

    @Test("An oversized update, end or push changes nothing")
    func oversizedContentChangesNothing() throws {
        var center = SimulatedLiveActivityCenter()
        let id = try center.startWorkout()
        center.advance(to: t0 + minute)
        let before = try #require(center.activity(id: id))
        let tooBig = workoutContent(payloadBytes: 4_097)
        #expect(throws: LiveActivityError.attributesTooLarge(bytes: 4_097)) {
            try center.update(id: id, content: tooBig, at: t0 + minute)
        }
        #expect(throws: LiveActivityError.attributesTooLarge(bytes: 4_097)) {
            try center.receivePushUpdate(id: id, content: tooBig, priority: .high, at: t0 + minute)
        }
        #expect(throws: LiveActivityError.attributesTooLarge(bytes: 4_097)) {
            try center.end(id: id, content: tooBig, dismissal: .immediate, at: t0 + minute)
        }
        #expect(center.activity(id: id) == before)
    }

    @Test("Content of another kind than the activity is refused")
    func mismatchedContentIsRefused() throws {
        var center = SimulatedLiveActivityCenter()
        #expect(throws: LiveActivityError.mismatchedContent) {
            try center.start(workout(), content: mealContent(), at: t0)
        }
        let id = try center.start(meal(), content: mealContent(), at: t0)
        #expect(throws: LiveActivityError.mismatchedContent) {
            try center.update(id: id, content: workoutContent(), at: t0)
        }
        #expect(center.activity(id: id)?.content == mealContent())
    }

    @Test("The app runs at most the configured number of concurrent activities", arguments: [1, 2, 5])
    func concurrencyLimit(maximum: Int) throws {
        var center = SimulatedLiveActivityCenter(
            configuration: SimulatedLiveActivityCenter.Configuration(maxConcurrentActivities: maximum))
        let ids = try (0..<maximum).map { _ in try center.startWorkout() }
        #expect(throws: LiveActivityError.targetMaximumExceeded) { try center.startWorkout() }
        // An ended activity still on the Lock Screen no longer counts.
        try center.end(id: ids[0], content: nil, dismissal: .default, at: t0 + minute)
        #expect(center.activities.count == maximum)
        _ = try center.startWorkout(at: t0 + minute)
        #expect(center.runningCount == maximum)
    }

    @Test("The default concurrency limit is the community's figure of 5")
    func defaultConcurrencyLimit() {
        #expect(SimulatedLiveActivityCenter.Configuration().maxConcurrentActivities == 5)
        #expect(SimulatedLiveActivityCenter.Configuration().pushUpdatesPerHour == 15)
    }

    @Test("Activities ended by the 8 h limit free their slots")
    func systemEndFreesSlots() throws {
        var center = SimulatedLiveActivityCenter()
        for _ in 0..<5 { _ = try center.startWorkout() }
        #expect(throws: LiveActivityError.targetMaximumExceeded) { try center.startWorkout(at: t0 + 8 * hour - 1) }
        _ = try center.startWorkout(at: t0 + 8 * hour)
        #expect(center.runningCount == 1)
    }

    @Test("A device full of other apps' activities refuses with globalMaximumExceeded")
    func deviceMaximum() throws {
        var center = SimulatedLiveActivityCenter(
            configuration: SimulatedLiveActivityCenter.Configuration(deviceMaximum: 3))
        center.otherAppsActivityCount = 2
        _ = try center.startWorkout()
        #expect(throws: LiveActivityError.globalMaximumExceeded) { try center.startWorkout() }
        center.otherAppsActivityCount = 1
        _ = try center.startWorkout()
        #expect(center.runningCount == 2)
    }

    @Test("Priority-10 push updates draw on a rolling hourly budget per activity; priority 5 is free")
    func pushBudget() throws {
        var center = SimulatedLiveActivityCenter()
        let id = try center.startWorkout()
        let other = try center.startWorkout()
        for index in 0..<15 {
            let result = try center.receivePushUpdate(
                id: id, content: workoutContent(elapsedSeconds: index), priority: .high, at: t0 + Int64(index) * minute)
            #expect(result == .applied)
        }
        let at = t0 + 20 * minute
        #expect(
            try center.receivePushUpdate(id: id, content: workoutContent(elapsedSeconds: 99), priority: .high, at: at)
                == .throttled)
        #expect(center.activity(id: id)?.content == workoutContent(elapsedSeconds: 14))
        #expect(center.throttledPushCount == 1)

        for index in 0..<30 {
            #expect(
                try center.receivePushUpdate(
                    id: id, content: workoutContent(elapsedSeconds: 100 + index), priority: .low, at: at) == .applied)
        }
        #expect(center.activity(id: id)?.content == workoutContent(elapsedSeconds: 129))
        #expect(try center.receivePushUpdate(id: other, content: workoutContent(), priority: .high, at: at) == .applied)

        // The first push leaves the 60-minute window exactly one hour after it was applied.
        #expect(
            try center.receivePushUpdate(
                id: id, content: workoutContent(elapsedSeconds: 200), priority: .high, at: t0 + hour - 1) == .throttled)
        #expect(
            try center.receivePushUpdate(
                id: id, content: workoutContent(elapsedSeconds: 201), priority: .high, at: t0 + hour) == .applied)
        #expect(
            try center.receivePushUpdate(
                id: id, content: workoutContent(elapsedSeconds: 202), priority: .high, at: t0 + hour) == .throttled)
        #expect(center.throttledPushCount == 3)
    }

    @Test("Local updates from the app do not draw on the push budget")
    func localUpdatesAreNotBudgeted() throws {
        var center = SimulatedLiveActivityCenter(
            configuration: SimulatedLiveActivityCenter.Configuration(pushUpdatesPerHour: 1))
        let id = try center.startWorkout()
        for index in 0..<50 {
            try center.update(id: id, content: workoutContent(elapsedSeconds: index), at: t0 + Int64(index))
        }
        #expect(
            try center.receivePushUpdate(id: id, content: workoutContent(), priority: .high, at: t0 + minute)
                == .applied)
    }

    @Test("Push tokens arrive after the start, are 64 hex digits, change on request and repeat across runs")
    func pushTokens() throws {
        func run() throws -> (SimulatedLiveActivityCenter, String) {
            var center = SimulatedLiveActivityCenter()
            let id = try center.startWorkout()
            return (center, id)
        }
        var (center, id) = try run()
        #expect(center.activity(id: id)?.pushToken == nil)
        center.advance(to: t0 + 1)
        let token = try #require(center.activity(id: id)?.pushToken)
        #expect(token.count == 64)
        #expect(token.allSatisfy { $0.isHexDigit && !$0.isUppercase })

        var (again, _) = try run()
        again.advance(to: t0 + 1)
        #expect(again.activity(id: id)?.pushToken == token)

        try center.changePushToken(id: id, at: t0 + hour)
        let changed = try #require(center.activity(id: id)?.pushToken)
        #expect(changed != token)
        #expect(changed.count == 64)
        let second = try center.startWorkout(at: t0 + hour)
        center.advance(to: t0 + hour + 1)
        #expect(center.activity(id: second)?.pushToken != changed)
    }

    @Test("Errors read as one line a person can act on")
    func errorDescriptions() {
        #expect(
            LiveActivityError.attributesTooLarge(bytes: 5_000).description
                == "attributes and content state are 5000 bytes; the limit is 4096")
        #expect(LiveActivityError.denied.description == "Live Activities are switched off for the app")
    }

    @Test(
        "Under random use no activity runs past 8 h, stays past 12 h or exceeds 4 KB",
        arguments: [1, 2, 3, 42] as [UInt64])
    func randomUseKeepsEveryLimit(seed: UInt64) throws {
        var generator = SeededGenerator(seed: seed)
        var center = SimulatedLiveActivityCenter()
        var now = t0
        var known: [String] = []
        func pick(_ ids: [String], _ generator: inout SeededGenerator) -> String? {
            ids.isEmpty ? nil : ids[generator.int(in: 0...ids.count - 1)]
        }
        for _ in 0..<2_000 {
            now = now + Int64(generator.int(in: 0...1_800))
            let ids = center.activities.map(\.id)
            switch generator.int(in: 0...9) {
            case 0, 1:
                if let id = try? center.start(
                    workout(), content: workoutContent(payloadBytes: generator.int(in: 300...4_200)), at: now)
                {
                    known.append(id)
                }
            case 2, 3, 4:
                guard let id = pick(ids, &generator) else { break }
                _ = try? center.update(
                    id: id, content: workoutContent(payloadBytes: generator.int(in: 300...4_200)), at: now)
            case 5:
                guard let id = pick(ids, &generator) else { break }
                let policies: [DismissalPolicy] = [
                    .default, .immediate, .after(now + Int64(generator.int(in: -3_600...36_000))),
                ]
                _ = try? center.end(id: id, content: nil, dismissal: policies[generator.int(in: 0...2)], at: now)
            case 6, 7:
                guard let id = pick(ids, &generator) else { break }
                _ = try? center.receivePushUpdate(
                    id: id, content: workoutContent(elapsedSeconds: generator.int(in: 0...9_999)),
                    priority: generator.chance(0.5) ? .high : .low, at: now)
            default:
                center.advance(to: now)
            }
            #expect(center.runningCount <= 5)
            for activity in center.activities {
                #expect(activity.payloadBytes <= LiveActivityLimits.maxPayloadBytes)
                #expect(now - activity.startedAt < 12 * hour)
                if let endedAt = activity.endedAt {
                    #expect(endedAt - activity.startedAt <= 8 * hour)
                    #expect(activity.state == .ended)
                    #expect(try #require(activity.removalAt) - endedAt <= 4 * hour)
                } else {
                    #expect(now - activity.startedAt < 8 * hour)
                }
            }
        }
        #expect(known.count > 10)
    }
}
