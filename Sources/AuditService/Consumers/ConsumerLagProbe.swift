import RescindKafka
import RescindProtocol
import Synchronization

/// Asks the brokers how far the audit service's consumer group is behind on the partitions this
/// replica owns, in messages (`KafkaConsumer.lag`: committed offsets against high watermarks),
/// for `rescind_audit_consumer_lag_messages{topic, partition}`. Run every probe interval by a
/// `PeriodicService`, off the consumer's path; while the brokers do not answer, the figures stay
/// as last read (and `rescind_broker_up` says why).
///
/// A partition this replica gave up in a rebalance reads 0 here (its new owner reports it), so
/// that summing over replicas counts every partition once.
final class ConsumerLagProbe: Sendable {
    private let topics: TopicNames
    private let metrics: AuditMetrics
    private let state = Mutex(State())

    private struct State {
        var consumer: KafkaConsumer?
        /// The partitions last reported, by logical topic.
        var reported: Set<Reported> = []
    }

    private struct Reported: Hashable {
        var topic: Topic
        var partition: Int32
    }

    init(topics: TopicNames, metrics: AuditMetrics) {
        self.topics = topics
        self.metrics = metrics
    }

    /// The consumer to ask (`nil` once it closed).
    func attach(_ consumer: KafkaConsumer?) {
        state.withLock { $0.consumer = consumer }
    }

    /// Does nothing while there is no consumer to ask yet.
    /// - Throws: `KafkaError` when the brokers did not answer (the pass is logged as failed).
    func probe() async throws {
        guard let consumer = state.withLock({ $0.consumer }) else { return }
        let lags = try await consumer.lag()
        let now = Set(lags.compactMap { lag in topics.topic(named: lag.topic).map { Reported(topic: $0, partition: lag.partition) } })
        let given = state.withLock { state in
            defer { state.reported = now }
            return state.reported.subtracting(now)
        }
        for lag in lags {
            guard let topic = topics.topic(named: lag.topic) else { continue }
            metrics.consumerLag(topic, partition: lag.partition, messages: lag.messages)
        }
        for partition in given { metrics.consumerLag(partition.topic, partition: partition.partition, messages: 0) }
    }
}
