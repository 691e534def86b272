public import Models

/// Live Activity JSON written by hand, byte for byte what `JSONEncoder` with `.sortedKeys` writes
/// for these types (the tests compare the two over random values, escapes included). A
/// workout's update is sized on every push, and `JSONEncoder` boxes every value it writes.
struct LiveActivityJSON {
    private(set) var bytes: [UInt8] = []
    /// `/` as `\/`, as `JSONEncoder` does unless told `.withoutEscapingSlashes`.
    let escapesSlashes: Bool
    /// Only the size is kept (`size(of:)`): nothing is written, so measuring an update (on
    /// every push) allocates nothing.
    private let countsOnly: Bool
    private var counted = 0
    private var needsComma = false

    init(escapesSlashes: Bool) {
        self.init(escapesSlashes: escapesSlashes, countsOnly: false)
    }

    private init(escapesSlashes: Bool, countsOnly: Bool) {
        self.escapesSlashes = escapesSlashes
        self.countsOnly = countsOnly
        if !countsOnly { bytes.reserveCapacity(192) }
    }

    /// The bytes written, or counted.
    var byteCount: Int { countsOnly ? counted : bytes.count }

    private mutating func emit(_ byte: UInt8) {
        if countsOnly { counted += 1 } else { bytes.append(byte) }
    }

    /// Writes an object whose members `body` writes, in sorted key order.
    mutating func object(_ body: (inout LiveActivityJSON) -> Void) {
        emit(UInt8(ascii: "{"))
        needsComma = false
        body(&self)
        emit(UInt8(ascii: "}"))
        needsComma = true
    }

    mutating func key(_ name: StaticString) {
        if needsComma { emit(UInt8(ascii: ",")) }
        emit(UInt8(ascii: "\""))
        if countsOnly {
            counted += name.utf8CodeUnitCount
        } else {
            name.withUTF8Buffer { bytes.append(contentsOf: $0) }
        }
        emit(UInt8(ascii: "\""))
        emit(UInt8(ascii: ":"))
        needsComma = false
    }

    mutating func member(_ name: StaticString, _ value: some BinaryInteger) {
        key(name)
        int(value)
    }

    mutating func member(_ name: StaticString, _ value: String) {
        key(name)
        string(value)
    }

    /// Nothing for nil, as synthesised `Codable` skips an absent optional.
    mutating func member(_ name: StaticString, _ value: Int?) {
        guard let value else { return }
        key(name)
        int(value)
    }

    mutating func member(_ name: StaticString, _ value: String?) {
        guard let value else { return }
        key(name)
        string(value)
    }

    mutating func int(_ value: some BinaryInteger) {
        if countsOnly {
            counted += DecimalText.length(of: value)
        } else {
            bytes.append(contentsOf: String(value).utf8)
        }
        needsComma = true
    }

    mutating func string(_ value: String) {
        let style = JSONEscapeStyle.foundation(escapingSlashes: escapesSlashes)
        if countsOnly {
            counted += JSONString.byteCount(of: value, style: style)
        } else {
            JSONString.append(value, style: style, to: &bytes)
        }
        needsComma = true
    }

    mutating func write(_ attributes: LiveActivityAttributes) {
        switch attributes {
        case .workout(let value):
            object {
                $0.member("startedAt", value.startedAt.iso8601)
                $0.member("workoutType", value.workoutType)
            }
        case .meal(let value):
            object {
                $0.member("meal", value.meal.rawValue)
                $0.member("targetCalories", value.targetCalories)
                $0.member("targetProteinGrams", value.targetProteinGrams)
            }
        }
    }

    mutating func write(_ state: LiveActivityContentState) {
        switch state {
        case .workout(let value):
            object {
                $0.member("activeCalories", value.activeCalories)
                $0.member("currentExercise", value.currentExercise)
                $0.member("elapsedSeconds", value.elapsedSeconds)
                $0.member("heartRate", value.heartRate)
            }
        case .meal(let value):
            object {
                $0.member("itemsLogged", value.itemsLogged)
                $0.member("lastFoodItem", value.lastFoodItem)
                $0.member("totalCalories", value.totalCalories)
                $0.member("totalProteinGrams", value.totalProteinGrams)
            }
        }
    }

    /// The bytes of `attributes` (or `state`) alone, as the 4 KB limit counts them.
    static func size(of write: (inout LiveActivityJSON) -> Void) -> Int {
        var json = LiveActivityJSON(escapesSlashes: true, countsOnly: true)
        write(&json)
        return json.byteCount
    }
}
