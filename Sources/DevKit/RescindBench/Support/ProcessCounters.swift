import Foundation

/// This process's CPU time (all threads, nanosecond clock) and minor page faults so far: the
/// load-robust side of a wall-clock figure. On a machine shared with other work, wall time
/// says how long the work waited as well as how long it ran; CPU time and faults per record
/// say whether more threads did more work for the same records.
struct ProcessCounters {
    var cpuSeconds: Double
    /// Minor faults (`minflt` in `/proc/self/stat`): mostly first touches of fresh pages.
    var minorFaults: Int

    static func now() -> ProcessCounters {
        var time = timespec()
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time)
        return ProcessCounters(
            cpuSeconds: Double(time.tv_sec) + Double(time.tv_nsec) / 1e9, minorFaults: minorFaultsSoFar() ?? 0)
    }

    static func - (lhs: ProcessCounters, rhs: ProcessCounters) -> ProcessCounters {
        ProcessCounters(cpuSeconds: lhs.cpuSeconds - rhs.cpuSeconds, minorFaults: lhs.minorFaults - rhs.minorFaults)
    }

    private static func minorFaultsSoFar() -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/self/stat", encoding: .utf8),
            let end = text.lastIndex(of: ")")
        else { return nil }
        // Fields after the command name; minflt is field 10 of the whole line.
        let fields = text[text.index(after: end)...].split(separator: " ")
        return fields.count > 7 ? Int(fields[7]) : nil
    }
}
