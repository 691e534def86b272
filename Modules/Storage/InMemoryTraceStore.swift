public import Models

/// `TraceStore` in memory, with the same ids, order and retention as the SQLite store.
extension InMemoryEngagementStore {
    public func traceRecords(userID: UserID, after position: TracePosition, limit: Int) throws(StoreError)
        -> [TraceRecord]
    {
        guard limit > 0 else { return [] }
        return locked { storage in
            let list = storage.trace[userID] ?? []
            return Array(list[Self.firstIndex(in: list, after: position)...].prefix(limit))
        }
    }

    static func writeTrace(_ records: [TraceRecord], userID: UserID, _ storage: inout Storage) {
        guard let newest = records.map(\.at).max() else { return }
        var list = storage.trace[userID] ?? []
        for var record in records {
            storage.lastTraceID += 1
            record.id = storage.lastTraceID
            list.insert(record, at: firstIndex(in: list, after: record.position))
        }
        let horizon = newest - TraceRetention.seconds
        let expired = list.prefix(TraceRetention.prunedPerCommit).prefix { $0.at < horizon }.count
        list.removeFirst(expired)
        storage.trace[userID] = list
    }

    /// The index of the first record after `position`.
    private static func firstIndex(in list: [TraceRecord], after position: TracePosition) -> Int {
        var low = 0
        var high = list.count
        while low < high {
            let mid = (low + high) / 2
            if list[mid].position <= position { low = mid + 1 } else { high = mid }
        }
        return low
    }
}
