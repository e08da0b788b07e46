import Tracing

extension KafkaProducer {
    /// A message to send, and the trace it continues.
    public struct TracedMessage: Sendable {
        public var message: KafkaProducerMessage
        /// The context of the work that produced it (`nil`: sent untraced).
        public var parent: ServiceContext?
        /// Its producer span's name (`relay publish`, `ack published`).
        public var spanName: String

        public init(_ message: KafkaProducerMessage, parent: ServiceContext?, spanName: String) {
            self.message = message
            self.parent = parent
            self.spanName = spanName
        }
    }

    /// `send(_:)`, each message with a parent under a producer span of its own whose context its
    /// headers carry; the span ends when the broker answered (an error when it refused).
    public func send(_ batch: [TracedMessage]) async -> [Result<KafkaDelivery, KafkaError>] {
        var spans: [(any Span)?] = []
        spans.reserveCapacity(batch.count)
        let messages = batch.map { traced -> KafkaProducerMessage in
            guard let parent = traced.parent else {
                spans.append(nil)
                return traced.message
            }
            let span = InstrumentationSystem.tracer.startAnySpan(traced.spanName, context: parent, ofKind: .producer)
            span.attributes["messaging.system"] = "kafka"
            var message = traced.message
            message.inject(span.context)
            spans.append(span)
            return message
        }
        let results = await send(messages)
        for (span, result) in zip(spans, results) {
            if case .failure = result { span?.setStatus(SpanStatus(code: .error)) }
            span?.end()
        }
        return results
    }
}
