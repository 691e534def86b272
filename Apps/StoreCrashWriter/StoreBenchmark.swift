import Dispatch
import Foundation
import Models
import Storage

/// What `StoreBenchmark.run` measured. Times are wall-clock (`DispatchTime`), so run it on a
/// release build of an otherwise idle machine.
struct StoreBenchmarkReport: Codable, Hashable, Sendable, CustomStringConvertible {
    /// Activity events appended in batches of `batchSize`, each batch one `apply`: either all for
    /// one user (an engine step's shape) or each for a random user (an import, or a shell that
    /// groups many steps into one transaction).
    struct Inserts: Codable, Hashable, Sendable {
        var batchSize: Int
        var oneUserPerBatch: Bool
        var batches: Int
        /// `fsyncEveryCommit` or `fsyncAtCheckpoint`.
        var durability: String
        var eventsPerSecond: Double
    }

    /// Latencies of one read of the store interface, sampled on random users.
    struct Query: Codable, Hashable, Sendable {
        var name: String
        var samples: Int
        var meanRows: Double
        var p50Micros: Double
        var p99Micros: Double
        var maxMicros: Double
    }

    var users: Int
    var weeks: Int
    /// The synthetic history: one batch per user (profile, events, ledger writes, state).
    var historyActivityEvents: Int
    var historyLedgerWrites: Int
    var historyLoadSeconds: Double
    var inserts: [Inserts]
    var queries: [Query]
    /// The database file after a WAL checkpoint.
    var fileSizeBytes: Int64

    var description: String {
        func format(_ value: Double, _ digits: Int = 1) -> String { String(format: "%.\(digits)f", value) }
        var lines = [
            "store benchmark: \(users) users x \(weeks) weeks",
            "history: \(historyActivityEvents) activity events + \(historyLedgerWrites) ledger writes in "
                + "\(format(historyLoadSeconds)) s (one batch per user)",
            "file size: \(format(Double(fileSizeBytes) / 1_048_576)) MiB "
                + "(\(format(Double(fileSizeBytes) / Double(max(1, historyActivityEvents + historyLedgerWrites)), 0)) "
                + "bytes per history record)",
            "activity event inserts:",
        ]
        for insert in inserts {
            lines.append(
                "  \(insert.batchSize) per batch, \(insert.oneUserPerBatch ? "one user" : "random users"), "
                    + "\(insert.durability): \(format(insert.eventsPerSecond, 0)) events/s, "
                    + "\(format(1e6 * Double(insert.batchSize) / insert.eventsPerSecond)) us per batch "
                    + "(\(insert.batches) batches)")
        }
        lines.append("hot queries (microseconds):")
        for query in queries {
            lines.append(
                "  \(query.name): p50 \(format(query.p50Micros)), p99 \(format(query.p99Micros)), "
                    + "max \(format(query.maxMicros)) (\(query.samples) samples, \(format(query.meanRows)) rows)")
        }
        return lines.joined(separator: "\n")
    }
}

/// A benchmark of `SQLiteEngagementStore` on deterministic synthetic history: loads `users` x
/// `weeks` of activity and notification ledger, then measures batched inserts of activity events
/// and the latencies of the engine's hot reads.
enum StoreBenchmark {
    /// Runs the benchmark on a new store at `path`, which must not exist yet (the benchmark never
    /// overwrites a file). The store is left in place for inspection.
    static func run(path: String, users: Int, weeks: Int) throws(StoreError) -> StoreBenchmarkReport {
        guard users > 0, weeks > 0 else {
            throw .invalidBatch(field: "users, weeks", problem: "must be positive, got \(users), \(weeks)")
        }
        guard !FileManager.default.fileExists(atPath: path) else {
            throw .unavailable("\(path) already exists; the benchmark only writes to a new file")
        }
        let days = weeks * 7
        let end = StoreCrashWorkload.start + Int64(days) * .secondsPerDay
        var report = StoreBenchmarkReport(
            users: users, weeks: weeks, historyActivityEvents: 0, historyLedgerWrites: 0, historyLoadSeconds: 0,
            inserts: [], queries: [], fileSizeBytes: 0)

        do {
            let store = try SQLiteEngagementStore(path: path)
            let dayNames = (0..<days).map { day in
                String((StoreCrashWorkload.start + Int64(day) * .secondsPerDay).iso8601.prefix(10))
            }
            let started = DispatchTime.now()
            for user in 0..<users {
                let batch = history(user: user, days: days, dayNames: dayNames)
                report.historyActivityEvents += batch.activityEvents.count
                report.historyLedgerWrites += batch.ledgerEntries.count
                try store.apply(batch)
            }
            report.historyLoadSeconds = seconds(since: started)
            var random = SeededGenerator(seed: 0xBE4C_0000_0000_0002)
            report.queries = try queries(store, users: users, end: end, &random)
            var next = end
            for (batchSize, oneUser, batches) in [
                (1, true, 300), (10, true, 300), (100, false, 100), (1_000, false, 20),
            ] {
                report.inserts.append(
                    try inserts(
                        into: store, batchSize: batchSize, oneUserPerBatch: oneUser, batches: batches,
                        durability: "fsyncEveryCommit", users: users, after: &next, &random))
            }
        }
        do {
            let store = try SQLiteEngagementStore(path: path, options: .init(durability: .fsyncAtCheckpoint))
            var random = SeededGenerator(seed: 0xBE4C_0000_0000_0003)
            var next = end + 30 * .secondsPerDay
            for (batchSize, oneUser, batches) in [
                (1, true, 2_000), (10, true, 1_000), (100, false, 200), (1_000, false, 20),
            ] {
                report.inserts.append(
                    try inserts(
                        into: store, batchSize: batchSize, oneUserPerBatch: oneUser, batches: batches,
                        durability: "fsyncAtCheckpoint", users: users, after: &next, &random))
            }
            try store.checkpoint()
        }
        let attributes = try? FileManager.default.attributesOfItem(atPath: path)
        report.fileSizeBytes = (attributes?[.size] as? NSNumber)?.int64Value ?? 0
        return report
    }

    // MARK: - Synthetic history

    private static let zones = [
        "Europe/Lisbon", "America/New_York", "Asia/Kolkata", "Australia/Adelaide", "Asia/Kathmandu",
        "America/Sao_Paulo", "Asia/Tokyo", "Pacific/Auckland",
    ]

    /// One user's whole history as one batch. Most users stay active to the end, about a
    /// quarter lapse in the last weeks and some churn early, so `usersInactive` has work to do.
    static func history(user: Int, days: Int, dayNames: [String]) -> StoreBatch {
        var random = SeededGenerator(seed: 0x5709_E8E6_C4A1_B3D2).derived(UInt64(user))
        let userID = UserID("user-\(user)")
        let persona = random.nextUnit()
        let activeDays =
            persona < 0.6 ? days : persona < 0.85 ? max(1, days - random.int(in: 4...20)) : random.int(in: 1...days)
        let zone = zones[random.int(in: 0...(zones.count - 1))]
        let offsetSeconds = Int64(random.int(in: -10...12)) * .secondsPerHour
        var events: [ActivityEvent] = []
        var ledger: [LedgerEntry] = []
        events.reserveCapacity(activeDays * 5)
        ledger.reserveCapacity(days * 11)
        for day in 0..<days {
            let midnight = StoreCrashWorkload.start + Int64(day) * .secondsPerDay - offsetSeconds
            func local(_ hour: Int) -> Instant {
                midnight + Int64(hour) * .secondsPerHour + Int64(random.int(in: 0...3_599))
            }
            if day < activeDays {
                for _ in 0..<random.int(in: 0...3) {
                    events.append(
                        ActivityEvent(
                            userID: userID, at: local(random.int(in: 6...22)),
                            kind: .appOpened(sessionSeconds: random.int(in: 30...900))))
                }
                if random.chance(0.45) {
                    events.append(
                        ActivityEvent(
                            userID: userID, at: local(random.int(in: 6...20)),
                            kind: .workoutCompleted(durationMinutes: random.int(in: 20...75))))
                }
                for meal in MealType.allCases where random.chance(0.35) {
                    events.append(
                        ActivityEvent(userID: userID, at: local(meal.defaultTime.hour), kind: .mealLogged(meal)))
                }
                if random.chance(0.2) { events.append(ActivityEvent(userID: userID, at: local(21), kind: .moodLogged)) }
            }
            var requests: [(NotificationKind, String, Int)] = [
                (.morningGreeting, "", 7), (.mealReminder, ".lunch", 12), (.mealReminder, ".dinner", 18),
                (.hydration, ".1500", 15),
            ]
            if random.chance(0.5) { requests.append((.workoutReminder, ".1800", 17)) }
            for (kind, suffix, hour) in requests {
                let requestID: RequestID = "\(kind.rawValue).\(dayNames[day])\(suffix)"
                let due = local(hour)
                ledger.append(entry(userID, requestID, kind, .pending, due - 6 * .secondsPerHour, nil))
                ledger.append(entry(userID, requestID, kind, .delivered, due, .onTime))
                if day < activeDays, random.chance(0.3) {
                    ledger.append(
                        entry(userID, requestID, kind, .responded, due + Int64(random.int(in: 60...3_600)), nil))
                }
            }
        }
        let lapsed = activeDays < days - 3
        return StoreBatch(
            profiles: [UserProfile(id: userID, displayName: "User \(user)", timeZone: zone)], activityEvents: events,
            ledgerEntries: ledger,
            engagementStates: [
                EngagementState(
                    userID: userID, lapseStage: lapsed ? "lapsed" : "active", reEngagementAttempts: lapsed ? 1 : 0,
                    campaignStartedAt: lapsed ? midnightAfter(activeDays) : nil, checkpoint: "history")
            ])
    }

    private static func midnightAfter(_ days: Int) -> Instant {
        StoreCrashWorkload.start + Int64(days + 3) * .secondsPerDay
    }

    private static func entry(
        _ userID: UserID, _ requestID: RequestID, _ kind: NotificationKind, _ state: LedgerState, _ at: Instant,
        _ reason: ReasonCode?
    ) -> LedgerEntry {
        LedgerEntry(
            userID: userID, requestID: requestID, kind: kind, state: state, at: at, reason: reason,
            idempotencyKey: LedgerEntry.transitionKey(requestID: requestID, state: state))
    }

    // MARK: - Measurements

    private static func inserts(
        into store: SQLiteEngagementStore, batchSize: Int, oneUserPerBatch: Bool, batches: Int, durability: String,
        users: Int, after next: inout Instant, _ random: inout SeededGenerator
    ) throws(StoreError) -> StoreBenchmarkReport.Inserts {
        let prepared = (0..<batches).map { _ in
            let batchUser = random.int(in: 0...(users - 1))
            return StoreBatch(
                activityEvents: (0..<batchSize).map { _ in
                    next = next + 1
                    let user = oneUserPerBatch ? batchUser : random.int(in: 0...(users - 1))
                    return ActivityEvent(
                        userID: "user-\(user)", at: next, kind: .appOpened(sessionSeconds: random.int(in: 30...900)))
                })
        }
        let started = DispatchTime.now()
        for batch in prepared { try store.apply(batch) }
        let elapsed = seconds(since: started)
        return .init(
            batchSize: batchSize, oneUserPerBatch: oneUserPerBatch, batches: batches, durability: durability,
            eventsPerSecond: Double(batchSize * batches) / max(elapsed, 1e-9))
    }

    private static func queries(
        _ store: SQLiteEngagementStore, users: Int, end: Instant, _ random: inout SeededGenerator
    ) throws(StoreError) -> [StoreBenchmarkReport.Query] {
        let perUser = 2_000
        func randomUser() -> UserID { "user-\(random.int(in: 0...(users - 1)))" }
        var figures: [StoreBenchmarkReport.Query] = []
        figures.append(
            try measure("ledger(userID:from:to:), last 24 h", samples: perUser) { () throws(StoreError) in
                try store.ledger(userID: randomUser(), from: end - .secondsPerDay, to: end).count
            })
        figures.append(
            try measure("ledger(userID:from:to:), last 7 days", samples: perUser) { () throws(StoreError) in
                try store.ledger(userID: randomUser(), from: end - 7 * .secondsPerDay, to: end).count
            })
        figures.append(
            try measure("activityEvents(userID:since:), last 7 days", samples: perUser) { () throws(StoreError) in
                try store.activityEvents(userID: randomUser(), since: end - 7 * .secondsPerDay).count
            })
        figures.append(
            try measure("lastActiveAt(userID:)", samples: perUser) { () throws(StoreError) in
                try store.lastActiveAt(userID: randomUser()) == nil ? 0 : 1
            })
        figures.append(
            try measure("engagementState(userID:)", samples: perUser) { () throws(StoreError) in
                try store.engagementState(userID: randomUser()) == nil ? 0 : 1
            })
        figures.append(
            try measure("profile(id:)", samples: perUser) { () throws(StoreError) in
                try store.profile(id: randomUser()) == nil ? 0 : 1
            })
        figures.append(
            try measure("usersInactive(since:), 3 days", samples: 100) { () throws(StoreError) in
                try store.usersInactive(since: end - 3 * .secondsPerDay).count
            })
        return figures
    }

    private static func measure(
        _ name: String, samples: Int, _ body: () throws(StoreError) -> Int
    ) throws(StoreError) -> StoreBenchmarkReport.Query {
        var micros: [Double] = []
        micros.reserveCapacity(samples)
        var rows = 0
        for _ in 0..<samples / 10 { _ = try body() }  // warm-up: caches, statement preparation
        for _ in 0..<samples {
            let started = DispatchTime.now()
            rows += try body()
            micros.append(seconds(since: started) * 1e6)
        }
        micros.sort()
        func percentile(_ p: Double) -> Double {
            micros[min(micros.count - 1, max(0, Int((p * Double(micros.count)).rounded(.up)) - 1))]
        }
        return .init(
            name: name, samples: samples, meanRows: Double(rows) / Double(samples), p50Micros: percentile(0.5),
            p99Micros: percentile(0.99), maxMicros: micros.last ?? 0)
    }

    private static func seconds(since start: DispatchTime) -> Double {
        Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9
    }
}
