import Foundation

/// The result table: one row per figure, with the project's number, the baseline measured
/// in the same run, and their ratio, grouped by section; plus free-form notes. Raw
/// measurements are printed as they happen (`log`), the table at the end.
final class BenchReport: Sendable {
    struct Row: Sendable {
        var figure: String
        var project: String
        var baseline: String
        var ratio: String
    }

    struct Section: Sendable {
        var title: String
        var rows: [Row] = []
        var notes: [String] = []
    }

    private let sections = Locked<[Section]>([])

    /// `--json`: raw output and the table go to standard error, standard output carries the JSON only.
    static let logToStandardError = Locked(false)

    /// Prints one line of raw output immediately.
    static func log(_ line: String) {
        // Unbuffered, so that raw output piped through `tee` appears as it is measured.
        let handle = logToStandardError.current ? FileHandle.standardError : FileHandle.standardOutput
        handle.write(Data((line + "\n").utf8))
    }

    func begin(_ title: String) {
        sections.withLock { $0.append(Section(title: title)) }
        Self.log("\n== \(title)")
    }

    /// A row with a ratio `project / baseline` (for rates) or `baseline / project` (for times),
    /// so that 1.00 is "as fast as the limit" either way.
    func add(_ figure: String, project: Measure, baseline: Measure?) {
        let ratio: String
        if let baseline, baseline.value > 0, project.value > 0 {
            let value = project.higherIsBetter ? project.value / baseline.value : baseline.value / project.value
            ratio = String(format: "%.2f", value)
        } else {
            ratio = "—"
        }
        append(Row(figure: figure, project: project.text, baseline: baseline?.text ?? "—", ratio: ratio))
    }

    /// A row whose baseline or ratio is not a measured limit (a target, a count, …).
    func add(_ figure: String, project: String, baseline: String = "—", ratio: String = "—") {
        append(Row(figure: figure, project: project, baseline: baseline, ratio: ratio))
    }

    func note(_ text: String) {
        sections.withLock { sections in
            if sections.isEmpty { sections.append(Section(title: "Notes")) }
            sections[sections.count - 1].notes.append(text)
        }
        Self.log("note: \(text)")
    }

    private func append(_ row: Row) {
        sections.withLock { sections in
            if sections.isEmpty { sections.append(Section(title: "Results")) }
            sections[sections.count - 1].rows.append(row)
        }
        Self.log("row: \(row.figure): \(row.project) | baseline \(row.baseline) | ratio \(row.ratio)")
    }

    /// The whole table as Markdown.
    var markdown: String {
        var lines: [String] = []
        // By title ("1. …" to "5. …"), whatever order the sections ran in.
        let ordered = sections.current.enumerated().sorted { ($0.element.title, $0.offset) < ($1.element.title, $1.offset) }
        for section in ordered.map(\.element) {
            lines.append("### \(section.title)")
            lines.append("")
            if !section.rows.isEmpty {
                lines.append("| figure | Rescind | baseline (same run) | ratio |")
                lines.append("|---|---:|---:|---:|")
                for row in section.rows {
                    lines.append("| \(row.figure) | \(row.project) | \(row.baseline) | \(row.ratio) |")
                }
                lines.append("")
            }
            for note in section.notes { lines.append("- \(note)") }
            if !section.notes.isEmpty { lines.append("") }
        }
        return lines.joined(separator: "\n")
    }
}

/// A measured value with its unit and direction.
struct Measure: Sendable {
    var value: Double
    var text: String
    var higherIsBetter: Bool

    static func rate(_ perSecond: Double, _ unit: String) -> Measure {
        Measure(value: perSecond, text: "\(Format.grouped(perSecond)) \(unit)/s", higherIsBetter: true)
    }

    static func time(_ seconds: Double) -> Measure {
        Measure(value: seconds, text: Format.duration(seconds), higherIsBetter: false)
    }
}

enum Format {
    /// `1234567.8` → `1,234,568`; NaN → `n/a`.
    static func grouped(_ value: Double) -> String {
        guard value.isFinite else { return "n/a" }
        let digits = String(Int(value.rounded()))
        var result = ""
        for (index, character) in digits.reversed().enumerated() {
            if index > 0, index % 3 == 0, character != "-" { result.append(",") }
            result.append(character)
        }
        return String(result.reversed())
    }

    /// Seconds as µs, ms or s with three significant-ish digits.
    static func duration(_ seconds: Double) -> String {
        guard seconds.isFinite else { return "n/a" }
        let magnitude = abs(seconds)
        if magnitude < 1e-3 { return String(format: "%.1f µs", seconds * 1e6) }
        if magnitude < 1 { return String(format: "%.1f ms", seconds * 1e3) }
        return String(format: "%.2f s", seconds)
    }

    static func mebibytes(_ bytes: Int?) -> String {
        guard let bytes else { return "n/a" }
        return String(format: "%.1f MiB", Double(bytes) / 1_048_576)
    }
}
