import Foundation

/// The monitoring page's plot of commit-to-last-ack times: one dot per completed revocation
/// (x: when it was committed, y: how long until its last device acknowledged), with labelled
/// axes and the p50 and p99 marked. Plain SVG made here, no script and no external asset; every
/// text in it is a number or a time this type formats, escaped all the same.
enum AckTimePlot {
    struct Point: Sendable, Equatable {
        let committedAt: Date
        let milliseconds: Int64
    }

    static let width = 640.0, height = 240.0
    static let left = 64.0, right = 96.0, top = 16.0, bottom = 44.0

    static func svg(_ points: [Point], p50: Int64?, p99: Int64?) -> String {
        let plotWidth = width - left - right, plotHeight = height - top - bottom
        var svg = """
            <svg xmlns="http://www.w3.org/2000/svg" id="ack-time-plot" viewBox="0 0 \(Int(width)) \(Int(height))" \
            width="\(Int(width))" height="\(Int(height))" role="img" font-family="system-ui, sans-serif" font-size="11" \
            data-points="\(points.count)" aria-label="\(escape("Commit to last ack of \(points.count) completed revocations"))">
            <title>\(escape("Commit → last ack, \(points.count) completed revocations"))</title>

            """
        // Axes and their labels.
        svg += line(left, top, left, top + plotHeight, stroke: "#5b6570", attributes: "class=\"axis\" data-axis=\"y\"")
        svg += line(left, top + plotHeight, left + plotWidth, top + plotHeight, stroke: "#5b6570", attributes: "class=\"axis\" data-axis=\"x\"")
        svg += text("commit → last ack (ms)", x: 12, y: top + plotHeight / 2, attributes:
            "class=\"axis-label\" data-axis=\"y\" text-anchor=\"middle\" transform=\"rotate(-90 12 \(format(top + plotHeight / 2)))\"")
        svg += text("committed at (UTC)", x: left + plotWidth / 2, y: height - 6, attributes:
            "class=\"axis-label\" data-axis=\"x\" text-anchor=\"middle\"")
        guard let first = points.first, let last = points.last else {
            svg += text("no completed revocation yet", x: left + plotWidth / 2, y: top + plotHeight / 2, attributes:
                "class=\"empty\" text-anchor=\"middle\" fill=\"#5b6570\"")
            return svg + "</svg>\n"
        }
        let maxMs = max(1, points.map(\.milliseconds).max()!, p99 ?? 0)
        let yMax = Double(maxMs) * 1.1
        let start = first.committedAt.timeIntervalSince1970, span = last.committedAt.timeIntervalSince1970 - start
        func x(_ date: Date) -> Double {
            span <= 0 ? left + plotWidth / 2 : left + (date.timeIntervalSince1970 - start) / span * plotWidth
        }
        func y(_ ms: Int64) -> Double { top + plotHeight - Double(ms) / yMax * plotHeight }
        // Ticks: 0 and the largest value on y; the first and last commit on x.
        svg += text("0", x: left - 6, y: top + plotHeight + 4, attributes: "class=\"tick\" data-axis=\"y\" text-anchor=\"end\"")
        svg += text("\(maxMs)", x: left - 6, y: y(maxMs) + 4, attributes: "class=\"tick\" data-axis=\"y\" text-anchor=\"end\"")
        svg += text(time(first.committedAt), x: left, y: top + plotHeight + 16, attributes:
            "class=\"tick\" data-axis=\"x\" text-anchor=\"start\"")
        if span > 0 {
            svg += text(time(last.committedAt), x: left + plotWidth, y: top + plotHeight + 16, attributes:
                "class=\"tick\" data-axis=\"x\" text-anchor=\"end\"")
        }
        for (name, value, colour) in [("p50", p50, "#1f6feb"), ("p99", p99, "#b35900")] {
            guard let value else { continue }
            svg += line(left, y(value), left + plotWidth, y(value), stroke: colour, attributes:
                "class=\"percentile\" data-percentile=\"\(name)\" data-ms=\"\(value)\" stroke-dasharray=\"4 3\"")
            svg += text("\(name) \(value) ms", x: left + plotWidth + 4, y: y(value) + 4, attributes:
                "class=\"percentile-label\" data-percentile=\"\(name)\" fill=\"\(colour)\"")
        }
        for point in points {
            svg += """
                <circle class="point" cx="\(format(x(point.committedAt)))" cy="\(format(y(point.milliseconds)))" r="3" \
                fill="#2f7d4a" data-ms="\(point.milliseconds)"><title>\(escape("\(time(point.committedAt)): \(point.milliseconds) ms"))</title></circle>

                """
        }
        return svg + "</svg>\n"
    }

    private static func line(_ x1: Double, _ y1: Double, _ x2: Double, _ y2: Double, stroke: String, attributes: String) -> String {
        "<line x1=\"\(format(x1))\" y1=\"\(format(y1))\" x2=\"\(format(x2))\" y2=\"\(format(y2))\" stroke=\"\(stroke)\" \(attributes)/>\n"
    }

    private static func text(_ content: String, x: Double, y: Double, attributes: String) -> String {
        "<text x=\"\(format(x))\" y=\"\(format(y))\" \(attributes)>\(escape(content))</text>\n"
    }

    private static func format(_ value: Double) -> String { String(format: "%.1f", value) }

    /// `YYYY-MM-DD HH:MM:SS` in UTC.
    static func time(_ date: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        return String(format: "%04d-%02d-%02d %02d:%02d:%02d", c.year!, c.month!, c.day!, c.hour!, c.minute!, c.second!)
    }

    static func escape(_ text: String) -> String {
        var escaped = ""
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
}
