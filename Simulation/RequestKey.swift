import Models

/// A request identifier as the checkers keep it for a week: the occurrence (16 bytes, no heap
/// object) for an identifier that is exactly the text the engine writes for it, the text itself
/// for anything else. Two identifiers have equal keys exactly when their texts are equal byte for
/// byte, so the checkers judge the texts they were given. (Swift's `==` on strings also equates
/// canonically equivalent Unicode; the engine's identifiers are ASCII, so only a foreign text
/// equivalent to one of them, a Kelvin sign for a K, is now another request.) Identifier
/// strings were about a sixth of a simulated user's memory, most of them held by the checkers
/// after the device let go.
enum RequestKey: Hashable, Sendable, CustomStringConvertible {
    case occurrence(OccurrenceID)
    case text(String)

    init(_ identifier: String) {
        self = OccurrenceID(exactly: identifier).map(RequestKey.occurrence) ?? .text(identifier)
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
/// packed word and the firing time) for the engine's identifiers, `FiringKey`s for any other
/// text. The checkers' two week-long tables were the largest part of a simulated user's memory
/// with text or enum keys (56 bytes a bucket where these take 24-32).
struct FiringMap<Value> {
    private struct Packed: Hashable {
        var occurrence: UInt64
        /// The firing time, or `Int64.min` for a one-off request.
        var firedAt: Int64
    }
    private var byOccurrence: [Packed: Value] = [:]
    private var byText: [FiringKey: Value] = [:]

    private static func packed(_ key: FiringKey) -> Packed? {
        guard case .occurrence(let id) = key.request else { return nil }
        return Packed(occurrence: id.packed, firedAt: key.firedAt ?? .min)
    }

    subscript(key: FiringKey) -> Value? {
        get {
            if let packed = Self.packed(key) { return byOccurrence[packed] }
            return byText[key]
        }
        set {
            if let packed = Self.packed(key) { byOccurrence[packed] = newValue } else { byText[key] = newValue }
        }
    }

    /// Sets the value; returns the one it replaces.
    @discardableResult mutating func updateValue(_ value: Value, forKey key: FiringKey) -> Value? {
        if let packed = Self.packed(key) { return byOccurrence.updateValue(value, forKey: packed) }
        return byText.updateValue(value, forKey: key)
    }

    @discardableResult mutating func removeValue(forKey key: FiringKey) -> Value? {
        if let packed = Self.packed(key) { return byOccurrence.removeValue(forKey: packed) }
        return byText.removeValue(forKey: key)
    }

    /// Keeps the entries whose value passes `isIncluded`, in tables of exactly their size.
    mutating func keep(where isIncluded: (Value) -> Bool) {
        byOccurrence = byOccurrence.filter { isIncluded($0.value) }
        byText = byText.filter { isIncluded($0.value) }
    }

    var count: Int { byOccurrence.count + byText.count }
}

extension FiringMap: Sendable where Value: Sendable {}
