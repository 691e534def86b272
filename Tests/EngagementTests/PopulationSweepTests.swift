import Models
import Testing

@testable import Engagement

@Suite struct PopulationSweepTests {
    let now = Instant(iso8601: "2027-06-10T12:00:00Z")!
    let thresholds = LapseThresholds()

    /// Random columns around `now`, with idle times clustered on the thresholds so the
    /// boundaries (exactly 1, 3 and 7 days, a previous sweep a day earlier) are exercised.
    func randomColumns(users: Int, seed: UInt64) -> PopulationColumns {
        var random = SeededGenerator(seed: seed)
        let day = Int64.secondsPerDay
        let edges: [Int64] = [0, day, 3 * day, 4 * day, 7 * day, 8 * day]
        var last: [Int64] = []
        var enrolled: [Int64] = []
        var sessions: [Int32] = []
        var seconds: [Int64] = []
        var streaks: [Int32] = []
        var sent: [Int32] = []
        var delivered: [Int32] = []
        for _ in 0..<users {
            let idle =
                random.chance(0.3)
                ? edges[random.int(in: 0...edges.count - 1)] + Int64(random.int(in: -2...2))
                : Int64(random.int(in: -3_600...(30 * 86_400)))
            last.append(now.secondsSinceEpoch - idle)
            enrolled.append(now.secondsSinceEpoch - Int64(random.int(in: 0...(40 * 86_400))))
            let count = Int32(random.int(in: 0...20))
            sessions.append(count)
            seconds.append(Int64(count) * Int64(random.int(in: 10...900)))
            streaks.append(Int32(random.int(in: 0...3) == 0 ? random.int(in: 1...20) : 0))
            let sentCount = Int32(random.int(in: 0...10))
            sent.append(sentCount)
            delivered.append(Int32(random.int(in: 0...Int(sentCount))))
        }
        return try! PopulationColumns(
            lastActiveAtSeconds: last, enrolledAtSeconds: enrolled, sessionCounts: sessions, sessionSeconds: seconds,
            currentStreakDays: streaks, sent: sent, delivered: delivered)
    }

    @Test(arguments: [1 as UInt64, 2, 3])
    func theSweepEqualsANaivePerUserComputation(seed: UInt64) {
        let columns = randomColumns(users: 5_000, seed: seed)
        let previous = now - .secondsPerDay
        let windowStart = now - 28 * .secondsPerDay
        let result = PopulationSweep.run(columns, now: now, previousSweepAt: previous, windowStart: windowStart)

        var stages: [EngagementStage: Int] = [:]
        var newlyLapsed: [Int] = []
        var newlyChurnRisk: [Int] = []
        var observed: Int64 = 0
        for user in 0..<columns.count {
            let last = Instant(secondsSinceEpoch: columns.lastActiveAtSeconds[user])
            stages[thresholds.stage(idleSeconds: now - last), default: 0] += 1
            let idleThen = previous - last
            let idleNow = now - last
            if idleThen <= thresholds.lapseAfterSeconds && idleNow > thresholds.lapseAfterSeconds {
                newlyLapsed.append(user)
            }
            if idleThen <= thresholds.churnRiskAfterSeconds && idleNow > thresholds.churnRiskAfterSeconds {
                newlyChurnRisk.append(user)
            }
            let start = max(Instant(secondsSinceEpoch: columns.enrolledAtSeconds[user]), windowStart)
            observed += max(0, now - start)
        }
        let metrics = result.metrics
        #expect(metrics.totalUsers == 5_000)
        #expect(metrics.activeUsers == stages[.active, default: 0])
        #expect(metrics.idleUsers == stages[.idle, default: 0])
        #expect(metrics.lapsedUsers == stages[.lapsed, default: 0])
        #expect(metrics.churnRiskUsers == stages[.churnRisk, default: 0])
        #expect(result.newlyLapsed == newlyLapsed)
        #expect(result.newlyChurnRisk == newlyChurnRisk)
        #expect(!newlyLapsed.isEmpty && !newlyChurnRisk.isEmpty)
        #expect(metrics.observedUserSeconds == observed)
        #expect(metrics.sessions == columns.sessionCounts.reduce(0) { $0 + Int($1) })
        #expect(metrics.sessionSeconds == columns.sessionSeconds.reduce(0, +))
        #expect(metrics.currentStreakDaysTotal == columns.currentStreakDays.reduce(0) { $0 + Int($1) })
        #expect(metrics.usersOnStreak == columns.currentStreakDays.filter { $0 > 0 }.count)
        #expect(metrics.longestStreakDays == Int(columns.currentStreakDays.max()!))
        #expect(metrics.allKinds.sent == columns.sent.reduce(0) { $0 + Int($1) })
        #expect(metrics.allKinds.delivered == columns.delivered.reduce(0) { $0 + Int($1) })
        #expect(metrics.allKinds.recipients == columns.delivered.filter { $0 > 0 }.count)
        #expect(metrics.allKinds.opened == 0)
    }

    @Test func withoutAPreviousSweepEveryLapsedUserIsNew() {
        let columns = randomColumns(users: 2_000, seed: 9)
        let result = PopulationSweep.run(columns, now: now, previousSweepAt: nil, windowStart: now)
        let lapsedOrWorse = (0..<columns.count).filter {
            now.secondsSinceEpoch - columns.lastActiveAtSeconds[$0] > thresholds.lapseAfterSeconds
        }
        #expect(result.newlyLapsed == lapsedOrWorse)
        #expect(result.newlyChurnRisk.count == result.metrics.churnRiskUsers)
        #expect(result.metrics.sessionsPerWeek == nil)  // an empty window
    }

    @Test func consecutiveSweepsFindEachLapseExactlyOnce() {
        let columns = randomColumns(users: 3_000, seed: 5)
        var found: [Int] = []
        var previous = now - 20 * .secondsPerDay
        // Hourly sweeps over three weeks, then one over the whole time: the same users.
        for hour in 1...(20 * 24) {
            let at = now - 20 * .secondsPerDay + Int64(hour) * .secondsPerHour
            found += PopulationSweep.run(columns, now: at, previousSweepAt: previous, windowStart: at).newlyLapsed
            previous = at
        }
        let once = PopulationSweep.run(
            columns, now: now, previousSweepAt: now - 20 * .secondsPerDay, windowStart: now)
        #expect(found.sorted() == once.newlyLapsed)
        #expect(Set(found).count == found.count)
    }

    @Test func theSweepAgreesWithMetricsFromTheLogs() {
        // Users with activity logs: the columns a store would keep for them, swept, give the
        // same counts as the per-user summaries added up.
        var random = SeededGenerator(seed: 21)
        let since = now - 14 * .secondsPerDay
        var metrics = EngagementMetrics()
        var last: [Int64] = []
        var sessions: [Int32] = []
        var seconds: [Int64] = []
        var streaks: [Int32] = []
        for user in 0..<300 {
            var events: [ActivityEvent] = []
            for _ in 0..<random.int(in: 0...12) {
                let at = now - Int64(random.int(in: 0...(13 * 86_400)))
                let kind: ActivityKind =
                    random.chance(0.5)
                    ? .appOpened(sessionSeconds: random.int(in: 5...1_200)) : .workoutCompleted(durationMinutes: 40)
                events.append(ActivityEvent(userID: "u\(user)", at: at, kind: kind))
            }
            let summary = UserEngagementSummary(
                activity: events, deliveries: [], optOuts: [], since: since, now: now, zone: .utc)
            metrics.add(summary)
            last.append((summary.lastActiveAt ?? since).secondsSinceEpoch)
            sessions.append(Int32(summary.sessions))
            seconds.append(summary.sessionSeconds)
            streaks.append(Int32(summary.currentStreakDays))
        }
        let columns = try! PopulationColumns(
            lastActiveAtSeconds: last, sessionCounts: sessions, sessionSeconds: seconds, currentStreakDays: streaks)
        let swept = PopulationSweep.run(columns, now: now, previousSweepAt: nil, windowStart: since).metrics
        #expect(swept.totalUsers == metrics.totalUsers)
        #expect(swept.activeUsers == metrics.activeUsers)
        #expect(swept.idleUsers == metrics.idleUsers)
        #expect(swept.lapsedUsers == metrics.lapsedUsers)
        #expect(swept.churnRiskUsers == metrics.churnRiskUsers)
        #expect(swept.sessions == metrics.sessions)
        #expect(swept.sessionSeconds == metrics.sessionSeconds)
        #expect(swept.observedUserSeconds == metrics.observedUserSeconds)
        #expect(swept.sessionsPerWeek == metrics.sessionsPerWeek)
        #expect(swept.currentStreakDaysTotal == metrics.currentStreakDaysTotal)
        #expect(swept.usersOnStreak == metrics.usersOnStreak)
        #expect(swept.engagementRate == metrics.engagementRate)
    }

    @Test func columnsOfTheWrongLengthAreRefused() {
        #expect(throws: InvalidValue.self) {
            try PopulationColumns(lastActiveAtSeconds: [1, 2, 3], sessionCounts: [1, 2])
        }
        #expect(throws: Never.self) { try PopulationColumns(lastActiveAtSeconds: [1, 2, 3], sessionCounts: []) }
    }

    @Test func theBenchmarkPopulationIsFixedByItsSeed() {
        let first = PopulationSweep.sweepSynthetic(PopulationSweep.syntheticColumns(users: 10_000, seed: 4))
        let second = PopulationSweep.sweepSynthetic(PopulationSweep.syntheticColumns(users: 10_000, seed: 4))
        let other = PopulationSweep.sweepSynthetic(PopulationSweep.syntheticColumns(users: 10_000, seed: 5))
        #expect(first == second)
        #expect(first != other)
        #expect(first.metrics.totalUsers == 10_000)
        // The synthetic mix: about 45 % active, 15 % lapsed, 20 % at churn risk.
        let metrics = first.metrics
        #expect(abs(Double(metrics.activeUsers) / 10_000 - 0.45) < 0.03)
        #expect(abs(Double(metrics.lapsedUsers) / 10_000 - 0.15) < 0.03)
        #expect(abs(Double(metrics.churnRiskUsers) / 10_000 - 0.20) < 0.03)
        #expect(metrics.allKinds.acted <= metrics.allKinds.opened)
        #expect(metrics.allKinds.opened <= metrics.allKinds.delivered)
    }
}
