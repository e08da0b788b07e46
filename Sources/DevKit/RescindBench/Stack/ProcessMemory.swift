import Foundation

/// Resident memory of a process from `/proc/<pid>/status` (Linux).
enum ProcessMemory {
    /// `VmHWM`: the peak resident set size since the process started, in bytes.
    static func peakResident(pid: Int32? = nil) -> Int? {
        field("VmHWM", pid: pid)
    }

    /// `VmRSS`: the resident set size now, in bytes.
    static func resident(pid: Int32? = nil) -> Int? {
        field("VmRSS", pid: pid)
    }

    private static func field(_ name: String, pid: Int32?) -> Int? {
        let path = "/proc/\(pid.map(String.init) ?? "self")/status"
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix(name + ":") {
            let kibibytes = line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first.flatMap { Int($0) }
            return kibibytes.map { $0 * 1024 }
        }
        return nil
    }

    /// CPU time (user + system) the process has used so far, in seconds (`/proc/<pid>/stat`).
    static func cpuSeconds(pid: Int32? = nil) -> Double? {
        let path = "/proc/\(pid.map(String.init) ?? "self")/stat"
        guard let text = try? String(contentsOfFile: path, encoding: .utf8),
            let end = text.lastIndex(of: ")")
        else { return nil }
        // Fields after the command name; utime and stime are fields 14 and 15 of the whole line.
        let fields = text[text.index(after: end)...].split(separator: " ")
        guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// CPU time every core of the machine has spent busy so far (`/proc/stat`: all but idle and
    /// iowait), in seconds: with `cpuSeconds`, what the rest of the machine (PostgreSQL, the
    /// broker) used in the same window.
    static func machineBusySeconds() -> Double? {
        guard let text = try? String(contentsOfFile: "/proc/stat", encoding: .utf8),
            let line = text.split(separator: "\n").first, line.hasPrefix("cpu ")
        else { return nil }
        let ticks = line.split(separator: " ").dropFirst().compactMap { Double($0) }
        guard ticks.count >= 5 else { return nil }
        // user nice system idle iowait irq softirq steal (guest time is already in user).
        let busy = ticks.prefix(8).enumerated().filter { $0.offset != 3 && $0.offset != 4 }.map(\.element).reduce(0, +)
        return busy / Double(sysconf(Int32(_SC_CLK_TCK)))
    }
}
