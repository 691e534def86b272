import Content
import Dispatch
import Engagement
import Foundation
import Models
import Runtime
import Storage

/// The runtime on SQLite: inputs per second and per-input latency (each one restore-free
/// apply plus one transaction: snapshot, history, outbox), then a restart: a new runtime over
/// the same file answering one input for every stored user (each restored from its snapshot).
func runtimeFigures(
    content: ContentGenerator, durability: SQLiteEngagementStore.Options.Durability, users: Int = 1_000,
    inputs: Int = 20_000
) async throws -> [String] {
    let options = SQLiteEngagementStore.Options(durability: durability)
    let label = durability == .fsyncEveryCommit ? "fsync each" : "fsync at checkpoint"
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("bench-runtime-\(getpid())")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let path = folder.appendingPathComponent("runtime.sqlite").path
    let clock = ManualClock(Instant(iso8601: "2027-03-12T12:00:00Z")!)
    let zones = ["Europe/Berlin", "America/New_York", "Asia/Kathmandu", "Australia/Lord_Howe", "America/St_Johns"]
    func profile(_ index: Int) -> UserProfile {
        var preferences = NotificationPreferences()
        preferences.hydration = index % 2 == 0 ? .hourly : .biHourly
        return UserProfile(
            id: "u\(index)", displayName: "User \(index)", timeZone: zones[index % zones.count],
            communication: CommunicationPreferences(absenceResponse: .checkInOnMe), preferences: preferences)
    }
    let activities: [ActivityKind] = [
        .appOpened(sessionSeconds: 90), .mealLogged(.lunch), .moodLogged, .workoutCompleted(durationMinutes: 40),
        .coachChat,
    ]
    var lines: [String] = []
    do {
        let runtime = EngineRuntime(
            store: try SQLiteEngagementStore(path: path, options: options), clock: clock, content: content)
        for index in 0..<users { try await runtime.putUser(profile(index)) }
        var samples: [UInt64] = []
        samples.reserveCapacity(inputs)
        let started = DispatchTime.now().uptimeNanoseconds
        for index in 0..<inputs {
            clock.advance(by: 30)
            let begin = DispatchTime.now().uptimeNanoseconds
            try await runtime.apply(.activity(activities[index % activities.count]), to: "u\(index % users)")
            samples.append(DispatchTime.now().uptimeNanoseconds - begin)
        }
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
        lines.append(
            Timing(name: "runtime input, SQLite (\(label))", samples: samples).line()
                + String(format: "   %.0f inputs/s", Double(inputs) / seconds))
    }
    // A restart: nothing but the file survives. The first runtime's connections close as its last
    // references go, which a loaded machine may not have done yet: the open waits for them, as a
    // restarted server would (CI once saw "database is locked" here).
    let opened = DispatchTime.now().uptimeNanoseconds
    let runtime = EngineRuntime(
        store: try await openWhenUnlocked(path: path, options: options), clock: clock, content: content)
    let openSeconds = Double(DispatchTime.now().uptimeNanoseconds - opened) / 1e9
    let restoreStarted = DispatchTime.now().uptimeNanoseconds
    for index in 0..<users {
        clock.advance(by: 1)
        try await runtime.apply(.activity(.appOpened(sessionSeconds: 30)), to: "u\(index)")
    }
    let restoreSeconds = Double(DispatchTime.now().uptimeNanoseconds - restoreStarted) / 1e9
    let figures = String(format: "store open %.1f ms, then %.0f ms", openSeconds * 1_000, restoreSeconds * 1_000)
    lines.append("restart, \(users) users stored (\(label)): \(figures) for one input to each (restore + apply)")
    return lines
}

/// The store at `path`, opened again while it reports itself locked (at most 10 s).
private func openWhenUnlocked(path: String, options: SQLiteEngagementStore.Options) async throws
    -> SQLiteEngagementStore
{
    for _ in 0..<100 {
        do {
            return try SQLiteEngagementStore(path: path, options: options)
        } catch {
            guard case .unavailable(let detail) = error, detail.contains("locked") else { throw error }
            try await Task.sleep(for: .milliseconds(100))
        }
    }
    return try SQLiteEngagementStore(path: path, options: options)
}
