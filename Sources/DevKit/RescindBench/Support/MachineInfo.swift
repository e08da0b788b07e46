import Foundation

/// What the table must say about where it was measured.
enum MachineInfo {
    static var cpuModel: String {
        let text = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
        let line = text.split(separator: "\n").first { $0.hasPrefix("model name") }
        return line.map { String($0.split(separator: ":", maxSplits: 1).last ?? "").trimmingCharacters(in: .whitespaces) } ?? "unknown"
    }

    static var memory: String {
        let text = (try? String(contentsOfFile: "/proc/meminfo", encoding: .utf8)) ?? ""
        let line = text.split(separator: "\n").first { $0.hasPrefix("MemTotal:") }
        let kibibytes = line.flatMap { $0.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first }.flatMap { Int($0) }
        return kibibytes.map { String(format: "%.1f GiB", Double($0) / 1_048_576) } ?? "unknown"
    }

    /// The 1-, 5- and 15-minute load averages.
    static var load: String {
        ((try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? "")
            .split(separator: " ").prefix(3).joined(separator: " ")
    }

    static var kernel: String {
        ((try? String(contentsOfFile: "/proc/sys/kernel/osrelease", encoding: .utf8)) ?? "unknown")
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    static var summary: String {
        "\(ProcessInfo.processInfo.activeProcessorCount) × \(cpuModel), \(memory) RAM, Linux \(kernel)"
    }
}
