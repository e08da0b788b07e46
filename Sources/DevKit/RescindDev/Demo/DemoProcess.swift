import Foundation
import RescindDevKit

/// A child process of the demo (service or agent), started by the dev kit's launcher,
/// logging to a file and remembered in a pid file so that a later `rescind-dev demo --down`
/// can stop it (this run's children are stopped through the launcher, a previous run's by pid).
struct DemoProcess: Sendable {
    let name: String
    let pid: Int32
    let logPath: String
    private let child: ChildProcess?

    static func launch(
        name: String, executable: URL, arguments: [String] = [], environment: [String: String], directory: DemoDirectory
    ) throws -> DemoProcess {
        let logPath = directory.logs.appendingPathComponent("\(name).log").path
        let child = try ChildProcess(
            name: name, executable: executable, arguments: arguments, environment: environment,
            output: .file(URL(fileURLWithPath: logPath)))
        try "\(child.pid)\n".write(
            to: directory.pids.appendingPathComponent("\(name).pid"), atomically: true, encoding: .utf8)
        return DemoProcess(name: name, pid: child.pid, logPath: logPath, child: child)
    }

    var isRunning: Bool { child?.isRunning ?? (kill(pid, 0) == 0) }

    /// SIGTERM, then waits (the services flush and commit offsets on the way out).
    func stop(timeout: Duration = .seconds(10)) async {
        if let child {
            await child.stop(grace: timeout)
            return
        }
        guard isRunning else { return }
        kill(pid, SIGTERM)
        let deadline = ContinuousClock.now + timeout
        while isRunning, ContinuousClock.now < deadline {
            _ = waitpid(pid, nil, WNOHANG)
            try? await Task.sleep(for: .milliseconds(50))
        }
        if isRunning { kill(pid, SIGKILL) }
        _ = waitpid(pid, nil, WNOHANG)
    }

    /// Stops every process a previous demo left running.
    static func stopAll(in directory: DemoDirectory) async -> Int {
        guard let files = try? FileManager.default.contentsOfDirectory(atPath: directory.pids.path) else { return 0 }
        var stopped = 0
        for file in files where file.hasSuffix(".pid") {
            let path = directory.pids.appendingPathComponent(file)
            if let text = try? String(contentsOf: path, encoding: .utf8), let pid = Int32(text.trimmingCharacters(in: .whitespacesAndNewlines)) {
                let process = DemoProcess(name: file, pid: pid, logPath: "", child: nil)
                if process.isRunning, Self.isRescindProcess(pid) {
                    await process.stop()
                    stopped += 1
                }
            }
            try? FileManager.default.removeItem(at: path)
        }
        return stopped
    }

    /// Guards against a recycled pid: only signal processes that are ours.
    private static func isRescindProcess(_ pid: Int32) -> Bool {
        guard let command = try? String(contentsOfFile: "/proc/\(pid)/cmdline", encoding: .utf8) else { return false }
        return command.contains("rescind-")
    }
}

/// Where a demo keeps its state: `.stack/demo/` under the repository.
struct DemoDirectory: Sendable {
    let root: URL

    var logs: URL { root.appendingPathComponent("logs") }
    var pids: URL { root.appendingPathComponent("pids") }
    var keys: URL { root.appendingPathComponent("keys") }
    var agents: URL { root.appendingPathComponent("agents") }

    /// Empties everything but the pid files (processes must be stopped first).
    func reset() throws {
        let manager = FileManager.default
        for directory in [logs, keys, agents] {
            try? manager.removeItem(at: directory)
        }
        for directory in [logs, pids, keys, agents] {
            try manager.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }
    }
}
