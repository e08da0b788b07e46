import Foundation

/// A child process of the demo (service or agent), logging to a file and
/// remembered in a pid file so that a later `rescind demo --down` can stop it.
struct DemoProcess: Sendable {
    let name: String
    let pid: Int32
    let logPath: String

    static func launch(
        name: String, executable: URL, arguments: [String] = [], environment: [String: String], directory: DemoDirectory
    ) throws -> DemoProcess {
        let logPath = directory.logs.appendingPathComponent("\(name).log").path
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        let log = try FileHandle(forWritingTo: URL(fileURLWithPath: logPath))
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.environment = environment
        process.standardOutput = log
        process.standardError = log
        process.standardInput = FileHandle.nullDevice
        try process.run()
        try "\(process.processIdentifier)\n".write(
            to: directory.pids.appendingPathComponent("\(name).pid"), atomically: true, encoding: .utf8)
        return DemoProcess(name: name, pid: process.processIdentifier, logPath: logPath)
    }

    var isRunning: Bool { kill(pid, 0) == 0 }

    /// SIGTERM, then waits (the services flush and commit offsets on the way out).
    func stop(timeout: Duration = .seconds(10)) async {
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
                let process = DemoProcess(name: file, pid: pid, logPath: "")
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
