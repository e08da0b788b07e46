import CRdKafka
import Foundation

/// The producer calls of a client handle. Each returns librdkafka's answer as a Swift value.
extension RDKafkaHandle {
    /// Queues one message (librdkafka copies key, value and headers); its delivery report will
    /// carry `deliveryID` (`RDKafkaMessage.deliveryID`). On success librdkafka owns `headers`
    /// (the caller then calls `relinquish()` on them); on failure no report will come.
    func produce(topic: String, key: Data?, value: Data?, headers: RDKafkaHeaders?, deliveryID: UInt) -> RDKafkaCode {
        Self.withBytes(of: key) { keyBytes, keyCount in
            Self.withBytes(of: value) { valueBytes, valueCount in
                produce(
                    topic: topic, key: keyBytes, keyCount: keyCount, value: valueBytes, valueCount: valueCount,
                    headers: headers, deliveryID: deliveryID
                )
            }
        }
    }

    /// As above, with bytes the caller lends (the raw baseline's loop, which avoids re-lending per message).
    func produce(
        topic: String, key: UnsafeRawPointer?, keyCount: Int, value: UnsafeRawPointer?, valueCount: Int,
        headers: RDKafkaHeaders? = nil, deliveryID: UInt = 0
    ) -> RDKafkaCode {
        withPointer { client in
            RDKafkaCode(rescind_rd_kafka_produce(
                client, topic, key, keyCount, value, valueCount,
                headers?.unsafePointer, UnsafeMutableRawPointer(bitPattern: deliveryID)
            ))
        }
    }

    /// Blocks until every queued message was acknowledged or failed, or the timeout passed (`rd_kafka_flush`).
    func flush(timeoutMilliseconds: Int32) -> RDKafkaCode {
        withPointer { RDKafkaCode(rd_kafka_flush($0, timeoutMilliseconds)) }
    }

    /// Fails every queued and in-flight message with `_PURGE_QUEUE` / `_PURGE_INFLIGHT` (`rd_kafka_purge`);
    /// their reports arrive through the main queue like any other.
    func purgeQueuedAndInFlight() {
        withPointer { _ = rd_kafka_purge($0, RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT) }
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
