import Foundation
import Logging
import RescindCrypto
import RescindDevKit
import RescindKafka
import RescindProtocol
import ServiceLifecycle

/// A service application run for a test, as both service harnesses run theirs: in a service
/// group of its own on a free loopback port, stopped by graceful shutdown as SIGTERM does in
/// production (cancelling a Hummingbird server while connections arrive can trip NIO's
/// "NIOAsyncWriter deinited without finish()" trap).
struct ServiceUnderTest: Sendable {
    /// The port the server is bound to.
    let port: Int
    /// Whether it serves HTTPS (it was given a certificate).
    let tls: Bool
    private let group: ServiceGroup
    private let task: Task<Void, any Error>

    var baseURL: URL { URL(string: "\(tls ? "https" : "http")://127.0.0.1:\(port)")! }

    /// Builds the application, handing `build` the callback that reports the bound port, and
    /// runs it; returns once the server listens.
    static func start<App: Service>(
        logger: Logger, tls: Bool, build: (@escaping @Sendable (Int) async -> Void) async throws -> App
    ) async throws -> ServiceUnderTest {
        let (ports, portContinuation) = AsyncStream.makeStream(of: Int.self)
        let app = try await build { port in portContinuation.yield(port) }
        let group = ServiceGroup(configuration: .init(services: [app], gracefulShutdownSignals: [], logger: logger))
        let task = Task { try await group.run() }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else { throw HarnessError.serverDidNotStart }
        return ServiceUnderTest(port: port, tls: tls, group: group, task: task)
    }

    /// Graceful shutdown, waited for. Bounded: after `timeout` the run is cancelled, so a
    /// shutdown stuck on a hung connection does not hang the suite.
    func stop(timeout: Duration = .seconds(15)) async {
        await group.triggerGracefulShutdown()
        let task = self.task
        let watchdog = Task {
            try await Task.sleep(for: timeout)
            task.cancel()
        }
        _ = try? await task.value
        watchdog.cancel()
    }

    /// The broker the harnesses run on instead of their own development cluster:
    /// `RESCIND_KAFKA_BOOTSTRAP_SERVERS` when `RESCIND_TEST_KAFKA=external` (scripts/test.sh's
    /// Tansu pass). Its topics are provisioned through the Admin API, as `rescind-admin migrate kafka` does.
    public static var externalKafka: String? {
        let environment = ProcessInfo.processInfo.environment
        guard environment["RESCIND_TEST_KAFKA"] == "external" else { return nil }
        return environment["RESCIND_KAFKA_BOOTSTRAP_SERVERS"].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// Creates every topic behind `prefix` with `partitions` partitions: on `cluster` (the mock
    /// creates them directly), or through the Admin API of the external broker.
    static func createTopics(prefix: String, partitions: Int32, bootstrapServers: String, on cluster: DevelopmentCluster) async throws {
        guard bootstrapServers != cluster.bootstrapServers else {
            for topic in Topic.allCases {
                _ = try await cluster.createTopic(name: prefix + topic.rawValue, partitions: partitions)
            }
            return
        }
        let admin = try KafkaAdmin(bootstrapServers: bootstrapServers, logger: .forTests("test.kafka-admin"))
        let specs = Topic.allCases.map {
            KafkaTopic(name: prefix + $0.rawValue, partitions: partitions, replicationFactor: 1)
        }
        let report = try await TopicProvisioning(topics: specs).run(with: admin)
        guard report.isClean else { throw KafkaTopicsNotProvisioned(report: report) }
    }

    struct KafkaTopicsNotProvisioned: Error {
        let report: TopicProvisioning.Report
    }

    /// The public half of the signing key a service created at `path` (its 32-byte seed).
    static func publicKey(ofSigningKeyFile path: String) throws -> Ed25519.PublicKey {
        var seed = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        return try Ed25519.PrivateKey(seed: &seed).publicKey
    }

    /// Removes the temporary directory holding a signing key file.
    static func removeSigningKeyDirectory(of path: String) {
        try? FileManager.default.removeItem(at: URL(fileURLWithPath: path).deletingLastPathComponent())
    }
}
