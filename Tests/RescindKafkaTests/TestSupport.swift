import Foundation
import Logging
import Testing

@testable import RescindKafka

/// Shared helpers of the Kafka integration tests. Every test makes its own topics and
/// groups (`unique`) so tests never see each other's data, even on a shared broker.
enum TestSupport {
    static let logger: Logger = {
        var logger = Logger(label: "rescind.kafka.tests")
        // RESCIND_KAFKA_TEST_LOG_LEVEL=debug shows librdkafka's own logs (set `debug` in a
        // configuration's additionalProperties for its protocol traces).
        logger.logLevel = ProcessInfo.processInfo.environment["RESCIND_KAFKA_TEST_LOG_LEVEL"]
            .flatMap(Logger.Level.init(rawValue:)) ?? .warning
        return logger
    }()

    /// An external broker to run the round trip against as well, if the environment names one.
    static var externalBootstrapServers: String? {
        ProcessInfo.processInfo.environment["RESCIND_KAFKA_BOOTSTRAP_SERVERS"].flatMap { $0.isEmpty ? nil : $0 }
    }

    static func unique(_ prefix: String) -> String {
        "\(prefix)-\(UUID().uuidString.prefix(8).lowercased())"
    }

    /// Short timeouts so failures and reconnects happen within a test's time budget.
    static func producerConfiguration(_ bootstrapServers: String, messageTimeout: Duration = .seconds(20)) -> KafkaProducerConfiguration {
        KafkaProducerConfiguration(
            bootstrapServers: bootstrapServers,
            clientID: "rescind-tests",
            linger: .milliseconds(2),
            messageTimeout: messageTimeout,
            requestTimeout: .seconds(5),
            additionalProperties: [
                "retry.backoff.ms": "50",
                "reconnect.backoff.ms": "50",
                "reconnect.backoff.max.ms": "300",
                "topic.metadata.refresh.interval.ms": "1000",
            ].merging(debugProperties) { $1 }
        )
    }

    /// Fast group membership for the mock broker, which waits 3 s before answering a new
    /// group's first join (Debian's 2.0.2; `RESCIND_DEV_MOCK_GROUP_DELAY_MS` with a newer mock,
    /// `DevelopmentCluster`) and `session.timeout.ms` minus 1 s before later rebalances.
    static func consumerConfiguration(_ bootstrapServers: String, groupID: String? = nil) -> KafkaConsumerConfiguration {
        KafkaConsumerConfiguration(
            bootstrapServers: bootstrapServers,
            clientID: "rescind-tests",
            groupID: groupID,
            autoOffsetReset: .earliest,
            sessionTimeout: .seconds(3),
            heartbeatInterval: .milliseconds(300),
            maxPollInterval: .seconds(30),
            additionalProperties: [
                "fetch.wait.max.ms": "50",
                "fetch.error.backoff.ms": "50",
                "reconnect.backoff.ms": "50",
                "reconnect.backoff.max.ms": "300",
                "topic.metadata.refresh.interval.ms": "1000",
            ].merging(debugProperties) { $1 }
        )
    }

    /// `RESCIND_KAFKA_TEST_DEBUG=cgrp,protocol` turns on librdkafka's debug contexts
    /// (logged at debug level, so also set RESCIND_KAFKA_TEST_LOG_LEVEL=debug).
    static var debugProperties: [String: String] {
        ProcessInfo.processInfo.environment["RESCIND_KAFKA_TEST_DEBUG"].map { ["debug": $0] } ?? [:]
    }

    static func data(_ text: String) -> Data { Data(text.utf8) }

    static func text(_ data: Data?) -> String? { data.map { String(decoding: $0, as: UTF8.self) } }

    /// Reads `count` messages (without committing) or fails the test after `timeout`.
    static func collect(
        _ count: Int, from consumer: KafkaConsumer, timeout: Duration = .seconds(20)
    ) async throws -> [KafkaMessage] {
        try await withDeadline(timeout) {
            var received: [KafkaMessage] = []
            for try await message in consumer.messages {
                received.append(message)
                if received.count == count { break }
            }
            return received
        }
    }

    /// Runs `body`, failing with `TimedOut` if it takes longer than `timeout`.
    static func withDeadline<T: Sendable>(
        _ timeout: Duration, _ body: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        try await withThrowingTaskGroup(of: T.self) { group in
            group.addTask { try await body() }
            group.addTask {
                try await Task.sleep(for: timeout)
                throw TimedOut(after: timeout)
            }
            let first = try await group.next()!
            group.cancelAll()
            return first
        }
    }

    /// Polls `condition` every 50 ms until it holds or `timeout` passes.
    static func eventually(_ timeout: Duration = .seconds(20), _ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + timeout
        while !condition() {
            guard ContinuousClock.now < deadline else { throw TimedOut(after: timeout) }
            try await Task.sleep(for: .milliseconds(50))
        }
    }
}

struct TimedOut: Error, CustomStringConvertible {
    var after: Duration
    var description: String { "timed out after \(after)" }
}
