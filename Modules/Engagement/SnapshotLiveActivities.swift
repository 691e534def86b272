import Foundation
import LiveActivity
import Models

/// The snapshot's Live Activity group (version 3): the tracker as JSON in one string, empty when
/// no activity ever ran. Activities are rare and short (hours), so a compact layout would save
/// bytes only while a workout runs.
extension SnapshotCodec {
    /// Bytes of the group are read up to this size (a tracker holds two activities at most).
    static let liveActivitiesLimit = 64 * 1_024

    func writeLiveActivities(_ tracker: LiveActivityTracker, _ w: inout CompactWriter) {
        guard !tracker.isEmpty else { return w.string("") }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        // Strings, integers and instants only: encoding cannot fail. Were it to, the engine
        // would restore with no activity running, which the app's next update starts again.
        w.string((try? encoder.encode(tracker)).map { String(decoding: $0, as: UTF8.self) } ?? "")
    }

    func readLiveActivities(_ r: inout CompactReader) throws -> LiveActivityTracker {
        let text = try r.string(limit: Self.liveActivitiesLimit)
        guard !text.isEmpty else { return LiveActivityTracker() }
        do {
            return try JSONDecoder().decode(LiveActivityTracker.self, from: Data(text.utf8))
        } catch {
            throw CompactBytesError(offset: r.offset, problem: "Live Activities: \(error)")
        }
    }
}
