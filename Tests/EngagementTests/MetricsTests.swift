import Foundation
import Models
import Testing

@testable import Engagement

private func at(_ text: String) -> Instant { Instant(iso8601: text)! }

/// Five users with hand-made logs over the 14 days to 2027-06-10T12:00Z, and the figures
/// worked out by hand from them.
private enum Logs {
    static let now = at("2027-06-10T12:00:00Z")
    static let since = now - 14 * .secondsPerDay

    struct User {
        var id: String
        var activity: [ActivityEvent] = []
        var deliveries: [DeliveryRecord] = []
        var optOuts: [OptOut] = []

        func summary() -> UserEngagementSummary {
            UserEngagementSummary(
                activity: activity, deliveries: deliveries, optOuts: optOuts, since: Logs.since, now: Logs.now,
                zone: .utc)
        }
    }

    static func event(_ id: UserID, _ time: String, _ kind: ActivityKind) -> ActivityEvent {
        ActivityEvent(userID: id, at: at(time), kind: kind)
    }

    /// Active: opened the app 2 h ago; workouts 06-01...06-04 and 06-08...06-10.
    static let a = User(
        id: "a",
        activity: [
            event("a", "2027-06-10T10:00:00Z", .appOpened(sessionSeconds: 300)),
            event("a", "2027-06-09T10:00:00Z", .appOpened(sessionSeconds: 600)),
        ]
            + ["01", "02", "03", "04", "08", "09", "10"].map {
                event("a", "2027-06-\($0)T08:00:00Z", .workoutCompleted(durationMinutes: 45))
            },
        deliveries: [
            DeliveryRecord(kind: .preWorkout, deliveredAt: at("2027-06-09T07:15:00Z"), opened: true, acted: true),
            DeliveryRecord(kind: .preWorkout, deliveredAt: at("2027-06-10T07:15:00Z"), opened: false, acted: false),
            // Never delivered: its opened flag cannot count.
            DeliveryRecord(
                kind: .mealReminder, sentAt: at("2027-06-09T12:30:00Z"), deliveredAt: nil, opened: true, acted: false),
            DeliveryRecord(kind: .mealReminder, deliveredAt: at("2027-06-08T12:30:00Z"), opened: true, acted: false),
        ])

    /// Lapsed: last seen 5 days ago; disabled hydration after receiving it, and the weekly
    /// review without ever receiving one (not an opt-out).
    static let b = User(
        id: "b", activity: [event("b", "2027-06-05T12:00:00Z", .appOpened(sessionSeconds: 120))],
        deliveries: [
            DeliveryRecord(kind: .reEngagement, deliveredAt: at("2027-06-08T10:00:00Z"), opened: true, acted: true),
            DeliveryRecord(kind: .hydration, deliveredAt: at("2027-06-01T10:00:00Z"), opened: false, acted: false),
        ],
        optOuts: [
            OptOut(kind: .hydration, disabledAt: at("2027-06-02T09:00:00Z")),
            OptOut(kind: .weeklyReview, disabledAt: at("2027-06-03T09:00:00Z")),
        ])

    /// Churn risk: last seen 20 days ago (before the window); the morning greeting it got before
    /// the window was disabled inside it.
    static let c = User(
        id: "c", activity: [event("c", "2027-05-21T12:00:00Z", .appOpened(sessionSeconds: 1_000))],
        deliveries: [
            DeliveryRecord(kind: .reEngagement, deliveredAt: at("2027-06-09T10:00:00Z"), opened: false, acted: false),
            DeliveryRecord(kind: .morningGreeting, deliveredAt: at("2027-05-20T07:00:00Z"), opened: true, acted: false),
        ],
        optOuts: [OptOut(kind: .morningGreeting, disabledAt: at("2027-06-01T07:00:00Z"))])

    /// Idle: logged a mood exactly 2 days ago; an opt-out before the window does not count.
    static let d = User(
        id: "d", activity: [event("d", "2027-06-08T12:00:00Z", .moodLogged)],
        deliveries: [
            DeliveryRecord(kind: .streakReminder, deliveredAt: at("2027-05-24T18:00:00Z"), opened: false, acted: false)
        ],
        optOuts: [OptOut(kind: .streakReminder, disabledAt: at("2027-05-25T09:00:00Z"))])

    /// Never did anything: measured from the window start, 14 days: churn risk.
    static let e = User(id: "e")

    static let users = [a, b, c, d, e]
}

@Suite struct EngagementMetricsTests {
    @Test func oneUsersSummaryIsComputedFromTheLog() {
        let a = Logs.a.summary()
        #expect(a.stage == .active)
        #expect(a.idleSeconds == 2 * .secondsPerHour)
        #expect(a.sessions == 2)
        #expect(a.sessionSeconds == 900)
        #expect(a.meanSessionSeconds == 450)
        #expect(a.sessionsPerWeek == 1)
        #expect(a.workouts == 7)
        #expect(a.currentStreakDays == 3)
        #expect(a.longestStreakDays == 4)
        #expect(a.optedOutKinds.isEmpty)

        #expect(Logs.b.summary().stage == .lapsed)
        #expect(Logs.b.summary().optedOutKinds == [.hydration])
        #expect(Logs.c.summary().stage == .churnRisk)
        #expect(Logs.c.summary().sessions == 0)
        #expect(Logs.c.summary().optedOutKinds == [.morningGreeting])
        #expect(Logs.d.summary().stage == .idle)
        #expect(Logs.d.summary().optedOutKinds.isEmpty)
        #expect(Logs.e.summary().stage == .churnRisk)
        #expect(Logs.e.summary().lastActiveAt == nil)
        #expect(Logs.e.summary().idleSeconds == 14 * .secondsPerDay)
        #expect(Logs.e.summary().sessionsPerWeek == 0)
        #expect(Logs.e.summary().meanSessionSeconds == nil)
    }

    @Test func thePopulationFiguresAreTheHandWorkedOnes() throws {
        var metrics = EngagementMetrics()
        for user in Logs.users { metrics.add(user.summary()) }
        #expect(metrics.totalUsers == 5)
        #expect(metrics.activeUsers == 1)
        #expect(metrics.idleUsers == 1)
        #expect(metrics.lapsedUsers == 1)
        #expect(metrics.churnRiskUsers == 2)
        #expect(metrics.engagementRate == 0.2)
        #expect(metrics.sessions == 3)
        #expect(metrics.sessionSeconds == 1_020)
        #expect(metrics.meanSessionSeconds == 340)
        // 3 sessions over 5 users x 2 weeks.
        #expect(metrics.sessionsPerWeek == 0.3)
        #expect(metrics.workouts == 7)
        #expect(metrics.currentStreakDaysTotal == 3)
        #expect(metrics.usersOnStreak == 1)
        #expect(metrics.meanCurrentStreakDays == 0.6)
        #expect(metrics.longestStreakDays == 4)

        let preWorkout = try #require(metrics.perKind[.preWorkout])
        #expect([preWorkout.sent, preWorkout.delivered, preWorkout.opened, preWorkout.acted] == [2, 2, 1, 1] as [Int])
        #expect(preWorkout.openRate == 0.5 && preWorkout.actionRate == 0.5 && preWorkout.deliveryRate == 1)
        let meal = try #require(metrics.perKind[.mealReminder])
        #expect([meal.sent, meal.delivered, meal.opened, meal.acted, meal.recipients] == [2, 1, 1, 0, 1] as [Int])
        #expect(meal.deliveryRate == 0.5 && meal.openRate == 1 && meal.actionRate == 0)
        let nudge = try #require(metrics.perKind[.reEngagement])
        #expect(
            [nudge.sent, nudge.delivered, nudge.opened, nudge.acted, nudge.recipients] == [2, 2, 1, 1, 2] as [Int])
        let hydration = try #require(metrics.perKind[.hydration])
        #expect(hydration.optOuts == 1 && hydration.recipients == 1 && hydration.optOutRate == 1)
        let greeting = try #require(metrics.perKind[.morningGreeting])
        #expect(greeting.sent == 0 && greeting.optOuts == 1 && greeting.deliveryRate == nil)
        #expect(metrics.perKind[.weeklyReview] == nil)
        #expect(metrics.perKind[.streakReminder] == nil)
        let all = metrics.allKinds
        #expect(
            [all.sent, all.delivered, all.opened, all.acted, all.recipients, all.optOuts] == [7, 6, 3, 2, 6, 2] as [Int]
        )
    }

    @Test func emptyMetricsHaveNoRates() {
        let metrics = EngagementMetrics()
        #expect(metrics.engagementRate == nil)
        #expect(metrics.sessionsPerWeek == nil)
        #expect(metrics.meanSessionSeconds == nil)
        #expect(DeliveryCounts().openRate == nil)
    }

    @Test func shardsMergeInAnyOrderToTheSameBytes() throws {
        var whole = EngagementMetrics()
        for user in Logs.users { whole.add(user.summary()) }
        var first = EngagementMetrics()
        var second = EngagementMetrics()
        for user in Logs.users.reversed() {
            if user.id < "c" { first.add(user.summary()) } else { second.add(user.summary()) }
        }
        let merged = EngagementMetrics.merged([second, first])
        #expect(merged == whole)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        #expect(try encoder.encode(merged) == encoder.encode(whole))
        let decoded = try JSONDecoder().decode(EngagementMetrics.self, from: encoder.encode(whole))
        #expect(decoded == whole)
    }

    @Test func theJSONCarriesTheDerivedFigures() throws {
        var metrics = EngagementMetrics()
        for user in Logs.users { metrics.add(user.summary()) }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let json = try #require(String(data: encoder.encode(metrics), encoding: .utf8))
        #expect(json.contains("\"engagementRate\":0.2"))
        #expect(json.contains("\"sessionsPerWeek\":0.3"))
        #expect(json.contains("\"meanSessionSeconds\":340"))
        #expect(json.contains("\"preWorkout\":{\"acted\":1,\"actionRate\":0.5,"))
        #expect(json.contains("\"deliveryRate\":null"))
    }

    @Test func lapseThresholdsFollowTheEngineConfiguration() {
        var configuration = EngineConfiguration()
        configuration.lapseAfterSeconds = 2 * .secondsPerDay
        configuration.churnRiskAfterSeconds = 5 * .secondsPerDay
        let thresholds = LapseThresholds(configuration: configuration)
        #expect(thresholds.stage(idleSeconds: -60) == .active)
        #expect(thresholds.stage(idleSeconds: .secondsPerDay) == .active)
        #expect(thresholds.stage(idleSeconds: .secondsPerDay + 1) == .idle)
        #expect(thresholds.stage(idleSeconds: 2 * .secondsPerDay + 1) == .lapsed)
        #expect(thresholds.stage(idleSeconds: 5 * .secondsPerDay) == .lapsed)
        #expect(thresholds.stage(idleSeconds: 5 * .secondsPerDay + 1) == .churnRisk)
    }
}

@Suite struct HoldoutTests {
    @Test(arguments: [0.02, 0.1, 0.5])
    func theHeldOutShareIsTheConfiguredShare(share: Double) {
        var heldOut = 0
        for index in 0..<100_000 where Holdout.isHeldOut(userID: "user-\(index)", share: share, salt: 42) {
            heldOut += 1
        }
        // The sampling SD is at most 0.0016; allow five of them.
        #expect(abs(Double(heldOut) / 100_000 - share) < 0.008)
    }

    @Test func anIDAlwaysGetsTheSameAnswer() {
        for index in 0..<1_000 {
            let id = UserID("user-\(index)")
            let first = Holdout.isHeldOut(userID: id, share: 0.1, salt: 7)
            #expect(Holdout.isHeldOut(userID: id, share: 0.1, salt: 7) == first)
        }
        // Pinned: a change of the mapping would silently move users between groups.
        #expect(PinnedHoldout.values.allSatisfy { Holdout.unitValue(userID: $0.id, salt: $0.salt) == $0.value })
    }

    @Test func growingTheShareOnlyAddsUsers() {
        for index in 0..<10_000 where Holdout.isHeldOut(userID: "u\(index)", share: 0.1, salt: 3) {
            #expect(Holdout.isHeldOut(userID: "u\(index)", share: 0.2, salt: 3))
        }
    }

    @Test func theEdgesOfTheShareAreNoneAndAll() {
        for index in 0..<1_000 {
            #expect(!Holdout.isHeldOut(userID: "u\(index)", share: 0, salt: 1))
            #expect(Holdout.isHeldOut(userID: "u\(index)", share: 1, salt: 1))
        }
    }

    @Test func anotherSaltDrawsAnIndependentGroup() {
        var both = 0
        for index in 0..<100_000 {
            let id = UserID("user-\(index)")
            if Holdout.isHeldOut(userID: id, share: 0.1, salt: 1) && Holdout.isHeldOut(userID: id, share: 0.1, salt: 2)
            {
                both += 1
            }
        }
        // Independent groups overlap in share^2 = 1 % of users.
        #expect(abs(Double(both) / 100_000 - 0.01) < 0.002)
    }
}

/// Values computed once; they must never change.
private enum PinnedHoldout {
    static let values: [(id: UserID, salt: UInt64, value: Double)] = [
        ("user-1", 0, 0.7679704410612723), ("user-2", 42, 0.7698485411016992), ("5f3c9a2e-user", 7, 0.2141627619210662),
    ]
}

@Suite struct ReturnLiftTests {
    @Test func liftIsTheDifferenceOfReturnRates() throws {
        var lift = ReturnLift()
        for index in 0..<100 { lift.record(heldOut: false, returned: index < 40) }
        for index in 0..<100 { lift.record(heldOut: true, returned: index < 25) }
        #expect(lift.treatedReturnRate == 0.4)
        #expect(lift.holdoutReturnRate == 0.25)
        #expect(abs(try #require(lift.lift) - 0.15) < 1e-12)
        #expect(abs(try #require(lift.relativeLift) - 0.6) < 1e-12)
        let interval = try #require(lift.liftInterval95)
        // SE = sqrt(0.4 * 0.6 / 100 + 0.25 * 0.75 / 100) = 0.0654; margin 0.128.
        #expect(abs(interval.low - 0.0219) < 0.001 && abs(interval.high - 0.2781) < 0.001)
    }

    @Test func returnsPromptedByANudgeArePartOfTheReturnsNeverBesideThem() {
        var lift = ReturnLift()
        lift.record(heldOut: false, returned: true, promptedByNudge: true)
        lift.record(heldOut: false, returned: true)
        lift.record(heldOut: false, returned: false, promptedByNudge: true)  // an answer after 14 days: no return
        lift.record(heldOut: true, returned: true, promptedByNudge: true)  // the holdout gets no nudge to answer
        #expect(lift.treatedReturns == 2)
        #expect(lift.treatedReturnsPromptedByNudge == 1)
    }

    @Test(arguments: [(40, 25, true), (40, 35, false), (35, 40, false), (20, 40, true)])
    func aLiftIsSignificantOnlyWhenItsIntervalExcludesZero(treated: Int, holdout: Int, significant: Bool) {
        var lift = ReturnLift()
        for index in 0..<100 { lift.record(heldOut: false, returned: index < treated) }
        for index in 0..<100 { lift.record(heldOut: true, returned: index < holdout) }
        #expect(lift.isSignificant == significant)
        #expect(ReturnLift().isSignificant == nil)
    }

    @Test func anEmptyGroupHasNoLift() {
        var lift = ReturnLift()
        lift.record(heldOut: false, returned: true)
        #expect(lift.treatedReturnRate == 1)
        #expect(lift.holdoutReturnRate == nil)
        #expect(lift.lift == nil && lift.relativeLift == nil && lift.liftInterval95 == nil)
    }

    @Test func shardsMergeAndEncode() throws {
        var a = ReturnLift()
        var b = ReturnLift()
        a.record(heldOut: true, returned: false)
        a.record(heldOut: false, returned: true)
        b.record(heldOut: true, returned: true)
        b.record(heldOut: false, returned: true)
        a.merge(b)
        #expect([a.treatedLapses, a.treatedReturns, a.holdoutLapses, a.holdoutReturns] == [2, 2, 2, 1] as [Int])
        let data = try JSONEncoder().encode(a)
        #expect(try JSONDecoder().decode(ReturnLift.self, from: data) == a)
        #expect(String(data: data, encoding: .utf8)!.contains("\"lift\":0.5"))
        #expect(String(data: data, encoding: .utf8)!.contains("\"significant\":false"))
    }
}
