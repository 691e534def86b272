import Models

/// A request identifier as the checkers keep it for a week: the occurrence (16 bytes, no heap
/// object) for an identifier that is exactly the text the engine writes for it, the text itself
/// for anything else. Two identifiers have equal keys exactly when their texts are equal byte for
/// byte, so the checkers judge the texts they were given. (Swift's `==` on strings also equates
/// canonically equivalent Unicode; the engine's identifiers are ASCII, so only a foreign text
/// equivalent to one of them, a Kelvin sign for a K, is another request here.) The checkers
/// hold a week of identifiers after the device has let them go, so they keep keys, not strings.
enum RequestKey: Hashable, Sendable, CustomStringConvertible {
    case occurrence(OccurrenceID)
    case text(String)

    init(_ identifier: String) {
        self = OccurrenceID(exactly: identifier).map(RequestKey.occurrence) ?? .text(identifier)
    }

    /// The key of what a trace entry is about: its occurrence, or its text. An occurrence whose
    /// text would not read back exactly (a year outside 0...9999, a snoozed daily series: neither
    /// is made today) keys as the occurrence here and as text from `init(_: String)`.
    init(_ subject: TraceSubject) {
        switch subject {
        case .occurrence(let id): self = .occurrence(id)
        case .external(let text), .socialEvent(let text): self.init(text)
        }
    }

    /// The identifier's text.
    var description: String {
        switch self {
        case .occurrence(let id): id.description
        case .text(let text): text
        }
    }

    /// The occurrence the identifier names, when it names one the engine wrote.
    var occurrence: OccurrenceID? {
        if case .occurrence(let id) = self { return id }
        return nil
    }
}

/// One firing of a request: a repeating request fires under the same identifier at every match,
/// each firing its own delivery (`firedAt`, true seconds); a one-off request has one (`firedAt`
/// nil).
struct FiringKey: Hashable, Sendable {
    var request: RequestKey
    var firedAt: Int64?

    init(_ identifier: String, repeatsAt firedAt: Int64?) {
        self.init(request: RequestKey(identifier), firedAt: firedAt)
    }

    init(request: RequestKey, firedAt: Int64?) {
        self.request = request
        self.firedAt = firedAt
    }
}

/// A week of history keyed by firing, as small as it can be: 16-byte keys (the occurrence's
/// packed word and the firing time) in one array sorted by key, found by binary search, for the
/// engine's identifiers; a dictionary of `FiringKey`s for any other text. Every user's checker
/// keeps these tables for a week: a hash table adds empty buckets around its entries, the array
/// holds the entries alone and hashes nothing. Inserting moves the entries after it: a few dozen.
struct FiringMap<Value> {
    private struct Packed: Hashable, Comparable {
        var occurrence: UInt64
        /// The firing time, or `Int64.min` for a one-off request.
        var firedAt: Int64

        static func < (a: Packed, b: Packed) -> Bool {
            a.occurrence != b.occurrence ? a.occurrence < b.occurrence : a.firedAt < b.firedAt
        }
    }
    /// Sorted by key, each key once.
    private var byOccurrence: [(key: Packed, value: Value)] = []
    private var byText: [FiringKey: Value] = [:]

    private static func packed(_ key: FiringKey) -> Packed? {
        guard case .occurrence(let id) = key.request else { return nil }
        return Packed(occurrence: id.packed, firedAt: key.firedAt ?? .min)
    }

    /// The index of `key` in `byOccurrence`, or where it would be inserted.
    private func position(of key: Packed) -> (index: Int, found: Bool) {
        var low = 0
        var high = byOccurrence.count
        while low < high {
            let middle = (low + high) / 2
            let candidate = byOccurrence[middle].key
            if candidate == key { return (middle, true) }
            if candidate < key { low = middle + 1 } else { high = middle }
        }
        return (low, false)
    }

    subscript(key: FiringKey) -> Value? {
        get {
            guard let packed = Self.packed(key) else { return byText[key] }
            let (index, found) = position(of: packed)
            return found ? byOccurrence[index].value : nil
        }
        set {
            if let newValue { updateValue(newValue, forKey: key) } else { removeValue(forKey: key) }
        }
    }

    /// Sets the value; returns the one it replaces.
    @discardableResult mutating func updateValue(_ value: Value, forKey key: FiringKey) -> Value? {
        guard let packed = Self.packed(key) else { return byText.updateValue(value, forKey: key) }
        let (index, found) = position(of: packed)
        if found {
            let old = byOccurrence[index].value
            byOccurrence[index].value = value
            return old
        }
        byOccurrence.insert((packed, value), at: index)
        return nil
    }

    @discardableResult mutating func removeValue(forKey key: FiringKey) -> Value? {
        guard let packed = Self.packed(key) else { return byText.removeValue(forKey: key) }
        let (index, found) = position(of: packed)
        return found ? byOccurrence.remove(at: index).value : nil
    }

    /// Keeps the entries whose value passes `isIncluded`, in storage of exactly their size (a
    /// week-long table is trimmed every few days and then grows again).
    mutating func keep(where isIncluded: (Value) -> Bool) {
        var kept: [(key: Packed, value: Value)] = []
        kept.reserveCapacity(byOccurrence.count(where: { isIncluded($0.value) }))
        for entry in byOccurrence where isIncluded(entry.value) { kept.append(entry) }
        byOccurrence = kept
        byText = byText.filter { isIncluded($0.value) }
    }

    /// Changes every value in place.
    mutating func update(_ change: (inout Value) -> Void) {
        for index in byOccurrence.indices { change(&byOccurrence[index].value) }
        byText = byText.mapValues { value in
            var value = value
            change(&value)
            return value
        }
    }

    var count: Int { byOccurrence.count + byText.count }
}

extension FiringMap: Sendable where Value: Sendable {}
