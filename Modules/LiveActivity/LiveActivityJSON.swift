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
        bytes.append(UInt8(ascii: "\""))
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"): bytes += [UInt8(ascii: "\\"), byte]
            case UInt8(ascii: "/") where escapesSlashes: bytes += [UInt8(ascii: "\\"), byte]
            case 0x08: bytes += [UInt8(ascii: "\\"), UInt8(ascii: "b")]
            case 0x09: bytes += [UInt8(ascii: "\\"), UInt8(ascii: "t")]
            case 0x0A: bytes += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
            case 0x0C: bytes += [UInt8(ascii: "\\"), UInt8(ascii: "f")]
            case 0x0D: bytes += [UInt8(ascii: "\\"), UInt8(ascii: "r")]
            case 0..<0x20:
                let hex = LiveActivityJSON.hexDigits
                bytes += [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0")]
                bytes += [hex[Int(byte >> 4)], hex[Int(byte & 0xF)]]
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
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

    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// The bytes of `attributes` (or `state`) alone, as the 4 KB limit counts them.
    static func size(of write: (inout LiveActivityJSON) -> Void) -> Int {
        var json = LiveActivityJSON(escapesSlashes: true)
        write(&json)
        return json.bytes.count
    }
}
