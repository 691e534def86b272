import Foundation
public import Storage

/// Where the runtime reports the trace records of each commit, after the commit succeeded (the
/// server counts decisions by reason from them). A failed commit reports nothing, so what was
/// reported was committed.
///
/// The observer is called on the runtime's executor, once per commit with trace records: it
/// must be quick and must not call back into the runtime.
public final class TraceObserverSlot: @unchecked Sendable {
    // @unchecked Sendable is safe: `observer` is read and written only while holding `lock`.
    private let lock = NSLock()
    private var observer: (@Sendable ([TraceRecord]) -> Void)?

    init() {}

    /// Replaces the observer (nil: none).
    public func set(_ observer: (@Sendable ([TraceRecord]) -> Void)?) {
        lock.lock()
        defer { lock.unlock() }
        self.observer = observer
    }

    func report(_ records: [TraceRecord]) {
        guard !records.isEmpty else { return }
        lock.lock()
        let observer = observer
        lock.unlock()
        observer?(records)
    }
}
