import Foundation
import Logging
import RescindDevKit
import RescindKafka

/// Loopback line protocol for end-to-end fault injection into the running cluster,
/// served one connection at a time on a dedicated thread with plain POSIX sockets.
///
///     down 1    → ok broker 1 down
///     up 1      → ok broker 1 up
///     status    → ok brokers=1...3 down=1 bootstrap=127.0.0.1:…
///     help      → ok commands: down ID | up ID | status | help
///
/// Anything else gets one `error …` line. Only 127.0.0.1 is bound: this is not a
/// remote administration interface.
final class ControlServer: @unchecked Sendable {
    // Safe: `socket` is immutable; `downBrokers` is only touched on the server thread.
    private let socket: Int32
    private let cluster: DevelopmentCluster
    private let logger: Logger
    private var downBrokers: Set<Int32> = []
    /// The bound port (useful when 0 was asked for).
    let port: UInt16

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    init(port requestedPort: UInt16, cluster: DevelopmentCluster, logger: Logger) throws {
        let fd = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket: \(String(cString: strerror(errno)))") }
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = requestedPort.bigEndian
        address.sin_addr.s_addr = in_addr_t(0x7F00_0001).bigEndian
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 4) == 0 else {
            let message = String(cString: strerror(errno))
            close(fd)
            throw Failure(description: "cannot listen on 127.0.0.1:\(requestedPort): \(message)")
        }
        var actual = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &actual) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        socket = fd
        port = UInt16(bigEndian: actual.sin_port)
        self.cluster = cluster
        self.logger = logger
    }

    func start() {
        let thread = Thread { [self] in serve() }
        thread.name = "rescind-devbroker-control"
        thread.start()
    }

    /// Wakes the accept loop (Linux returns from `accept` once the socket is shut down).
    func stop() {
        shutdown(socket, Int32(SHUT_RDWR))
        close(socket)
    }

    private func serve() {
        while true {
            let connection = accept(socket, nil, nil)
            guard connection >= 0 else {
                if errno == EINTR { continue }
                return
            }
            handle(connection)
            close(connection)
        }
    }

    private func handle(_ connection: Int32) {
        var pending = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 512)
        while true {
            let count = read(connection, &buffer, buffer.count)
            guard count > 0 else { return }
            pending += buffer[0..<count]
            while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: pending[..<newline], as: UTF8.self)
                pending.removeSubrange(...newline)
                let reply = execute(line.trimmingCharacters(in: .whitespacesAndNewlines)) + "\n"
                let bytes = Array(reply.utf8)
                guard write(connection, bytes, bytes.count) == bytes.count else { return }
            }
            if pending.count > 4096 { return }
        }
    }

    private func execute(_ line: String) -> String {
        let words = line.split(separator: " ").map(String.init)
        switch (words.first, words.count) {
        case ("down", 2), ("up", 2):
            guard let id = Int32(words[1]), cluster.brokerIDs.contains(id) else {
                return "error broker id must be in \(cluster.brokerIDs.lowerBound)...\(cluster.brokerIDs.upperBound)"
            }
            let down = words[0] == "down"
            do {
                try blocking { [cluster] in
                    if down { try await cluster.setBrokerDown(id) } else { try await cluster.setBrokerUp(id) }
                }
            } catch {
                return "error \(error)"
            }
            if down { downBrokers.insert(id) } else { downBrokers.remove(id) }
            logger.notice("broker \(id) \(words[0]) (control port)")
            return "ok broker \(id) \(words[0])"
        case ("status", 1):
            let down = downBrokers.sorted().map(String.init).joined(separator: ",")
            return "ok brokers=\(cluster.brokerIDs.lowerBound)...\(cluster.brokerIDs.upperBound) down=\(down.isEmpty ? "none" : down) bootstrap=\(cluster.bootstrapServers)"
        case ("help", 1):
            return "ok commands: down ID | up ID | status | help"
        default:
            return "error unknown command (try: help)"
        }
    }

    /// Runs an async cluster call from this dedicated thread and waits for it.
    private func blocking(_ body: @escaping @Sendable () async throws -> Void) throws {
        let done = DispatchSemaphore(value: 0)
        let outcome = Outcome()
        Task {
            do { try await body() } catch { outcome.error = error }
            done.signal()
        }
        done.wait()
        if let error = outcome.error { throw error }
    }

    private final class Outcome: @unchecked Sendable {
        // Safe: written by the task before `done.signal()`, read after `done.wait()`.
        var error: (any Error)?
    }
}
