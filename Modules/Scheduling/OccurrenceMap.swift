public import Models

/// A small map from occurrences to values, kept as a sorted array of packed keys.
///
/// The engine's per-user maps are small and read many times per planning pass; binary search
/// over packed 64-bit keys hashes nothing (docs/PERFORMANCE.md, Scheduling, has the figures).
public struct OccurrenceMap<Value: Sendable>: Sendable {
    @usableFromInline var keys: [UInt64] = []
    @usableFromInline var values: [Value] = []

    @inlinable public var count: Int { keys.count }
    @inlinable public var isEmpty: Bool { keys.isEmpty }

    @inlinable public init() {}

    /// Builds from entries in any order; a later duplicate key wins.
    @inlinable public init(_ entries: some Sequence<(OccurrenceID, Value)>) {
        // Each entry goes in its place: after the last when it is larger (entries that come in
        // key order cost an append each), by binary search and a short shift otherwise. A pass
        // builds maps of tens of entries, where this beats sorting them once (docs/PERFORMANCE.md).
        let expected = entries.underestimatedCount
        keys.reserveCapacity(expected)
        values.reserveCapacity(expected)
        for (id, value) in entries {
            let key = id.packed
            if let last = keys.last, last >= key {
                insert(value, at: key)
            } else {
                keys.append(key)
                values.append(value)
            }
        }
    }

    /// Sets the value of `key`, inserting it in its place.
    @inlinable mutating func insert(_ value: Value, at key: UInt64) {
        let (index, found) = index(of: key)
        if found {
            values[index] = value
        } else {
            keys.insert(key, at: index)
            values.insert(value, at: index)
        }
    }

    @inlinable @inline(__always) func index(of key: UInt64) -> (index: Int, found: Bool) {
        var low = 0
        var high = keys.count
        while low < high {
            let middle = (low + high) >> 1
            if keys[middle] < key { low = middle + 1 } else { high = middle }
        }
        return (low, low < keys.count && keys[low] == key)
    }

    @inlinable public subscript(id: OccurrenceID) -> Value? {
        get {
            let (index, found) = index(of: id.packed)
            return found ? values[index] : nil
        }
        set {
            let key = id.packed
            let (index, found) = index(of: key)
            switch (found, newValue) {
            case (true, let value?): values[index] = value
            case (true, nil):
                keys.remove(at: index)
                values.remove(at: index)
            case (false, let value?):
                keys.insert(key, at: index)
                values.insert(value, at: index)
            case (false, nil): break
            }
        }
    }

    @inlinable public func contains(_ id: OccurrenceID) -> Bool { index(of: id.packed).found }

    /// Whether any value satisfies `predicate` (no entries are built).
    @inlinable public func containsValue(where predicate: (Value) -> Bool) -> Bool {
        values.contains(where: predicate)
    }

    /// Calls `body` with each entry in key order (no entries are built).
    @inlinable public func forEach(_ body: (_ id: OccurrenceID, _ value: Value) throws -> Void) rethrows {
        for (key, value) in zip(keys, values) { try body(OccurrenceID(packed: key)!, value) }
    }

    /// The entries in key order.
    @inlinable public var entries: [(id: OccurrenceID, value: Value)] {
        zip(keys, values).map { (OccurrenceID(packed: $0)!, $1) }
    }

    /// Keeps the entries whose value satisfies `keep`.
    @inlinable public mutating func filter(_ keep: (Value) -> Bool) {
        var keptKeys: [UInt64] = []
        var keptValues: [Value] = []
        keptKeys.reserveCapacity(keys.count)
        keptValues.reserveCapacity(keys.count)
        for (key, value) in zip(keys, values) where keep(value) {
            keptKeys.append(key)
            keptValues.append(value)
        }
        keys = keptKeys
        values = keptValues
    }
}

extension OccurrenceMap {
    /// Removes the entries whose occurrence satisfies `shouldRemove`, keeping the rest in order.
    @inlinable public mutating func removeAll(where shouldRemove: (OccurrenceID) -> Bool) {
        var kept = 0
        for index in keys.indices where !shouldRemove(OccurrenceID(packed: keys[index])!) {
            keys.swapAt(kept, index)
            values.swapAt(kept, index)
            kept += 1
        }
        keys.removeLast(keys.count - kept)
        values.removeLast(values.count - kept)
    }
}

extension OccurrenceMap: Equatable where Value: Equatable {}
extension OccurrenceMap: Hashable where Value: Hashable {}
