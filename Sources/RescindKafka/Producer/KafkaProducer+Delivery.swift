import Foundation
import Logging

extension KafkaProducer {
    /// Registers `completion` and queues the message; `completion` runs exactly once,
    /// with the delivery report, the enqueue error, or the shutdown error.
    func submit(_ message: KafkaProducerMessage, completion: @escaping DeliveryRegistry.Completion) {
        guard let id = deliveries.register(completion) else {
            completion(.failure(KafkaError(code: .shutdown, detail: "the producer was shut down")))
            return
        }
        if let error = enqueue(id: id, message) {
            deliveries.resolve(id, with: .failure(error))
        }
    }

    /// Hands one message to librdkafka (which copies key, value and headers).
    /// Returns the error when librdkafka refuses it; no report will come for it then.
    private func enqueue(id: UInt, _ message: KafkaProducerMessage) -> KafkaError? {
        let nativeHeaders = RDKafkaHeaders(message.headers)
        let result = handle.produce(
            topic: message.topic, key: message.key, value: message.value, headers: nativeHeaders, deliveryID: id
        )
        guard result == .noError else {
            return KafkaError(code: .enqueue, rdKafka: result, detail: "could not queue a message for topic '\(message.topic)'")
        }
        nativeHeaders?.relinquish()
        return nil
    }

    /// One poll-thread step: waits up to 100 ms for an event of the main queue and serves it.
    static func serve(_ queue: RDKafkaQueue, deliveries: DeliveryRegistry, logger: Logger) {
        queue.poll(timeoutMilliseconds: 100) { event in
            switch event.kind {
            case .deliveryReport:
                event.forEachMessage { message in
                    deliveries.resolve(message.deliveryID, with: deliveryResult(of: message))
                }
            case .error:
                // A fatal error makes every later produce fail with `_FATAL`, which `send` reports.
                _ = RDKafkaLog.handleError(event, logger: logger, code: .delivery)
            case .log:
                RDKafkaLog.forwardLog(event, to: logger)
            case .fetch, .rebalance, .other:
                break
            }
        }
    }

    private static func deliveryResult(of message: RDKafkaMessage) -> Result<KafkaDelivery, KafkaError> {
        let topic = message.topic
        let error = message.code
        guard error == .noError else {
            return .failure(KafkaError(
                code: .delivery, rdKafka: error,
                detail: "delivery to topic '\(topic)' failed: \(error.text)"
            ))
        }
        return .success(KafkaDelivery(topic: topic, partition: message.partition, offset: message.offset))
    }
}
