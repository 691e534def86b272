import Foundation

/// An inline SVG drawing built element by element. Every text and title is escaped; every
/// coordinate goes through `PageText.coordinate`, so nothing a chart computes can break the page.
struct SVGDrawing {
    let width: Double
    let height: Double
    /// What the drawing shows, for screen readers.
    let label: String
    private var elements: [String] = []

    init(width: Double, height: Double, label: String) {
        self.width = width
        self.height = height
        self.label = label
    }

    private static func c(_ value: Double) -> String { PageText.coordinate(value) }

    private static func tooltip(_ title: String?) -> String {
        title.map { "<title>\(PageText.escape($0))</title>" } ?? ""
    }

    mutating func line(_ x1: Double, _ y1: Double, _ x2: Double, _ y2: Double, class name: String) {
        elements.append(
            "<line x1=\"\(Self.c(x1))\" y1=\"\(Self.c(y1))\" x2=\"\(Self.c(x2))\" y2=\"\(Self.c(y2))\" class=\"\(name)\"/>"
        )
    }

    mutating func rect(
        x: Double, y: Double, width: Double, height: Double, fill: String, opacity: Double = 1, title: String? = nil
    ) {
        elements.append(
            "<rect x=\"\(Self.c(x))\" y=\"\(Self.c(y))\" width=\"\(Self.c(max(0, width)))\" "
                + "height=\"\(Self.c(max(0, height)))\" fill=\"\(fill)\" fill-opacity=\"\(PageText.decimal(opacity, places: 3))\">"
                + Self.tooltip(title) + "</rect>")
    }

    mutating func circle(x: Double, y: Double, radius: Double, fill: String, title: String? = nil) {
        elements.append(
            "<circle cx=\"\(Self.c(x))\" cy=\"\(Self.c(y))\" r=\"\(Self.c(radius))\" fill=\"\(fill)\">"
                + Self.tooltip(title) + "</circle>")
    }

    mutating func polyline(_ points: [(x: Double, y: Double)], stroke: String) {
        let list = points.map { Self.c($0.x) + "," + Self.c($0.y) }.joined(separator: " ")
        elements.append("<polyline points=\"\(list)\" fill=\"none\" stroke=\"\(stroke)\" stroke-width=\"2\"/>")
    }

    enum Anchor: String { case start, middle, end }

    mutating func text(
        _ text: String, x: Double, y: Double, anchor: Anchor = .start, class name: String = "", rotated: Bool = false
    ) {
        let rotation = rotated ? " transform=\"rotate(-90 \(Self.c(x)) \(Self.c(y)))\"" : ""
        let classes = name.isEmpty ? "" : " class=\"\(name)\""
        elements.append(
            "<text x=\"\(Self.c(x))\" y=\"\(Self.c(y))\" text-anchor=\"\(anchor.rawValue)\"\(classes)\(rotation)>"
                + PageText.escape(text) + "</text>")
    }

    var markup: String {
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 \(Self.c(width)) \(Self.c(height))\" "
            + "role=\"img\" aria-label=\"\(PageText.escape(label))\">" + elements.joined() + "</svg>"
    }
}

/// The charts of report.html, each a pure function from figures to SVG markup.
enum Charts {
    /// Distinguishable colours (Tableau 10), assigned in order.
    static let palette = [
        "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac",
    ]
    static let held = "#2e7d32"
    static let broken = "#c62828"

    /// Vertical bars of counts, one per label, with the count above each bar.
    static func bars(_ bars: [(label: String, count: Int)], xTitle: String, yTitle: String) -> String {
        let left = 80.0
        let top = 20.0
        let plotWidth = 900.0
        let plotHeight = 240.0
        var svg = SVGDrawing(width: 1000, height: top + plotHeight + 60, label: "\(yTitle) by \(xTitle)")
        let ticks = AxisTicks.linear(upTo: max(Double(bars.map(\.count).max() ?? 0), 5))
        let scale = plotHeight / max(ticks.last ?? 1, 1)
        for tick in ticks {
            let y = top + plotHeight - tick * scale
            svg.line(left, y, left + plotWidth, y, class: "grid")
            svg.text(PageText.integer(Int(tick)), x: left - 6, y: y + 4, anchor: .end)
        }
        let band = plotWidth / Double(max(bars.count, 1))
        let labelEvery = max(1, bars.count / 40)
        for (index, bar) in bars.enumerated() {
            let x = left + Double(index) * band
            let height = Double(bar.count) * scale
            svg.rect(
                x: x + band * 0.1, y: top + plotHeight - height, width: band * 0.8, height: height,
                fill: palette[0], title: "\(bar.label): \(PageText.integer(bar.count))")
            if index % labelEvery == 0 {
                svg.text(bar.label, x: x + band / 2, y: top + plotHeight + 16, anchor: .middle)
            }
            if bars.count <= 30 {
                svg.text(
                    PageText.integer(bar.count), x: x + band / 2, y: top + plotHeight - height - 4, anchor: .middle,
                    class: "small")
            }
        }
        svg.line(left, top + plotHeight, left + plotWidth, top + plotHeight, class: "axis")
        svg.text(xTitle, x: left + plotWidth / 2, y: top + plotHeight + 42, anchor: .middle, class: "title")
        svg.text(yTitle, x: 18, y: top + plotHeight / 2, anchor: .middle, class: "title", rotated: true)
        return svg.markup
    }

    /// One row per label, one cell per column, shaded by the cell's share of its row's busiest
    /// cell; the row's total at the right.
    static func heatMap(rows: [(label: String, counts: [Int])], columns: [String], xTitle: String) -> String {
        let left = 180.0
        let top = 28.0
        let rowHeight = 20.0
        let cellWidth = 760.0 / Double(max(columns.count, 1))
        let height = top + rowHeight * Double(rows.count) + 50
        var svg = SVGDrawing(width: 1000, height: height, label: xTitle)
        for (column, name) in columns.enumerated() {
            svg.text(name, x: left + (Double(column) + 0.5) * cellWidth, y: top - 8, anchor: .middle, class: "small")
        }
        svg.text("total", x: left + cellWidth * Double(columns.count) + 50, y: top - 8, anchor: .end, class: "small")
        for (index, row) in rows.enumerated() {
            let y = top + Double(index) * rowHeight
            let busiest = max(row.counts.max() ?? 0, 1)
            let total = row.counts.reduce(0, +)
            svg.text(row.label, x: left - 8, y: y + rowHeight * 0.7, anchor: .end)
            for (column, count) in row.counts.enumerated() {
                let share = total == 0 ? 0 : Double(count) / Double(total)
                svg.rect(
                    x: left + Double(column) * cellWidth, y: y, width: cellWidth - 1, height: rowHeight - 1,
                    fill: count == 0 ? "#f4f4f4" : palette[0],
                    opacity: count == 0 ? 1 : 0.12 + 0.88 * Double(count) / Double(busiest),
                    title: "\(row.label), \(columns[column]): \(PageText.integer(count)) (\(PageText.percent(share)))")
            }
            svg.text(
                PageText.integer(total), x: left + cellWidth * Double(columns.count) + 50, y: y + rowHeight * 0.7,
                anchor: .end)
        }
        svg.text(
            xTitle, x: left + cellWidth * Double(columns.count) / 2, y: height - 14, anchor: .middle, class: "title")
        return svg.markup
    }

    /// Lines over the columns `xLabels`, one per series (nil values leave a gap), with a legend.
    static func lines(
        _ series: [(name: String, values: [Double?])], xLabels: [String], xTitle: String, yTitle: String,
        yLabel: (Double) -> String
    ) -> String {
        let left = 80.0
        let top = 20.0
        let plotWidth = 720.0
        let plotHeight = 240.0
        var svg = SVGDrawing(width: 1000, height: top + plotHeight + 60, label: "\(yTitle) by \(xTitle)")
        let largest = series.flatMap { $0.values.compactMap { $0 } }.filter(\.isFinite).max() ?? 0
        let ticks = AxisTicks.linear(upTo: largest)
        let scale = plotHeight / max(ticks.last ?? 1, 1e-9)
        for tick in ticks {
            let y = top + plotHeight - tick * scale
            svg.line(left, y, left + plotWidth, y, class: "grid")
            svg.text(yLabel(tick), x: left - 6, y: y + 4, anchor: .end)
        }
        func x(_ index: Int) -> Double {
            xLabels.count <= 1 ? left + plotWidth / 2 : left + Double(index) * plotWidth / Double(xLabels.count - 1)
        }
        let labelEvery = max(1, xLabels.count / 20)
        for (index, label) in xLabels.enumerated() where index % labelEvery == 0 {
            svg.text(label, x: x(index), y: top + plotHeight + 16, anchor: .middle)
        }
        for (number, line) in series.enumerated() {
            let colour = palette[number % palette.count]
            var run: [(x: Double, y: Double)] = []
            for (index, value) in line.values.enumerated() {
                guard let value, value.isFinite else {
                    if run.count > 1 { svg.polyline(run, stroke: colour) }
                    run = []
                    continue
                }
                let point = (x: x(index), y: top + plotHeight - value * scale)
                run.append(point)
                svg.circle(
                    x: point.x, y: point.y, radius: 3.5, fill: colour,
                    title: "\(line.name), \(xLabels[index]): \(yLabel(value))")
            }
            if run.count > 1 { svg.polyline(run, stroke: colour) }
            let legendY = top + 10 + Double(number) * 20
            svg.rect(x: left + plotWidth + 30, y: legendY - 6, width: 20, height: 4, fill: colour)
            svg.text(line.name, x: left + plotWidth + 58, y: legendY)
        }
        svg.line(left, top + plotHeight, left + plotWidth, top + plotHeight, class: "axis")
        svg.text(xTitle, x: left + plotWidth / 2, y: top + plotHeight + 42, anchor: .middle, class: "title")
        svg.text(yTitle, x: 18, y: top + plotHeight / 2, anchor: .middle, class: "title", rotated: true)
        return svg.markup
    }

    /// Horizontal bars of durations (microseconds) on a log axis, the budget as a dashed line;
    /// a bar past the budget is red.
    static func durations(_ bars: [(label: String, micros: Double)], budgetMicros: Double, samples: Int) -> String {
        let left = 80.0
        let top = 26.0
        let rowHeight = 30.0
        let plotWidth = 860.0
        let plotHeight = rowHeight * Double(bars.count)
        var svg = SVGDrawing(width: 1000, height: top + plotHeight + 56, label: "durations against the budget")
        let positive = bars.map(\.micros).filter { $0 > 0 && $0.isFinite } + [budgetMicros]
        let decades = AxisTicks.decades(from: positive.min() ?? 1, to: positive.max() ?? 1)
        let low = log10(decades.first ?? 1)
        let span = max(log10(decades.last ?? 10) - low, 1)
        func x(_ micros: Double) -> Double {
            left + (log10(max(micros, decades.first ?? 1)) - low) / span * plotWidth
        }
        for decade in decades {
            svg.line(x(decade), top, x(decade), top + plotHeight, class: "grid")
            svg.text(PageText.duration(micros: decade), x: x(decade), y: top + plotHeight + 16, anchor: .middle)
        }
        if samples == 0 {
            svg.text("no samples in this run", x: left + plotWidth / 2, y: top + plotHeight / 2, anchor: .middle)
        } else {
            for (index, bar) in bars.enumerated() {
                let y = top + Double(index) * rowHeight
                let end = x(bar.micros)
                svg.rect(
                    x: left, y: y + 5, width: end - left, height: rowHeight - 10,
                    fill: bar.micros > budgetMicros ? broken : held,
                    title: "\(bar.label): \(PageText.duration(micros: bar.micros))")
                svg.text(bar.label, x: left - 8, y: y + rowHeight * 0.65, anchor: .end)
                svg.text(PageText.duration(micros: bar.micros), x: end + 6, y: y + rowHeight * 0.65, class: "small")
            }
        }
        svg.line(x(budgetMicros), top - 6, x(budgetMicros), top + plotHeight, class: "budget")
        svg.text(
            "budget " + PageText.duration(micros: budgetMicros), x: x(budgetMicros), y: top - 10, anchor: .end,
            class: "budget-label")
        svg.line(left, top + plotHeight, left + plotWidth, top + plotHeight, class: "axis")
        svg.text(
            "duration (log scale)", x: left + plotWidth / 2, y: top + plotHeight + 40, anchor: .middle, class: "title")
        return svg.markup
    }

    /// An estimate with its interval on a horizontal axis with zero marked, in percentage points.
    static func interval(estimate: Double, low: Double, high: Double, axisTitle: String) -> String {
        let left = 80.0
        let plotWidth = 860.0
        let axisY = 70.0
        var svg = SVGDrawing(width: 1000, height: 120, label: axisTitle)
        let ticks = AxisTicks.linear(from: min(low, 0), upTo: max(high, 0), about: 8)
        let first = ticks.first ?? 0
        let span = max((ticks.last ?? 1) - first, 1e-9)
        func x(_ value: Double) -> Double { left + (value - first) / span * plotWidth }
        for tick in ticks {
            svg.line(x(tick), 20, x(tick), axisY, class: "grid")
            svg.text(PageText.decimal(tick, places: abs(span) < 10 ? 1 : 0), x: x(tick), y: axisY + 16, anchor: .middle)
        }
        svg.line(x(0), 14, x(0), axisY, class: "zero")
        svg.line(x(low), 44, x(high), 44, class: "whisker")
        svg.line(x(low), 36, x(low), 52, class: "whisker")
        svg.line(x(high), 36, x(high), 52, class: "whisker")
        svg.circle(
            x: x(estimate), y: 44, radius: 6, fill: palette[0],
            title: "\(PageText.decimal(estimate)) (95 % interval \(PageText.decimal(low)) to \(PageText.decimal(high)))"
        )
        svg.line(left, axisY, left + plotWidth, axisY, class: "axis")
        svg.text(axisTitle, x: left + plotWidth / 2, y: axisY + 40, anchor: .middle, class: "title")
        return svg.markup
    }
}
