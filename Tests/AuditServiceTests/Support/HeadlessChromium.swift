import Foundation
import RescindDevKit
import RescindTestSupport
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Debian's Chromium, headless, driven over the DevTools protocol on a pipe
/// (`--remote-debugging-pipe`: NUL-terminated JSON on fds 3 and 4), so a test can
/// read the live DOM of a page without a WebSocket client.
final class HeadlessChromium: Sendable {
    enum Failure: Error, CustomStringConvertible {
        case notInstalled
        case spawnFailed(Int32)
        case protocolError(String)
        case closed

        var description: String {
            switch self {
            case .notInstalled: "chromium is not installed (apt-get install -y chromium)"
            case .spawnFailed(let code): "could not open the DevTools pipe (errno \(code))"
            case .protocolError(let message): "DevTools protocol: \(message)"
            case .closed: "chromium closed the DevTools pipe"
            }
        }
    }

    /// The browser binary, if installed.
    static var executable: String? {
        let paths = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin").split(separator: ":") + ["/usr/bin"]
        for directory in paths {
            for name in ["chromium", "chromium-browser"] {
                let path = "\(directory)/\(name)"
                if FileManager.default.isExecutableFile(atPath: path) { return path }
            }
        }
        return nil
    }

    private let pid: pid_t
    private let commands: Int32
    private let profile: URL
    private let nextID = Atomic<Int>(0)
    private let waiting = Mutex<[Int: CheckedContinuation<Data, any Error>]>([:])
    private let session = Mutex<String?>(nil)

    /// Starts the browser on `url` and attaches to the page.
    init(url: URL) async throws {
        guard let executable = Self.executable else { throw Failure.notInstalled }
        // The page is served over HTTPS with the suite's CA; a browser takes no CA file, so it
        // is told to accept that server key alone (the flag needs --user-data-dir).
        let pin = url.scheme == "https" ? ["--ignore-certificate-errors-spki-list=\(try await TestTLS.shared().serverKeyPin())"] : []
        profile = FileManager.default.temporaryDirectory.appendingPathComponent("rescind-chromium-\(UUID().uuidString)")
        var toBrowser: [Int32] = [0, 0], fromBrowser: [Int32] = [0, 0]
        guard pipe(&toBrowser) == 0, pipe(&fromBrowser) == 0 else { throw Failure.spawnFailed(errno) }
        // Close-on-exec everywhere: no other child started meanwhile inherits an end of them.
        for end in toBrowser + fromBrowser { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        let arguments = [
            "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
            "--remote-debugging-pipe", "--user-data-dir=\(profile.path)",
        ] + pin + [url.absoluteString]
        // The browser reads commands on its fd 3 and writes answers on its fd 4.
        let pid: pid_t
        do {
            pid = try ChildProcess.spawn(executable, arguments: arguments, descriptors: [3: toBrowser[0], 4: fromBrowser[1]])
        } catch {
            [toBrowser[0], toBrowser[1], fromBrowser[0], fromBrowser[1]].forEach { close($0) }
            throw error
        }
        close(toBrowser[0])
        close(fromBrowser[1])
        self.pid = pid
        self.commands = toBrowser[1]
        startReading(fromBrowser[0])
        try await attach()
    }

    /// Evaluates `expression` in the page (promises awaited) and returns its JSON-able value.
    func evaluate(_ expression: String) async throws -> Any? {
        let answer = try await send(
            "Runtime.evaluate", ["expression": expression, "returnByValue": true, "awaitPromise": true])
        if let exception = answer["exceptionDetails"] as? [String: Any] {
            throw Failure.protocolError("page threw: \(exception["text"] ?? "?")")
        }
        return (answer["result"] as? [String: Any])?["value"]
    }

    /// Polls `expression` until `condition` accepts its value.
    func waitFor<T>(
        _ expression: String, as type: T.Type, timeout: Duration = .seconds(20), _ condition: (T) -> Bool
    ) async throws -> T {
        let deadline = ContinuousClock.now + timeout
        var last: Any?
        while ContinuousClock.now < deadline {
            // While the page loads or navigates (a filter form submitted), the expression can
            // throw (no body yet, an element not drawn yet): that is "not yet", not a failure.
            do {
                last = try await evaluate(expression)
            } catch Failure.protocolError(let message) where message.hasPrefix("page threw") || Self.isNavigation(message) {
                last = message
                try await Task.sleep(for: .milliseconds(100))
                continue
            }
            if let value = last as? T, condition(value) { return value }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw Failure.protocolError("timed out waiting on \(expression); last value: \(String(describing: last))")
    }

    /// Whether a protocol error only says the page was being replaced (a form submitted, a
    /// navigation under way) while an expression was evaluated: for a poll, "not yet".
    static func isNavigation(_ message: String) -> Bool {
        message.contains("Inspected target navigated or closed") || message.contains("Cannot find context with specified id")
            || message.contains("Execution context was destroyed")
    }

    /// Kills the browser and removes its profile.
    func quit() {
        kill(pid, SIGKILL)
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        Glibc.close(commands)
        try? FileManager.default.removeItem(at: profile)
    }

    // MARK: Protocol

    private func attach() async throws {
        let deadline = ContinuousClock.now + .seconds(20)
        while ContinuousClock.now < deadline {
            let targets = try await send("Target.getTargets", [:], inSession: false)
            let infos = targets["targetInfos"] as? [[String: Any]] ?? []
            if let page = infos.first(where: { $0["type"] as? String == "page" }), let id = page["targetId"] as? String {
                let attached = try await send("Target.attachToTarget", ["targetId": id, "flatten": true], inSession: false)
                guard let sessionID = attached["sessionId"] as? String else { throw Failure.protocolError("no session") }
                session.withLock { $0 = sessionID }
                return
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw Failure.protocolError("no page target")
    }

    private func send(_ method: String, _ parameters: [String: Any], inSession: Bool = true) async throws -> [String: Any] {
        let id = nextID.add(1, ordering: .relaxed).newValue
        var message: [String: Any] = ["id": id, "method": method, "params": parameters]
        if inSession { message["sessionId"] = session.withLock { $0 } }
        var bytes = try JSONSerialization.data(withJSONObject: message)
        bytes.append(0)
        let answer = try await withCheckedThrowingContinuation { continuation in
            waiting.withLock { $0[id] = continuation }
            let written = bytes.withUnsafeBytes { write(commands, $0.baseAddress, $0.count) }
            if written != bytes.count, let pending = waiting.withLock({ $0.removeValue(forKey: id) }) {
                pending.resume(throwing: Failure.closed)
            }
        }
        guard let object = try JSONSerialization.jsonObject(with: answer) as? [String: Any] else {
            throw Failure.protocolError("unreadable answer to \(method)")
        }
        if let error = object["error"] as? [String: Any] {
            throw Failure.protocolError("\(method): \(error["message"] ?? "?")")
        }
        return object["result"] as? [String: Any] ?? [:]
    }

    /// One thread reads answers (NUL-separated) and resumes whoever waits for each id.
    private func startReading(_ fd: Int32) {
        Thread { self.readAnswers(fd) }.start()
    }

    private func readAnswers(_ fd: Int32) {
        var buffer = Data()
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = read(fd, &chunk, chunk.count)
            if count <= 0 { break }
            buffer.append(contentsOf: chunk[0..<count])
            while let end = buffer.firstIndex(of: 0) {
                let message = Data(buffer[buffer.startIndex..<end])
                buffer.removeSubrange(buffer.startIndex...end)
                // Events (no id) are not needed.
                guard let object = try? JSONSerialization.jsonObject(with: message) as? [String: Any],
                    let id = object["id"] as? Int
                else { continue }
                let continuation = waiting.withLock { $0.removeValue(forKey: id) }
                continuation?.resume(returning: message)
            }
        }
        Glibc.close(fd)
        let pending: [CheckedContinuation<Data, any Error>] = waiting.withLock { waiting in
            let all = Array(waiting.values)
            waiting.removeAll()
            return all
        }
        for continuation in pending { continuation.resume(throwing: Failure.closed) }
    }
}
