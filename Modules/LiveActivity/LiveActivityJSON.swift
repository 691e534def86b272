public import Models

/// Live Activity JSON written by hand, byte for byte what `JSONEncoder` with `.sortedKeys` writes
/// for these types (the tests compare the two over random values, escapes included). A
/// workout's update is sized on every push: `JSONEncoder` cost about 8 % of the default
/// simulation (boxing every value), this about 0.3 %.
struct LiveActivityJSON {
    private(set) var bytes: [UInt8] = []
    /// `/` as `\/`, as `JSONEncoder` does unless told `.withoutEscapingSlashes`.
    let escapesSlashes: Bool
    private var needsComma = false

    init(escapesSlashes: Bool) {
        self.escapesSlashes = escapesSlashes
        bytes.reserveCapacity(192)
    }

    /// Writes an object whose members `body` writes, in sorted key order.
    mutating func object(_ body: (inout LiveActivityJSON) -> Void) {
        bytes.append(UInt8(ascii: "{"))
        needsComma = false
        body(&self)
        bytes.append(UInt8(ascii: "}"))
        needsComma = true
    }

    mutating func key(_ name: StaticString) {
        if needsComma { bytes.append(UInt8(ascii: ",")) }
        bytes.append(UInt8(ascii: "\""))
        name.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
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
        bytes.append(contentsOf: String(value).utf8)
        needsComma = true
    }

    mutating func string(_ value: String) {
        JSONString.append(value, style: .foundation(escapingSlashes: escapesSlashes), to: &bytes)
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
        var json = LiveActivityJSON(escapesSlashes: true)
        write(&json)
        return json.bytes.count
    }
}
