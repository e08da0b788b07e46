import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// DEVELOPMENT AND TESTS ONLY: a PostgreSQL cluster of its own, made with `initdb` in a
/// temporary directory and served on its own loopback port, so that a fault run can kill its
/// postmaster with SIGKILL without touching the shared stack (`scripts/stack.sh`).
///
/// No TLS, trust authentication on loopback, user and database `rescind`. PostgreSQL refuses
/// to run as root; as root the cluster belongs to the `postgres` user and every command runs
/// through `runuser`, as `scripts/stack.sh` does. The postmaster runs in the foreground as a child
/// of this process, which it does not outlive; it is signalled through the pid in `postmaster.pid`.
public final class ThrowawayPostgres: Sendable {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    public let port: Int
    /// Holds `data/` (the cluster), the socket and a `server.<n>.log` per start.
    public let directory: URL
    private let binaries: URL
    private var data: URL { directory.appendingPathComponent("data") }
    /// The postmaster's process (through `runuser` as root) of the current start.
    private let server = Mutex<ChildProcess?>(nil)
    private let starts = Mutex(0)

    /// `postgres://rescind@127.0.0.1:<port>/rescind?sslmode=disable`
    public var url: String { "postgres://rescind@127.0.0.1:\(port)/rescind?sslmode=disable&connect_timeout=5" }

    /// The PostgreSQL programs: `RESCIND_PG_BIN`, else the newest `/usr/lib/postgresql/<n>/bin`.
    public static func findBinaries(environment: [String: String] = ProcessInfo.processInfo.environment) -> URL? {
        if let bin = environment["RESCIND_PG_BIN"], !bin.isEmpty { return URL(fileURLWithPath: bin) }
        let root = "/usr/lib/postgresql"
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []).compactMap(Int.init).sorted()
        for version in versions.reversed() {
            let bin = URL(fileURLWithPath: "\(root)/\(version)/bin")
            if FileManager.default.isExecutableFile(atPath: bin.appendingPathComponent("initdb").path) { return bin }
        }
        return nil
    }

    /// Makes the cluster (initdb) and starts it; `stop()` it and remove the directory when done.
    /// - Parameter directory: a fresh directory that the `postgres` user can reach when run as root
    ///   (default: under `/var/tmp`).
    public static func start(port: Int, binaries: URL, directory: URL? = nil) async throws -> ThrowawayPostgres {
        if directory == nil {
            // Clusters of runs that were killed before they could remove theirs (SIGKILL, a time limit).
            OwnedDirectory.sweep(in: defaultParent, prefix: defaultPrefix)
        }
        let root = directory ?? defaultParent.appendingPathComponent("\(defaultPrefix)\(UUID().uuidString.prefix(8).lowercased())")
        try OwnedDirectory.create(root)
        chmod(root.path, 0o700)
        if getuid() == 0 {
            let chown = try await ChildProcess.run(URL(fileURLWithPath: "/bin/chown"), ["postgres:postgres", root.path])
            guard chown.status == 0 else { throw Failure(description: "chown postgres \(root.path): \(chown.output)") }
        }
        let cluster = ThrowawayPostgres(port: port, directory: root, binaries: binaries)
        let initdb = try await cluster.asPostgres(
            "initdb", ["-D", cluster.data.path, "-U", "rescind", "--auth=trust", "--encoding=UTF8", "--locale=C.UTF-8", "--no-sync"])
        guard initdb.status == 0 else { throw Failure(description: "initdb failed: \(initdb.output)") }
        try await cluster.startServer(timeout: .seconds(60))
        let created = try await cluster.asPostgres(
            "psql", ["-h", root.path, "-p", "\(port)", "-U", "rescind", "-d", "postgres", "-qc", "CREATE DATABASE rescind"])
        guard created.status == 0 else { throw Failure(description: "CREATE DATABASE failed: \(created.output)") }
        return cluster
    }

    /// Where a cluster goes unless told: `/var/tmp/rescind-pg-<random>`, named for this process
    /// (`OwnedDirectory`), so that the next start removes it if this process dies first.
    static let defaultParent = URL(fileURLWithPath: "/var/tmp")
    static let defaultPrefix = "rescind-pg-"

    private init(port: Int, directory: URL, binaries: URL) {
        self.port = port
        self.directory = directory
        self.binaries = binaries
    }

    /// The postmaster's pid, from `postmaster.pid`, when it runs.
    public var postmasterPID: Int32? {
        guard let text = try? String(contentsOf: data.appendingPathComponent("postmaster.pid"), encoding: .utf8),
            let first = text.split(separator: "\n").first, let pid = Int32(first.trimmingCharacters(in: .whitespaces)),
            kill(pid, 0) == 0
        else { return nil }
        return pid
    }

    /// SIGKILL to the postmaster (its backends notice and exit; nothing is shut down cleanly),
    /// and waits until it is gone. Returns the pid killed, `nil` when none ran.
    @discardableResult
    public func killPostmaster() async -> Int32? {
        guard let pid = postmasterPID else { return nil }
        kill(pid, SIGKILL)
        let deadline = ContinuousClock.now + .seconds(10)
        while kill(pid, 0) == 0, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(20))
        }
        return pid
    }

    /// SIGSTOP to the postmaster and every backend: the database stops answering while its
    /// connections stay open and no reset ever comes (a network partition, a frozen host), the
    /// fault no client notices by itself. `thaw()` undoes it. Returns the pids stopped.
    @discardableResult
    public func freeze() -> [Int32] { signalCluster(SIGSTOP) }

    /// SIGCONT to what `freeze()` stopped (and any backend started since).
    @discardableResult
    public func thaw() -> [Int32] { signalCluster(SIGCONT) }

    private func signalCluster(_ signal: Int32) -> [Int32] {
        guard let postmaster = postmasterPID else { return [] }
        let pids = [postmaster] + Self.children(of: postmaster)
        for pid in pids { kill(pid, signal) }
        return pids
    }

    /// The processes whose parent is `pid` (from `/proc/<pid>/stat`: `pid (comm) state ppid …`).
    private static func children(of pid: Int32) -> [Int32] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { entry -> Int32? in
            guard let child = Int32(entry),
                let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")")
            else { return nil }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            return fields.count > 1 && Int32(fields[1]) == pid ? child : nil
        }
    }

    /// Starts the postmaster again after a kill (crash recovery runs first). Retries while the
    /// killed postmaster's backends still hold its shared memory.
    public func restart(timeout: Duration = .seconds(60)) async throws {
        try await startServer(timeout: timeout)
    }

    private func startServer(timeout: Duration) async throws {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            // The postmaster runs in the foreground as a child (through runuser as root), not
            // daemonised by pg_ctl: this process owns it, stops it however the run ends, and keeps
            // each start's log apart. fsync and full-page writes
            // only matter when the machine crashes; a killed process loses nothing the OS holds.
            // Commits stay synchronous: one acknowledged must survive a postmaster SIGKILL.
            let arguments = [
                "-D", data.path, "-p", "\(port)", "-k", directory.path, "-c", "listen_addresses=127.0.0.1",
                "-c", "max_connections=300", "-c", "fsync=off", "-c", "full_page_writes=off",
                "-c", "shared_buffers=64MB",
            ]
            let executable = binaries.appendingPathComponent("postgres")
            // Tied to this process's life (`exitsWithParent`): a run that dies takes its
            // postmaster with it (its backends notice and exit). As root, `runuser` stays between
            // them as the postmaster's parent, so the postmaster is tied to `runuser` in turn.
            let child =
                getuid() == 0
                ? try ChildProcess(
                    name: "postgres", executable: URL(fileURLWithPath: "/usr/sbin/runuser"),
                    arguments: ["-u", "postgres", "--", ChildProcess.setpriv.path] + ChildProcess.parentDeathArguments
                        + [executable.path] + arguments,
                    environment: Self.environment, directory: URL(fileURLWithPath: "/"), output: .file(nextLog()),
                    exitsWithParent: true)
                : try ChildProcess(
                    name: "postgres", executable: executable, arguments: arguments, environment: Self.environment,
                    output: .file(nextLog()), exitsWithParent: true)
            server.withLock { $0 = child }
            while ContinuousClock.now < deadline, child.isRunning {
                let ready = try await ChildProcess.run(
                    binaries.appendingPathComponent("pg_isready"), ["-q", "-h", "127.0.0.1", "-p", "\(port)", "-t", "2"],
                    environment: Self.environment, timeout: .seconds(10))
                if ready.status == 0 { return }
                try await Task.sleep(for: .milliseconds(100))
            }
            // Exited at once: the killed postmaster's backends still hold its shared memory.
            try await Task.sleep(for: .milliseconds(300))
        }
        throw Failure(description: "PostgreSQL did not start on port \(port): \(logTail())")
    }

    /// A new log file per start, so that the server's own words after a crash stay readable.
    private func nextLog() -> URL {
        let number = starts.withLock { count in
            count += 1
            return count
        }
        return directory.appendingPathComponent("server.\(number).log")
    }

    private static let environment = ["PATH": "/usr/bin:/bin", "LC_ALL": "C.UTF-8"]

    /// Stops the server (SIGQUIT to the postmaster: immediate shutdown), then makes sure it is gone.
    public func stop() async {
        if let pid = postmasterPID {
            kill(pid, SIGQUIT)
            let deadline = ContinuousClock.now + .seconds(10)
            while kill(pid, 0) == 0, ContinuousClock.now < deadline {
                try? await Task.sleep(for: .milliseconds(20))
            }
        }
        if postmasterPID != nil { await killPostmaster() }
        if let child = server.withLock({ $0 }) { await child.stop(grace: .seconds(5)) }
    }

    /// Deletes the cluster's directory (stop it first).
    public func remove() {
        try? FileManager.default.removeItem(at: directory)
    }

    /// The last lines of the server's log.
    public func logTail(lines: Int = 20) -> String {
        (server.withLock { $0 }?.text ?? "").split(separator: "\n").suffix(lines).joined(separator: "\n")
    }

    /// Runs a PostgreSQL program, as the `postgres` user when this process is root.
    private func asPostgres(_ program: String, _ arguments: [String]) async throws -> ChildProcess.Result {
        let executable = binaries.appendingPathComponent(program)
        let environment = Self.environment
        if getuid() == 0 {
            return try await ChildProcess.run(
                URL(fileURLWithPath: "/usr/sbin/runuser"), ["-u", "postgres", "--", executable.path] + arguments,
                environment: environment, directory: URL(fileURLWithPath: "/"), timeout: .seconds(90))
        }
        return try await ChildProcess.run(executable, arguments, environment: environment, timeout: .seconds(90))
    }
}
