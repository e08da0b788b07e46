import Foundation

/// What a chaos run did and found: the operations, the faults by kind, the time to converge
/// after the last fault, and every invariant with its count.
struct ChaosReport: Sendable, Codable {
    var seed: UInt64
    var short: Bool
    var durationSeconds: Int
    var elapsedSeconds: Double
    var operations: [String: Int]
    var faults: [ChaosFaultInjector.Struck]
    var convergenceSeconds: Double
    var invariants: [ChaosInvariant]
    var anomalies: [String]
    var machine: String

    var holds: Bool { invariants.allSatisfy(\.holds) && anomalies.isEmpty }

    /// Faults that struck, by kind.
    var faultsByKind: [String: Int] {
        faults.filter { $0.outcome == "struck" }.reduce(into: [:]) { $0[$1.kind, default: 0] += 1 }
    }

    func text() -> String {
        var lines: [String] = []
        lines.append("")
        lines.append("chaos run: seed \(seed)\(short ? " (short)" : ""), \(String(format: "%.0f", elapsedSeconds)) s, \(machine)")
        let operations = self.operations.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        lines.append("operations: \(operations)")
        let struck = faults.filter { $0.outcome == "struck" }
        lines.append(
            "faults injected: \(struck.count) — "
                + faultsByKind.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
        let steps = struck.filter { $0.kind == "agent_step_kill" }.map(\.description)
        if !steps.isEmpty {
            let byStep = steps.reduce(into: [String: Int]()) { counts, description in
                counts[String(description.split(separator: " ").last ?? ""), default: 0] += 1
            }
            lines.append("agent kills by step: " + byStep.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
        }
        let missed = faults.filter { $0.outcome != "struck" }
        if !missed.isEmpty {
            lines.append("faults that did not strike: \(missed.count) — " + missed.map { "\($0.description): \($0.outcome)" }.joined(separator: "; "))
        }
        lines.append(String(format: "longest time to converge after the last fault: %.1f s", convergenceSeconds))
        for invariant in invariants {
            lines.append("invariant \(invariant.name): \(invariant.holds ? "ok" : "FAILED") — \(invariant.detail)")
        }
        for anomaly in anomalies { lines.append("anomaly: \(anomaly)") }
        lines.append(holds ? "result: every invariant holds" : "result: INVARIANTS FAILED")
        return lines.joined(separator: "\n")
    }

    func json() throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        encoder.keyEncodingStrategy = .convertToSnakeCase
        var object = try JSONSerialization.jsonObject(with: try encoder.encode(self)) as! [String: Any]
        object["faults_by_kind"] = faultsByKind
        object["holds"] = holds
        let data = try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys])
        return String(decoding: data, as: UTF8.self)
    }

    /// Cores, CPU model and kernel, for the record.
    static func machine() -> String {
        let cpuinfo = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
        let model = cpuinfo.split(separator: "\n").first { $0.hasPrefix("model name") }?.split(separator: ":").last?
            .trimmingCharacters(in: .whitespaces) ?? "unknown CPU"
        var name = utsname()
        uname(&name)
        let release = withUnsafeBytes(of: &name.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        return "\(ProcessInfo.processInfo.activeProcessorCount) cores (\(model)), Linux \(release)"
    }
}
