/// Civil dates and times as text, written into a buffer on the stack and made a string once
/// (`TextBuffer`): the same characters as joining `pad`ded numbers with separators (a test
/// compares the two over random values), without the pieces. Trace details, ISO 8601 instants
/// and Live Activity attributes write these on every decision, where a string per piece would
/// be allocated (docs/PERFORMANCE.md, Models).
enum CivilText {
    /// `YYYY-MM-DD`, then `THH:MM:SS` when `secondOfDay` is given, then `Z` (offset 0) or
    /// `±HH:MM` when `offsetSeconds` is given. Each number as `pad` writes it: at least its
    /// width in digits, all of its digits, a minus sign first when negative.
    static func text(date: LocalDate, secondOfDay: Int? = nil, offsetSeconds: Int? = nil) -> String {
        // At most eight numbers of 19 digits and a sign, with their separators: 168 bytes.
        TextBuffer.text(capacity: 176) { text in
            text.put(decimal: date.year, width: 4)
            text.put(45)
            text.put(decimal: date.month, width: 2)
            text.put(45)
            text.put(decimal: date.day, width: 2)
            if let secondOfDay {
                text.put(84)
                text.put(decimal: secondOfDay / 3_600, width: 2)
                text.put(58)
                text.put(decimal: secondOfDay / 60 % 60, width: 2)
                text.put(58)
                text.put(decimal: secondOfDay % 60, width: 2)
            }
            if let offsetSeconds {
                if offsetSeconds == 0 {
                    text.put(90)
                } else {
                    let minutes = abs(offsetSeconds) / 60
                    text.put(offsetSeconds < 0 ? 45 : 43)
                    text.put(decimal: minutes / 60, width: 2)
                    text.put(58)
                    text.put(decimal: minutes % 60, width: 2)
                }
            }
        }
    }

    /// `HH:MM`.
    static func time(hour: Int, minute: Int) -> String {
        TextBuffer.text(capacity: 48) { text in
            text.put(decimal: hour, width: 2)
            text.put(58)
            text.put(decimal: minute, width: 2)
        }
    }
}
