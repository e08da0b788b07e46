extension KafkaProducer {
    /// Whether the cluster answers a metadata request within `timeout` (what a service's
    /// `rescind_broker_up` shows). Asked on a queue of its own: never delays a flush or a send.
    public func brokersAnswer(timeout: Duration = .seconds(5)) async -> Bool {
        let handle = self.handle
        let milliseconds = timeout.clampedMilliseconds
        return (try? await BlockingExecutor(label: "rescind.kafka.producer.probe").run {
            _ = try handle.topicMetadata(timeoutMilliseconds: milliseconds)
        }) != nil
    }
}
