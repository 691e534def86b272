import Foundation

/// One worker's sends as its statistics file reports them (`engaged worker --stats-file`):
/// each silence of 0.5 s or more between two sends, and its latest send.
struct WorkerSends: Equatable {
    /// A silence: the send that began it and the first send after it, in wall milliseconds.
    struct Silence: Equatable {
        var sinceMillis: Int64
        var resumedAtMillis: Int64
    }

    var worker: String
    var silences: [Silence]
    /// Wall milliseconds of the latest send; 0 when it never sent.
    var lastSendMillis: Int64

    init(worker: String, silences: [Silence] = [], lastSendMillis: Int64) {
        self.worker = worker
        self.silences = silences
        self.lastSendMillis = lastSendMillis
    }

    /// Reads `{"worker", "silentSinceMillis", "resumedAtMillis", "lastSendMillis"}` as
    /// `JSONSerialization` gives it; nil without a worker's name. The two lists pair by
    /// position; a missing list or send is read as none.
    init?(stats: [String: Any]) {
        guard let worker = stats["worker"] as? String else { return nil }
        let since = ((stats["silentSinceMillis"] as? [Any]) ?? []).compactMap(Self.int64)
        let resumed = ((stats["resumedAtMillis"] as? [Any]) ?? []).compactMap(Self.int64)
        self.init(
            worker: worker, silences: zip(since, resumed).map { Silence(sinceMillis: $0, resumedAtMillis: $1) },
            lastSendMillis: stats["lastSendMillis"].flatMap(Self.int64) ?? 0)
    }

    /// A JSON number as read by `JSONSerialization`.
    static func int64(_ value: Any) -> Int64? {
        if let value = value as? Int { return Int64(value) }
        if let value = value as? Int64 { return value }
        if let value = value as? Double { return Int64(value) }
        return (value as? NSNumber)?.int64Value
    }
}

/// A worker's time to recover from a fault (docs/PERFORMANCE.md, "PostgreSQL faults: time to
/// recover"): from the moment the system was whole again (`wholeMillis`: PostgreSQL answering a
/// new connection, or the paused worker resumed) to the worker's first send after the silence
/// that held at that moment.
enum FaultRecovery {
    /// Milliseconds from `wholeMillis` to the first send after the silence that held then (it
    /// began before `wholeMillis` and had not ended); 0 when the worker was not silent then
    /// and sent at or after `wholeMillis`; nil when it never sent again. A silence that began
    /// at or after `wholeMillis` (a later lull or fault) is not charged to this fault, nor is one
    /// that ended before it (the worker sent again meanwhile).
    static func millis(wholeMillis: Int64, sends: WorkerSends) -> Int64? {
        if let silence = sends.silences.first(where: {
            $0.sinceMillis < wholeMillis && $0.resumedAtMillis >= wholeMillis
        }) {
            return silence.resumedAtMillis - wholeMillis
        }
        return sends.lastSendMillis >= wholeMillis ? 0 : nil
    }

    /// `millis` for each worker of `workers` but `killed` (a worker killed on purpose never
    /// sends again, and does not count), by name.
    static func perWorker(wholeMillis: Int64, workers: [WorkerSends], killed: String?) -> [String: Int64?] {
        var times: [String: Int64?] = [:]
        for sends in workers where sends.worker != killed {
            times[sends.worker] = millis(wholeMillis: wholeMillis, sends: sends)
        }
        return times
    }
}
