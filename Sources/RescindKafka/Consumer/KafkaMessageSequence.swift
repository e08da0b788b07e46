/// The messages of a `KafkaConsumer`, in partition order, ending when the consumer closes.
///
/// Iterate it once (from one task at a time). After `close()` (or when the iterating
/// task is cancelled) messages still buffered are dropped rather than handed out:
/// they were never committed, so the group reads them again.
/// - Throws: `KafkaError` `.consume` when librdkafka reports a fatal consumer error.
public struct KafkaMessageSequence: AsyncSequence, Sendable {
    public typealias Element = KafkaMessage

    let stream: AsyncThrowingStream<KafkaMessage, any Error>
    let gate: MessageBufferGate
    let assignment: AssignmentTracker

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: stream.makeAsyncIterator(), gate: gate, assignment: assignment)
    }

    public struct AsyncIterator: AsyncIteratorProtocol {
        var base: AsyncThrowingStream<KafkaMessage, any Error>.AsyncIterator
        let gate: MessageBufferGate
        let assignment: AssignmentTracker

        public mutating func next() async throws -> KafkaMessage? {
            while let message = try await base.next() {
                gate.didUnbuffer()
                // Closing: drain (dropping) until the stream ends, so that a fatal error still surfaces.
                if gate.isClosing { continue }
                if assignment.contains(TopicPartition(topic: message.topic, partition: message.partition)) {
                    return message
                }
            }
            return nil
        }
    }
}
