// Engine micro-benchmarks (release build): per-call timings of the engine's hot paths.
// Run with `make bench`. Figures are wall time per call on this machine, p50 / p99 / max.
import ArgumentParser
import Content
import Dispatch
import Engagement
import Foundation
import LiveActivity
import Models
import Scheduling
import Simulation
import Storage

/// The command line: `bench` runs every engine figure, `bench runtime [USERS]` the runtime's only.
/// Usage errors print the synopsis and exit 64 (swift-argument-parser).
struct BenchCommand: ParsableCommand {
    enum Part: String, ExpressibleByArgument, CaseIterable {
        case engine, runtime
    }

    static let configuration = CommandConfiguration(
        commandName: "bench", abstract: "Engine micro-benchmarks and the runtime's figures (release build).")

    @Argument(help: "engine (the default: every engine figure) or runtime (the server's write path only).")
    var part: Part = .engine

    @Argument(help: "With runtime: users stored for the restart figure.")
    var users = 1_000

    func validate() throws {
        guard (1...1_000_000).contains(users) else {
            throw ValidationError("users must be in 1...1000000, got \(users)")
        }
    }
}

let command = BenchCommand.parseOrExit()

struct Timing {
    var name: String
    var samples: [UInt64]

    func line() -> String {
        let sorted = samples.sorted()
        func at(_ p: Double) -> Double { Double(sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]) / 1_000 }
        func f(_ v: Double) -> String { String(format: "%10.2f", v) }
        return name.padding(toLength: 44, withPad: " ", startingAt: 0) + String(format: "%9d", sorted.count)
            + f(at(0.5)) + f(at(0.99)) + f(Double(sorted.last!) / 1_000)
    }
}

/// Times `body` once per iteration after a warm-up.
func measure(_ name: String, iterations: Int, _ body: (Int) -> Void) -> Timing {
    for i in 0..<min(1_000, iterations) { body(i) }
    var samples: [UInt64] = []
    samples.reserveCapacity(iterations)
    for i in 0..<iterations {
        let start = DispatchTime.now().uptimeNanoseconds
        body(i)
        samples.append(DispatchTime.now().uptimeNanoseconds - start)
    }
    return Timing(name: name, samples: samples)
}

@inline(never) func blackHole<T>(_ value: T) { withExtendedLifetime(value) {} }

let zone = ZoneRules(identifier: "America/New_York")!
let start = Instant(iso8601: "2027-03-12T12:00:00Z")!
var preferences = NotificationPreferences()
preferences.hydration = .hourly
preferences.quietHours = try! QuietHours(start: LocalTimeOfDay("22:00")!, end: LocalTimeOfDay("07:00")!)
preferences.maxPerHour = 10
preferences.workoutSchedule = Weekday.allCases.map {
    ScheduledWorkout(weekday: $0, time: LocalTimeOfDay("18:30")!, type: "Run")
}
let profile = UserProfile(
    id: "bench", displayName: "Ana Bench", timeZone: zone.identifier,
    communication: CommunicationPreferences(absenceResponse: .checkInOnMe), preferences: preferences)

var timings: [Timing] = []

// One full planning pass: a user whose horizon fills the pending slots, re-planned an hour later
// each call (the plan shifts, so the pass does real work: retire, generate, rules, diff).
// One-shot occurrences only (no daily series), so the plan fills the pending slots.
var fullHorizon = EngineConfiguration()
fullHorizon.useDailySeries = false
// The composition root picks the templates; a file that fails to load is reported, not trapped.
let templates: TemplateCatalog
do {
    templates = try TemplateCatalog.bundled()
} catch {
    print("bench: the bundled templates do not load: \(error)")
    exit(74)
}
let generator = ContentGenerator(catalog: templates)

// `bench runtime [USERS]`: the runtime's figures only (the server's write path, for profiling;
// USERS stored users for the restart figure).
if command.part == .runtime {
    for durability in [SQLiteEngagementStore.Options.Durability.fsyncEveryCommit, .fsyncAtCheckpoint] {
        for line in try await runtimeFigures(content: generator, durability: durability, users: command.users) {
            print(line)
        }
    }
    exit(0)
}
var engine = UserEngine(
    profile: profile, zone: zone, now: start, configuration: fullHorizon, content: generator)
_ = engine.handle(.appLaunched, at: start)
var clock = start
var plannedCount = 0
timings.append(
    measure("planning pass (full horizon, 1 h later)", iterations: 20_000) { _ in
        clock = clock + 3_600
        let effects = engine.handle(.activity(.appOpened(sessionSeconds: 60)), at: clock)
        plannedCount = max(plannedCount, engine.plannedRequestIDs.count)
        blackHole(effects)
    })

// A full planning pass that finds nothing to change: the preferences change in a way that moves
// no notification (the sound setting), so the plan's key changes and the pass runs.
var soundToggled = preferences
soundToggled.soundEnabled.toggle()
timings.append(
    measure("planning pass (full, nothing to change)", iterations: 20_000) { i in
        blackHole(engine.handle(.preferencesChanged(i % 2 == 0 ? soundToggled : preferences), at: clock))
    })

// An input whose plan inputs are unchanged: the engine skips the pass.
timings.append(
    measure("input with plan inputs unchanged", iterations: 20_000) { _ in
        blackHole(engine.handle(.activity(.appOpened(sessionSeconds: 60)), at: clock))
    })

// A Live Activity update through the whole engine (its budget: 500 ms): a workout's
// tick every 20 s, a new exercise every tenth, a new workout every thousandth (under the 8 h
// limit), the tracker's rules and the plan's unchanged-key check.
timings.append(
    measure("Live Activity update (engine.handle)", iterations: 20_000) { i in
        let at = clock + Int64(20 * i)
        let event: LiveActivityEvent =
            i % 1_000 == 0
            ? .workoutStarted(workoutType: "Run")
            : .workoutUpdated(
                WorkoutActivityAttributes.ContentState(
                    elapsedSeconds: 20 * (i % 1_000), heartRate: 120 + i % 40, activeCalories: i % 1_000,
                    currentExercise: "set \(i / 10)"))
        blackHole(engine.handle(.liveActivity(event), at: at))
    })
clock = clock + 20 * 20_000

// One policy decision against a ledger of a day's deliveries.
var ledger = CapLedger()
for hour in 0..<24 { ledger.insert(start + Int64(hour) * 3_600) }
let candidate = Candidate(
    id: OccurrenceID(.hydration, date: LocalDate(year: 2027, month: 3, day: 12), .minuteOfDay(540)), kind: .hydration,
    plannedAt: start + 30 * 60, level: .active,
    policy: .standard(for: .hydration))
timings.append(
    measure("policy decision (quiet hours + caps)", iterations: 200_000) { i in
        var c = candidate
        c.plannedAt = start + Int64(i % 48) * 1_800
        blackHole(DeliveryRules.evaluate(c, at: start, preferences: preferences, zone: zone, ledger: ledger))
    })

timings.append(
    measure("local time -> instant (ZoneRules.resolve)", iterations: 200_000) { i in
        let local = LocalDateTime(date: LocalDate(year: 2027, month: 3, day: 1 + i % 28), secondOfDay: (i % 1_440) * 60)
        blackHole(zone.resolve(local))
    })

timings.append(
    measure("calendar trigger next match (daily)", iterations: 200_000) { i in
        blackHole(CalendarMatch(hour: 7, minute: 30).nextMatch(after: start + Int64(i) * 600, in: zone))
    })

// Content: one template render, one full template decision (privacy redaction, variety), and the
// checks of an AI answer (parse, validation, privacy audit, payload size).
let recipient = Recipient(profile)
let contentRequest = ContentRequest(
    kind: .morningGreeting, style: .encouraging, recipient: recipient, context: CopyContext(firstName: "Ana"))
var memory = TemplateMemory()
var random = SeededGenerator(seed: 1)
timings.append(
    measure("template render", iterations: 200_000) { i in
        blackHole(
            templates.defaultLibrary.render(
                .mealReminder, style: .supportive, context: CopyContext(firstName: "Ana", meal: .lunch), variant: i
            ).copy)
    })
timings.append(
    measure("content decision (template, privacy, variety)", iterations: 200_000) { _ in
        blackHole(generator.decide(nil, for: contentRequest, memory: &memory, generator: &random))
    })
timings.append(
    measure("AI copy judged (parse, validate, audit, 4 KB)", iterations: 100_000) { i in
        blackHole(
            generator.judge(
                .text("Good morning ☀️|Ready for a short run today? \(i % 7) minutes is plenty.", latencyMillis: 300),
                for: contentRequest))
    })

// A workout's Live Activity update: its push payload and its 4 KB measure, hand-written and
// through JSONEncoder (the same bytes).
timings += liveActivityPayloadTimings()

print("engine benchmark (release)                       calls    p50 us    p99 us    max us")
for timing in timings { print(timing.line()) }
print("largest plan held \(plannedCount) pending requests (limit 64, 4 reserved)")

let bare = BareLoopBenchmark.eventsPerSecond()
print("bare event loop (the simulator's event queue, no work): \(Int(bare)) events/s")

// The server-side sweep: lapse detection and engagement metrics over a whole population. The
// synthetic columns are built outside the timing; after one warm-up, the median of 5 sweeps,
// and the best of 3 such medians.
for users in [100_000, 1_000_000] {
    let columns = PopulationSweep.syntheticColumns(users: users, seed: 42)
    var best = Double.infinity
    var result = PopulationSweep.sweepSynthetic(columns)
    for _ in 0..<3 {
        var samples: [UInt64] = []
        for _ in 0..<5 {
            let start = DispatchTime.now().uptimeNanoseconds
            result = PopulationSweep.sweepSynthetic(columns)
            samples.append(DispatchTime.now().uptimeNanoseconds - start)
        }
        best = min(best, Double(samples.sorted()[2]) / 1e9)
    }
    print(
        "population sweep \(users) users: \(String(format: "%.2f", best * 1_000)) ms (best of 3), "
            + "\(result.newlyLapsed.count) newly lapsed")
}

// The runtime: an input through the engine and one SQLite transaction (with an fsync each, the
// default, and with fsync at checkpoints), and a restart over the same file. 5,000 inputs keep the
// report short; `bench runtime` runs the full 20,000 for profiling.
for durability in [SQLiteEngagementStore.Options.Durability.fsyncEveryCommit, .fsyncAtCheckpoint] {
    for line in try await runtimeFigures(content: generator, durability: durability, inputs: 5_000) { print(line) }
}
