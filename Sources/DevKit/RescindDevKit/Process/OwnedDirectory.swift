import Foundation

/// DEVELOPMENT AND TESTS ONLY: a scratch directory that names the process that made it (a
/// `.owner` file: its pid and its start time), so that a run killed where it could not clean up
/// (SIGKILL, a test's time limit) leaves nothing that the next run does not remove (`sweep`).
/// A directory kept on purpose (a failed run's logs and data, `keep`) names no owner and stays.
public enum OwnedDirectory {
    static let ownerFile = ".owner"

    /// Creates `directory` (and its parents) and writes this process as its owner.
    public static func create(_ directory: URL, attributes: [FileAttributeKey: Any]? = nil) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: attributes)
        let pid = ProcessInfo.processInfo.processIdentifier
        let owner = "\(pid) \(startTime(of: pid) ?? "?")\n"
        try Data(owner.utf8).write(to: directory.appendingPathComponent(ownerFile))
    }

    /// Marks `directory` as kept on purpose: no sweep removes it.
    public static func keep(_ directory: URL) {
        try? FileManager.default.removeItem(at: directory.appendingPathComponent(ownerFile))
    }

    /// Removes every directory of `parent` whose name starts with `prefix` and whose owner is
    /// gone (no process has its pid any more, or another one started since under it), unless a
    /// PostgreSQL postmaster still runs on its `data/`. A directory without an owner file (kept,
    /// or not made here) is left alone. Returns the directories removed.
    @discardableResult
    public static func sweep(in parent: URL, prefix: String) -> [URL] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: parent.path)) ?? []
        var removed: [URL] = []
        for name in names where name.hasPrefix(prefix) {
            let directory = parent.appendingPathComponent(name)
            guard let owner = try? String(contentsOf: directory.appendingPathComponent(ownerFile), encoding: .utf8) else { continue }
            let fields = owner.split(whereSeparator: \.isWhitespace).map(String.init)
            guard let pidText = fields.first, let pid = Int32(pidText) else { continue }
            if runs(pid), let started = startTime(of: pid), fields.count > 1, started == fields[1] || fields[1] == "?" { continue }
            if postmasterRuns(in: directory) { continue }
            if (try? FileManager.default.removeItem(at: directory)) != nil { removed.append(directory) }
        }
        return removed
    }

    /// The start time of process `pid` (clock ticks since boot, field 22 of `/proc/<pid>/stat`),
    /// `nil` when no such process runs.
    static func startTime(of pid: Int32) -> String? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return nil }
        // After "pid (comm) ": state is field 3, so the start time (22) is the 20th from there.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        return fields.count > 19 ? String(fields[19]) : nil
    }

    private static func postmasterRuns(in directory: URL) -> Bool {
        guard let text = try? String(contentsOf: directory.appendingPathComponent("data/postmaster.pid"), encoding: .utf8),
            let first = text.split(separator: "\n").first, let pid = Int32(first.trimmingCharacters(in: .whitespaces))
        else { return false }
        return runs(pid)
    }

    /// Whether `pid` names a process that has not ended: a zombie (ended, not yet reaped, as a
    /// killed postmaster whose parent died can stay in a container) does not run.
    static func runs(_ pid: Int32) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), let close = stat.lastIndex(of: ")")
        else { return false }
        let state = stat[stat.index(after: close)...].split(separator: " ").first ?? ""
        return state != "Z" && state != "X"
    }
}
