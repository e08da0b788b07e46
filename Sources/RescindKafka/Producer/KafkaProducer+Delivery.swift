import CRdKafka
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
        let result = handle.withPointer { client in
            Self.withBytes(of: message.key) { keyBytes, keyCount in
                Self.withBytes(of: message.value) { valueBytes, valueCount in
                    rescind_rd_kafka_produce(
                        client, message.topic, keyBytes, keyCount, valueBytes, valueCount,
                        nativeHeaders?.unsafePointer, UnsafeMutableRawPointer(bitPattern: id)
                    )
                }
            }
        }
        guard result == RD_KAFKA_RESP_ERR_NO_ERROR else {
            return KafkaError(code: .enqueue, rdKafka: result, detail: "could not queue a message for topic '\(message.topic)'")
        }
        nativeHeaders?.relinquish()
        return nil
    }

    /// One poll-thread step: waits up to 100 ms for an event of the main queue and serves it.
    static func serve(_ queue: RDKafkaQueue, deliveries: DeliveryRegistry, logger: Logger) {
        queue.poll(timeoutMilliseconds: 100) { event in
            switch rd_kafka_event_type(event) {
            case RD_KAFKA_EVENT_DR:
                while let message = rd_kafka_event_message_next(event) {
                    let id = UInt(bitPattern: message.pointee._private)
                    deliveries.resolve(id, with: deliveryResult(of: message))
                }
            case RD_KAFKA_EVENT_ERROR:
                // A fatal error makes every later produce fail with `_FATAL`, which `send` reports.
                _ = RDKafkaLog.handleError(event, logger: logger, code: .delivery)
            case RD_KAFKA_EVENT_LOG:
                RDKafkaLog.forwardLog(event, to: logger)
            default:
                break
            }
        }
    }

    private static func deliveryResult(of message: UnsafePointer<rd_kafka_message_t>) -> Result<KafkaDelivery, KafkaError> {
        let raw = message.pointee
        let topic = raw.rkt.map { String(cString: rd_kafka_topic_name($0)) } ?? ""
        guard raw.err == RD_KAFKA_RESP_ERR_NO_ERROR else {
            return .failure(KafkaError(
                code: .delivery, rdKafka: raw.err,
                detail: "delivery to topic '\(topic)' failed: \(String(cString: rd_kafka_err2str(raw.err)))"
            ))
        }
        return .success(KafkaDelivery(topic: topic, partition: raw.partition, offset: raw.offset))
    }

    /// Lends `data`'s bytes; an empty non-nil `Data` gets a valid pointer so that it is
    /// sent as an empty value, not as null.
    private static func withBytes<T>(of data: Data?, _ body: (UnsafeRawPointer?, Int) -> T) -> T {
        guard let data else { return body(nil, 0) }
        if data.isEmpty {
            var empty: UInt8 = 0
            return withUnsafeBytes(of: &empty) { body($0.baseAddress, 0) }
        }
        return data.withUnsafeBytes { body($0.baseAddress, $0.count) }
    }
}
