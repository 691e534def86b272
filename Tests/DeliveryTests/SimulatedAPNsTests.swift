import Models
import Testing

@testable import Delivery
@testable import SimulatedPlatform

/// The simulator's model of APNs: Apple's documented behaviour for offline devices, priority 5,
/// uninstalls, outages and throttling.
@Suite("Simulated APNs")
struct SimulatedAPNsTests {
    static let start = Instant(secondsSinceEpoch: 1_800_000_000)
    static let token = String(repeating: "ab", count: 32)

    static func push(
        _ number: Int, type: PushRequest.PushType = .alert, priority: PushRequest.Priority? = nil,
        expiration: PushRequest.Expiration? = .at(start + 86_400), bytes: Int = 40
    ) -> PushRequest {
        let hex = String(number, radix: 16)
        return PushRequest(
            id: "00000000-0000-8000-8000-" + String(repeating: "0", count: 12 - hex.count) + hex, deviceToken: token,
            environment: .production, pushType: type,
            topic: "com.example.fitness", priority: priority, expiration: expiration,
            payload: Array(repeating: UInt8(ascii: "x"), count: bytes))
    }

    @Test func anAcceptedAlertArrivesAfterItsLatencyAndLowPriorityWaitsForThePowerWindow() {
        var apns = SimulatedAPNs(conditions: APNsConditions(), seed: 7)
        var draws = SeededGenerator(seed: 1)
        var device = SimulatedPushDevice<Int>(token: Self.token)
        #expect(apns.send(Self.push(1), carrying: 1, to: &device, at: Self.start, draws: &draws) == .accepted)
        #expect(
            apns.send(
                Self.push(2, priority: .powerConsiderate), carrying: 2, to: &device, at: Self.start, draws: &draws)
                == .accepted)
        let window = SimulatedAPNs.lowPriorityWindowSeconds
        let first = device.receive(through: Self.start + 60)
        #expect(first.map(\.note) == [1])
        #expect(first[0].at > Self.start)
        let burst = device.receive(through: Self.start + window + 60)
        #expect(burst.map(\.note) == [2])
        #expect(burst[0].at.secondsSinceEpoch % window == 0)
        #expect(device.nextArrival == nil)
    }

    @Test func anOfflineDeviceGetsOnlyTheLatestPushWhenItIsBack() {
        var apns = SimulatedAPNs(conditions: APNsConditions(), seed: 7)
        var draws = SeededGenerator(seed: 1)
        var device = SimulatedPushDevice<Int>(token: Self.token)
        device.goOffline(from: Self.start, until: Self.start + 3_600)
        for number in 1...3 {
            _ = apns.send(
                Self.push(number), carrying: number, to: &device, at: Self.start + Int64(number), draws: &draws)
        }
        #expect(device.receive(through: Self.start + 3_599).isEmpty)
        #expect(device.nextArrival == Self.start + 3_600)
        let back = device.receive(through: Self.start + 3_600)
        #expect(back.map(\.note) == [3])
        #expect(back.first?.at == Self.start + 3_600)
        #expect(device.replacedWhileOffline == 2)
        #expect(!device.isOffline(at: Self.start + 3_600))
    }

    @Test func aStoredPushPastItsExpirationAndANowOrNeverPushAreNeverDelivered() {
        var apns = SimulatedAPNs(conditions: APNsConditions(), seed: 7)
        var draws = SeededGenerator(seed: 1)
        var device = SimulatedPushDevice<Int>(token: Self.token)
        device.goOffline(from: Self.start, until: Self.start + 7_200)
        _ = apns.send(
            Self.push(1, expiration: .at(Self.start + 600)), carrying: 1, to: &device, at: Self.start, draws: &draws)
        #expect(device.receive(through: Self.start + 7_200).isEmpty)
        #expect(device.expiredWhileOffline == 1)
        device.goOffline(from: Self.start + 8_000, until: Self.start + 9_000)
        _ = apns.send(
            Self.push(2, expiration: .nowOrNever), carrying: 2, to: &device, at: Self.start + 8_000, draws: &draws)
        #expect(device.receive(through: Self.start + 9_000).isEmpty)
        #expect(device.expiredWhileOffline == 2)
    }

    @Test func anAlertThatCannotArriveByItsExpirationIsDiscardedInFlight() {
        var apns = SimulatedAPNs(conditions: APNsConditions(), seed: 7)
        var draws = SeededGenerator(seed: 1)
        var device = SimulatedPushDevice<Int>(token: Self.token)
        // An alert whose expiration is its own second: any latency is past it.
        _ = apns.send(
            Self.push(1, expiration: .at(Self.start - 1)), carrying: 1, to: &device, at: Self.start, draws: &draws)
        // A priority-5 alert held for the power window past its expiration.
        _ = apns.send(
            Self.push(2, priority: .powerConsiderate, expiration: .at(Self.start + 60)), carrying: 2, to: &device,
            at: Self.start, draws: &draws)
        // A background push held past its expiration still arrives (only alerts are modelled so).
        _ = apns.send(
            Self.push(3, type: .background, expiration: .at(Self.start + 60)), carrying: 3, to: &device,
            at: Self.start, draws: &draws)
        let arrived = device.receive(through: Self.start + SimulatedAPNs.lowPriorityWindowSeconds + 60)
        #expect(arrived.map(\.note) == [3])
        #expect(device.expiredBeforeArrival == 2)
        #expect(device.expiredWhileOffline == 0)
    }

    @Test func anUninstalledAppIsAcceptedUntilAPNsLearnsOfItThen410WithItsTimestamp() {
        var apns = SimulatedAPNs(conditions: APNsConditions(), seed: 7)
        var draws = SeededGenerator(seed: 1)
        var device = SimulatedPushDevice<Int>(token: Self.token)
        device.uninstall(at: Self.start, unregisteredFrom: Self.start + 3_600)
        #expect(apns.send(Self.push(1), carrying: 1, to: &device, at: Self.start + 60, draws: &draws) == .accepted)
        #expect(device.receive(through: Self.start + 600).isEmpty)
        #expect(device.lostToUninstall == 1)
        #expect(
            apns.send(Self.push(2), carrying: 2, to: &device, at: Self.start + 3_600, draws: &draws)
                == .unregistered(since: Self.start))
    }

    @Test func aMalformedRequestIsRefusedBeforeAnythingElse() {
        var apns = SimulatedAPNs(conditions: APNsConditions(), seed: 7)
        var draws = SeededGenerator(seed: 1)
        var device = SimulatedPushDevice<Int>(token: Self.token)
        apns.conditions.outagesPerWeek = 168
        #expect(
            apns.send(Self.push(1, bytes: 4_097), carrying: 1, to: &device, at: Self.start, draws: &draws)
                == .refused(PushFailure(status: 413, reason: "PayloadTooLarge")))
        #expect(
            apns.send(
                Self.push(2, type: .background, priority: .immediate), carrying: 2, to: &device, at: Self.start,
                draws: &draws) == .refused(PushFailure(status: 400, reason: "BadPriority")))
        #expect(device.nextArrival == nil)
    }

    @Test func backgroundPushesBeyondThreeAnHourAreThrottled() {
        var apns = SimulatedAPNs(conditions: APNsConditions(), seed: 7)
        var draws = SeededGenerator(seed: 1)
        var device = SimulatedPushDevice<Int>(token: Self.token)
        for number in 1...4 {
            _ = apns.send(
                Self.push(number, type: .background), carrying: number, to: &device,
                at: Self.start + Int64(number) * 1_000, draws: &draws)
        }
        let received = device.receive(through: Self.start + 7_200)
        #expect(received.count == 3)
        #expect(device.throttled == 1)
    }

    @Test func outagesAndBurstsAreAFunctionOfTheSeedAndTheHourAndOffByDefault() {
        let week = (0..<(7 * 24 * 12)).map { Self.start + Int64($0) * 300 }
        let none = SimulatedAPNs(conditions: APNsConditions(), seed: 7)
        #expect(week.allSatisfy { !none.isInWindow($0, ratePerWeek: 0, stream: 1) })
        var conditions = APNsConditions()
        conditions.outagesPerWeek = 3
        let a = SimulatedAPNs(conditions: conditions, seed: 7)
        let b = SimulatedAPNs(conditions: conditions, seed: 7)
        let windowsA = week.map { a.isInWindow($0, ratePerWeek: 3, stream: 1) }
        #expect(windowsA == week.map { b.isInWindow($0, ratePerWeek: 3, stream: 1) })
        let covered = Double(windowsA.filter { $0 }.count) / Double(week.count)
        // Three 20-minute windows a week cover about 0.6 % of it; allow for the draw.
        #expect(covered > 0 && covered < 0.03)
    }

    /// A fault's window is found from any instant inside it, with its bounds: a stalled server
    /// resumes at its end, and is not stalled there.
    @Test func aFaultWindowKnowsItsBoundsFromAnyInstantInside() throws {
        let windows = FaultWindows(ratePerWeek: 5, lengthSeconds: 5_400, seed: 3, stream: 0x57A1)
        let week = (0..<(7 * 24 * 60)).map { Self.start + Int64($0) * 60 }
        let inside = try #require(week.first { windows.window(containing: $0) != nil })
        let window = try #require(windows.window(containing: inside))
        #expect(window.begins <= inside && inside < window.ends)
        #expect(window.ends - window.begins == 5_400)
        #expect(windows.window(containing: window.begins)?.begins == window.begins)
        #expect(windows.window(containing: window.ends - 1)?.ends == window.ends)
        #expect(windows.window(containing: window.begins - 1).map { $0.begins < window.begins } ?? true)
        // Another stream of the same seed is another fault; no rate, no window.
        let other = FaultWindows(ratePerWeek: 5, lengthSeconds: 5_400, seed: 3, stream: 0x0A7A)
        #expect(week.map { other.window(containing: $0) != nil } != week.map { windows.window(containing: $0) != nil })
        let none = FaultWindows(ratePerWeek: 0, lengthSeconds: 5_400, seed: 3, stream: 0x57A1)
        #expect(week.allSatisfy { none.window(containing: $0) == nil })
    }

    @Test func duringAnOutageEveryAttemptIs503() {
        var apns = SimulatedAPNs(conditions: APNsConditions(), seed: 7)
        var draws = SeededGenerator(seed: 1)
        var conditions = APNsConditions()
        conditions.outagesPerWeek = 20
        conditions.outageMinutes = 60
        apns = SimulatedAPNs(conditions: conditions, seed: 11)
        var device = SimulatedPushDevice<Int>(token: Self.token)
        let instants = (0..<(7 * 24 * 60)).map { Self.start + Int64($0) * 60 }
        let inOutage = try? #require(instants.first { apns.isInWindow($0, ratePerWeek: 20, stream: 0x0A7A) })
        guard let inOutage else { return }
        #expect(
            apns.send(Self.push(1), carrying: 1, to: &device, at: inOutage, draws: &draws)
                == .retryable(PushFailure(status: 503, reason: "ServiceUnavailable")))
    }

    @Test func aSecondOfflineSpellNeverCutsShortOneStillRunning() {
        var apns = SimulatedAPNs(conditions: APNsConditions(), seed: 7)
        var draws = SeededGenerator(seed: 1)
        var device = SimulatedPushDevice<Int>(token: Self.token)
        device.goOffline(from: Self.start, until: Self.start + 4 * 3_600)
        device.goOffline(from: Self.start + 11 * 3_600, until: Self.start + 13 * 3_600)
        #expect(device.isOffline(at: Self.start + 2 * 3_600))
        #expect(!device.isOffline(at: Self.start + 5 * 3_600))
        #expect(device.isOffline(at: Self.start + 12 * 3_600))
        _ = apns.send(Self.push(1), carrying: 1, to: &device, at: Self.start + 3_600, draws: &draws)
        let back = device.receive(through: Self.start + 4 * 3_600)
        #expect(back.map(\.note) == [1])
        #expect(back.first?.at == Self.start + 4 * 3_600)
        // Touching spells join.
        device.goOffline(from: Self.start + 13 * 3_600, until: Self.start + 14 * 3_600)
        #expect(device.offlineSpells == [(Self.start + 11 * 3_600)..<(Self.start + 14 * 3_600)])
    }

    @Test func thePushStoredWhileOfflineArrivesBeforeOneArrivingAsTheDeviceComesBack() {
        var conditions = APNsConditions()
        conditions.meanLatencySeconds = 0.000_001  // one second, rounded up
        let apns = SimulatedAPNs(conditions: conditions, seed: 7)
        var draws = SeededGenerator(seed: 1)
        var device = SimulatedPushDevice<Int>(token: Self.token)
        device.goOffline(from: Self.start, until: Self.start + 600)
        _ = apns.send(Self.push(1), carrying: 1, to: &device, at: Self.start, draws: &draws)
        #expect(device.receive(through: Self.start + 10).isEmpty)
        _ = apns.send(Self.push(2), carrying: 2, to: &device, at: Self.start + 599, draws: &draws)
        let arrivals = device.receive(through: Self.start + 600)
        #expect(arrivals.map(\.note) == [1, 2])
        #expect(arrivals.allSatisfy { $0.at == Self.start + 600 })
    }

    @Test func aNowOrNeverPushToAnOfflineDeviceReplacesNothing() {
        var apns = SimulatedAPNs(conditions: APNsConditions(), seed: 7)
        var draws = SeededGenerator(seed: 1)
        var device = SimulatedPushDevice<Int>(token: Self.token)
        device.goOffline(from: Self.start, until: Self.start + 3_600)
        _ = apns.send(Self.push(1), carrying: 1, to: &device, at: Self.start, draws: &draws)
        _ = apns.send(
            Self.push(2, expiration: .nowOrNever), carrying: 2, to: &device, at: Self.start + 60, draws: &draws)
        #expect(device.receive(through: Self.start + 3_600).map(\.note) == [1])
        #expect(device.replacedWhileOffline == 0)
        #expect(device.expiredWhileOffline == 1)
    }
}
