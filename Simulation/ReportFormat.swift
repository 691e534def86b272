import Foundation

/// Text for report.html: every string inserted into the page goes through `escape`, and every
/// number through one of the formatters, which never print `nan` or `inf`.
enum PageText {
    /// `text` with the five characters that mean something in HTML (in text or in a quoted
    /// attribute) replaced by their entities.
    static func escape(_ text: String) -> String {
        var escaped = ""
        escaped.reserveCapacity(text.utf8.count)
        for character in text {
            switch character {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&#39;"
            default: escaped.append(character)
            }
        }
        return escaped
    }

    /// A whole number with thousands separated by commas: `1,234,567`.
    static func integer(_ value: Int) -> String {
        let digits = String(value.magnitude)
        var grouped = ""
        for (offset, digit) in digits.enumerated() {
            if offset > 0 && (digits.count - offset) % 3 == 0 { grouped += "," }
            grouped.append(digit)
        }
        return value < 0 ? "-" + grouped : grouped
    }

    /// `value` with `places` decimals; a dash for a value that is not a finite number.
    static func decimal(_ value: Double, places: Int = 1) -> String {
        guard value.isFinite else { return "–" }
        return String(format: "%.\(places)f", value)
    }

    /// A fraction as a percentage with one decimal (`0.1234` is `12.3 %`); a dash for nil.
    static func percent(_ fraction: Double?) -> String {
        guard let fraction, fraction.isFinite else { return "–" }
        return decimal(fraction * 100) + " %"
    }

    /// A duration given in microseconds, in the unit that keeps it readable, with one decimal
    /// unless it is whole: `850 ns`, `12.3 µs`, `4.5 ms`, `100 ms`, `2 s`.
    static func duration(micros: Double) -> String {
        guard micros.isFinite else { return "–" }
        switch micros {
        case ..<1: return decimal(micros * 1_000, places: 0) + " ns"
        case ..<1_000: return compact(micros) + " µs"
        case ..<1_000_000: return compact(micros / 1_000) + " ms"
        default: return compact(micros / 1_000_000) + " s"
        }
    }

    /// `value` with one decimal, or none when that decimal is 0: `12.3`, `100`.
    static func compact(_ value: Double) -> String {
        let text = decimal(value)
        return text.hasSuffix(".0") ? String(text.dropLast(2)) : text
    }

    /// A coordinate in an SVG attribute: one decimal, and 0 for anything not finite (a chart
    /// never receives one, since its scales guard their divisions; this is the last fence).
    static func coordinate(_ value: Double) -> String {
        value.isFinite ? decimal(value) : "0"
    }
}

/// Axis ticks at round values.
enum AxisTicks {
    /// Ticks from `minimum` (or below) to `maximum` (or above) at a step of 1, 2 or 5 times a
    /// power of ten, about `count` of them; `[minimum, minimum + 1]` when the range is empty.
    static func linear(from minimum: Double = 0, upTo maximum: Double, about count: Int = 5) -> [Double] {
        let low = minimum.isFinite ? minimum : 0
        guard maximum.isFinite, maximum > low else { return [low, low + 1] }
        let rough = (maximum - low) / Double(max(1, count))
        let power = pow(10, log10(rough).rounded(.down))
        let step = [1.0, 2, 5, 10].map { $0 * power }.first { $0 >= rough } ?? 10 * power
        let first = Int((low / step).rounded(.down))
        let last = Int((maximum / step).rounded(.up))
        return (first...last).map { Double($0) * step }
    }

    /// Powers of ten from the one at or below `low` to the one above `high` (values below 0.001
    /// count as 0.001): the axis of a log-scaled chart, with room to the right of its largest value.
    static func decades(from low: Double, to high: Double) -> [Double] {
        let bottom = Int(log10(max(low, 1e-3)).rounded(.down))
        let top = max(bottom + 1, Int(log10(max(high, 1e-3)).rounded(.down)) + 1)
        return (bottom...top).map { pow(10, Double($0)) }
    }
}
